//! `rlctl status`, `cancel` and `logs`: recorded runs, their jobs and their logs.

use super::Session;
use crate::cli::{CancelArgs, LogsArgs, StatusArgs};
use crate::error::{Error, Result};
use crate::runs;
use crate::store::ledger::Record;
use crate::store::unrecorded;
use crate::util::out::emit;
use crate::util::term::Paint;
use crate::util::versioned::document;
/// A recorded run's log that is not there, said as such (not as an unknown run).
pub use runs::logs::no_log;
use runs::status::Statuses;
use std::io::{IsTerminal, Write};

/// `rlctl status [RUN]`: a table and its totals, or JSON; with `--watch`, redrawn.
pub fn status(session: &Session, args: &StatusArgs, out: &mut dyn Write) -> Result<()> {
    let run = args.run.as_deref();
    if args.watch {
        let mut options = board_options(
            run.unwrap_or("all runs"),
            args.interval,
            args.color.said(),
            crate::runs::alerts::Thresholds::default(),
        );
        options.once = args.once;
        return runs::board::board(&options, &mut || snapshot(session, run), out);
    }
    let (states, waits) = snapshot(session, run)?;
    if args.json {
        emit(out, &document(&Statuses { runs: &states }))?;
    } else {
        if !states.is_empty() {
            let paint = Paint::choose(args.color.said(), std::io::stdout().is_terminal());
            emit(out, &runs::status::status_table(&states, paint))?;
            emit(out, &runs::status::totals(&states))?;
        }
        emit(out, &waits)?;
    }
    runs::status::unreadable(&states).map_or(Ok(()), |why| Err(Error::Problems(why)))
}

/// A live table's options: redrawn in place and painted on a terminal (see [`Paint`]).
pub fn board_options(
    title: &str,
    interval: u64,
    color: Option<bool>,
    thresholds: crate::runs::alerts::Thresholds,
) -> runs::board::Options {
    let tty = std::io::stdout().is_terminal();
    runs::board::Options {
        title: title.to_owned(),
        interval: std::time::Duration::from_secs(interval.max(1)),
        once: false,
        json: false,
        thresholds,
        paint: Paint::choose(color, tty),
        redraw: tty,
    }
}

/// The rows of the runs `run` selects (all without it) and the lines saying which cells of
/// their grids wait for room; what SLURM could not tell is said on stderr.
pub fn snapshot(session: &Session, run: Option<&str>) -> Result<runs::board::Snapshot> {
    let cluster = session.cluster()?;
    let run_root = &cluster.storage.run_root;
    // Read once: the grid named may be one whose every cell still waits for room.
    let named_waits = run.and_then(|g| waiting(run_root, g));
    // An sbatch left without its record is recorded before the ledger is read.
    let queued = reconciled(session, run_root)?;
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
        queued,
        run_root,
        &selected,
        cluster.node.gpus,
        cluster.watch.stall_floor_s,
    )?;
    warn(&warnings);
    Ok((states, waits))
}

/// Where an sbatch left an intent without its record: the queue, read under the run root's
/// turn with the intents reconciled against it ([`unrecorded::reconcile`]), for the caller to
/// use as its one squeue; else `None` and no turn is taken.
pub(super) fn reconciled(
    session: &Session,
    run_root: &camino::Utf8Path,
) -> Result<Option<Vec<crate::slurm::QueuedJob>>> {
    let ledger = crate::store::ledger::Ledger::at(run_root);
    if !unrecorded::any(&ledger) {
        return Ok(None);
    }
    let turn = crate::util::turn::Turn::take(run_root)?;
    let queued = session.slurm.queued()?;
    unrecorded::reconcile(&turn, &session.slurm, &ledger, &queued);
    Ok(Some(queued))
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
    let intent = crate::store::intent::GridIntent::load(run_root, grid).ok()??;
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
    if args.dry_run {
        crate::util::out::preview();
    }
    let (run, yes) = (args.run.as_str(), args.yes);
    let runs = runs::select_runs(&session.ledger()?, Some(run))?;
    let cancelled = runs::cancel::cancel(&session.slurm, &runs, yes)?;
    if args.json {
        return emit(out, &document(&cancelled));
    }
    emit(out, &cancelled.text())?;
    if cancelled.confirmed && !cancelled.jobs.is_empty() {
        crate::say!(
            "next: `rlctl status {}` shows them end; `rlctl retire {}` makes the run history, so that it starts afresh",
            crate::util::quote::sh(run),
            crate::util::quote::sh(run)
        );
    }
    Ok(())
}

/// `rlctl logs RUN [--tail N] [--follow] [--path] [--errors]`.
pub fn logs(session: &Session, args: &LogsArgs, out: &mut dyn Write) -> Result<()> {
    let run = args.run.as_str();
    if args.json {
        return logs_json(session, args, out);
    }
    if args.path {
        // Every run a grid names, so that `less $(rlctl logs GRID --path)` pages them all; a
        // cell whose job has not started yet is said on stderr and left out.
        let mut text = String::new();
        let selected = runs::select_runs(&session.ledger()?, Some(run))?;
        let records = current(session, &selected);
        for record in &records {
            match record.log.exists() {
                true => text.push_str(&format!("{}\n", record.log)),
                false if records.len() == 1 => return Err(no_log(record)),
                false => crate::say!("rlctl: {}", no_log(record)),
            }
        }
        return emit(out, &text);
    }
    let record = one(session, run)?;
    if args.errors {
        let window = runs::logs::ERRORS_WINDOW >> 20;
        return match runs::logs::last_errors(&record.log) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(no_log_ended(session, &record).unwrap_or_else(|| no_log(&record)))
            }
            Err(e) => Err(Error::io("read", record.log.clone(), e)),
            Ok(Some(block)) => emit(out, &block),
            Ok(None) => {
                let says = ended_says(session, &record).map_or_else(String::new, |says| {
                    let hint = runs::ended::likely_full_disk(&says, &record);
                    format!("; {says}{hint}")
                });
                crate::say!(
                    "rlctl: no traceback or error line in the last {window} MiB of {}{says}",
                    record.log
                );
                Ok(())
            }
        };
    }
    // `tail -f` starts from the last 10 lines.
    let from = match (args.tail, args.follow) {
        (Some(n), _) => runs::logs::Begin::Tail(n),
        (None, true) => runs::logs::Begin::Tail(10),
        (None, false) => runs::logs::Begin::Start,
    };
    let tty = std::io::stdout().is_terminal();
    if Paint::choose(args.color.said(), tty).0 {
        return runs::logs::print(&session.slurm, &record, from, args.follow, out);
    }
    let mut plain = runs::logs::Plain::new(out);
    runs::logs::print(&session.slurm, &record, from, args.follow, &mut plain)
}

/// `logs --json`: the logs' paths (`--path`), the error block (`--errors`) or the last lines
/// (`--tail N`) as one document.
fn logs_json(session: &Session, args: &LogsArgs, out: &mut dyn Write) -> Result<()> {
    let of = |record: &Record| Log {
        run: record.run(),
        job_id: record.job_id.clone(),
        log: record.log.to_string(),
        exists: record.log.exists(),
        errors: None,
        lines: None,
    };
    let logs: Vec<Log> = match (args.path, args.errors, args.tail) {
        (true, _, _) => {
            let selected = runs::select_runs(&session.ledger()?, Some(&args.run))?;
            current(session, &selected).iter().map(of).collect()
        }
        (_, true, _) => {
            let record = one(session, &args.run)?;
            let errors = match runs::logs::last_errors(&record.log) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return Err(Error::io("read", record.log.clone(), e)),
                Ok(block) => Some(block.unwrap_or_default()),
            };
            vec![Log {
                errors,
                ..of(&record)
            }]
        }
        (_, _, Some(n)) => {
            let record = one(session, &args.run)?;
            let mut text = Vec::new();
            let begin = runs::logs::Begin::Tail(n);
            let lines = match record.log.exists() {
                true => {
                    runs::logs::print(&session.slurm, &record, begin, false, &mut text)?;
                    let text = String::from_utf8_lossy(&text);
                    Some(text.lines().map(str::to_owned).collect())
                }
                false => None,
            };
            vec![Log {
                lines,
                ..of(&record)
            }]
        }
        _ => {
            return Err(Error::BadFlag {
                flag: "--json",
                value: args.run.clone(),
                reason: "say what of the log: --path, --errors or --tail N (a whole log is \
                         not read into JSON)"
                    .into(),
            });
        }
    };
    emit(out, &document(&Logs { logs }))
}

/// `logs --json`: a log per run.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub(super) struct Logs {
    pub logs: Vec<Log>,
}

/// One run's log: where it is, and what was asked of it.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub(super) struct Log {
    pub run: String,
    pub job_id: String,
    pub log: String,
    /// False for a job that has not started (or left no log).
    pub exists: bool,
    /// `--errors`: the last traceback, else the last error lines; empty when none (null
    /// without a log).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errors: Option<String>,
    /// `--tail N`: the last N lines (null without a log).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines: Option<Vec<String>>,
}

/// A job that ended and left no log: what SLURM says of it (exit 1); `None` while SLURM holds
/// it or does not know it, as a job that has not started yet.
fn no_log_ended(session: &Session, record: &Record) -> Option<Error> {
    let says = ended_says(session, record)?;
    Some(Error::Problems(format!(
        "{} (job {}) ended and left no log at `{}`: {says}{}",
        record.target,
        record.job_id,
        record.log,
        runs::ended::likely_full_disk(&says, record)
    )))
}

/// What SLURM says of a job that ended without finishing its run; `None` for one that runs,
/// finished, or that accounting does not know.
fn ended_says(session: &Session, record: &Record) -> Option<String> {
    let ended = session.slurm.ended(&record.job_id).ok()?;
    runs::watch::is_dead(&ended.state).then(|| ended.to_string())
}

/// The job of the one recorded run a name means: the chain link that runs or runs next, else
/// the newest submission; several runs are ambiguous.
pub fn one(session: &Session, name: &str) -> Result<Record> {
    one_run(session, name).map(|(_, record)| record)
}

/// The one recorded run a name means, and its job (see [`one`]): what a reader of the run's
/// whole history needs.
pub fn one_run(session: &Session, name: &str) -> Result<(crate::store::ledger::Run, Record)> {
    let mut runs = runs::select_runs(&session.ledger()?, Some(name))?;
    if runs.len() > 1 {
        return Err(Error::Ambiguous {
            name: name.to_owned(),
            candidates: runs.into_iter().map(|r| r.name).collect(),
        });
    }
    let record = current(session, &runs).remove(0);
    Ok((runs.remove(0), record))
}

/// The job each of `runs` is at (see [`one`]).
fn current(session: &Session, runs: &[crate::store::ledger::Run]) -> Vec<Record> {
    // Without squeue (a machine off the cluster) the newest submission is still worth reading.
    let queue = runs::Queue::read(&session.slurm).unwrap_or_default();
    runs.iter()
        .map(|run| queue.current(run).0.clone())
        .collect()
}
