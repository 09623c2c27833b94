//! What each subcommand does, from a parsed command line to output.

use crate::cli::{Cli, Command, PlanArgs, SchemaCommand, SubmitArgs};
use crate::cluster::Cluster;
use crate::error::{Error, Result};
use crate::follow;
use crate::ledger::{self, Ledger, Record, knob_fingerprint};
use crate::library::{Library, Target};
use crate::overrides;
use crate::plan::Plan;
use crate::preflight::Preflight;
use crate::quote::sh_join;
use crate::render::{RenderedFile, render};
use crate::slurm::{Dependency, Slurm};
use crate::submit::{Context, submit, write_atomic};
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
        Command::Status { .. }
        | Command::Cancel { .. }
        | Command::Logs { .. }
        | Command::Metrics { .. }
        | Command::Watch { .. }
        | Command::Clean { .. }
        | Command::Report { .. } => {
            let cluster = library.cluster(&cli.cluster)?;
            track(cli.command, &cluster, &cli.slurm.slurm(), out)
        }
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
            let skip = vec![None; plans.len()];
            launch(
                &plans,
                &skip,
                order,
                &cli.slurm.slurm(),
                &submit,
                &context(&cluster),
                out,
            )
        }
        Command::Grid {
            cell,
            all,
            as_cell,
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
            let mut options = plan.options();
            options.cell_as = as_cell;
            let overrides = overrides::parse(&overrides)?;
            let plans = targets
                .iter()
                .map(|t| Plan::resolve(&library, &cluster, t, &options, &overrides))
                .collect::<Result<Vec<_>>>()?;
            let context = context(&cluster);
            let recorded = context.ledger.latest()?;
            controlled(&plans, &recorded)?;
            // `--all` leaves the cells the ledger holds alone; one named cell is launched again.
            let skip: Vec<Option<&Record>> = plans
                .iter()
                .map(|p| match plans.len() {
                    1 => None,
                    _ => recorded.iter().find(|r| r.target == p.target),
                })
                .collect();
            let fresh: Vec<Plan> = plans
                .iter()
                .zip(&skip)
                .filter(|(_, s)| s.is_none())
                .map(|(p, _)| p.clone())
                .collect();
            preflight(&library, &cluster, &plan, &fresh)?;
            launch(
                &plans,
                &skip,
                Order::Grid,
                &cli.slurm.slurm(),
                &submit,
                &context,
                out,
            )
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

/// The commands that follow recorded runs.
fn track(command: Command, cluster: &Cluster, slurm: &Slurm, out: &mut dyn Write) -> Result<()> {
    let ledger = Ledger::at(&cluster.storage.run_root);
    let one = |name: &str| -> Result<Record> {
        let mut records = follow::select(&ledger, Some(name))?;
        match records.len() {
            1 => Ok(records.remove(0)),
            _ => Err(Error::Ambiguous {
                name: name.to_owned(),
                candidates: records.into_iter().map(|r| r.target).collect(),
            }),
        }
    };
    match command {
        Command::Status { run, json } => {
            let records = follow::select(&ledger, run.as_deref())?;
            let states = follow::states(slurm, &records)?;
            if json {
                let text = serde_json::to_string_pretty(&states).expect("states serialize");
                return emit(out, &format!("{text}\n"));
            }
            emit(out, &follow::status_table(&states))
        }
        Command::Cancel { run, yes } => {
            follow::cancel(slurm, &follow::select(&ledger, Some(&run))?, yes, out)
        }
        Command::Logs { run, follow: keep } => logs(slurm, &one(&run)?, keep, out),
        Command::Metrics { run, json, csv } => {
            let path = Utf8Path::new(&run);
            let log = if path.is_file() {
                path.to_path_buf()
            } else {
                one(&run)?.log
            };
            let series = follow::read_series(&log)?;
            let text = match (json, csv) {
                (true, _) => crate::metrics::to_json(&series),
                (_, true) => crate::metrics::to_csv(&series),
                _ => crate::metrics::table(&series),
            };
            emit(out, &text)
        }
        Command::Watch {
            run,
            once,
            interval,
            entropy_floor,
            entropy_ratio,
            grad_spike,
            reward_stall_steps,
        } => {
            let mut thresholds = crate::alerts::Thresholds::default();
            if let Some(x) = entropy_floor {
                thresholds.entropy_floor = x;
            }
            if let Some(x) = entropy_ratio {
                thresholds.entropy_min_ratio = x;
            }
            if let Some(x) = grad_spike {
                thresholds.grad_spike_factor = x;
            }
            if let Some(n) = reward_stall_steps {
                thresholds.reward_stall_steps = n;
            }
            let options = crate::watch::Options {
                once,
                interval: std::time::Duration::from_secs(interval.max(1)),
                thresholds,
            };
            crate::watch::watch(slurm, &one(&run)?, &options, out)
        }
        Command::Clean { run, yes } => crate::clean::clean(
            slurm,
            &follow::select(&ledger, Some(&run))?,
            &cluster.storage.checkpoint_root,
            yes,
            out,
        ),
        Command::Report { grid, out: dir } => {
            let records: Vec<Record> = ledger
                .latest()?
                .into_iter()
                .filter(|r| r.grid.as_deref() == Some(grid.as_str()))
                .collect();
            if records.is_empty() {
                return Err(Error::Unsupported(format!(
                    "no cell of grid `{grid}` is recorded: launch it with `rlctl grid --all {grid}`"
                )));
            }
            let states = follow::states(slurm, &records)?;
            let dir = dir.unwrap_or_else(|| cluster.storage.run_root.join(&grid).join("report"));
            let written = follow::report(&grid, &states, &dir, out)?;
            for path in written {
                eprintln!("rlctl: wrote {path}");
            }
            Ok(())
        }
        _ => unreachable!("only the follow-up commands reach here"),
    }
}

/// Prints a run's log; with `follow`, keeps printing what is appended until the job ends.
fn logs(slurm: &Slurm, record: &Record, keep: bool, out: &mut dyn Write) -> Result<()> {
    use std::io::{Read, Seek};
    let mut offset = 0u64;
    loop {
        // Whether it still runs is asked before reading, so the last bytes are never missed.
        let running = keep && slurm.queued()?.iter().any(|j| j.id == record.job_id);
        if let Ok(mut file) = std::fs::File::open(&record.log) {
            file.seek(std::io::SeekFrom::Start(offset))
                .map_err(|e| Error::io("read", record.log.clone(), e))?;
            let mut chunk = Vec::new();
            file.read_to_end(&mut chunk)
                .map_err(|e| Error::io("read", record.log.clone(), e))?;
            offset += chunk.len() as u64;
            out.write_all(&chunk)
                .map_err(|e| Error::io("write", "standard output", e))?;
            out.flush()
                .map_err(|e| Error::io("write", "standard output", e))?;
        } else if !keep {
            return Err(Error::Unsupported(format!(
                "{} (job {}) has no log yet at `{}`: it has not started",
                record.target, record.job_id, record.log
            )));
        }
        if !running {
            return Ok(());
        }
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
}

/// What every submission of one command shares: the ledger, and the SkyRL checkout's commit.
fn context(cluster: &Cluster) -> Context {
    Context {
        ledger: Ledger::at(&cluster.storage.run_root),
        skyrl_commit: ledger::git_commit(&cluster.software.skyrl),
    }
}

/// A controlled grid never changes a recorded cell's hyperparameters mid-series.
fn controlled(plans: &[Plan], recorded: &[Record]) -> Result<()> {
    let mut changed = Vec::new();
    for plan in plans {
        let Some(record) = recorded.iter().find(|r| r.target == plan.target) else {
            continue;
        };
        let now = knob_fingerprint(plan);
        let mut diffs = Vec::new();
        for key in record
            .knobs
            .keys()
            .chain(now.keys())
            .collect::<std::collections::BTreeSet<_>>()
        {
            let (was, is) = (record.knobs.get(key), now.get(key));
            if was != is {
                let show = |v: Option<&String>| v.map_or("(unset)".to_owned(), |v| v.clone());
                diffs.push(format!("{key}: {} -> {}", show(was), show(is)));
            }
        }
        if !diffs.is_empty() {
            let cell = plan.target.rsplit('/').next().unwrap_or_default();
            changed.push(format!(
                "{} ran as job {} with other knobs ({}): a controlled grid never alters a cell mid-series; run the \
                 change as a new cell, e.g. `rlctl grid {} --as {cell}-v2 ...`",
                plan.target,
                record.job_id,
                diffs.join("; "),
                plan.target
            ));
        }
    }
    if changed.is_empty() {
        return Ok(());
    }
    Err(Error::Unsupported(changed.join("\n")))
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
fn launch(
    plans: &[Plan],
    recorded: &[Option<&Record>],
    order: Order,
    slurm: &Slurm,
    args: &SubmitArgs,
    context: &Context,
    out: &mut dyn Write,
) -> Result<()> {
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
        if let Some(record) = recorded[i] {
            emit(
                out,
                &format!(
                    "{}: already submitted as job {}; skipped\n",
                    plan.target, record.job_id
                ),
            )?;
            job_ids.push(record.job_id.clone());
            continue;
        }
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
        match submit(plan, files, slurm, dependency.as_ref(), context) {
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
