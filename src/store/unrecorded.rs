//! No queued job without a record: before sbatch, the record a submission will write is kept as
//! an intent in `<run_root>/.intents/`; the record replaces it once sbatch answers. An intent
//! left behind (rlctl killed between sbatch and its record, a ledger that failed to append) is
//! reconciled by the next command that reads the queue under the run root's turn: the queued
//! job of its run folder is recorded, or, past [`STALE_S`], the job accounting saw run and end
//! is, or the intent is reported and dropped (kept when accounting cannot tell).

use crate::error::{Error, Result};
use crate::slurm::{QueuedJob, Slurm};
use crate::store::ledger::{Ledger, Record, unix_now};
use crate::util::fs::write_atomic;
use crate::util::turn::Turn;
use camino::{Utf8Path, Utf8PathBuf};
use serde::{Deserialize, Serialize};

/// The folder of the run root the intents are kept in.
pub const DIR: &str = ".intents";

/// The job id of a record before sbatch has given one (in its log's name too).
pub const NO_JOB_YET: &str = "%j";

/// How old an intent with no job in the queue is before it is reported and dropped: sbatch's
/// own bound is a minute, and a job shows in squeue as soon as sbatch returns.
pub const STALE_S: i64 = 600;

/// What an intent file holds: when it was written, and the record as it will be, but for
/// its job id.
#[derive(Debug, Serialize, Deserialize)]
struct Kept {
    written_unix: i64,
    record: Record,
}

/// An intent on disk, until its record is written ([`Intent::done`]).
#[must_use]
pub struct Intent {
    path: Utf8PathBuf,
}

impl Intent {
    /// The record is written: the intent is no longer needed.
    pub fn done(self) {
        let _ = std::fs::remove_file(&self.path);
    }

    /// Where it is kept, for a message.
    pub fn path(&self) -> &Utf8Path {
        &self.path
    }
}

/// Runs `argv` (sbatch) with `record` (its job id still [`NO_JOB_YET`]) kept as an intent while
/// it runs; refused before sbatch when the ledger cannot be appended to or the intent cannot
/// be written. Returns the record with its job id and log filled in, and the intent, which the
/// caller marks [`Intent::done`] once the record is written. An sbatch that may have queued a
/// job (no id printed, timed out) keeps its intent for the next command to reconcile.
pub fn sbatch(
    slurm: &Slurm,
    ledger: &Ledger,
    argv: &[String],
    record: &Record,
) -> Result<(Record, Intent)> {
    ledger.appendable()?;
    let intent = intend(ledger, record)?;
    match slurm.submit(argv) {
        Ok(job_id) => Ok((filled(record.clone(), &job_id), intent)),
        Err(e) if may_have_queued(&e) => Err(e),
        Err(e) => {
            intent.done();
            Err(e)
        }
    }
}

/// Whether a failed sbatch may still have queued its job: it printed no job id, or did not
/// answer in time. Its intent and run folder are then kept.
pub fn may_have_queued(e: &Error) -> bool {
    matches!(e, Error::SbatchNoJobId { .. } | Error::SlurmTimedOut { .. })
}

/// Writes `record`'s intent beside the ledger, atomically.
fn intend(ledger: &Ledger, record: &Record) -> Result<Intent> {
    let dir = dir_of(ledger);
    std::fs::create_dir_all(&dir).map_err(|e| Error::io("create", &dir, e))?;
    let now = unix_now();
    let name = format!("{now}-{}-{}.json", std::process::id(), record.job_name);
    let path = dir.join(name.replace('/', "_"));
    let kept = Kept {
        written_unix: now,
        record: record.clone(),
    };
    let text = serde_json::to_string(&kept).map_err(|e| Error::io("write", &path, e.into()))?;
    write_atomic(&path, &text, 0o644)?;
    Ok(Intent { path })
}

/// `record` as job `job_id`: its id, and its log's name.
fn filled(mut record: Record, job_id: &str) -> Record {
    let log = record.log.file_name().unwrap_or_default();
    record.log = record.log.with_file_name(log.replace(NO_JOB_YET, job_id));
    record.job_id = job_id.to_owned();
    record
}

fn dir_of(ledger: &Ledger) -> Utf8PathBuf {
    ledger.path().parent().expect("absolute").join(DIR)
}

/// Whether any intent is left in the run root (one folder listing): only then does a command
/// that reads no queue otherwise (`status`) take the turn to reconcile it.
pub fn any(ledger: &Ledger) -> bool {
    std::fs::read_dir(dir_of(ledger)).is_ok_and(|mut d| d.next().is_some())
}

/// Reconciles every intent left in the run root with `queued` (read under `_turn`, which the
/// writer of each intent held until its record was written: an intent seen here is one whose
/// writer is gone). The job of its run folder is recorded if the ledger lacks it; an intent
/// with no job in the queue is left for [`STALE_S`], then looked up in accounting (one sacct
/// call for all of them): a job that ran and ended is recorded, none is reported and dropped,
/// and where accounting cannot tell the intent is said and kept. One that cannot be settled is
/// said, and left for the next command.
pub fn reconcile(_turn: &Turn, slurm: &Slurm, ledger: &Ledger, queued: &[QueuedJob]) {
    let mut stale = Vec::new();
    for (path, kept) in kept(ledger) {
        match kept.and_then(|kept| Ok((settle(ledger, &kept, queued, false)?, kept))) {
            Ok((true, _)) => drop(std::fs::remove_file(&path)),
            Ok((false, kept)) if unix_now() - kept.written_unix >= STALE_S => {
                stale.push((path, kept));
            }
            Ok((false, _)) => {}
            Err(e) => crate::util::out::warn(&format!("{path}: left as it is: {e}")),
        }
    }
    if !stale.is_empty() {
        ended(slurm, ledger, &stale);
    }
}

/// Every intent file of the run root, oldest first, read.
fn kept(ledger: &Ledger) -> Vec<(Utf8PathBuf, Result<Kept>)> {
    let Ok(entries) = dir_of(ledger).read_dir_utf8() else {
        return Vec::new();
    };
    let mut paths: Vec<Utf8PathBuf> = (entries.filter_map(|e| e.ok()))
        .map(|e| e.into_path())
        .filter(|p| p.extension() == Some("json"))
        .collect();
    paths.sort();
    (paths.into_iter())
        .map(|path| {
            let kept = std::fs::read_to_string(&path)
                .ok()
                .and_then(|t| serde_json::from_str::<Kept>(&t).ok())
                .ok_or_else(|| Error::Problems("not an intent rlctl can read".to_owned()));
            (path, kept)
        })
        .collect()
}

/// Stale intents, against accounting: each recorded when its job ran and ended, dropped when
/// accounting holds none since it was written, kept and said when accounting cannot answer.
fn ended(slurm: &Slurm, ledger: &Ledger, stale: &[(Utf8PathBuf, Kept)]) {
    let names: std::collections::BTreeSet<&str> = (stale.iter())
        .map(|(_, k)| k.record.job_name.as_str())
        .collect();
    let oldest = (stale.iter())
        .map(|(_, k)| k.written_unix)
        .min()
        .unwrap_or_default();
    // From a minute before the oldest intent: its job was submitted after it was written.
    let since = unix_now() - oldest + 60;
    let names: Vec<&str> = names.into_iter().collect();
    let accounted = slurm.accounted_by_name(&names, since);
    for (path, kept) in stale {
        let record = &kept.record;
        let settled = match &accounted {
            Err(why) => {
                crate::util::out::warn(&format!(
                    "{}: an sbatch of run folder {} left no record, SLURM holds no job of it, and \
                     accounting cannot tell whether it ran ({why}): kept; look with `sacct --name \
                     {}`, then delete {path}",
                    record.run(),
                    record.run_dir,
                    record.job_name
                ));
                continue;
            }
            Ok(jobs) => settle(ledger, kept, jobs, true),
        };
        match settled {
            Ok(true) => {}
            Ok(false) => crate::util::out::warn(&format!(
                "{}: an sbatch of run folder {} left no record, and neither the queue nor \
                 accounting holds a job of it: it was never queued; forgotten",
                record.run(),
                record.run_dir,
            )),
            Err(e) => {
                crate::util::out::warn(&format!("{path}: left as it is: {e}"));
                continue;
            }
        }
        let _ = std::fs::remove_file(path);
    }
}

/// One intent against `jobs` (the queue, or accounting's jobs when `accounted`): true when the
/// job of its run folder is recorded (now, or already), false when `jobs` hold none.
fn settle(ledger: &Ledger, kept: &Kept, jobs: &[QueuedJob], accounted: bool) -> Result<bool> {
    let record = &kept.record;
    let found = job_of(record, jobs);
    let recorded = match found {
        Some((job, _)) => !ledger.records_of(|id| id == job.id)?.is_empty(),
        None => false,
    };
    // A job found by its name alone that the ledger knows is another run's.
    let Some((job, _)) = found.filter(|(_, by_script)| *by_script || !recorded) else {
        return Ok(false);
    };
    if !recorded {
        let record = filled(record.clone(), &job.id);
        let text = toml::to_string(&record).map_err(Error::Serialize)?;
        write_atomic(&record.run_dir.join("submission.toml"), &text, 0o644)?;
        ledger.append(&record)?;
        let how = match job.state.as_str() {
            _ if !accounted => "was queued".to_owned(),
            "PENDING" | "RUNNING" | "REQUEUED" | "SUSPENDED" | "CONFIGURING" | "COMPLETING" => {
                format!("is {} in accounting", job.state)
            }
            state => format!("ran and ended ({state})"),
        };
        crate::say!(
            "rlctl: job {} of {} {how} without a record (rlctl stopped between sbatch and its \
             record): recorded now",
            job.id,
            record.run()
        );
    }
    Ok(true)
}

/// The job of the intent's run folder: the one whose command is its `sbatch.sh`; where squeue
/// (or sacct) names no command, the one job of its job name. True when found by its script.
fn job_of<'a>(record: &Record, queued: &'a [QueuedJob]) -> Option<(&'a QueuedJob, bool)> {
    let script = record.run_dir.join("sbatch.sh");
    if let Some(job) = queued.iter().find(|j| j.command == script.as_str()) {
        return Some((job, true));
    }
    let mut named = (queued.iter()).filter(|j| j.command.is_empty() && j.name == record.job_name);
    match (named.next(), named.next()) {
        (Some(job), None) => Some((job, false)),
        _ => None,
    }
}
