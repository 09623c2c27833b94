//! `rlctl clean`: remove the checkpoint folders of finished runs (measurement runs keep no
//! checkpoints worth their space), after listing them with their sizes and asking.

use crate::error::{Error, Result};
use crate::submit::ledger::Record;
use crate::submit::slurm::Slurm;
use crate::util::fmt::human;
use crate::util::fs::resolve;
use crate::util::out::{confirm, emit as write};
use crate::util::table::{Table, left, right};
use camino::{Utf8Path, Utf8PathBuf};
use std::collections::BTreeSet;
use std::io::Write;

/// Removes the checkpoint folders of `records` (the newest of each selected run), never one
/// that a pending or running job of `ledger` (every record) uses, judged resolved: a queued
/// chain link resumes from its run's folder, and a link can make two runs' folders one.
pub fn clean(
    slurm: &Slurm,
    records: &[Record],
    ledger: &[Record],
    checkpoint_root: &Utf8Path,
    yes: bool,
    out: &mut dyn Write,
) -> Result<()> {
    let queued: BTreeSet<String> = slurm.queued()?.into_iter().map(|j| j.id).collect();
    let in_use: Vec<(&Record, Utf8PathBuf)> = (ledger.iter())
        .filter(|r| queued.contains(&r.job_id))
        .map(|r| (r, resolve(&r.checkpoint_dir)))
        .collect();
    let root = resolve(checkpoint_root);
    let mut doomed: Vec<(String, Utf8PathBuf)> = Vec::new();
    // Sizes right-aligned in a column as wide as `1023.9 GiB`.
    let mut listing = Table::new([right().min(10), left()]).indent(2);
    for record in records {
        let dir = &record.checkpoint_dir;
        // Judged where it really is: never outside the checkpoint root, never the root itself.
        let real = resolve(dir);
        if let Some((user, _)) = in_use.iter().find(|(_, f)| *f == real) {
            let whose = match user.run() == record.run() {
                true => String::new(),
                false => format!(" of {}", user.run()),
            };
            write(
                out,
                &format!(
                    "{}: job {}{whose} is still queued or running; its folder stays (`{real}`)\n",
                    record.run(),
                    user.job_id
                ),
            )?;
            continue;
        }
        if !dir.is_dir() || doomed.iter().any(|(_, d)| resolve(d) == real) {
            continue;
        }
        if !real.starts_with(&root) || real == root {
            return Err(Error::Unsupported(format!(
                "{}: `{dir}` resolves to `{real}`, outside the checkpoint root `{root}`: not removing it",
                record.run()
            )));
        }
        let size = human(crate::util::fs::size(dir.as_std_path()));
        listing.row([size, dir.to_string()]);
        doomed.push((record.run(), dir.clone()));
    }
    if doomed.is_empty() {
        return write(out, "nothing to clean\n");
    }
    let listing = listing.render();
    if !confirm(&format!("remove these checkpoint folders?\n{listing}"), yes)? {
        return write(out, "removed nothing\n");
    }
    for (target, dir) in doomed {
        std::fs::remove_dir_all(&dir).map_err(|e| Error::io("remove", dir.clone(), e))?;
        write(out, &format!("{target}: removed {dir}\n"))?;
    }
    Ok(())
}
