//! `rlctl status`, `cancel` and `logs`: recorded runs, their jobs and their logs.

use super::Session;
use crate::error::{Error, Result};
use crate::runs;
use crate::submit::ledger::Record;
use crate::submit::slurm::Slurm;
use crate::util::out::emit;
use std::io::Write;

/// `rlctl status [RUN]`: a table, or JSON.
pub fn status(session: &Session, run: Option<&str>, json: bool, out: &mut dyn Write) -> Result<()> {
    // One row per run: the link that runs or runs next, with its place in the chain.
    let selected = runs::select_runs(&session.ledger()?, run)?;
    let queue = runs::queue(&session.slurm)?;
    let current: Vec<_> = selected.iter().map(|r| runs::current(r, &queue)).collect();
    let shown: Vec<&Record> = current.iter().map(|(r, _)| *r).collect();
    let gpus_per_node = session.cluster()?.node.gpus;
    let mut states = runs::run_states_in(&queue, &session.slurm, &selected, &shown, gpus_per_node)?;
    for (state, (_, link)) in states.iter_mut().zip(&current) {
        state.link = link.map(|(k, total)| format!("{k}/{total}"));
    }
    if json {
        let text = serde_json::to_string_pretty(&states).expect("states serialize");
        return emit(out, &format!("{text}\n"));
    }
    emit(out, &runs::status_table(&states))
}

/// `rlctl cancel RUN`: every pending or running job of the selection, chain links included.
pub fn cancel(session: &Session, run: &str, yes: bool, out: &mut dyn Write) -> Result<()> {
    runs::cancel(
        &session.slurm,
        &runs::select_runs(&session.ledger()?, Some(run))?,
        yes,
        out,
    )
}

/// `rlctl logs RUN [--follow]`.
pub fn logs(session: &Session, run: &str, follow: bool, out: &mut dyn Write) -> Result<()> {
    print_log(&session.slurm, &one(session, run)?, follow, out)
}

/// The job of the one recorded run a name means: the chain link that runs or runs next, else
/// the newest submission; several runs are ambiguous.
pub fn one(session: &Session, name: &str) -> Result<Record> {
    let mut runs = runs::select_runs(&session.ledger()?, Some(name))?;
    if runs.len() > 1 {
        return Err(Error::Ambiguous {
            name: name.to_owned(),
            candidates: runs.into_iter().map(|r| r.name).collect(),
        });
    }
    let run = runs.remove(0);
    // Without squeue (a machine off the cluster) the newest submission is still worth reading.
    let queue = runs::queue(&session.slurm).unwrap_or_default();
    Ok(runs::current(&run, &queue).0.clone())
}

/// Prints a run's log; with `follow`, keeps printing what is appended until the job ends.
fn print_log(slurm: &Slurm, record: &Record, keep: bool, out: &mut dyn Write) -> Result<()> {
    use std::io::{Read, Seek};
    use std::os::unix::fs::MetadataExt;
    let mut offset = 0u64;
    // The file read so far (device, inode): a log replaced or cut shorter is read from its start.
    let mut reading: Option<(u64, u64)> = None;
    loop {
        // Whether it still runs is asked before reading, so the last bytes are never missed.
        let running = keep && slurm.queued()?.iter().any(|j| j.id == record.job_id);
        if let Ok(mut file) = std::fs::File::open(&record.log) {
            let meta = file
                .metadata()
                .map_err(|e| Error::io("read", record.log.clone(), e))?;
            let same = reading.is_none_or(|id| id == (meta.dev(), meta.ino()));
            if !same || meta.len() < offset {
                eprintln!(
                    "rlctl: {} was {} since it was last read: printing it again from its start",
                    record.log,
                    if same { "cut shorter" } else { "replaced" }
                );
                offset = 0;
            }
            reading = Some((meta.dev(), meta.ino()));
            file.seek(std::io::SeekFrom::Start(offset))
                .map_err(|e| Error::io("read", record.log.clone(), e))?;
            let mut chunk = Vec::new();
            file.read_to_end(&mut chunk)
                .map_err(|e| Error::io("read", record.log.clone(), e))?;
            offset += chunk.len() as u64;
            out.write_all(&chunk)
                .map_err(|e| Error::io("write", "standard output", e))?;
            out.flush()
                .map_err(|e| Error::io("write", "standard output", e))?;
        } else if !keep {
            return Err(Error::Unsupported(format!(
                "{} (job {}) has no log yet at `{}`: it has not started",
                record.target, record.job_id, record.log
            )));
        }
        if !running {
            return Ok(());
        }
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
}
