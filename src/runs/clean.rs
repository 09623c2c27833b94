//! `rlctl clean`: remove the checkpoint folders of finished runs (measurement runs keep no
//! checkpoints worth their space), after listing them with their sizes and asking. A run's
//! exported model (`export/` in its folder) is what a run is for: it stays unless asked.
//!
//! Which folders are in use is read under the run root's turn twice: once for the listing, and
//! again after the answer, just before removing, since cron's `tend` or a launch may have
//! queued a job on one of them while the question waited (the turn is not held across it).

use crate::error::{Error, Result};
use crate::slurm::Slurm;
use crate::store::ledger::{Ledger, Record};
use crate::submit::occupancy::Occupancy;
use crate::util::fs::{Folder, Size, size_by};
use crate::util::out::{confirm, emit as write};
use crate::util::table::{Table, left, right};
use crate::util::turn::Turn;
use camino::{Utf8Path, Utf8PathBuf};
use schemars::JsonSchema;
use serde::Serialize;
use std::io::Write;
use std::time::{Duration, Instant};

/// How long measuring the folders may take in all: past it, sizes are lower bounds (`≥`).
const MEASURE: Duration = Duration::from_secs(20);

/// What cleaning one checkpoint folder removes.
struct Doomed<'a> {
    record: &'a Record,
    real: Folder,
    /// The folder itself, or (its export kept) every entry in it but the export.
    paths: Vec<Utf8PathBuf>,
    size: Size,
    /// The export folder that stays, and its size.
    kept: Option<(Utf8PathBuf, Size)>,
}

/// Removes the checkpoint folders of `records` (the newest of each selected run), never one
/// that a pending or running job uses, judged as one folder (links followed, one inode by two
/// paths): a queued chain link resumes from its run's folder, and a link can make two runs'
/// folders one. Each folder's export stays unless `exports`.
pub fn clean(
    slurm: &Slurm,
    ledger: &Ledger,
    records: &[Record],
    (checkpoint_root, run_root): (&Utf8Path, &Utf8Path),
    (exports, yes): (bool, bool),
    out: &mut dyn Write,
) -> Result<Cleaned> {
    let mut cleaned = Cleaned {
        confirmed: true,
        removed: Vec::new(),
        freed_bytes: 0,
        freed_whole: true,
    };
    let occupancy = Occupancy::read(&Turn::take(run_root)?, slurm, ledger)?;
    let root = Folder::of(checkpoint_root);
    let mut doomed: Vec<Doomed> = Vec::new();
    let deadline = Instant::now() + MEASURE;
    for record in records {
        if keep_in_use(&occupancy, record, out)? {
            continue;
        }
        // Judged where it really is: one folder by two paths is cleaned once.
        let real = Folder::of(&record.checkpoint_dir);
        if !record.checkpoint_dir.is_dir() || doomed.iter().any(|d| d.real.is(&real)) {
            continue;
        }
        doomed.extend(Doomed::measure(record, real, &root, exports, deadline)?);
    }
    if doomed.is_empty() {
        write(out, "nothing to clean\n")?;
        return Ok(cleaned);
    }
    if !confirm(&question(&doomed, exports), yes)? {
        cleaned.confirmed = false;
        write(out, "removed nothing\n")?;
        return Ok(cleaned);
    }
    // Asked again after the answer, and held until the last folder is gone.
    let turn = Turn::take(run_root)?;
    let occupancy = Occupancy::read(&turn, slurm, ledger)?;
    let mut freed = Size::NOTHING;
    for d in doomed {
        if keep_in_use(&occupancy, d.record, out)? {
            continue;
        }
        d.remove()?;
        freed = freed + d.size;
        let dir = &d.record.checkpoint_dir;
        let line = match &d.kept {
            Some((export, size)) => {
                format!(
                    "removed {dir} ({}); kept its export {export} ({size})",
                    d.size
                )
            }
            None => format!("removed {dir} ({})", d.size),
        };
        write(out, &format!("{}: {line}\n", d.record.run()))?;
        cleaned.removed.push(Removed {
            run: d.record.run(),
            checkpoint_dir: dir.to_string(),
            bytes: d.size.bytes,
            whole: d.size.whole,
            export: d.kept.as_ref().map(|(export, _)| export.to_string()),
            export_bytes: d.kept.as_ref().map(|(_, size)| size.bytes),
        });
    }
    write(out, &format!("freed {freed}\n"))?;
    (cleaned.freed_bytes, cleaned.freed_whole) = (freed.bytes, freed.whole);
    Ok(cleaned)
}

/// What a clean removed.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Cleaned {
    /// False when the question was answered no: nothing was removed.
    pub confirmed: bool,
    pub removed: Vec<Removed>,
    pub freed_bytes: u64,
    /// False when measuring ran out of time: the bytes are a lower bound.
    pub freed_whole: bool,
}

/// One checkpoint folder removed (or emptied but for its export).
#[derive(Debug, Serialize, JsonSchema)]
pub struct Removed {
    pub run: String,
    pub checkpoint_dir: String,
    pub bytes: u64,
    pub whole: bool,
    /// The export kept in it, and its size.
    pub export: Option<String>,
    pub export_bytes: Option<u64>,
}

impl<'a> Doomed<'a> {
    /// What cleaning `record`'s checkpoint folder (`real`, where it really is) would remove,
    /// measured until `deadline`; `None` when nothing. A folder outside the checkpoint `root`,
    /// or the root itself, is refused.
    fn measure(
        record: &'a Record,
        real: Folder,
        root: &Folder,
        exports: bool,
        deadline: Instant,
    ) -> Result<Option<Doomed<'a>>> {
        let dir = &record.checkpoint_dir;
        if !real.is_within(root) || real.is(root) {
            return Err(Error::Unsupported(format!(
                "{}: `{dir}` resolves to `{}`, outside the checkpoint root `{}`: not removing it",
                record.run(),
                real.path,
                root.path
            )));
        }
        let (paths, kept) = parts(dir, exports)?;
        if paths.is_empty() {
            return Ok(None);
        }
        let size = (paths.iter())
            .map(|p| size_by(p.as_std_path(), Some(deadline)))
            .fold(Size::NOTHING, |sum, s| sum + s);
        let kept = kept.map(|k| {
            let size = size_by(k.as_std_path(), Some(deadline));
            (k, size)
        });
        Ok(Some(Doomed {
            record,
            real,
            paths,
            size,
            kept,
        }))
    }

    /// Removes what was measured; a path already gone is fine.
    fn remove(&self) -> Result<()> {
        for path in &self.paths {
            let meta = std::fs::symlink_metadata(path);
            let removed = match meta {
                Ok(m) if m.is_dir() => std::fs::remove_dir_all(path),
                Ok(_) => std::fs::remove_file(path),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(e),
            };
            removed.map_err(|e| Error::io("remove", path.clone(), e))?;
        }
        Ok(())
    }
}

/// The question asked before removing: each folder with its size (and the export it keeps),
/// then the total.
fn question(doomed: &[Doomed], exports: bool) -> String {
    // Sizes right-aligned in a column as wide as `1023.9 GiB`.
    let mut listing = Table::new([right().min(10), left(), left()]).indent(2);
    for d in doomed {
        let note =
            (d.kept.as_ref()).map_or(String::new(), |(_, size)| format!("(export kept: {size})"));
        listing.row([
            d.size.to_string(),
            d.record.checkpoint_dir.to_string(),
            note,
        ]);
    }
    let total = doomed.iter().fold(Size::NOTHING, |sum, d| sum + d.size);
    listing.row([total.to_string(), "to free in all".into(), String::new()]);
    let listing = listing.render();
    let what = if exports {
        "these checkpoint folders, exports included"
    } else {
        "these checkpoint folders (exports stay; --exports removes them too)"
    };
    format!("remove {what}?\n{listing}")
}

/// What cleaning `dir` removes, and the export it keeps: the whole folder with `exports` (or
/// when it holds no export, or is itself a link), else every entry of it but the export.
fn parts(dir: &Utf8Path, exports: bool) -> Result<(Vec<Utf8PathBuf>, Option<Utf8PathBuf>)> {
    let export = crate::plan::export_path_in(dir);
    let is_link = std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink());
    if exports || is_link || std::fs::symlink_metadata(&export).is_err() {
        return Ok((vec![dir.to_owned()], None));
    }
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io("read", dir, e))?;
    let mut paths = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io("read", dir, e))?;
        let Ok(path) = Utf8PathBuf::from_path_buf(entry.path()) else {
            return Err(Error::Unsupported(format!(
                "`{dir}` holds a name that is not UTF-8: not cleaning it"
            )));
        };
        if path != export {
            paths.push(path);
        }
    }
    paths.sort();
    Ok((paths, Some(export)))
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
