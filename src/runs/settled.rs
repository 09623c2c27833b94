//! Runs SLURM no longer knows: none of their jobs in the queue, none in accounting (purged, or a
//! site without it). Their state can only come from their logs, and a `status` would read every
//! such log's end (a megabyte each) and ask accounting again on every call. Once the log has
//! been quiet for [`QUIET_S`], its verdict and row are kept in the sealed index ("settled"),
//! keyed by the run's newest job and by its log as it stood ([`Stamp`]): a new job, or a log
//! written, replaced or removed since, reopens the run, and so does SLURM holding one of its
//! jobs again or accounting knowing it (a `tend` pass still asks).

use crate::runs::probe::Probe;
use crate::store::ledger::{Record, Run};
use camino::Utf8Path;
use serde::{Deserialize, Serialize};
use std::os::unix::fs::MetadataExt;

/// How long a log (or, without one, its job's submission) must be quiet before its run is
/// settled: a job that just left the queue may not have reached accounting yet (slurmdbd
/// lags behind slurmctld under load), and its state is then accounting's, not its log's.
pub const QUIET_S: i64 = 600;

/// A log as it stood when its run was settled: the same file, with the same size and times.
/// A log not there is `None` (a job that never started); its appearance reopens the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_s: i64,
    mtime_ns: i64,
    ctime_s: i64,
    ctime_ns: i64,
}

impl Stamp {
    /// The log as it stands now: `Ok(None)` when it is not there, `Err` when it cannot be told.
    pub fn of(log: &Utf8Path) -> std::io::Result<Option<Stamp>> {
        match std::fs::metadata(log) {
            Ok(m) => Ok(Some(Stamp {
                dev: m.dev(),
                ino: m.ino(),
                size: m.len(),
                mtime_s: m.mtime(),
                mtime_ns: m.mtime_nsec(),
                ctime_s: m.ctime(),
                ctime_ns: m.ctime_nsec(),
            })),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// What a settled seal keeps beyond a sealed one: where its state came from (`log`, or `none`
/// without a log) and its log as it stood.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settled {
    pub source: String,
    pub log: Option<Stamp>,
}

impl Settled {
    /// The state's source as a row says it.
    pub fn source(&self) -> &'static str {
        match self.source.as_str() {
            "log" => "log",
            _ => "none",
        }
    }

    /// Whether `log` is as it stood when the run was settled.
    pub fn holds(&self, log: &Utf8Path) -> bool {
        Stamp::of(log).is_ok_and(|now| now == self.log)
    }
}

/// The settlement of `run`, whose newest job `record` has its state from `source`, if SLURM
/// knows none of its jobs (the probe's queue holds none, and accounting answered and knows
/// none), and its log (or its submission, without a log) has been quiet for [`QUIET_S`] at
/// `now_s`; else `None`.
pub fn settlement(
    probe: &Probe,
    run: &Run,
    record: &Record,
    source: &str,
    now_s: i64,
) -> Option<Settled> {
    let unknown = matches!(source, "log" | "none")
        && probe.warnings.is_empty()
        && record.job_id == run.latest().job_id
        && (run.records.iter()).all(|r| probe.known(r).is_none());
    if !unknown {
        return None;
    }
    let log = Stamp::of(&record.log).ok()?;
    let quiet_since = log.as_ref().map_or(record.submitted_unix, |s| s.mtime_s);
    (now_s - quiet_since >= QUIET_S).then(|| Settled {
        source: source.to_owned(),
        log,
    })
}

/// Seconds since the epoch, now.
pub fn now_s() -> i64 {
    (std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH))
        .map_or(0, |d| d.as_secs() as i64)
}
