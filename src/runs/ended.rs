//! Why a failed job ended when its log does not say: a job that dies before its trainer
//! prints an error (a full disk may not leave room even for the log) is told by SLURM's
//! accounting, and a full disk is named, by the error's own words or by the room left now.
//! One author for `logs --errors`, `tend` and `watch`.

use crate::slurm::Slurm;
use crate::store::ledger::Record;
use crate::util::fmt::human;
use crate::util::fs::room;

/// Free space below which a filesystem the job wrote to counts as full: less than the log,
/// Ray's and the trainer's first files need to start.
const NEARLY_FULL: u64 = 1 << 30;

/// The words of an error that says a filesystem is full (ENOSPC) or a quota spent (EDQUOT).
const FULL: [&str; 4] = [
    "No space left on device",
    "Disk quota exceeded",
    "[Errno 28]",
    "[Errno 122]",
];

/// What SLURM says of why job `job_id` ended (state, exit code, derived exit code, reason),
/// or why it could not say and how to ask.
pub fn slurm_says(slurm: &Slurm, job_id: &str) -> String {
    match slurm.ended(job_id) {
        Ok(ended) => ended.to_string(),
        Err(why) => format!(
            "SLURM could not say why it ended ({why}): ask with `sacct -j {job_id} -o State,ExitCode,DerivedExitCode,Reason`"
        ),
    }
}

/// The full-disk advice when `error` says a filesystem is full; else nothing.
pub fn full_disk(error: &str, record: &Record) -> String {
    match FULL.iter().any(|w| error.contains(w)) {
        true => advice("A full disk or a spent quota", record),
        false => String::new(),
    }
}

/// For a job whose log says nothing: the full-disk advice when `error` says so, or when the
/// filesystem of its checkpoints or its log is nearly full now (with the figures); else nothing.
pub fn likely_full_disk(error: &str, record: &Record) -> String {
    let said = full_disk(error, record);
    if !said.is_empty() {
        return said;
    }
    let ckpt = record.ckpt_path();
    let low = [ckpt.as_path(), record.log.as_path()]
        .into_iter()
        .filter_map(room)
        .find(|r| r.free < NEARLY_FULL);
    match low {
        Some(r) => advice(
            &format!(
                "Likely a full disk: the filesystem of `{}` has {} free now",
                r.at,
                human(r.free)
            ),
            record,
        ),
        None => String::new(),
    }
}

/// One wording of what to do about a full disk.
fn advice(why: &str, record: &Record) -> String {
    format!(
        ". {why}: free space where the trainer wrote (the checkpoints in `{}`: \
         `df -h` and the site's quota command say how much is left), then resume the run with \
         `--resume latest`: it restarts from its newest whole checkpoint",
        record.ckpt_path()
    )
}
