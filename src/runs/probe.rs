//! What SLURM says of recorded jobs, asked once: one `squeue --me` (or the queue a caller read
//! under its turn) and at most one `sacct` pass. A job's state is squeue's while SLURM holds
//! it, then accounting's, then its log's. What the probe could not learn comes back as a
//! [`Warning`] for the command to say; library code prints nothing.

use crate::error::Result;
use crate::runs::log::log_state;
use crate::slurm::{Accounted, Attempt, QueuedJob, Slurm};
use crate::store::ledger::{Record, Run};
use std::collections::BTreeMap;

/// The user's pending and running jobs, id -> (state, why it waits), as one `squeue --me` saw
/// them.
#[derive(Debug, Clone, Default)]
pub struct Queue(BTreeMap<String, (String, String)>);

impl Queue {
    /// One `squeue --me`.
    pub fn read(slurm: &Slurm) -> Result<Queue> {
        Ok(Queue::of(&slurm.queued()?))
    }

    /// The queue of jobs already listed (an [`Occupancy`](crate::submit::occupancy::Occupancy)'s).
    pub fn of(jobs: &[QueuedJob]) -> Queue {
        Queue(
            (jobs.iter())
                .map(|j| (j.id.clone(), (j.state.clone(), j.reason.clone())))
                .collect(),
        )
    }

    /// The job's state while SLURM holds it.
    pub fn state(&self, job_id: &str) -> Option<&str> {
        self.0.get(job_id).map(|(state, _)| state.as_str())
    }

    /// Why the job waits, while it is PENDING and squeue said.
    pub fn reason(&self, job_id: &str) -> Option<&str> {
        let (state, reason) = self.0.get(job_id)?;
        (state == "PENDING" && !reason.is_empty()).then_some(reason.as_str())
    }

    pub fn holds(&self, job_id: &str) -> bool {
        self.0.contains_key(job_id)
    }

    /// Whether SLURM holds the job and it has left PENDING.
    pub fn runs(&self, job_id: &str) -> bool {
        self.state(job_id).is_some_and(|s| s != "PENDING")
    }

    /// The job a run is at: the link that is running, else the next pending one, else its
    /// newest submission; with its place `(k, K)` in its chain when it is one of several links.
    pub fn current<'a>(&self, run: &'a Run) -> (&'a Record, Option<(usize, usize)>) {
        let record = (run.records.iter().find(|r| self.runs(&r.job_id)))
            .or_else(|| run.records.iter().find(|r| self.holds(&r.job_id)))
            .unwrap_or_else(|| run.latest());
        // Links point back at the job before them with `afterany:<id>`.
        let before = |r: &Record| {
            let id = r.dependency.as_deref()?.strip_prefix("afterany:")?;
            run.records.iter().find(|p| p.job_id == id)
        };
        let after = |r: &Record| {
            let want = format!("afterany:{}", r.job_id);
            (run.records.iter()).find(|n| n.dependency.as_deref() == Some(want.as_str()))
        };
        let (mut k, mut total) = (1, 1);
        let mut at = record;
        while let Some(prev) = before(at) {
            (k, total, at) = (k + 1, total + 1, prev);
        }
        let mut at = record;
        while let Some(next) = after(at) {
            (total, at) = (total + 1, next);
        }
        (record, (total > 1).then_some((k, total)))
    }
}

/// Something a probe could not learn, for the command to say (once per process).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Warning {
    /// `sacct` did not answer: ended jobs' states come from their logs.
    AccountingUnreachable { reason: String },
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Warning::AccountingUnreachable { reason } => write!(
                f,
                "SLURM accounting is unreachable ({reason}); ended jobs' states come from their \
                 logs, `unknown` where the log does not say: check slurmdbd (`sacctmgr ping`), \
                 or pass --sacct PATH"
            ),
        }
    }
}

/// A job's state, where it came from, and sacct's exit code when sacct answered.
#[derive(Debug, Clone)]
pub struct JobState {
    pub state: String,
    /// `squeue`, `sacct`, `log` or `none` (no log either).
    pub source: &'static str,
    pub exit_code: Option<String>,
}

/// SLURM's answer for some recorded jobs.
#[derive(Debug, Default)]
pub struct Probe {
    pub queue: Queue,
    accounted: BTreeMap<String, Accounted>,
    pub warnings: Vec<Warning>,
}

impl Probe {
    /// Reads the queue (unless given: a caller that read it under its turn passes it), then asks
    /// accounting in one pass for the `jobs` the queue no longer holds and for every job of
    /// `usage` (the runs whose GPU-hours and slots are wanted). Accounting that does not answer
    /// is a [`Warning`], and the jobs' states come from their logs, never guessed.
    pub fn read(
        slurm: &Slurm,
        queue: Option<Queue>,
        jobs: &[&Record],
        usage: &[&Run],
    ) -> Result<Probe> {
        let queue = match queue {
            Some(queue) => queue,
            None => Queue::read(slurm)?,
        };
        let mut ask: Vec<&str> = (jobs.iter())
            .filter(|r| !queue.holds(&r.job_id))
            .map(|r| r.job_id.as_str())
            .chain(
                usage
                    .iter()
                    .flat_map(|r| &r.records)
                    .map(|r| r.job_id.as_str()),
            )
            .collect();
        ask.sort_unstable();
        ask.dedup();
        let mut warnings = Vec::new();
        let accounted = slurm.accounted(&ask).unwrap_or_else(|reason| {
            warnings.push(Warning::AccountingUnreachable { reason });
            BTreeMap::new()
        });
        Ok(Probe {
            queue,
            accounted,
            warnings,
        })
    }

    /// The record's job state. Asked after the probe read SLURM, so a job seen ended has written
    /// every line its log is read for.
    pub fn job(&self, record: &Record) -> JobState {
        self.known(record).unwrap_or_else(|| {
            let (state, source) = log_state(&record.log, &record.job_id);
            JobState {
                state,
                source,
                exit_code: None,
            }
        })
    }

    /// The record's job state as SLURM gave it (squeue, else accounting), its log unread.
    pub fn known(&self, record: &Record) -> Option<JobState> {
        if let Some(state) = self.queue.state(&record.job_id) {
            Some(JobState {
                state: state.to_owned(),
                source: "squeue",
                exit_code: None,
            })
        } else {
            let acct = self.accounted.get(&record.job_id)?;
            Some(JobState {
                state: acct.state.clone(),
                source: "sacct",
                exit_code: acct.exit_code.clone(),
            })
        }
    }

    /// GPU-hours of every attempt of the run's jobs: accounting's `gres/gpu`, else its nodes x
    /// `gpus_per_node`; `None` when accounting knows none of them.
    pub fn gpu_hours(&self, run: &Run, gpus_per_node: u32) -> Option<f64> {
        let attempts: Vec<&Attempt> = (run.records.iter())
            .filter_map(|r| self.accounted.get(&r.job_id))
            .flat_map(|a| &a.attempts)
            .collect();
        let gpus = |a: &Attempt| a.gpus.or_else(|| Some(a.nodes? * u64::from(gpus_per_node)));
        let seconds: Option<f64> = (attempts.iter())
            .map(|a| Some(a.elapsed_s as f64 * gpus(a)? as f64))
            .sum();
        seconds.filter(|_| !attempts.is_empty()).map(|s| s / 3600.0)
    }

    /// The slots (SLURM allocations) the job has had, where accounting knows them.
    pub fn slots(&self, job_id: &str) -> Option<u32> {
        let slots = (self.accounted.get(job_id)).map_or(0, |a| a.attempts.len());
        (slots > 0).then_some(slots as u32)
    }
}
