//! `rlctl clean`: remove the checkpoint folders of finished runs, exports kept unless asked,
//! after confirming.

use super::Session;
use crate::cli::CleanArgs;
use crate::error::Result;
use crate::runs;
use std::io::Write;

pub fn run(session: &Session, args: &CleanArgs, out: &mut dyn Write) -> Result<()> {
    if args.dry_run {
        crate::util::out::preview();
    }
    let cluster = session.cluster()?;
    let ledger = session.ledger()?;
    let storage = &cluster.storage;
    // --json: the lines are not shown; the JSON is said from what was removed.
    let shown: &mut dyn Write = if args.json {
        &mut std::io::sink()
    } else {
        &mut *out
    };
    let cleaned = runs::clean::clean(
        &session.slurm,
        &ledger,
        &runs::select(&ledger, Some(&args.run))?,
        (&storage.checkpoint_root, &storage.run_root),
        (args.exports, args.yes),
        shown,
    )?;
    match args.json {
        true => crate::util::out::emit(out, &crate::util::versioned::document(&cleaned)),
        false => Ok(()),
    }
}
