//! `rlctl tend [RUN|GRID...]`: one pass over recorded runs, for cron (see `runs::tend`).

use super::Session;
use crate::error::Result;
use crate::runs::{self, alerts::Thresholds, tend};
use crate::submit::ledger::Record;
use std::io::Write;

pub fn run(
    session: &Session,
    names: &[String],
    max_attempts: u32,
    cancel_on_alert: bool,
    out: &mut dyn Write,
) -> Result<()> {
    let ledger = session.ledger()?;
    let mut records: Vec<Record> = Vec::new();
    if names.is_empty() {
        records = runs::select(&ledger, None)?;
    }
    for name in names {
        for record in runs::select(&ledger, Some(name))? {
            // A grid and one of its cells may both be named: each run once.
            if !records.iter().any(|r| r.job_id == record.job_id) {
                records.push(record);
            }
        }
    }
    let options = tend::Options {
        max_attempts,
        cancel_on_alert,
        thresholds: Thresholds::default(),
    };
    let run_root = session.cluster()?.storage.run_root.clone();
    tend::tend(&session.slurm, &ledger, &run_root, &records, &options, out)
}
