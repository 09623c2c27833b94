//! The index of sealed runs (`<run_root>/.sealed`): what `status` and `tend` need of a run
//! whose job has ended for good, so that a later call neither reads nor stats its log nor asks
//! accounting of it again. 10,000 recorded runs on GPFS cost seconds of `stat` alone; sealed,
//! they cost one small file. (`tend` still reads the checkpoint pointer of a run that timed
//! out and was left for a person: what a person puts there decides its next pass.)
//!
//! A run is sealed once SLURM holds none of its jobs and accounting says how its newest job
//! ended: that job's log is then written for good (a log's own verdict is not enough: its last
//! line is what says it, and is read again). A seal is kept for the run's newest job, so a later job of the run (a `tend`
//! resubmission, a relaunch, a retirement and relaunch) unseals it; and a run SLURM is seen holding
//! a job of again (a job requeued keeps its id) loses its seal for good.
//!
//! A run SLURM no longer knows at all (queue and accounting) is settled on its log's word
//! instead, once the log is quiet (see [`crate::runs::settled`]): kept while the log stands as it
//! was.
//!
//! The index is a cache: only a faster read, never another answer. One that cannot be read, is
//! cut short, corrupted or of another layout is none and is written afresh; one that cannot be
//! written costs the next call a slower read. Readers at once (cron and a person) each replace
//! it whole: an entry one of them loses is sealed again later.

use crate::runs::log::last_error;
use crate::runs::probe::{JobState, Queue};
use crate::runs::settled::Settled;
use crate::runs::state::{RunState, Shown};
use crate::store::ledger::{Record, Run};
use crate::util::mark::{load_summed, store_summed};
use camino::{Utf8Path, Utf8PathBuf};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The index's layout; an index of another is read as none. 2: GPU-hours kept apart from the
/// row, so that a seal made without one (by `tend`) still answers a grid's usage. 3: the row's
/// alert kinds kept. 4: rows of upstream runs count the steps of its console logger (an
/// older seal may show none). 5: rows show the run's history (every job's steps joined), and
/// the step the job resumed from. 6: runs settled on their logs' word (an older reader would take
/// their state for accounting's).
const FORMAT: u32 = 6;

/// The index's file name in the run root.
pub const FILE: &str = ".sealed";

/// The end states after which SLURM runs the job no more (unless it is requeued, which the
/// queue then shows).
const ENDED: &[&str] = &[
    "COMPLETED",
    "FAILED",
    "CANCELLED",
    "TIMEOUT",
    "NODE_FAIL",
    "PREEMPTED",
    "OUT_OF_MEMORY",
    "BOOT_FAIL",
    "DEADLINE",
];

/// Left in a hung job's run folder when `tend` cancels it before its next attempt can be
/// submitted (its QOS full): the next pass resumes the run as after a TIMEOUT, so it is not over.
pub const STALL_MARK: &str = "stalled.txt";

/// Left in a job's run folder by `rlctl cancel`: its end was asked for, so `watch` says so
/// plainly and exits 0 rather than reporting a run that died.
pub const CANCEL_MARK: &str = "cancelled.txt";

/// Whether the run's newest job has ended for good, in state `job`: SLURM holds none of the
/// run's jobs, accounting says how it ended, and no `tend` pass left the run to
/// resume after a hang.
pub fn ended(run: &Run, queue: &Queue, job: &JobState) -> bool {
    job.source == "sacct"
        && ENDED.contains(&job.state.as_str())
        && !run.records.iter().any(|r| queue.holds(&r.job_id))
        && !(job.state == "CANCELLED" && run.latest().run_dir.join(STALL_MARK).exists())
}

/// What is kept of one sealed run: its newest job's end and, once a `status` has read it, its
/// log's row (a `tend` pass seals what it judged without reading logs).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Seal {
    job_id: String,
    log: Utf8PathBuf,
    state: String,
    exit_code: Option<String>,
    shown: Option<Shown>,
    /// The GPU-hours of every job of the run, as accounting gave them (f64 bits).
    gpu_hours: Option<u64>,
    /// The log's last line that reads like an error, for a job that failed.
    pub last_error: Option<String>,
    /// Set when SLURM knew none of the run's jobs: the state is the log's, kept while the log
    /// stands as it was then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    settled: Option<Settled>,
}

fn bits(v: Option<f64>) -> Option<u64> {
    v.map(f64::to_bits)
}

fn float(v: Option<u64>) -> Option<f64> {
    v.map(f64::from_bits)
}

impl Seal {
    /// The job's state, as the probe said it: accounting's, or for a settled run its log's.
    pub fn job(&self) -> JobState {
        JobState {
            state: self.state.clone(),
            source: self.settled.as_ref().map_or("sacct", Settled::source),
            exit_code: self.exit_code.clone(),
        }
    }

    /// The newest job of the run when it was sealed, and its log.
    pub fn sealed_job(&self) -> (&str, &camino::Utf8Path) {
        (&self.job_id, &self.log)
    }

    /// Whether the run was settled on its log's word (SLURM knew none of its jobs), not sealed
    /// on accounting's.
    pub fn is_settled(&self) -> bool {
        self.settled.is_some()
    }

    /// The slots the newest job had, where a `status` sealed its row.
    pub fn slot(&self) -> Option<u32> {
        self.shown.as_ref()?.slot
    }

    /// The GPU-hours of every job of the run, when accounting gave them before it was sealed.
    pub fn gpu_hours(&self) -> Option<f64> {
        float(self.gpu_hours)
    }

    /// The row of the run's newest job `record`, as its log and accounting gave it when it was
    /// sealed; `None` when the seal keeps no row (a `tend` pass made it, or accounting had not
    /// given its GPU-hours: a settled run has none to give).
    pub fn row(&self, record: &Record) -> Option<RunState> {
        let shown = self.shown.as_ref()?;
        let gpu_hours = match self.settled {
            Some(_) => None,
            None => Some(self.gpu_hours()?),
        };
        let mut row = RunState::bare(record, self.job());
        row.step = shown.step;
        row.secs_per_step = shown.secs_per_step();
        row.reward = shown.reward();
        row.entropy = shown.entropy();
        row.collapse = shown.collapse;
        row.alerts.clone_from(&shown.alerts);
        row.gpu_hours = gpu_hours;
        row.slot = shown.slot;
        row.resumed_from = shown.resumed_from;
        Some(row)
    }
}

/// The index of a run root's sealed runs, by run name.
#[derive(Debug)]
pub struct Sealed {
    path: Utf8PathBuf,
    runs: BTreeMap<String, Seal>,
    /// Whether the index on disk differs from this one (a new seal, or an index that was bad).
    changed: bool,
}

impl Sealed {
    /// The run root's index; an index that is not there or not whole is an empty one.
    pub fn load(run_root: &Utf8Path) -> Sealed {
        let path = run_root.join(FILE);
        let read = load_summed(&path, FORMAT).map(|b| serde_json::from_slice(&b).ok());
        let (runs, changed) = match read {
            Some(Some(runs)) => (runs, false),
            // Cut short, corrupted, of another layout: written afresh.
            Some(None) => (BTreeMap::new(), true),
            None => (BTreeMap::new(), path.exists()),
        };
        Sealed {
            path,
            runs,
            changed,
        }
    }

    /// The seal kept for the run named `name`, whatever job it was made for.
    pub fn seal_of(&self, name: &str) -> Option<&Seal> {
        self.runs.get(name)
    }

    /// The run's seal, if it has one for its newest job and SLURM holds none of its jobs (and,
    /// for a settled run, its log stands as it was).
    pub fn get(&self, run: &Run, queue: &Queue) -> Option<&Seal> {
        let seal = self.runs.get(&run.name)?;
        let latest = run.latest();
        (seal.job_id == latest.job_id
            && seal.log == latest.log
            && !run.records.iter().any(|r| queue.holds(&r.job_id))
            && (seal.settled.as_ref()).is_none_or(|s| s.holds(&latest.log)))
        .then_some(seal)
    }

    /// Settles the run whose newest job `row` shows, with that row: its state is its log's
    /// (see [`crate::runs::settled`]), so nothing is asked of SLURM for it again while its log
    /// stands as it was.
    pub fn settle(&mut self, run: &Run, row: &RunState, settled: Settled) {
        let latest = run.latest();
        let last_error = matches!(row.state.as_str(), "FAILED" | "OUT_OF_MEMORY")
            .then(|| last_error(&latest.log))
            .flatten();
        let seal = Seal {
            job_id: latest.job_id.clone(),
            log: latest.log.clone(),
            state: row.state.clone(),
            exit_code: None,
            shown: Some(Shown::of_row(row)),
            gpu_hours: None,
            last_error,
            settled: Some(settled),
        };
        self.runs.insert(run.name.clone(), seal);
        self.changed = true;
    }

    /// Drops for good the seal of every run of `runs` SLURM is seen holding a job of again (an
    /// admin's `scontrol requeue` of an ended job keeps its id): its later end is judged afresh,
    /// never answered by the old seal once the queue has let the job go again.
    pub fn unseal_held(&mut self, runs: &[Run], queue: &Queue) {
        for run in runs {
            if run.records.iter().any(|r| queue.holds(&r.job_id))
                && self.runs.remove(&run.name).is_some()
            {
                self.changed = true;
            }
        }
    }

    /// Seals the run whose newest job `row` shows, with that row, if it has [`ended`] for good
    /// (`queue` is the probe's) and accounting gave its GPU-hours.
    pub fn seal_row(
        &mut self,
        run: &Run,
        queue: &Queue,
        row: &RunState,
        exit_code: Option<String>,
    ) {
        let job = JobState {
            state: row.state.clone(),
            source: row.source,
            exit_code,
        };
        let Some(gpu_hours) = row.gpu_hours.filter(|_| row.job_id == run.latest().job_id) else {
            return;
        };
        self.seal(run, queue, job, Some(Shown::of_row(row)), Some(gpu_hours));
    }

    /// Seals the run whose newest job ended as `job`, if it has [`ended`] for good (`queue` is
    /// the probe's), without its row; with the GPU-hours of all its jobs where accounting gave
    /// them.
    pub fn seal_end(&mut self, run: &Run, queue: &Queue, job: &JobState, gpu_hours: Option<f64>) {
        self.seal(run, queue, job.clone(), None, gpu_hours);
    }

    fn seal(
        &mut self,
        run: &Run,
        queue: &Queue,
        job: JobState,
        shown: Option<Shown>,
        gpu_hours: Option<f64>,
    ) {
        if !ended(run, queue, &job) {
            return;
        }
        // A settled seal knows less than any accounting gives.
        let kept = self.get(run, queue).filter(|k| k.settled.is_none());
        // A seal is replaced only by one that knows more.
        let knows = |shown: bool, hours: bool| (shown as u8) * 2 + hours as u8;
        if kept.is_some_and(|k| {
            knows(k.shown.is_some(), k.gpu_hours.is_some())
                >= knows(shown.is_some(), gpu_hours.is_some())
        }) {
            return;
        }
        let latest = run.latest();
        // Its log's end is read once, for a job that failed (`tend` says its last error).
        let last_error = match kept {
            Some(k) => k.last_error.clone(),
            None => matches!(job.state.as_str(), "FAILED" | "OUT_OF_MEMORY")
                .then(|| last_error(&latest.log))
                .flatten(),
        };
        let seal = Seal {
            job_id: latest.job_id.clone(),
            log: latest.log.clone(),
            state: job.state,
            exit_code: job.exit_code,
            shown,
            gpu_hours: bits(gpu_hours),
            last_error,
            settled: None,
        };
        self.runs.insert(run.name.clone(), seal);
        self.changed = true;
    }

    /// Writes the index if it changed. One that cannot be written is only a slower next call.
    pub fn store(&mut self) {
        if !self.changed {
            return;
        }
        if let Ok(body) = serde_json::to_vec(&self.runs) {
            let _ = store_summed(&self.path, FORMAT, &body);
        }
        self.changed = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::alerts::AlertKind;

    #[test]
    fn an_index_the_previous_version_wrote_still_loads() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8Path::from_path(dir.path()).unwrap();
        // As the version with two row formats stored it: `slot` and `resumed_from` always said.
        let body = r#"{"g/c":{"job_id":"12","log":"/r/g/c/001/g.c_12.out","state":"COMPLETED","exit_code":"0:0","shown":{"step":20,"secs_per_step":4621819117588971520,"reward":null,"entropy":null,"collapse":null,"alerts":["reward-stall"],"slot":null,"resumed_from":8},"gpu_hours":4611686018427387904,"last_error":null}}"#;
        store_summed(&root.join(FILE), FORMAT, body.as_bytes()).unwrap();
        let sealed = Sealed::load(root);
        // Read, not thrown away as another layout (which would mark it to be written afresh).
        assert!(!sealed.changed);
        let seal = &sealed.runs["g/c"];
        let shown = seal.shown.as_ref().unwrap();
        assert_eq!(
            (
                shown.step,
                shown.secs_per_step(),
                shown.slot,
                shown.resumed_from
            ),
            (20, Some(10.0), None, Some(8))
        );
        assert_eq!(shown.alerts, [AlertKind::RewardStall]);
        assert_eq!(seal.gpu_hours(), Some(2.0));
    }
}
