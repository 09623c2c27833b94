//! `rlctl clean`: remove the checkpoint folders of finished runs, after confirming.

use super::Session;
use crate::error::Result;
use crate::runs;
use std::io::Write;

pub fn run(session: &Session, run: &str, yes: bool, out: &mut dyn Write) -> Result<()> {
    let cluster = session.cluster()?;
    runs::clean::clean(
        &session.slurm,
        &runs::select(&session.ledger()?, Some(run))?,
        &cluster.storage.checkpoint_root,
        yes,
        out,
    )
}
