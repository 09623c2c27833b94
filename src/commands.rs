//! What each subcommand does, from a parsed command line to output.

use crate::cli::{Cli, Command, PlanArgs, SchemaCommand, SubmitArgs};
use crate::cluster::Cluster;
use crate::error::{Error, Result};
use crate::library::{Library, Target};
use crate::overrides;
use crate::plan::Plan;
use crate::preflight::Preflight;
use crate::quote::sh_join;
use crate::render::{RenderedFile, render};
use crate::slurm::{Dependency, Slurm};
use crate::submit::{submit, write_atomic};
use camino::Utf8Path;
use std::io::Write;

/// At most this many cells of one `grid --all` run at once: cell i waits for cell i-8.
pub const GRID_WIDTH: usize = 8;

/// How the jobs of one submission wait for each other.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Order {
    /// Cell i waits for cell i-8 to end.
    Grid,
    /// Each job waits for the one before it: one run across several wall-time slots.
    Chain,
}

impl Order {
    fn waits_on(self, i: usize) -> Option<usize> {
        match self {
            Order::Grid => i.checked_sub(GRID_WIDTH),
            Order::Chain => i.checked_sub(1),
        }
    }
}

pub fn run(cli: Cli, out: &mut dyn Write) -> Result<()> {
    let library = Library::load(cli.presets.as_deref())?;
    match cli.command {
        Command::List => list(&library, out),
        Command::Doctor => {
            let cluster = library.cluster(&cli.cluster)?;
            let lines = crate::doctor::examine(&cluster);
            let mut text = String::new();
            for line in &lines {
                text.push_str(&format!(
                    "{:<8} {:<20} {}\n",
                    line.status.to_string(),
                    line.what,
                    line.detail
                ));
            }
            emit(out, &text)?;
            let problems = lines
                .iter()
                .filter(|l| l.status == crate::doctor::Status::Problem)
                .count();
            if problems > 0 {
                return Err(Error::Unsupported(format!(
                    "doctor found {problems} problem{} on {}",
                    if problems == 1 { "" } else { "s" },
                    cluster.name
                )));
            }
            Ok(())
        }
        Command::Schema {
            action:
                SchemaCommand::Import {
                    config_dir,
                    out: file,
                },
        } => {
            let text = crate::schema_import::import(&config_dir)?;
            match file {
                Some(file) => write_atomic(&file, &text, 0o644),
                None => emit(out, &text),
            }
        }
        Command::Show {
            name,
            plan,
            overrides,
        } => {
            let cluster = library.cluster(&cli.cluster)?;
            let target = library.find_target(&name)?;
            let plan = resolve(&library, &cluster, &target, &plan, &overrides)?;
            let text = toml::to_string(&plan).map_err(|e| Error::Unsupported(e.to_string()))?;
            emit(out, &text)
        }
        Command::Check {
            name,
            plan: args,
            overrides,
        } => {
            let cluster = library.cluster(&cli.cluster)?;
            let target = library.find_target(&name)?;
            let plan = resolve(&library, &cluster, &target, &args, &overrides)?;
            let skipped = preflight(&library, &cluster, &args, std::slice::from_ref(&plan))?;
            let note = match skipped {
                0 => String::new(),
                n => format!(" ({n} could not run here; see above)"),
            };
            emit(
                out,
                &format!("{}: every preflight check passed{note}\n", plan.target),
            )
        }
        Command::Render {
            name,
            out: dir,
            plan: args,
            overrides,
        } => {
            let cluster = library.cluster(&cli.cluster)?;
            let target = library.find_target(&name)?;
            let plan = resolve(&library, &cluster, &target, &args, &overrides)?;
            preflight(&library, &cluster, &args, std::slice::from_ref(&plan))?;
            let files = render(&plan)?;
            match dir {
                Some(dir) => write_into(&dir, &files, out),
                None => print_files(out, &files),
            }
        }
        Command::Launch {
            preset,
            chain,
            submit,
            plan: args,
            overrides,
        } => {
            let cluster = library.cluster(&cli.cluster)?;
            let target = library.find_preset(&preset)?;
            let first = resolve(&library, &cluster, &target, &args, &overrides)?;
            let mut plans: Vec<Plan> = (1..chain).map(|n| first.chained(n)).collect();
            plans.insert(0, first);
            preflight(&library, &cluster, &args, &plans[..1])?;
            let order = if chain > 1 { Order::Chain } else { Order::Grid };
            launch(&plans, order, &submit, out)
        }
        Command::Grid {
            cell,
            all,
            submit,
            plan,
            overrides,
        } => {
            let cluster = library.cluster(&cli.cluster)?;
            let targets = match (cell, all) {
                (Some(cell), _) => vec![library.find_cell(&cell)?],
                (None, Some(grid)) => {
                    if plan.job_name.is_some() {
                        return Err(Error::BadFlag {
                            flag: "--job-name",
                            value: plan.job_name.clone().unwrap_or_default(),
                            reason: "every cell of a grid gets its own job name; drop --job-name with --all".into(),
                        });
                    }
                    let cells = &library.grid(&grid)?.cells;
                    cells
                        .iter()
                        .map(|c| Target::Cell {
                            grid: grid.clone(),
                            cell: c.name.clone(),
                        })
                        .collect()
                }
                (None, None) => unreachable!("clap requires a cell or --all"),
            };
            // Every cell is resolved and checked before any is submitted: a bad cell stops the
            // whole grid.
            let plans = targets
                .iter()
                .map(|t| resolve(&library, &cluster, t, &plan, &overrides))
                .collect::<Result<Vec<_>>>()?;
            preflight(&library, &cluster, &plan, &plans)?;
            launch(&plans, Order::Grid, &submit, out)
        }
    }
}

fn resolve(
    library: &Library,
    cluster: &Cluster,
    target: &Target,
    args: &PlanArgs,
    overrides: &[String],
) -> Result<Plan> {
    let overrides = overrides::parse(overrides)?;
    Plan::resolve(library, cluster, target, &args.options(), &overrides)
}

/// Runs every check on every plan; prints notes, warnings and skipped checks on stderr, and
/// fails with every problem of every plan at once.
fn preflight(
    library: &Library,
    cluster: &Cluster,
    args: &PlanArgs,
    plans: &[Plan],
) -> Result<usize> {
    let schema = library.schema(&cluster.software.schema)?;
    let checks = Preflight {
        cluster,
        schema: &schema,
        allow: &args.allow,
    };
    let mut problems = Vec::new();
    let mut skipped = 0;
    let mut said = std::collections::BTreeSet::new();
    let mut dirs = std::collections::BTreeMap::new();
    for plan in plans {
        let report = checks.run(plan);
        skipped += report.skipped.len();
        let prefix = if plans.len() > 1 {
            format!("{}: ", plan.target)
        } else {
            String::new()
        };
        for f in &report.problems {
            problems.push(format!("{prefix}[{}] {}", f.check, f.message));
        }
        let stderr = [
            ("warning", &report.warnings),
            ("note", &report.notes),
            ("skipped", &report.skipped),
        ];
        for (kind, findings) in stderr {
            for f in findings.iter() {
                // The same skip for every cell of a grid is said once.
                let line = if kind == "skipped" {
                    format!("[{}] {}", f.check, f.message)
                } else {
                    format!("{prefix}[{}] {}", f.check, f.message)
                };
                if said.insert(format!("{kind}{line}")) {
                    eprintln!("rlctl: {kind}: {line}");
                }
            }
        }
        if let Some(other) = dirs.insert(plan.paths.checkpoint_dir.clone(), plan.target.clone()) {
            problems.push(format!(
                "[resume] {} and {other} would share the checkpoint folder `{}`: give one of them its own --job-name",
                plan.target, plan.paths.checkpoint_dir
            ));
        }
    }
    if problems.is_empty() {
        return Ok(skipped);
    }
    Err(Error::Preflight {
        targets: plans.iter().map(|p| p.target.clone()).collect(),
        problems,
    })
}

/// Submits plans in order (or prints them, with --dry-run); plan i depends on plan i-8. A
/// plan whose job name is already pending or running is not submitted twice: a grid skips it
/// (and chains on the queued job), a single launch is refused.
fn launch(plans: &[Plan], order: Order, args: &SubmitArgs, out: &mut dyn Write) -> Result<()> {
    let slurm = Slurm {
        sbatch: args.sbatch.clone(),
        squeue: args.squeue.clone(),
    };
    let renders = plans.iter().map(render).collect::<Result<Vec<_>>>()?;
    if args.dry_run {
        for (i, (plan, files)) in plans.iter().zip(&renders).enumerate() {
            let dependency = order
                .waits_on(i)
                .map(|j| Dependency::AfterAny(format!("<job {} of this submission>", j + 1)));
            let argv = slurm.sbatch_argv(&plan.paths.sbatch_script, dependency.as_ref());
            if i > 0 {
                emit(out, "\n")?;
            }
            emit(
                out,
                &format!(
                    "==> sbatch command for {} <==\n{}\n",
                    plan.target,
                    sh_join(&argv)
                ),
            )?;
            print_files(out, files)?;
        }
        eprintln!("rlctl: dry run: nothing was written and nothing was submitted");
        return Ok(());
    }
    let queued = slurm.queued()?;
    let mut job_ids: Vec<String> = Vec::new();
    let mut submitted: Vec<(String, String)> = Vec::new();
    for (i, (plan, files)) in plans.iter().zip(&renders).enumerate() {
        if let Some(job) = queued.iter().find(|j| j.name == plan.job.name) {
            if order == Order::Chain || plans.len() == 1 {
                return Err(Error::Unsupported(format!(
                    "{} is already queued as job {} ({}) under the job name `{}`, and a second job would write to its \
                     checkpoint folder: wait for it, `scancel {}`, or pick another --job-name",
                    plan.target, job.id, job.state, job.name, job.id
                )));
            }
            emit(
                out,
                &format!(
                    "{}: already queued as job {} ({}); skipped\n",
                    plan.target, job.id, job.state
                ),
            )?;
            job_ids.push(job.id.clone());
            continue;
        }
        let dependency = order
            .waits_on(i)
            .map(|j| Dependency::AfterAny(job_ids[j].clone()));
        match submit(plan, files, &slurm, dependency.as_ref()) {
            Ok(done) => {
                let after = match &dependency {
                    Some(Dependency::AfterAny(job)) => format!(", after job {job}"),
                    None => String::new(),
                };
                emit(
                    out,
                    &format!(
                        "{}: job {}{after}\n  run folder  {}\n  checkpoints {}\n",
                        plan.target, done.job_id, plan.paths.run_dir, plan.paths.checkpoint_dir
                    ),
                )?;
                job_ids.push(done.job_id.clone());
                submitted.push((plan.target.clone(), done.job_id));
            }
            Err(e) if plans.len() > 1 => {
                return Err(Error::GridPartial {
                    submitted,
                    failed_cell: plan.target.clone(),
                    source: Box::new(e),
                });
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn print_files(out: &mut dyn Write, files: &[RenderedFile]) -> Result<()> {
    for file in files {
        emit(out, &format!("\n==> {} <==\n{}", file.path, file.text))?;
    }
    Ok(())
}

fn write_into(dir: &Utf8Path, files: &[RenderedFile], out: &mut dyn Write) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io("create", dir, e))?;
    for file in files {
        let path = dir.join(file.path.file_name().expect("scripts have file names"));
        write_atomic(&path, &file.text, 0o755)?;
        emit(out, &format!("{path}\n"))?;
    }
    Ok(())
}

fn list(library: &Library, out: &mut dyn Write) -> Result<()> {
    let mut text = String::from("clusters:\n");
    for name in library.cluster_names() {
        text.push_str(&format!("  {name}\n"));
    }
    text.push_str("\npresets (rlctl launch PRESET):\n");
    for name in library.preset_names() {
        let preset = library.run_preset(name)?;
        text.push_str(&format!("  {name:<22} {}\n", preset.description));
    }
    text.push_str("\ngrids (rlctl grid CELL, rlctl grid --all GRID):\n");
    for name in library.grid_names() {
        let grid = library.grid(name)?;
        text.push_str(&format!(
            "  {name:<22} {} ({} cells, base {})\n",
            grid.description,
            grid.cells.len(),
            grid.base
        ));
        for cell in &grid.cells {
            text.push_str(&format!("    {:<20} {}\n", cell.name, cell.description));
        }
    }
    emit(out, &text)
}

fn emit(out: &mut dyn Write, text: &str) -> Result<()> {
    out.write_all(text.as_bytes())
        .map_err(|e| Error::io("write", "standard output", e))
}
