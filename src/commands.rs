//! What each subcommand does, from a parsed command line to output.

use crate::cli::{Cli, Command, PlanArgs, SchemaCommand};
use crate::cluster::Cluster;
use crate::error::{Error, Result};
use crate::follow::write as emit;
use crate::launch::{Order, context, controlled, launch, preflight};
use crate::ledger::Record;
use crate::library::{Library, Target};
use crate::overrides;
use crate::plan::Plan;
use crate::render::{RenderedFile, render};
use crate::submit::write_atomic;
use crate::track::track;
use camino::Utf8Path;
use std::io::Write;

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
            let (plan, skipped) = checked_plan(&library, &cli.cluster, &name, &args, &overrides)?;
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
            let (plan, _) = checked_plan(&library, &cli.cluster, &name, &args, &overrides)?;
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

/// The plan of a preset or cell, through preflight; with the number of checks skipped here.
fn checked_plan(
    library: &Library,
    cluster: &str,
    name: &str,
    args: &PlanArgs,
    overrides: &[String],
) -> Result<(Plan, usize)> {
    let cluster = library.cluster(cluster)?;
    let target = library.find_target(name)?;
    let plan = resolve(library, &cluster, &target, args, overrides)?;
    let skipped = preflight(library, &cluster, args, std::slice::from_ref(&plan))?;
    Ok((plan, skipped))
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

pub fn print_files(out: &mut dyn Write, files: &[RenderedFile]) -> Result<()> {
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
