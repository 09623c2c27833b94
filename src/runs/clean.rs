//! `rlctl clean`: remove the checkpoint folders of finished runs (measurement runs keep no
//! checkpoints worth their space), after listing them with their sizes and asking.
//!
//! Which folders are in use is read under the run root's turn twice: once for the listing, and
//! again after the answer, just before removing, since cron's `tend` or a launch may have
//! queued a job on one of them while the question waited (the turn is not held across it).

use crate::error::{Error, Result};
use crate::submit::ledger::{Ledger, Record};
use crate::submit::occupancy::Occupancy;
use crate::submit::slurm::Slurm;
use crate::util::fmt::human;
use crate::util::fs::Folder;
use crate::util::out::{confirm, emit as write};
use crate::util::table::{Table, left, right};
use crate::util::turn::Turn;
use camino::{Utf8Path, Utf8PathBuf};
use std::io::Write;

/// Removes the checkpoint folders of `records` (the newest of each selected run), never one
/// that a pending or running job uses, judged as one folder (links followed, one inode by two
/// paths): a queued chain link resumes from its run's folder, and a link can make two runs'
/// folders one.
pub fn clean(
    slurm: &Slurm,
    ledger: &Ledger,
    records: &[Record],
    (checkpoint_root, run_root): (&Utf8Path, &Utf8Path),
    yes: bool,
    out: &mut dyn Write,
) -> Result<()> {
    let occupancy = Occupancy::read(&Turn::take(run_root)?, slurm, ledger)?;
    let root = Folder::of(checkpoint_root);
    let mut doomed: Vec<(&Record, Folder)> = Vec::new();
    // Sizes right-aligned in a column as wide as `1023.9 GiB`.
    let mut listing = Table::new([right().min(10), left()]).indent(2);
    for record in records {
        let dir = &record.checkpoint_dir;
        if keep_in_use(&occupancy, record, out)? {
            continue;
        }
        // Judged where it really is: never outside the checkpoint root, never the root itself.
        let real = Folder::of(dir);
        if !dir.is_dir() || doomed.iter().any(|(_, d)| d.is(&real)) {
            continue;
        }
        if !real.is_within(&root) || real.is(&root) {
            return Err(Error::Unsupported(format!(
                "{}: `{dir}` resolves to `{}`, outside the checkpoint root `{}`: not removing it",
                record.run(),
                real.path,
                root.path
            )));
        }
        let size = human(crate::util::fs::size(dir.as_std_path()));
        listing.row([size, dir.to_string()]);
        doomed.push((record, real));
    }
    if doomed.is_empty() {
        return write(out, "nothing to clean\n");
    }
    let listing = listing.render();
    if !confirm(&format!("remove these checkpoint folders?\n{listing}"), yes)? {
        return write(out, "removed nothing\n");
    }
    // Asked again after the answer, and held until the last folder is gone.
    let turn = Turn::take(run_root)?;
    let occupancy = Occupancy::read(&turn, slurm, ledger)?;
    for (record, _) in doomed {
        if keep_in_use(&occupancy, record, out)? {
            continue;
        }
        let dir: &Utf8PathBuf = &record.checkpoint_dir;
        std::fs::remove_dir_all(dir).map_err(|e| Error::io("remove", dir.clone(), e))?;
        write(out, &format!("{}: removed {dir}\n", record.run()))?;
    }
    Ok(())
}

/// Says so and answers true when a live job uses the record's checkpoint folder.
fn keep_in_use(occupancy: &Occupancy, record: &Record, out: &mut dyn Write) -> Result<bool> {
    let Some(user) = occupancy.occupant(&record.checkpoint_dir, &record.job_name) else {
        return Ok(false);
    };
    let whose = match &user.shared {
        Some((run, _)) if *run != record.run() => format!(" of {run}"),
        _ => String::new(),
    };
    let real = Folder::of(&record.checkpoint_dir).path;
    write(
        out,
        &format!(
            "{}: job {}{whose} is still queued or running; its folder stays (`{real}`)\n",
            record.run(),
            user.job.id
        ),
    )?;
    Ok(true)
}
