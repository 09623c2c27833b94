//! A run's next attempt (`tend`): the last attempt's scripts, exactly as rendered (same knobs),
//! in a new numbered run folder, resuming from the run's checkpoints and never wiping; through
//! the same occupancy rule as a launch, under the run root's turn.

use crate::error::{Error, Result};
use crate::render::PROGRESS_FILE;
use crate::slurm::{Dependency, Slurm};
use crate::store::ledger::{Ledger, Record};
use crate::store::unrecorded::{self, NO_JOB_YET};
use crate::submit::occupancy::{Occupancy, Occupant};
use crate::submit::run_dir::written;
use crate::util::fs::write_atomic;
use camino::{Utf8Path, Utf8PathBuf};

/// What a resubmission came to.
pub enum Resubmitted {
    /// Queued: the new job's record, as appended to the ledger.
    Queued(Box<Record>),
    /// Not submitted: a pending or running job already uses the run's folder (another `tend`
    /// pass, a `launch --resume latest`): its id and state.
    Occupied { job_id: String, state: String },
}

/// Submits `last`'s run again as attempt `last.attempt + 1`, resuming from `saved_step`. The
/// scripts are read before anything is made, and a failed sbatch removes the new folder: a
/// resubmission that does not queue a job leaves nothing behind. An sbatch that may have queued
/// one (timed out, printed no id) leaves the folder its job would run from.
///
/// With `replaces`, `last` is still pending or running (a hung job the caller cancels): the new
/// job may share the folder with it alone, and starts only once it has ended
/// (`--dependency=afterany:<id>`), so two jobs never write one checkpoint folder.
pub fn resubmit(
    slurm: &Slurm,
    ledger: &Ledger,
    occupancy: &Occupancy,
    last: &Record,
    saved_step: u64,
    replaces: Option<&str>,
) -> Result<Resubmitted> {
    if let Some(Occupant { job, .. }) =
        occupancy.occupant_besides(&last.checkpoint_dir, &last.job_name, replaces)
    {
        return Ok(Resubmitted::Occupied {
            job_id: job.id.clone(),
            state: job.state.clone(),
        });
    }
    let (old, scripts) = (last.run_dir.as_str(), read_scripts(last)?);
    let run_dir = new_run_dir(last)?;
    let new = run_dir.as_str();
    let after = replaces.map(|id| Dependency::AfterAny(id.to_owned()));
    let argv = slurm.sbatch_argv(&run_dir.join("sbatch.sh"), after.as_ref());
    let record = next_record(last, &run_dir, argv.clone(), saved_step);
    let queued = (scripts.iter())
        .try_for_each(|(name, text)| {
            write_atomic(&run_dir.join(name), &text.replace(old, new), 0o755)
        })
        .and_then(|()| unrecorded::sbatch(slurm, ledger, &argv, &record));
    let (record, intent) = match queued {
        Ok(queued) => queued,
        // sbatch may have queued a job (no id printed, timed out): its script stays, and its
        // intent, for the next command to record the job by its run folder.
        Err(e) if unrecorded::may_have_queued(&e) => return Err(e),
        Err(e) => {
            // Only this call's own files are in there, and nothing was queued.
            let _ = std::fs::remove_dir_all(&run_dir);
            return Err(e);
        }
    };
    // The job is queued: its record is written whatever else fails, and a failure is said.
    written(&record, ledger, intent);
    Ok(Resubmitted::Queued(Box::new(record)))
}

/// `last`'s record as its next attempt in `run_dir`, before sbatch has given it a job id.
fn next_record(last: &Record, run_dir: &Utf8Path, argv: Vec<String>, saved_step: u64) -> Record {
    let log_name = last.log.file_name().unwrap_or_default();
    // SLURM fills `%x_%j.out`: the job id's own place is its last one, whatever digits the
    // job's name holds.
    let log_name = match log_name.rsplit_once(last.job_id.as_str()) {
        Some((head, tail)) => format!("{head}{NO_JOB_YET}{tail}"),
        None => log_name.to_owned(),
    };
    let mut record = last.clone();
    record.log = run_dir.join(log_name);
    record.run_dir = run_dir.to_owned();
    record.job_id = NO_JOB_YET.to_owned();
    record.sbatch = argv;
    // Not a chain link: the dependency a replacement waits on is in its sbatch command alone,
    // and `status` does not count it as link 2 of the job it replaced.
    record.dependency = None;
    record.attempt = last.attempt + 1;
    record.resumed_from = Some(saved_step);
    // Where this job writes, as `--wipe` later judges what the run's jobs wrote.
    record.ckpt_resolved = Some(crate::util::fs::resolve(&record.ckpt_path()));
    record.submitted_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    record
}

/// The last attempt's files: its two scripts, the wrapper set to resume (`first_slot=false`, so
/// it never wipes), and the progress module an upstream run's `run.sh` starts the trainer
/// through, when it has one; an error names what is missing.
fn read_scripts(last: &Record) -> Result<Vec<(&'static str, String)>> {
    let read = |name: &str| {
        let from = last.run_dir.join(name);
        std::fs::read_to_string(&from).map_err(|e| Error::io("read", &from, e))
    };
    let wrapper = read("sbatch.sh")?;
    if !wrapper.contains("\nfirst_slot=true\n") && !wrapper.contains("\nfirst_slot=false\n") {
        return Err(Error::NotAWrapper {
            path: last.run_dir.join("sbatch.sh"),
        });
    }
    let wrapper = wrapper.replace("\nfirst_slot=true\n", "\nfirst_slot=false\n");
    let run = read("run.sh")?;
    let mut files = vec![("sbatch.sh", wrapper)];
    if run.contains(PROGRESS_FILE) {
        files.push((PROGRESS_FILE, read(PROGRESS_FILE)?));
    }
    files.push(("run.sh", run));
    Ok(files)
}

/// The next free numbered folder beside the last attempt's.
fn new_run_dir(last: &Record) -> Result<Utf8PathBuf> {
    let base = last.run_dir.parent().expect("run folders are absolute");
    let mut n: u32 = (last.run_dir.file_name())
        .and_then(|a| a.parse().ok())
        .unwrap_or(1);
    loop {
        n += 1;
        let dir = base.join(format!("{n:03}"));
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(Error::io("create", &dir, e)),
        }
    }
}

/// The QOS the job's wrapper asked for (`#SBATCH --qos=`), read from its run folder.
pub fn qos_of(record: &Record) -> Option<String> {
    let wrapper = std::fs::read_to_string(record.run_dir.join("sbatch.sh")).ok()?;
    (wrapper.lines().take(40))
        .find_map(|l| l.strip_prefix("#SBATCH --qos="))
        .map(|q| q.trim().to_owned())
}
