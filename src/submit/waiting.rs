//! Grid cells that wait for room in their QOS: rendered by `grid --all` into their run folder
//! beside a `waiting.toml` (their ledger record, but for the job), and submitted by `tend`, in
//! the grid's order and through the same occupancy rule, as jobs end. A waiting folder that was
//! never submitted is the only run folder rlctl removes on its own (when `grid --all` is asked
//! again), and only while it still holds `waiting.toml` and no `submission.toml`.

use crate::error::{Error, Result};
use crate::plan::Plan;
use crate::render::RenderedFile;
use crate::slurm::{Dependency, Slurm};
use crate::store::intent::{CellStatus, GridIntent};
use crate::store::ledger::{Ledger, Record};
use crate::store::unrecorded::{self, NO_JOB_YET};
use crate::submit::GRID_WIDTH;
use crate::submit::occupancy::{Occupancy, Occupant};
use crate::submit::room::Room;
use crate::util::fs::write_atomic;
use camino::Utf8Path;
use std::collections::BTreeMap;

const WAITING: &str = "waiting.toml";

/// Writes `plan`'s run folder as a waiting cell: its scripts, its plan and its record but for
/// the job id. Nothing is submitted.
pub fn prepare(plan: &Plan, files: &[RenderedFile], skyrl_commit: Option<String>) -> Result<()> {
    let run_dir = &plan.paths.run_dir;
    let parent = run_dir.parent().expect("run folders are absolute");
    std::fs::create_dir_all(parent).map_err(|e| Error::io("create", parent, e))?;
    std::fs::create_dir(run_dir).map_err(|e| Error::io("create", run_dir, e))?;
    let record = Record::new(plan, NO_JOB_YET, &[], None, skyrl_commit);
    let written = (files.iter())
        .try_for_each(|file| write_atomic(&file.path, &file.text, 0o755))
        .and_then(|()| {
            let plan = toml::to_string(plan).expect("plans serialize");
            write_atomic(&run_dir.join("plan.toml"), &plan, 0o644)
        })
        .and_then(|()| {
            let text = toml::to_string(&record).map_err(Error::Serialize)?;
            write_atomic(&run_dir.join(WAITING), &text, 0o644)
        });
    if written.is_err() {
        // Only this call's own files are in there.
        let _ = std::fs::remove_dir_all(run_dir);
    }
    written
}

/// Removes the run folder of a cell that waited and was never submitted; a folder that holds a
/// submission (or is not a waiting folder) is left alone.
pub fn discard(run_dir: &Utf8Path) {
    if run_dir.join(WAITING).is_file() && !run_dir.join("submission.toml").exists() {
        let _ = std::fs::remove_dir_all(run_dir);
    }
}

/// The waiting record of a cell's run folder.
fn read_waiting(run_dir: &Utf8Path) -> Result<Record> {
    let path = run_dir.join(WAITING);
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io("read", &path, e))?;
    toml::from_str(&text).map_err(|e| Error::BadWaiting {
        reason: crate::util::toml_error::bounded(e.message()),
        path,
    })
}

/// Submits the grid's waiting cells that now fit, in order: a cell whose lane (cell i-8) still
/// waits, or whose QOS is full, stops the rest, so cells go in the order they were asked. The
/// intent is stored after each submission. Returns one line per cell submitted or held back.
pub fn advance(
    intent: &mut GridIntent,
    run_root: &Utf8Path,
    slurm: &Slurm,
    ledger: &Ledger,
    occupancy: &Occupancy,
    room: &mut Room,
    latest: &BTreeMap<String, Record>,
) -> Result<Vec<String>> {
    let mut lines = Vec::new();
    for i in 0..intent.cells.len() {
        let CellStatus::Waiting { run_dir, qos } = intent.cells[i].status.clone() else {
            continue;
        };
        let target = intent.cells[i].target.clone();
        // The lane: cell i waits for cell i-8's job, as `grid --all` would have made it.
        let dependency = match i.checked_sub(GRID_WIDTH).map(|j| &intent.cells[j]) {
            None => None,
            Some(lane) => match &lane.status {
                CellStatus::Waiting { .. } => break,
                CellStatus::Recorded { job_id } | CellStatus::Submitted { job_id } => {
                    let job = latest.get(&lane.target).map_or(job_id, |r| &r.job_id);
                    (occupancy.holds(job)).then(|| Dependency::AfterAny(job.clone()))
                }
            },
        };
        let mut record = read_waiting(&run_dir)?;
        if let Some(Occupant { job, .. }) =
            occupancy.occupant(&record.checkpoint_dir, &record.job_name)
        {
            lines.push(format!(
                "{target}: waits: job {} ({}) uses its checkpoint folder",
                job.id, job.state
            ));
            continue;
        }
        if !room.take(&qos) {
            break;
        }
        let argv = slurm.sbatch_argv(&run_dir.join("sbatch.sh"), dependency.as_ref());
        record.sbatch = argv.clone();
        record.dependency = dependency
            .as_ref()
            .map(|Dependency::AfterAny(job)| format!("afterany:{job}"));
        record.submitted_unix = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        let (record, kept) = unrecorded::sbatch(slurm, ledger, &argv, &record)?;
        let job_id = record.job_id.clone();
        intent.cells[i].status = CellStatus::Submitted {
            job_id: job_id.clone(),
        };
        // The job is queued: its record and the intent are written whatever else fails.
        let text = toml::to_string(&record).map_err(Error::Serialize)?;
        let written = write_atomic(&run_dir.join("submission.toml"), &text, 0o644)
            .and_then(|()| ledger.append(&record))
            .and_then(|()| intent.store(run_root));
        let _ = std::fs::remove_file(run_dir.join(WAITING));
        match written {
            Ok(()) => kept.done(),
            Err(e) => crate::util::out::warn(&format!(
                "job {job_id} of {target} is queued, but its record was not written: {e}; the \
                 next rlctl command on this run root records it from {}",
                kept.path()
            )),
        }
        let after = match &dependency {
            Some(Dependency::AfterAny(job)) => format!(", after job {job}"),
            None => String::new(),
        };
        lines.push(format!(
            "{target}: job {job_id}{after} (it waited for room in QOS {qos})"
        ));
    }
    Ok(lines)
}
