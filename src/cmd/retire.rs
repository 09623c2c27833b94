//! `rlctl retire RUN...`: recorded runs made history, their folders kept (see `runs::retire`).

use super::Session;
use crate::cli::RetireArgs;
use crate::error::Result;
use crate::runs::retire::retire;
use std::io::Write;

pub fn run(session: &Session, args: &RetireArgs, out: &mut dyn Write) -> Result<()> {
    if args.dry_run {
        crate::util::out::preview();
    }
    let run_root = session.cluster()?.storage.run_root.clone();
    // --json: the lines are not shown; the JSON is said from what was retired.
    let shown: &mut dyn Write = if args.json {
        &mut std::io::sink()
    } else {
        &mut *out
    };
    let retired = retire(
        &session.slurm,
        &session.ledger()?,
        &run_root,
        &args.runs,
        args.yes,
        shown,
    )?;
    if args.json {
        return crate::util::out::emit(out, &crate::util::versioned::document(&retired));
    }
    if let Some(first) = retired.runs.first() {
        crate::say!("next: `{}` runs it afresh", first.again);
    }
    Ok(())
}
