//! `rlctl clean`: remove the checkpoint folders of finished runs, after confirming.

use super::Session;
use crate::error::Result;
use crate::runs;
use std::io::Write;

pub fn run(session: &Session, run: &str, yes: bool, out: &mut dyn Write) -> Result<()> {
    let cluster = session.cluster()?;
    let ledger = session.ledger()?;
    runs::clean::clean(
        &session.slurm,
        &runs::select(&ledger, Some(run))?,
        &ledger.records()?,
        &cluster.storage.checkpoint_root,
        yes,
        out,
    )
}
