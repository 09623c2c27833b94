//! Which pending or running job already uses a checkpoint folder: the one rule every command
//! that submits or deletes follows, read from the queue and the ledger under the run root's
//! [`Turn`], so that two commands at once (cron's `tend`, a person's `launch`) never put two
//! jobs on one folder, and `clean` never removes a folder a job was queued on meanwhile.

use crate::error::Result;
use crate::slurm::{QueuedJob, Slurm};
use crate::store::ledger::{Ledger, Record};
use crate::store::unrecorded;
use crate::util::fs::Folder;
use crate::util::turn::Turn;
use camino::{Utf8Path, Utf8PathBuf};

/// The queue and the ledger's records of its jobs, as read under the turn.
pub struct Occupancy {
    pub queued: Vec<QueuedJob>,
    /// The queued jobs the ledger knows: the job's place in `queued`, its record, its folder.
    live: Vec<(usize, Record, Folder)>,
    /// When squeue listed no job at all: what accounting is asked, once, before a folder with
    /// recent records is called free.
    unconfirmed: Option<Unconfirmed>,
}

/// An empty `squeue` answer is never taken as "every job ended" on its word alone: a squeue
/// that lost its controller mid-answer, or a wrapper that swallowed its output, prints nothing
/// and exits 0. Before a folder recorded in the last two weeks is called free, accounting is
/// asked (one `sacct` for all those jobs, the first time a folder needs it); a job it says SLURM
/// still holds occupies its folder as a queued one would. With no accounting (or none answering)
/// squeue's word stands, as it did before.
struct Unconfirmed {
    slurm: Slurm,
    /// The jobs recorded in the last two weeks, with their folders.
    recent: Vec<(Record, Folder)>,
    /// The ones accounting says SLURM holds, as queued jobs (asked once).
    held: std::sync::OnceLock<Vec<QueuedJob>>,
}

impl Unconfirmed {
    fn held(&self) -> &[QueuedJob] {
        self.held.get_or_init(|| {
            let ids: Vec<&str> = self.recent.iter().map(|(r, _)| r.job_id.as_str()).collect();
            let Ok(accounted) = self.slurm.accounted(&ids) else {
                return Vec::new();
            };
            (accounted.into_iter())
                .filter(|(_, a)| HELD.contains(&a.state.as_str()))
                .map(|(id, a)| QueuedJob {
                    name: (self.recent.iter())
                        .find(|(r, _)| r.job_id == id)
                        .map(|(r, _)| r.job_name.clone())
                        .unwrap_or_default(),
                    id,
                    state: format!("{} by accounting, though squeue listed no job", a.state),
                    qos: String::new(),
                    reason: String::new(),
                    command: String::new(),
                })
                .collect()
        })
    }
}

/// How far back an empty `squeue` answer is checked against accounting: a recorded job older
/// than this is taken to have ended, whatever squeue says.
const QUEUE_HORIZON_S: i64 = 14 * 24 * 3600;

/// The states in which SLURM still holds a job.
const HELD: &[&str] = &[
    "PENDING",
    "RUNNING",
    "REQUEUED",
    "REQUEUE_HOLD",
    "REQUEUE_FED",
    "SUSPENDED",
    "CONFIGURING",
    "COMPLETING",
    "RESIZING",
];

/// A pending or running job that a folder's next job must not run beside.
pub struct Occupant<'a> {
    pub job: &'a QueuedJob,
    /// The recorded run of the job and the resolved checkpoint folder they share; `None` when
    /// only the job name matches (a job the ledger does not know).
    pub shared: Option<(String, Utf8PathBuf)>,
}

impl Occupancy {
    /// One `squeue --me` and the ledger, read now: only under the run root's turn, which the
    /// caller holds until it has acted on the answer.
    /// An sbatch left without its record is recorded first ([`unrecorded::reconcile`]).
    pub fn read(turn: &Turn, slurm: &Slurm, ledger: &Ledger) -> Result<Occupancy> {
        let queued = slurm.queued()?;
        unrecorded::reconcile(turn, slurm, ledger, &queued);
        let records = ledger.records_of(|id| queued.iter().any(|j| j.id == id))?;
        let mut occupancy = Occupancy::of(queued, records);
        if occupancy.queued.is_empty() {
            let since = crate::store::ledger::unix_now() - QUEUE_HORIZON_S;
            let recent = (ledger.records_since(since)?.into_iter())
                .map(|r| {
                    let folder = Folder::of(&r.checkpoint_dir);
                    (r, folder)
                })
                .collect();
            occupancy.unconfirmed = Some(Unconfirmed {
                slurm: slurm.clone(),
                recent,
                held: std::sync::OnceLock::new(),
            });
        }
        Ok(occupancy)
    }

    /// The occupancy of `queued` given the ledger's `records` (any superset of the queued
    /// jobs' records).
    pub fn of(queued: Vec<QueuedJob>, records: Vec<Record>) -> Occupancy {
        let live = (records.into_iter())
            .filter_map(|r| {
                let at = queued.iter().position(|j| j.id == r.job_id)?;
                let folder = Folder::of(&r.checkpoint_dir);
                Some((at, r, folder))
            })
            .collect();
        Occupancy {
            queued,
            live,
            unconfirmed: None,
        }
    }

    /// The live job, if any, that already uses the checkpoint folder `dir`, judged as one
    /// folder (links followed, dangling ones too; one inode reached by two paths): the folder is
    /// what identifies a run, so two jobs never write one folder, whatever their job names. A
    /// job the ledger does not know (another ledger, another tool) still counts by its job name.
    pub fn occupant(&self, dir: &Utf8Path, job_name: &str) -> Option<Occupant<'_>> {
        self.occupant_besides(dir, job_name, None)
    }

    /// [`Occupancy::occupant`], leaving out the job `replaced`: the one job a new attempt is
    /// submitted to replace (`tend` on a hung job), which that attempt waits for with
    /// `--dependency=afterany:<id>`, so the two never run at once. Any other job still counts.
    pub fn occupant_besides(
        &self,
        dir: &Utf8Path,
        job_name: &str,
        replaced: Option<&str>,
    ) -> Option<Occupant<'_>> {
        let folder = Folder::of(dir);
        let other = |j: &QueuedJob| replaced != Some(j.id.as_str());
        if let Some((at, record, _)) =
            (self.live.iter()).find(|(at, _, f)| f.is(&folder) && other(&self.queued[*at]))
        {
            return Some(Occupant {
                job: &self.queued[*at],
                shared: Some((record.run(), folder.path)),
            });
        }
        // A job the ledger knows is judged by its folder alone: its job name says nothing more.
        let known = |j: &QueuedJob| {
            self.live
                .iter()
                .any(|(at, _, _)| self.queued[*at].id == j.id)
        };
        if let Some(job) =
            (self.queued.iter()).find(|j| j.name == job_name && !known(j) && other(j))
        {
            return Some(Occupant { job, shared: None });
        }
        let unconfirmed = self.unconfirmed.as_ref()?;
        let ours =
            |(r, f): &&(Record, Folder)| replaced != Some(r.job_id.as_str()) && f.is(&folder);
        if !unconfirmed.recent.iter().any(|entry| ours(&entry)) {
            return None;
        }
        let held = unconfirmed.held();
        let (record, _) = (unconfirmed.recent.iter().rev())
            .filter(ours)
            .find(|(r, _)| held.iter().any(|j| j.id == r.job_id))?;
        Some(Occupant {
            job: held.iter().find(|j| j.id == record.job_id)?,
            shared: Some((record.run(), folder.path)),
        })
    }

    /// Whether SLURM still holds the job (pending or running).
    pub fn holds(&self, job_id: &str) -> bool {
        self.queued.iter().any(|j| j.id == job_id)
    }

    /// The live jobs' records, with their folders.
    pub fn live(&self) -> impl Iterator<Item = (&QueuedJob, &Record, &Folder)> {
        (self.live.iter()).map(|(at, r, f)| (&self.queued[*at], r, f))
    }
}
