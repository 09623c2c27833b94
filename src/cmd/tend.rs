//! `rlctl tend [RUN|GRID...]`: one pass over recorded runs and grids, for cron (see
//! `runs::tend`); a grid whose every cell has ended gets its report, once.

use super::Session;
use crate::error::{Error, Result};
use crate::runs::{alerts::Thresholds, grids, tend};
use crate::util::out::emit;
use std::io::Write;

pub fn run(
    session: &Session,
    names: &[String],
    max_attempts: u32,
    cancel_on_alert: bool,
    out: &mut dyn Write,
) -> Result<()> {
    let ledger = session.ledger()?;
    let cluster = session.cluster()?;
    let context = crate::submit::context(&cluster);
    let options = tend::Options {
        max_attempts,
        cancel_on_alert,
        thresholds: Thresholds::default(),
        stall_floor_s: cluster.watch.stall_floor_s,
        submit_limits: context.submit_limits,
        gpus_per_node: cluster.node.gpus,
    };
    let run_root = cluster.storage.run_root.clone();
    let pass = tend::tend(&session.slurm, &ledger, &run_root, names, &options, out)?;
    let mut look = pass.look;
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
                emit(
                    out,
                    &format!("grid {grid}: every cell has ended; its report is in {first}\n"),
                )?;
            }
            Err(e) => {
                look += 1;
                emit(
                    out,
                    &format!("grid {grid}: its report could not be written: {e}\n"),
                )?;
            }
        }
    }
    match look {
        0 => Ok(()),
        n => Err(Error::Problems(format!(
            "{n} run{} need{} a look",
            if n == 1 { "" } else { "s" },
            if n == 1 { "s" } else { "" }
        ))),
    }
}
