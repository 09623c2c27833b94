//! `rlctl status`, `cancel` and `logs`: recorded runs, their jobs and their logs.

use super::Session;
use crate::cli::{CancelArgs, LogsArgs, StatusArgs};
use crate::error::{Error, Result};
use crate::runs;
use crate::submit::ledger::Record;
use crate::submit::slurm::Slurm;
use crate::util::out::emit;
use std::io::Write;

/// `rlctl status [RUN]`: a table, or JSON.
pub fn status(session: &Session, args: &StatusArgs, out: &mut dyn Write) -> Result<()> {
    let (run, json) = (args.run.as_deref(), args.json);
    let cluster = session.cluster()?;
    let run_root = &cluster.storage.run_root;
    // Read once: the grid named may be one whose every cell still waits for room.
    let named_waits = run.and_then(|g| waiting(run_root, g));
    let selected = match runs::select_runs(&session.ledger()?, run) {
        // A grid whose every cell still waits for room has no recorded run yet.
        Err(Error::UnknownName { .. }) if named_waits.is_some() => Vec::new(),
        other => other?,
    };
    let mut grids: Vec<&str> = (selected.iter())
        .filter_map(|r| r.latest().grid.as_deref())
        .filter(|g| Some(*g) != run)
        .collect();
    grids.sort_unstable();
    grids.dedup();
    let waits: String = (named_waits.into_iter())
        .chain(grids.iter().filter_map(|g| waiting(run_root, g)))
        .map(|line| format!("{line}\n"))
        .collect();
    let (states, warnings) = runs::status::rows(
        &session.slurm,
        run_root,
        &selected,
        cluster.node.gpus,
        cluster.watch.stall_floor_s,
    )?;
    warn(&warnings);
    if json {
        let text = serde_json::to_string_pretty(&states).expect("states serialize");
        return emit(out, &format!("{text}\n"));
    }
    if !states.is_empty() {
        emit(out, &runs::status::status_table(&states))?;
    }
    emit(out, &waits)
}

/// Says on stderr what SLURM could not tell, each kind of warning once per process (`tend`
/// probes once per grid and again for a report; `watch` once per refresh).
pub fn warn(warnings: &[runs::Warning]) {
    use std::mem::{Discriminant, discriminant};
    static SAID: std::sync::Mutex<Vec<Discriminant<runs::Warning>>> =
        std::sync::Mutex::new(Vec::new());
    let mut said = SAID.lock().unwrap_or_else(|e| e.into_inner());
    for warning in warnings {
        if !said.contains(&discriminant(warning)) {
            said.push(discriminant(warning));
            crate::util::out::warn(&warning.to_string());
        }
    }
}

/// The line that says which cells of `grid` wait for room in their QOS, if any do.
fn waiting(run_root: &camino::Utf8Path, grid: &str) -> Option<String> {
    let intent = crate::submit::intent::GridIntent::load(run_root, grid).ok()??;
    let cells: Vec<&str> = (intent.cells.iter())
        .filter(|c| c.is_waiting())
        .map(|c| c.cell())
        .collect();
    (!cells.is_empty()).then(|| {
        format!(
            "{grid}: {} cell{} wait{} for room in {} QOS, and `rlctl tend` submits them in order: {}",
            cells.len(),
            if cells.len() == 1 { "" } else { "s" },
            if cells.len() == 1 { "s" } else { "" },
            if cells.len() == 1 { "its" } else { "their" },
            cells.join(", ")
        )
    })
}

/// `rlctl cancel RUN`: every pending or running job of the selection, chain links included.
pub fn cancel(session: &Session, args: &CancelArgs, out: &mut dyn Write) -> Result<()> {
    let (run, yes) = (args.run.as_str(), args.yes);
    runs::cancel::cancel(
        &session.slurm,
        &runs::select_runs(&session.ledger()?, Some(run))?,
        yes,
        out,
    )
}

/// `rlctl logs RUN [--follow]`.
pub fn logs(session: &Session, args: &LogsArgs, out: &mut dyn Write) -> Result<()> {
    let (run, follow) = (args.run.as_str(), args.follow);
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
    let queue = runs::Queue::read(&session.slurm).unwrap_or_default();
    Ok(queue.current(&run).0.clone())
}

/// A recorded run's log that is not there, said as such (not as an unknown run).
pub fn no_log(record: &Record) -> Error {
    Error::NoLog {
        target: record.target.clone(),
        job_id: record.job_id.clone(),
        log: record.log.clone(),
    }
}

/// How much of a log is read at a time.
const LOG_CHUNK: usize = 64 << 10;

/// Prints a run's log; with `follow`, keeps printing what is appended until the job ends.
fn print_log(slurm: &Slurm, record: &Record, keep: bool, out: &mut dyn Write) -> Result<()> {
    use std::io::{Read, Seek};
    use std::os::unix::fs::MetadataExt;
    let mut offset = 0u64;
    // The file read so far (device, inode): a log replaced or cut shorter is read from its start.
    let mut reading: Option<(u64, u64)> = None;
    let mut chunk = vec![0u8; LOG_CHUNK];
    loop {
        // Whether it still runs is asked before reading, so the last bytes are never missed.
        let running = keep && slurm.queued()?.iter().any(|j| j.id == record.job_id);
        if let Ok(mut file) = std::fs::File::open(&record.log) {
            let meta = file
                .metadata()
                .map_err(|e| Error::io("read", record.log.clone(), e))?;
            let same = reading.is_none_or(|id| id == (meta.dev(), meta.ino()));
            if !same || meta.len() < offset {
                crate::say!(
                    "rlctl: {} was {} since it was last read: printing it again from its start",
                    record.log,
                    if same { "cut shorter" } else { "replaced" }
                );
                offset = 0;
            }
            reading = Some((meta.dev(), meta.ino()));
            file.seek(std::io::SeekFrom::Start(offset))
                .map_err(|e| Error::io("read", record.log.clone(), e))?;
            // Streamed in chunks, so a 2 GB log costs one chunk of memory and `| head` ends
            // at once; up to the size seen now, so a log cut meanwhile ends the pass there.
            let end = meta.len();
            while offset < end {
                let want = chunk.len().min((end - offset) as usize);
                let n = match file.read(&mut chunk[..want]) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(Error::io("read", record.log.clone(), e)),
                };
                offset += n as u64;
                out.write_all(&chunk[..n])
                    .map_err(|e| Error::io("write", "standard output", e))?;
            }
            out.flush()
                .map_err(|e| Error::io("write", "standard output", e))?;
        } else if !keep {
            return Err(no_log(record));
        }
        if !running {
            return Ok(());
        }
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
}
