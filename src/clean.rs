//! `rlctl clean`: remove the checkpoint folders of finished runs (measurement runs keep no
//! checkpoints worth their space), after listing them with their sizes and asking.

use crate::error::{Error, Result};
use crate::follow::{confirm, write};
use crate::ledger::Record;
use crate::preflight::resolve;
use crate::slurm::Slurm;
use camino::Utf8Path;
use std::collections::BTreeSet;
use std::io::Write;

pub fn clean(
    slurm: &Slurm,
    records: &[Record],
    checkpoint_root: &Utf8Path,
    yes: bool,
    out: &mut dyn Write,
) -> Result<()> {
    let queued: BTreeSet<String> = slurm.queued()?.into_iter().map(|j| j.id).collect();
    let root = resolve(checkpoint_root);
    let mut doomed = Vec::new();
    let mut listing = String::new();
    for record in records {
        let dir = &record.checkpoint_dir;
        if queued.contains(&record.job_id) {
            write(
                out,
                &format!(
                    "{}: job {} is still queued or running; its folder stays\n",
                    record.target, record.job_id
                ),
            )?;
            continue;
        }
        if !dir.is_dir() {
            continue;
        }
        // Judged where it really is: never outside the checkpoint root, never the root itself.
        let real = resolve(dir);
        if !real.starts_with(&root) || real == root {
            return Err(Error::Unsupported(format!(
                "{}: `{dir}` resolves to `{real}`, outside the checkpoint root `{root}`: not removing it",
                record.target
            )));
        }
        listing.push_str(&format!(
            "  {:>10}  {dir}\n",
            human(size(dir.as_std_path()))
        ));
        doomed.push((record.target.clone(), dir.clone()));
    }
    if doomed.is_empty() {
        return write(out, "nothing to clean\n");
    }
    if !confirm(&format!("remove these checkpoint folders?\n{listing}"), yes)? {
        return write(out, "removed nothing\n");
    }
    for (target, dir) in doomed {
        std::fs::remove_dir_all(&dir).map_err(|e| Error::io("remove", dir.clone(), e))?;
        write(out, &format!("{target}: removed {dir}\n"))?;
    }
    Ok(())
}

/// Bytes under a folder, symlinks not followed.
fn size(path: &std::path::Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    if !meta.is_dir() {
        return meta.len();
    }
    std::fs::read_dir(path)
        .map(|entries| entries.flatten().map(|e| size(&e.path())).sum())
        .unwrap_or(0)
}

fn human(bytes: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < units.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", units[unit])
    }
}
