//! Puts a rendered plan on disk and in the queue: run folder written atomically, then sbatch,
//! then the submission record. A failed submission leaves nothing behind.

use crate::error::{Error, Result};
use crate::plan::Plan;
use crate::render::RenderedFile;
use crate::slurm::{Dependency, Slurm};
use crate::store::ledger::{Ledger, Record};
use crate::store::unrecorded::{self, Intent, NO_JOB_YET};
use crate::util::fs::write_atomic;
use camino::Utf8PathBuf;
use std::collections::BTreeMap;

pub struct Submitted {
    pub job_id: String,
}

pub fn submit(
    plan: &Plan,
    files: &[RenderedFile],
    slurm: &Slurm,
    dependency: Option<&Dependency>,
    context: &Context,
) -> Result<Submitted> {
    let run_dir = &plan.paths.run_dir;
    let parent = run_dir.parent().expect("run folders are absolute");
    std::fs::create_dir_all(parent).map_err(|e| Error::io("create", parent, e))?;
    // create_dir, not create_dir_all: a folder that exists belongs to another submission.
    std::fs::create_dir(run_dir).map_err(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => Error::RunFolderAppeared {
            run_dir: run_dir.clone(),
        },
        _ => Error::io("create", run_dir, e),
    })?;
    let argv = slurm.sbatch_argv(&plan.paths.sbatch_script, dependency);
    let plan_toml = toml::to_string(plan).expect("plans serialize");
    let dependency = dependency.map(|Dependency::AfterAny(job)| format!("afterany:{job}"));
    let commit = context.skyrl_commit.clone();
    let record = Record::new(plan, NO_JOB_YET, &argv, dependency, commit);
    let queued = files
        .iter()
        .try_for_each(|file| write_atomic(&file.path, &file.text, 0o755))
        .and_then(|()| write_atomic(&run_dir.join("plan.toml"), &plan_toml, 0o644))
        .and_then(|()| unrecorded::sbatch(slurm, &context.ledger, &argv, &record));
    let (record, intent) = match queued {
        Ok(queued) => queued,
        // sbatch exited 0, so a job exists and will read run.sh: keep its folder (and the
        // intent, which the next command reconciles with the queue).
        Err(Error::SbatchNoJobId { command, stdout }) => {
            return Err(Error::QueuedWithoutId {
                command,
                stdout,
                run_dir: run_dir.clone(),
            });
        }
        Err(e) => {
            // Only this call's own files are in there, and nothing was queued.
            let _ = std::fs::remove_dir_all(run_dir);
            return Err(e);
        }
    };
    // From here on the job is queued and reads run.sh when it starts: keep the folder whatever
    // happens to the record, and say so if it cannot be written.
    let job_id = record.job_id.clone();
    written(&record, &context.ledger, intent);
    Ok(Submitted { job_id })
}

/// Writes the record of a queued job (in its run folder and the ledger), then drops its
/// intent; a record that cannot be written is said, and its intent kept for the next command.
pub fn written(record: &Record, ledger: &Ledger, intent: Intent) {
    let written = toml::to_string(record)
        .map_err(Error::Serialize)
        .and_then(|text| write_atomic(&record.run_dir.join("submission.toml"), &text, 0o644))
        .and_then(|()| ledger.append(record));
    match written {
        Ok(()) => intent.done(),
        Err(e) => crate::util::out::warn(&format!(
            "job {} is queued, but its ledger record was not written: {e}; its intent is kept \
             in {}, and the next rlctl command on this run root records it",
            record.job_id,
            intent.path()
        )),
    }
}

/// What every submission of one command shares.
pub struct Context {
    pub ledger: Ledger,
    pub skyrl_commit: Option<String>,
    /// QOS name -> how many jobs a user may have submitted in it (the profile's
    /// `max_submit_jobs`); QOSes without a limit are absent.
    pub submit_limits: BTreeMap<String, u32>,
    /// Whose turn ([`crate::util::turn::Turn`]) a submission takes, from the queue check to
    /// its last record: two launches started at once (or a launch and `tend`) take turns, so
    /// the second sees the first's job.
    pub run_root: Utf8PathBuf,
    /// `grid --all`: what was asked, kept as the grid's intent so that `tend` submits the
    /// cells that wait for room.
    pub ask: Option<crate::store::intent::GridAsk>,
}
