//! `rlctl launch` and `rlctl grid`: resolve every plan, check them all, then submit in order.

use super::{Session, deep_limit, plan_options};
use crate::check::controlled::knob_changes;
use crate::check::preflight_with;
use crate::check::ready::{self, Ledgered};
use crate::cli::PlanArgs;
use crate::cli::{GridArgs, LaunchArgs};
use crate::error::{ChangedRun, Error, Result};
use crate::plan::Plan;
use crate::plan::PlanOptions;
use crate::plan::Resume;
use crate::plan::ask::Ask;
use crate::plan::estimate::Estimate;
use crate::preset::Selection;
use crate::preset::Want;
use crate::preset::cluster::Cluster;
use crate::store::intent::GridAsk;
use crate::store::ledger::Record;
use crate::submit::again;
use crate::submit::submission::Submission;
use crate::submit::{Order, context, launch as submit};
use crate::util::versioned::document;
use schemars::JsonSchema;
use serde::Serialize;
use std::io::Write;

/// `rlctl launch PRESET [--chain K]`.
pub fn launch(session: &Session, launch: &LaunchArgs, out: &mut dyn Write) -> Result<()> {
    let (args, dry_run) = (&launch.plan, launch.submit.dry_run);
    let cluster = session.submitting("launch", dry_run)?;
    let selection = session.library.select(&launch.preset, Want::Preset)?;
    let context = context(&cluster);
    let ledgered = super::ledgered(context.ledger.clone())?;
    let first = resumed(session, &cluster, &selection, launch, &ledgered)?;
    let ready = ready::launch(first, launch.chain, &ledgered)?;
    let (plans, estimate, chain) = (&ready.plans, &ready.estimate, ready.chain);
    let deep = deep_limit(&launch.deep, &cluster);
    preflight_with(
        &session.library,
        &cluster,
        &args.allow,
        &plans[..1],
        &ready.extra,
        deep,
    )?;
    let order = if chain > 1 { Order::Chain } else { Order::Grid };
    let skip = vec![None; plans.len()];
    // --json: the submission's text is not shown; the JSON is said from what was submitted.
    let shown: &mut dyn Write = if launch.json {
        &mut std::io::sink()
    } else {
        &mut *out
    };
    let result = submit(
        plans,
        &skip,
        order,
        &session.slurm,
        dry_run,
        &context,
        shown,
    );
    match result {
        Ok(jobs) => {
            say(estimate, chain);
            if !dry_run && !launch.json {
                next(&plans[0].target);
            }
            if launch.json {
                let doc = Launched {
                    target: plans[0].target.clone(),
                    cluster: cluster.name.clone(),
                    account: cluster.sbatch.account.clone(),
                    dry_run,
                    chain,
                    estimate: estimate.clone(),
                    jobs,
                };
                crate::util::out::emit(out, &document(&doc))?;
            }
            Ok(())
        }
        // Links, not cells: and the way to add the missing ones.
        Err(Error::GridPartial {
            submitted, source, ..
        }) if chain > 1 => {
            let queued: Vec<String> = submitted.into_iter().map(|(_, job)| job).collect();
            let missing = chain as usize - queued.len();
            Err(Error::ChainPartial {
                failed: queued.len() + 1,
                links: chain as usize,
                resubmit: Ask {
                    resume: Resume::Latest,
                    chain: Some(missing as u32),
                    ..launch.ask()
                }
                .command(),
                queued,
                source,
            })
        }
        Err(e) => Err(e),
    }
}

/// The first plan of `launch`: a `--resume latest` of a recorded run keeps the run's knobs.
/// Without overrides (or `--nodes`) it takes the recorded ones; with knobs other than the
/// recorded ones it is refused, naming each, unless `--change-knobs` says so.
fn resumed(
    session: &Session,
    cluster: &Cluster,
    selection: &Selection,
    launch: &LaunchArgs,
    ledgered: &Ledgered,
) -> Result<Plan> {
    let args = &launch.plan;
    let asked = session.plan(cluster, selection, args)?;
    if args.resume != Resume::Latest {
        return Ok(asked);
    }
    let Some(record) = ledgered.run_of(&asked) else {
        return Ok(asked);
    };
    let (options, overrides) = kept(args, plan_options(args), record);
    let plan = session.plan_with(cluster, selection, &options, &overrides)?;
    let changes = knob_changes(&record.knobs, &plan);
    if changes.is_empty() || launch.change_knobs {
        return Ok(plan);
    }
    Err(Error::ResumeChangesKnobs(Box::new(ChangedRun {
        run: record.run(),
        job_id: record.job_id.clone(),
        changes,
        recorded: Ask {
            resume: Resume::Latest,
            ..again::ask(record)
        }
        .command(),
    })))
}

/// What a `--resume latest` of `record`'s run plans with: the flags and overrides asked, and
/// where none are given, the run's own (its overrides, its `--nodes`), from its record.
fn kept(args: &PlanArgs, mut options: PlanOptions, record: &Record) -> (PlanOptions, Vec<String>) {
    let recorded = again::ask(record);
    if args.nodes.is_none() {
        options.nodes = recorded.nodes;
    }
    let overrides = match args.overrides.is_empty() {
        true => recorded.overrides,
        false => args.overrides.clone(),
    };
    (options, overrides)
}

/// `launch --json`: the estimate and what became of each job of the run.
#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct Launched {
    pub target: String,
    pub cluster: String,
    pub account: String,
    pub dry_run: bool,
    pub chain: u32,
    pub estimate: Estimate,
    pub jobs: Vec<Submission>,
}

/// `grid --json`: each cell's estimate and what became of it.
#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct GridLaunched {
    /// The grid of `--all`; none for one cell.
    pub grid: Option<String>,
    pub cluster: String,
    pub account: String,
    pub dry_run: bool,
    pub estimates: Vec<Estimate>,
    pub jobs: Vec<Submission>,
}

/// The one-line estimate of what was submitted, on stderr (stdout is the submission's), once
/// it is: a refused launch says only why.
fn say(estimate: &Estimate, chain: u32) {
    let chained = if chain > 1 {
        format!(" (--chain {chain})")
    } else {
        String::new()
    };
    crate::say!("rlctl: estimate: {}{chained}", estimate.line());
}

/// The next useful command after a submission, on stderr (stdout is the submission's), as
/// `gh` and `kubectl` give one.
fn next(target: &str) {
    let target = crate::util::quote::sh(target);
    crate::say!("next: `rlctl watch {target}` follows it; `rlctl status {target}` lists its jobs");
}

/// `rlctl grid CELL [--as NEW]` or `rlctl grid --all GRID`.
pub fn grid(session: &Session, cells: &GridArgs, out: &mut dyn Write) -> Result<()> {
    let (args, dry_run) = (&cells.plan, cells.submit.dry_run);
    let library = &session.library;
    let cluster = session.submitting("grid", dry_run)?;
    let targets = targets(session, cells)?;
    // Every cell is resolved and checked before any is submitted: a bad cell stops the whole
    // grid.
    let mut options = plan_options(args);
    options.cell_as = cells.as_cell.clone();
    let overrides = session.parse_overrides(&cluster, &args.overrides)?;
    let mut plans = (targets.iter())
        .map(|s| session.plan_parsed(&cluster, s, &options, &overrides))
        .collect::<Result<Vec<_>>>()?;
    let context = context(&cluster);
    let ledgered = super::ledgered(context.ledger.clone())?;
    // One cell resumed: with its own knobs, as a run is; the controlled rule judges the rest.
    if let ([plan], [selection], Resume::Latest) = (&mut plans[..], &targets[..], args.resume)
        && let Some(record) = ledgered.run_of(plan)
    {
        let (options, overrides) = kept(args, options, record);
        *plan = session.plan_with(&cluster, selection, &options, &overrides)?;
    }
    let ready = ready::cells(&plans, &ledgered, &cells.ask())?;
    let (fresh, estimates) = (&ready.fresh, &ready.estimates);
    let skip: Vec<Option<&Record>> = ready.skip.iter().map(Option::as_ref).collect();
    let deep = deep_limit(&cells.deep, &cluster);
    preflight_with(library, &cluster, &args.allow, fresh, &ready.extra, deep)?;
    let mut context = context;
    if let Some(grid) = &cells.all {
        context.ask = Some(GridAsk {
            grid: grid.clone(),
            command: crate::util::quote::sh_join(&std::env::args().collect::<Vec<_>>()),
            skipped: cells.skip.clone(),
            estimates: (estimates.iter())
                .filter_map(|e| Some((e.target.clone(), e.gpu_hours?)))
                .collect(),
        });
    }
    let shown: &mut dyn Write = if cells.json {
        &mut std::io::sink()
    } else {
        &mut *out
    };
    let jobs = submit(
        &plans,
        &skip,
        Order::Grid,
        &session.slurm,
        dry_run,
        &context,
        shown,
    )?;
    for estimate in estimates {
        say(estimate, 1);
    }
    if cells.json {
        let doc = GridLaunched {
            grid: cells.all.clone(),
            cluster: cluster.name.clone(),
            account: cluster.sbatch.account.clone(),
            dry_run,
            estimates: estimates.clone(),
            jobs,
        };
        return crate::util::out::emit(out, &document(&doc));
    }
    if let (Some(grid), false) = (&cells.all, dry_run) {
        let summary = crate::runs::grids::asked(&context.run_root, grid)?;
        crate::util::out::emit(out, &format!("{summary}\n"))?;
    }
    match (&cells.all, &plans[..], dry_run) {
        (_, _, true) => {}
        (Some(grid), _, false) => next(grid),
        (None, [plan], false) => next(&plan.target),
        (None, _, false) => {}
    }
    Ok(())
}

/// The cells `grid` asks for: the one named, or every cell of `--all GRID` but those
/// `--skip` names (each of which must be a cell of it).
fn targets<'a>(session: &'a Session, cells: &GridArgs) -> Result<Vec<Selection<'a>>> {
    let (library, args) = (&session.library, &cells.plan);
    Ok(match (&cells.cell, &cells.all) {
        (Some(_), _) if !cells.skip.is_empty() => {
            return Err(Error::BadFlag {
                flag: "--skip",
                value: cells.skip.join(" "),
                reason: "--skip leaves cells out of a whole grid: use it with --all GRID".into(),
            });
        }
        (Some(cell), _) => vec![library.select(cell, Want::Cell)?],
        (None, Some(grid)) => {
            if let Some(name) = &args.job_name {
                return Err(Error::BadFlag {
                    flag: "--job-name",
                    value: name.clone(),
                    reason:
                        "every cell of a grid gets its own job name; drop --job-name with --all"
                            .into(),
                });
            }
            let all = library.select_grid(grid)?;
            for skip in &cells.skip {
                let name = skip.rsplit_once('/').map_or(skip.as_str(), |(g, c)| {
                    if g == grid { c } else { skip.as_str() }
                });
                library.cell(grid, name)?;
            }
            let skipped =
                |c: &str| (cells.skip.iter()).any(|s| s == c || *s == format!("{grid}/{c}"));
            (all.into_iter())
                .filter(|s| !skipped(&s.cell.expect("a grid's selections are cells").cell.name))
                .collect()
        }
        (None, None) => {
            return Err(Error::Unsupported(
                "name a cell, or a grid with --all".to_owned(),
            ));
        }
    })
}
