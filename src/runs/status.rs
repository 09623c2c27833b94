//! `rlctl status`: one row per run (the chain link that runs or runs next, with its place in the
//! chain, its stall if its log went quiet) and the table they make.

use crate::error::Result;
use crate::runs::history;
use crate::runs::probe::{Probe, Queue, Warning};
use crate::runs::sealed::{Seal, Sealed};
use crate::runs::settled;
use crate::runs::state::{self, RunState};
use crate::runs::watch::is_dead;
use crate::slurm::{QueuedJob, Slurm};
use crate::store::ledger::{Record, Run};
use crate::util::fmt::{Digits, MISSING, cell, duration, number};
use crate::util::table::{Table, left, right};
use crate::util::term::{Hue, Paint};
use camino::Utf8Path;
use schemars::JsonSchema;
use serde::Serialize;

/// `status --json` (and `watch GRID --once --json`): a row per run.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Statuses<'a> {
    pub runs: &'a [RunState],
}

/// The rows of `runs` from one squeue and one sacct (which also asks for every job of the runs,
/// for their GPU-hours), and what the probe could not learn. `stall_floor_s` is the profile's
/// `[watch] stall_floor_s`. A run sealed in `run_root`'s index (see [`Sealed`]) is answered by
/// it, and a run seen ended for good is sealed (one SLURM no longer knows at all is settled on
/// its log's word, see [`settled`]). `queued` is the queue where the caller read it.
pub fn rows(
    slurm: &Slurm,
    queued: Option<Vec<QueuedJob>>,
    run_root: &Utf8Path,
    runs: &[Run],
    gpus_per_node: u32,
    stall_floor_s: u64,
) -> Result<(Vec<RunState>, Vec<Warning>)> {
    let queue = match queued {
        Some(queued) => Queue::of(&queued),
        None => Queue::read(slurm)?,
    };
    let mut index = Sealed::load(run_root);
    index.unseal_held(runs, &queue);
    let current: Vec<_> = runs.iter().map(|r| queue.current(r)).collect();
    // A sealed run's row is kept whole: accounting is asked only of the others.
    let seals: Vec<Option<RunState>> = (runs.iter().zip(&current))
        .map(|(run, (record, _))| index.get(run, &queue)?.row(record))
        .collect();
    let shown: Vec<&Record> = (current.iter().zip(&seals))
        .filter(|(_, seal)| seal.is_none())
        .map(|((r, _), _)| *r)
        .collect();
    // Borrowed: a run of 50,000 jobs is not copied.
    let usage: Vec<&Run> = (runs.iter().zip(&seals))
        .filter(|(_, seal)| seal.is_none())
        .map(|(run, _)| run)
        .collect();
    let probe = Probe::read(slurm, Some(queue), &shown, &usage)?;
    let now = settled::now_s();
    let mut states = Vec::with_capacity(runs.len());
    for ((run, (record, link)), seal) in runs.iter().zip(&current).zip(seals) {
        let mut state = match seal {
            Some(mut row) => {
                let jobs = history::jobs(run, record);
                row.attempt = jobs.len() as u32;
                row.history = history::logs(&jobs);
                row
            }
            None => match state::row(&probe, run, record, gpus_per_node, false) {
                Ok(state) => {
                    // The row's state is the probe's: its log's end is not read again for it.
                    let exit_code = probe.known(record).and_then(|j| j.exit_code);
                    match settled::settlement(&probe, run, record, state.source, now) {
                        Some(settled) => index.settle(run, &state, settled),
                        None => index.seal_row(run, &probe.queue, &state, exit_code),
                    }
                    state
                }
                // One run's unreadable log is that run's row, never the others' (and not sealed).
                Err(e) => {
                    let mut state = RunState::bare(record, probe.job(record));
                    state.unreadable = Some(e.to_string());
                    state
                }
            },
        };
        state.link = link.map(|(k, total)| format!("{k}/{total}"));
        if state.unreadable.is_none() {
            state.judge_stall(record, stall_floor_s);
        }
        states.push(state);
    }
    index.store();
    Ok((states, probe.warnings))
}

/// The rows of `runs` as a report shows them: each run's newest job, with the steps of the run's
/// whole history (see [`history`]), from one squeue and at most one sacct. A run sealed with its
/// GPU-hours in `run_root`'s index is not asked of accounting again; its steps come from its
/// logs' caches as for any run.
pub fn newest_rows(
    slurm: &Slurm,
    run_root: &Utf8Path,
    runs: &[Run],
    gpus_per_node: u32,
) -> Result<(Vec<RunState>, Vec<Warning>)> {
    let queue = Queue::read(slurm)?;
    let index = Sealed::load(run_root);
    let seals: Vec<Option<&Seal>> = (runs.iter())
        .map(|r| index.get(r, &queue).filter(|s| s.gpu_hours().is_some()))
        .collect();
    let asked: Vec<&Run> = (runs.iter().zip(&seals))
        .filter(|(_, seal)| seal.is_none())
        .map(|(run, _)| run)
        .collect();
    let newest: Vec<&Record> = asked.iter().map(|r| r.latest()).collect();
    let probe = Probe::read(slurm, Some(queue), &newest, &asked)?;
    let rows = (runs.iter().zip(&seals))
        .map(|(run, seal)| match seal {
            Some(seal) => {
                let mut row = state::with_steps(run, run.latest(), seal.job())?;
                row.gpu_hours = seal.gpu_hours();
                row.slot = seal.slot();
                Ok(row)
            }
            None => state::row(&probe, run, run.latest(), gpus_per_node, true),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((rows, probe.warnings))
}

/// The `status` table: a row per run, a pending job's state with why it waits, and the kinds
/// of alert its log raises; its states and alerts painted when `paint` says so.
pub fn status_table(states: &[RunState], paint: Paint) -> String {
    let num = |v: Option<f64>| cell(v, Digits::Sig(3));
    // Wide enough for the usual values, so that the layout holds from PENDING to COMPLETED.
    let mut table = Table::new([
        left().min(6),
        right().min(8),
        left().min(11),
        // Next to the state: a narrow window clips the row's end, never what went wrong.
        left(),
        right().min(9),
        right().min(7),
        right().min(7),
        right().min(7),
        right().min(7),
        right().min(4),
        right().min(7),
        right().min(6),
    ]);
    table.row([
        "run", "job", "state", "alerts", "step", "s/step", "reward", "entropy", "attempt", "slot",
        "ETA", "GPU-h",
    ]);
    for s in states {
        let mut step = match s.total {
            Some(total) => format!("{}/{total}", s.step),
            None => s.step.to_string(),
        };
        if let Some(from) = s.resumed_from {
            step.push_str(&format!(" (from {from})"));
        }
        let slot = match (s.slot, s.max_slots) {
            (Some(k), Some(n)) => format!("{k}/{n}"),
            (Some(k), None) => k.to_string(),
            (None, _) => MISSING.to_owned(),
        };
        let mut state = match &s.link {
            Some(link) => format!("{} link {link}", s.state),
            None => s.state.clone(),
        };
        if let Some(reason) = &s.reason {
            state.push_str(&format!(" ({reason})"));
        }
        if let Some(stall) = &s.stall {
            state.push_str(&format!(", stalled: {stall}"));
        } else if let Some(starting) = &s.starting {
            state.push_str(&format!(", {starting}"));
        }
        if let Some(why) = &s.unreadable {
            state.push_str(&format!(", log unreadable: {why}"));
        }
        if s.progress_unknown {
            state.push_str(", progress unknown: no step in a form rlctl reads yet");
        }
        let alerts: Vec<&str> = s.alerts.iter().map(|k| k.as_str()).collect();
        table.row([
            s.target.clone(),
            s.job_id.clone(),
            paint.hue(&state, hue(s)),
            paint.hue(&alerts.join(","), Hue::Red),
            step,
            num(s.secs_per_step),
            num(s.reward),
            num(s.entropy),
            s.attempt.to_string(),
            slot,
            s.eta_s.map_or_else(|| MISSING.to_owned(), duration),
            num(s.gpu_hours),
        ]);
    }
    table.render()
}

/// A row's colour: red for a job that ended without finishing or hangs, yellow while it waits,
/// green while it runs, dim once it completed.
fn hue(s: &RunState) -> Hue {
    let held = s.source == "squeue";
    match s.state.as_str() {
        _ if s.stall.is_some() || s.unreadable.is_some() => Hue::Red,
        state if !held && is_dead(state) => Hue::Red,
        "PENDING" | "REQUEUED" | "SUSPENDED" if held => Hue::Yellow,
        _ if held => Hue::Green,
        _ => Hue::Dim,
    }
}

/// What `status` ends with when a run's log could not be read (exit 1: it ran, showed every
/// run, and found something it could not read), else `None`.
pub fn unreadable(states: &[RunState]) -> Option<String> {
    let runs: Vec<&str> = (states.iter())
        .filter(|s| s.unreadable.is_some())
        .map(|s| s.target.as_str())
        .collect();
    (!runs.is_empty()).then(|| {
        format!(
            "the log of {} could not be read (its row says why): fix its permissions or path",
            runs.join(", ")
        )
    })
}

/// The line under the table: how many runs run, wait and ended, the GPU-hours accounting gave
/// so far, and when the last running one should end.
pub fn totals(states: &[RunState]) -> String {
    let held = |s: &&RunState| s.source == "squeue";
    let pending = (states.iter().filter(held))
        .filter(|s| s.state == "PENDING")
        .count();
    let running = states.iter().filter(held).count() - pending;
    let ended = states.len() - running - pending;
    let gpu_hours: Option<f64> = (states.iter().filter_map(|s| s.gpu_hours))
        .fold(None, |sum, h| Some(sum.unwrap_or(0.0) + h));
    let last = (states.iter().filter_map(|s| s.eta_s))
        .fold(None, |a: Option<f64>, e| Some(a.map_or(e, |a| a.max(e))));
    // A pending run has no ETA until it starts: the latest one is said to be the running ones'.
    let unknown = match pending {
        0 => String::new(),
        n => format!(" of the running; the {n} pending have none until they start"),
    };
    format!(
        "{} run{}: {running} running, {pending} pending, {ended} ended; {}; latest ETA {}{unknown}\n",
        states.len(),
        if states.len() == 1 { "" } else { "s" },
        gpu_hours.map_or_else(
            || "no GPU-hours accounted yet".to_owned(),
            |h| format!("{} GPU-hours so far", number(h, Digits::Sig(3)))
        ),
        last.map_or_else(|| MISSING.to_owned(), duration),
    )
}
