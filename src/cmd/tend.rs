//! `rlctl tend [RUN|GRID...]`: one pass over recorded runs and grids, for cron (see
//! `runs::tend`); a grid whose every cell has ended gets its report, once; then with
//! `--sync-wandb` (or the profile's `[watch] sync_wandb`) an upload of the runs' offline W&B runs
//! (see `runs::wandb_sync`).

use super::Session;
use crate::cli::TendArgs;
use crate::error::{Error, Result};
use crate::runs::{alerts::Thresholds, grids, tend, wandb_sync};
use crate::util::out::{emit, emit_line, one_line};
use camino::Utf8Path;
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
    // --json: the pass's lines are gathered, and said in one object at the end.
    let mut text: Vec<u8> = Vec::new();
    let json = args.json;
    let out: &mut dyn Write = if json { &mut text } else { &mut *stdout };
    let pass = tend::tend(
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
    let reports = write_reports(session, &run_root, &pass.over, out, &mut problems)?;
    if args.sync_wandb || cluster.watch.sync_wandb {
        // After the pass and outside its turn: a slow upload holds up no launch. A pass that
        // needs a look still syncs.
        match wandb_sync::sync(&ledger, names, &args.sync(), out) {
            Ok(()) => {}
            Err(Error::Problems(why)) => problems.push(why),
            Err(e) => return Err(e),
        }
    }
    if json {
        let doc = serde_json::json!({
            "cluster": cluster.name,
            "lines": String::from_utf8_lossy(&text).lines().collect::<Vec<_>>(),
            "look": pass.look,
            "grids_over": pass.over.iter().map(|(grid, _)| grid).collect::<Vec<_>>(),
            "reports": reports,
            "problems": problems,
        });
        let doc = serde_json::to_string_pretty(&doc).expect("serializes");
        emit(stdout, &format!("{doc}\n"))?;
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
    over: &[(String, String)],
    out: &mut dyn Write,
    problems: &mut Vec<String>,
) -> Result<Vec<String>> {
    let mut reports = Vec::new();
    for (grid, key) in over {
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
                emit_line(
                    out,
                    &format!("grid {grid}: every cell has ended; its report is in {first}"),
                )?;
            }
            Err(e) => {
                emit_line(
                    out,
                    &format!("grid {grid}: its report could not be written: {e}"),
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
