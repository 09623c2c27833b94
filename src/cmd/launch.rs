//! `rlctl launch` and `rlctl grid`: resolve every plan, check them all, then submit in order.

use super::{Session, deep_limit, plan_options};
use crate::check::slots::{self, Slots};
use crate::check::{Report, preflight_with};
use crate::cli::{Chain, DeepArgs, PlanArgs};
use crate::error::{Error, Result};
use crate::plan::estimate::Estimate;
use crate::plan::{Plan, overrides};
use crate::preset::Target;
use crate::runs::estimate::of;
use crate::runs::recorded::Recorded;
use crate::submit::borrowed::wipe_problems;
use crate::submit::intent::GridAsk;
use crate::submit::ledger::Record;
use crate::submit::{Order, context, controlled, launch as submit};
use std::io::Write;

/// `rlctl launch PRESET [--chain K]`.
pub fn launch(
    session: &Session,
    preset: &str,
    chain: Chain,
    dry_run: bool,
    (args, deep): (&PlanArgs, &DeepArgs),
    overrides: &[String],
    out: &mut dyn Write,
) -> Result<()> {
    let cluster = session.cluster()?;
    let target = session.library.find_preset(preset)?;
    let first = session.plan(&cluster, &target, args, overrides)?;
    let context = context(&cluster);
    let estimate = of(&first, &Recorded::read(context.ledger.clone())?);
    // `--chain auto`: as many slots as the estimate needs (one when it cannot tell, or when the
    // one job requeues itself).
    let chain = match chain {
        Chain::Jobs(k) => k,
        Chain::Auto if first.until_done.is_some() => 1,
        Chain::Auto => estimate
            .slots
            .map_or(1, |k| k.clamp(1, Chain::MAX.into()) as u32),
    };
    let mut extra = [slots::check(&estimate, Slots::of(&first, chain))];
    let mut plans: Vec<Plan> = (1..chain).map(|n| first.chained(n)).collect();
    plans.insert(0, first);
    let wipe = wipe_problems(&plans[0], &context.ledger)?;
    extra[0].problems.extend(wipe.problems);
    let deep = deep_limit(deep, &cluster);
    preflight_with(
        &session.library,
        &cluster,
        &args.allow,
        &plans[..1],
        &extra,
        deep,
    )?;
    let order = if chain > 1 { Order::Chain } else { Order::Grid };
    let skip = vec![None; plans.len()];
    let result = submit(&plans, &skip, order, &session.slurm, dry_run, &context, out);
    match result {
        Ok(()) => {
            say(&estimate, chain);
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
                resubmit: resubmit_command(preset, missing, args, overrides),
                queued,
                source,
            })
        }
        other => other,
    }
}

/// `rlctl launch` of the chain's missing links: the same flags and overrides, resuming from the
/// checkpoints the queued links leave.
fn resubmit_command(preset: &str, links: usize, args: &PlanArgs, overrides: &[String]) -> String {
    let mut words: Vec<String> = vec!["rlctl".into(), "launch".into(), preset.into()];
    let mut flag = |name: &str, value: Option<String>| {
        if let Some(value) = value {
            words.extend([name.to_owned(), value]);
        }
    };
    flag("--nodes", args.nodes.map(|n| n.to_string()));
    flag("--qos", args.qos.clone());
    flag("--time", args.time.map(|t| t.to_string()));
    flag("--job-name", args.job_name.clone());
    for allow in &args.allow {
        let name = crate::check::Allow::ALL.iter().find(|a| a.0 == *allow);
        flag("--allow", name.map(|a| a.1.to_owned()));
    }
    words.extend(["--resume".into(), "latest".into()]);
    if links > 1 {
        words.extend(["--chain".into(), links.to_string()]);
    }
    if !overrides.is_empty() {
        words.push("--".into());
        words.extend(overrides.iter().cloned());
    }
    crate::util::quote::sh_join(&words)
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

/// Which cells `rlctl grid` launches.
pub struct Cells {
    pub cell: Option<String>,
    pub all: Option<String>,
    /// With `all`: cells left out.
    pub skip: Vec<String>,
    pub as_cell: Option<String>,
}

/// `rlctl grid CELL [--as NEW]` or `rlctl grid --all GRID`.
pub fn grid(
    session: &Session,
    cells: Cells,
    dry_run: bool,
    (args, deep): (&PlanArgs, &DeepArgs),
    overrides: &[String],
    out: &mut dyn Write,
) -> Result<()> {
    let library = &session.library;
    let cluster = session.cluster()?;
    let targets = match (&cells.cell, &cells.all) {
        (Some(_), _) if !cells.skip.is_empty() => {
            return Err(Error::BadFlag {
                flag: "--skip",
                value: cells.skip.join(" "),
                reason: "--skip leaves cells out of a whole grid: use it with --all GRID".into(),
            });
        }
        (Some(cell), _) => vec![library.find_cell(cell)?],
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
            let file = library.grid(grid)?;
            for skip in &cells.skip {
                let name = skip.rsplit_once('/').map_or(skip.as_str(), |(g, c)| {
                    if g == grid { c } else { skip.as_str() }
                });
                library.cell(grid, name)?;
            }
            let skipped =
                |c: &str| (cells.skip.iter()).any(|s| s == c || *s == format!("{grid}/{c}"));
            (file.cells.iter())
                .filter(|c| !skipped(&c.name))
                .map(|c| Target::Cell {
                    grid: grid.clone(),
                    cell: c.name.clone(),
                })
                .collect()
        }
        (None, None) => {
            return Err(Error::Unsupported(
                "name a cell, or a grid with --all".to_owned(),
            ));
        }
    };
    // Every cell is resolved and checked before any is submitted: a bad cell stops the whole
    // grid.
    let mut options = plan_options(args);
    options.cell_as = cells.as_cell.clone();
    let overrides = overrides::parse(overrides)?;
    let plans = (targets.iter())
        .map(|t| Plan::resolve(library, &cluster, t, &options, &overrides))
        .collect::<Result<Vec<_>>>()?;
    let context = context(&cluster);
    let recorded = context.ledger.latest()?;
    controlled(&plans, &recorded)?;
    // `--all` leaves the cells the ledger holds alone; one named cell is launched again.
    let skip: Vec<Option<&Record>> = (plans.iter())
        .map(|p| match plans.len() {
            1 => None,
            _ => recorded.iter().find(|r| r.target == p.target),
        })
        .collect();
    let fresh: Vec<Plan> = (plans.iter().zip(&skip))
        .filter(|(_, s)| s.is_none())
        .map(|(p, _)| p.clone())
        .collect();
    let recorded = Recorded::read(context.ledger.clone())?;
    let estimates: Vec<Estimate> = fresh.iter().map(|p| of(p, &recorded)).collect();
    let mut extra: Vec<Report> = (estimates.iter().zip(&fresh))
        .map(|(e, plan)| slots::check(e, Slots::of(plan, 1)))
        .collect();
    for (report, plan) in extra.iter_mut().zip(&fresh) {
        report
            .problems
            .extend(wipe_problems(plan, &context.ledger)?.problems);
    }
    let deep = deep_limit(deep, &cluster);
    preflight_with(library, &cluster, &args.allow, &fresh, &extra, deep)?;
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
    submit(
        &plans,
        &skip,
        Order::Grid,
        &session.slurm,
        dry_run,
        &context,
        out,
    )?;
    for estimate in &estimates {
        say(estimate, 1);
    }
    if let (Some(grid), false) = (&cells.all, dry_run) {
        let summary = crate::runs::grids::asked(&context.run_root, grid)?;
        crate::util::out::emit(out, &format!("{summary}\n"))?;
    }
    Ok(())
}
