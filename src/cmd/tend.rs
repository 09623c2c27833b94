//! `rlctl tend [RUN|GRID...]`: one pass over recorded runs and grids, for cron (see
//! `runs::tend`); a grid whose every cell has ended gets its report, once; then with
//! `--sync-wandb` (or the profile's `[watch] sync_wandb`) an upload of the runs' offline W&B runs
//! (see `runs::wandb_sync`).

use super::Session;
use crate::cli::TendArgs;
use crate::error::{Error, Result};
use crate::runs::tend::{Event, EventKind};
use crate::runs::{alerts::Thresholds, grids, tend, wandb_sync};
use crate::util::out::{emit, one_line};
use crate::util::versioned::document;
use camino::Utf8Path;
use schemars::JsonSchema;
use serde::Serialize;
use std::io::Write;

/// One pass, the reports of grids now over, the W&B upload; every problem said at the end.
pub fn run(session: &Session, args: &TendArgs, stdout: &mut dyn Write) -> Result<()> {
    let names = &args.runs;
    // Tend resubmits: on the shipped profile that would be on its author's account.
    let cluster = session.yours("tend")?;
    let ledger = session.ledger()?;
    let context = crate::submit::context(&cluster);
    let options = tend::Options {
        max_attempts: args.max_attempts,
        cancel_on_alert: args.cancel_on_alert,
        thresholds: Thresholds::default(),
        stall_floor_s: cluster.watch.stall_floor_s,
        submit_limits: context.submit_limits,
        gpus_per_node: cluster.node.gpus,
    };
    let run_root = cluster.storage.run_root.clone();
    // --json: the pass's events are said in one object at the end, not as lines.
    let json = args.json;
    let out: &mut dyn Write = if json {
        &mut std::io::sink()
    } else {
        &mut *stdout
    };
    let mut pass = tend::tend(
        &session.slurm,
        &ledger,
        &run_root,
        names,
        &options,
        &super::runs::warn,
        out,
    )?;
    let mut problems: Vec<String> = Vec::new();
    if pass.look > 0 {
        problems.push(format!(
            "{} run{} need{} a look",
            pass.look,
            if pass.look == 1 { "" } else { "s" },
            if pass.look == 1 { "s" } else { "" }
        ));
    }
    let reports = write_reports(session, &run_root, &mut pass, out, &mut problems)?;
    if args.sync_wandb || cluster.watch.sync_wandb {
        // After the pass and outside its turn: a slow upload holds up no launch. A pass that
        // needs a look still syncs. Its lines are the text's; `--json` says its problems.
        match wandb_sync::sync(&ledger, names, &args.sync(), out) {
            Ok(()) => {}
            Err(Error::Problems(why)) => {
                let event = Event::said(EventKind::WandbSync, None, why.clone());
                pass.events.push(event);
                problems.push(why);
            }
            Err(e) => return Err(e),
        }
    }
    if json {
        let doc = Tended {
            cluster: cluster.name.clone(),
            lines: pass.events.iter().map(|e| e.message.clone()).collect(),
            look: pass.look,
            grids_over: pass.over.iter().map(|(grid, _)| grid.clone()).collect(),
            reports,
            problems: problems.clone(),
            events: pass.events,
        };
        emit(stdout, &document(&doc))?;
    }
    match problems.is_empty() {
        true => Ok(()),
        false => Err(Error::Problems(problems.join("; "))),
    }
}

/// The report of each grid in `over` (grid, the key of its ended cells) not yet reported,
/// written into its `report/` folder and said; returns where each is. One that cannot be
/// written is a problem, and the others are still written.
fn write_reports(
    session: &Session,
    run_root: &Utf8Path,
    pass: &mut tend::Pass,
    out: &mut dyn Write,
    problems: &mut Vec<String>,
) -> Result<Vec<String>> {
    let mut reports = Vec::new();
    let events = &mut pass.events;
    for (grid, key) in &pass.over {
        let dir = run_root.join(grid).join("report");
        if grids::reported(&dir, key) {
            continue;
        }
        let written = super::report::write(session, grid, &dir, &mut std::io::sink())
            .and_then(|paths| grids::mark_reported(&dir, key).map(|()| paths));
        match written {
            Ok(paths) => {
                let first = paths.first().map_or(dir.clone(), |p| p.clone());
                reports.push(first.to_string());
                let line = format!("grid {grid}: every cell has ended; its report is in {first}");
                tend::say(
                    out,
                    events,
                    Event::said(EventKind::Report, Some(grid), line),
                )?;
            }
            Err(e) => {
                let line = format!("grid {grid}: its report could not be written: {e}");
                tend::say(
                    out,
                    events,
                    Event::said(EventKind::Report, Some(grid), line),
                )?;
                problems.push(format!(
                    "the report of grid {} could not be written",
                    one_line(grid)
                ));
            }
        }
    }
    Ok(reports)
}

/// `tend --json`: the pass as one document.
#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct Tended {
    pub cluster: String,
    /// Each event's message: the lines the text prints.
    pub lines: Vec<String>,
    /// Runs (and grids) a person should look at.
    pub look: usize,
    /// Grids whose every cell has ended.
    pub grids_over: Vec<String>,
    /// Where each report written in this pass is.
    pub reports: Vec<String>,
    pub problems: Vec<String>,
    /// What the pass said, typed: each with its `kind`, the run, the job and the message.
    pub events: Vec<Event>,
}
