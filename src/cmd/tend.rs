//! `rlctl tend [RUN|GRID...]`: one pass over recorded runs, for cron (see `runs::tend`).

use super::Session;
use crate::error::Result;
use crate::runs::{alerts::Thresholds, tend};
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
    let options = tend::Options {
        max_attempts,
        cancel_on_alert,
        thresholds: Thresholds::default(),
        stall_floor_s: cluster.watch.stall_floor_s,
    };
    let run_root = cluster.storage.run_root.clone();
    tend::tend(&session.slurm, &ledger, &run_root, names, &options, out)
}
