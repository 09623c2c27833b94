//! `rlctl tend [RUN|GRID...]`: one pass over recorded runs, for cron (see `runs::tend`), then
//! with `--sync-wandb` an upload of their offline W&B runs (see `runs::wandb_sync`).

use super::Session;
use crate::error::{Error, Result};
use crate::runs::{alerts::Thresholds, tend, wandb_sync};
use std::io::Write;

pub fn run(
    session: &Session,
    names: &[String],
    max_attempts: u32,
    cancel_on_alert: bool,
    sync: Option<wandb_sync::Options>,
    out: &mut dyn Write,
) -> Result<()> {
    let ledger = session.ledger()?;
    let options = tend::Options {
        max_attempts,
        cancel_on_alert,
        thresholds: Thresholds::default(),
    };
    let run_root = session.cluster()?.storage.run_root.clone();
    let passed = tend::tend(&session.slurm, &ledger, &run_root, names, &options, out);
    let Some(sync) = sync else {
        return passed;
    };
    // After the pass and outside its turn: a slow upload holds up no launch. A pass that needs
    // a look still syncs.
    let synced = wandb_sync::sync(&ledger, names, &sync, out);
    match (passed, synced) {
        (Err(Error::Problems(a)), Err(Error::Problems(b))) => {
            Err(Error::Problems(format!("{a}; {b}")))
        }
        (Err(e), _) | (Ok(()), Err(e)) => Err(e),
        (Ok(()), Ok(())) => Ok(()),
    }
}
