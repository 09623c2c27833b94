//! `rlctl tend`: one pass over recorded runs, for cron. A run that SLURM ended before it was
//! done (time limit, node failure, preemption, boot failure) is submitted again as the run's
//! next attempt, which resumes from its checkpoints; a crash is reported with its last error
//! line and left alone; a live run's alerts are reported (and with `--cancel-on-alert` every
//! live job of the run cancelled).
//!
//! The whole pass holds the run root's turn, and chooses its runs, reads the ledger and the
//! queue under it: two passes at once, or a pass and a `launch`, never put two jobs on one
//! checkpoint folder. A run that cannot be judged is reported and the pass goes on.

use crate::error::{Error, Result};
use crate::runs::{self, alerts, read_series};
use crate::submit::ledger::{Ledger, Record, Run};
use crate::submit::occupancy::Occupancy;
use crate::submit::resubmit::{Resubmitted, resubmit};
use crate::submit::slurm::Slurm;
use crate::util::out::emit;
use crate::util::turn::Turn;
use camino::Utf8Path;
use std::collections::BTreeMap;
use std::io::Write;

/// SLURM's end states that say nothing about the trainer: the run resumes in a new attempt.
const RESUMABLE: &[&str] = &["TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL"];

pub struct Options {
    /// Resubmissions allowed per run (attempts after the first).
    pub max_attempts: u32,
    pub cancel_on_alert: bool,
    pub thresholds: alerts::Thresholds,
}

/// What one run came to in a pass.
enum Verdict {
    /// Nothing to say: live without alerts, finished, cancelled by a person.
    Quiet,
    /// Said, and fine: resumed, or already resumed by someone else.
    Resumed(String),
    Said(String),
    /// A person should look.
    Look(String),
}

/// One pass over the runs `names` mean (every recorded run without names); an error (exit 1)
/// when a person should look.
pub fn tend(
    slurm: &Slurm,
    ledger: &Ledger,
    run_root: &Utf8Path,
    names: &[String],
    options: &Options,
    out: &mut dyn Write,
) -> Result<()> {
    let turn = Turn::take(run_root)?;
    // Chosen, and the queue read, under the turn: what another pass or a launch did before it
    // is seen here.
    let runs = select(ledger, names)?;
    let occupancy = Occupancy::read(&turn, slurm, ledger)?;
    let queue: BTreeMap<String, String> = (occupancy.queued.iter())
        .map(|j| (j.id.clone(), j.state.clone()))
        .collect();
    let judged: Vec<&Record> = runs.iter().map(|r| judged(r, &queue)).collect();
    let owned: Vec<Record> = judged.iter().map(|r| (*r).clone()).collect();
    let states = runs::job_states_given(&queue, slurm, &owned);
    let (mut resumed, mut look) = (0, 0);
    for ((run, record), state) in runs.iter().zip(&judged).zip(&states) {
        let verdict = judge(
            slurm,
            ledger,
            &occupancy,
            run,
            record,
            &state.state,
            options,
        )
        .unwrap_or_else(|e| {
            Verdict::Look(format!(
                "{} job {}: could not be tended: {e}",
                record.target, record.job_id
            ))
        });
        let line = match verdict {
            Verdict::Quiet => continue,
            Verdict::Resumed(line) => {
                resumed += 1;
                line
            }
            Verdict::Said(line) => line,
            Verdict::Look(line) => {
                look += 1;
                line
            }
        };
        emit(out, &format!("{line}\n"))?;
    }
    emit(
        out,
        &format!(
            "tend: {} runs, {resumed} resumed, {look} need a look\n",
            runs.len()
        ),
    )?;
    match look {
        0 => Ok(()),
        n => Err(Error::Problems(format!(
            "{n} run{} need{} a look",
            if n == 1 { "" } else { "s" },
            if n == 1 { "s" } else { "" }
        ))),
    }
}

/// Every run the names mean, each once (a grid and one of its cells may both be named).
pub fn select(ledger: &Ledger, names: &[String]) -> Result<Vec<Run>> {
    if names.is_empty() {
        return runs::select_runs(ledger, None);
    }
    let mut chosen: Vec<Run> = Vec::new();
    for name in names {
        for run in runs::select_runs(ledger, Some(name))? {
            if !chosen.iter().any(|r| r.name == run.name) {
                chosen.push(run);
            }
        }
    }
    Ok(chosen)
}

/// The job of a run that tend judges: the link that runs; else, while later links wait, the
/// last one that ended (its alerts decide whether they may start); else the newest.
fn judged<'a>(run: &'a Run, queue: &BTreeMap<String, String>) -> &'a Record {
    let running = |r: &&Record| queue.get(&r.job_id).is_some_and(|s| s != "PENDING");
    let ended = |r: &&Record| !queue.contains_key(&r.job_id);
    let waiting = run.records.iter().any(|r| queue.contains_key(&r.job_id));
    (run.records.iter().rev().find(running))
        .or_else(|| {
            waiting
                .then(|| run.records.iter().rev().find(ended))
                .flatten()
        })
        .unwrap_or_else(|| run.latest())
}

/// What a pass does with one run, whose judged job is `record` in SLURM state `state`.
fn judge(
    slurm: &Slurm,
    ledger: &Ledger,
    occupancy: &Occupancy,
    run: &Run,
    record: &Record,
    state: &str,
    options: &Options,
) -> Result<Verdict> {
    let head = format!("{} job {}", record.target, record.job_id);
    let live: Vec<&str> = (run.records.iter())
        .filter(|r| occupancy.holds(&r.job_id))
        .map(|r| r.job_id.as_str())
        .collect();
    if !live.is_empty() {
        let series = read_series(&record.log)?;
        let raised = alerts::alerts(&series, &options.thresholds);
        let Some(alert) = raised.first() else {
            return Ok(Verdict::Quiet);
        };
        let mut line = format!("{head}: ALERT {alert}");
        if options.cancel_on_alert {
            // Every live link: a later one would resume from what raised the alert.
            slurm.cancel(&live)?;
            line.push_str(&format!(
                " (cancelled job{} {})",
                plural(live.len()),
                live.join(", ")
            ));
        }
        return Ok(Verdict::Look(line));
    }
    let saved = record.saved_step();
    let done = saved.zip(record.max_steps).is_some_and(|(s, max)| s >= max);
    match state {
        s if RESUMABLE.contains(&s) && !done => {
            let Some(saved) = saved else {
                return Ok(Verdict::Look(format!(
                    "{head}: {s}, and no checkpoint was saved in `{}`: a new attempt would start from step 0 \
                     and stop at the same place; not resubmitted. Save within a slot (a smaller \
                     trainer.ckpt_interval: `rlctl estimate` names the largest that fits) or give a longer \
                     --time, then `rlctl launch ... --resume latest`",
                    record.ckpt_path()
                )));
            };
            if let Some(from) = record.resumed_from.filter(|from| saved <= *from) {
                return Ok(Verdict::Look(format!(
                    "{head}: {s} again at step {saved}: attempt {} resumed from step {from} and saved no later \
                     checkpoint; not resubmitted. Save within a slot (a smaller trainer.ckpt_interval) or give \
                     a longer --time",
                    record.attempt
                )));
            }
            if record.attempt > options.max_attempts {
                return Ok(Verdict::Look(format!(
                    "{head}: {s} at attempt {}; not resubmitted (--max-attempts {})",
                    record.attempt, options.max_attempts
                )));
            }
            Ok(match resubmit(slurm, ledger, occupancy, record, saved)? {
                Resubmitted::Queued(next) => Verdict::Resumed(format!(
                    "{head}: {s}; resumed as job {} (attempt {}, from step {saved})",
                    next.job_id, next.attempt
                )),
                Resubmitted::Occupied { job_id, state } => Verdict::Said(format!(
                    "{head}: {s}; job {job_id} ({state}) already uses its checkpoint folder: not resubmitted"
                )),
            })
        }
        "FAILED" | "OUT_OF_MEMORY" => Ok(Verdict::Look(format!(
            "{head}: {state} ({}), not resubmitted: {}",
            record.log,
            last_error(&record.log).unwrap_or_else(|| "no error line in the log".into())
        ))),
        _ => Ok(Verdict::Quiet),
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The log's last line that reads like an error, for the one-line report: read from the end of
/// the log alone, however large it is.
fn last_error(log: &Utf8Path) -> Option<String> {
    let tail = runs::log_end(log).ok()?;
    tail.lines()
        .rev()
        .find(|l| {
            let l = l.to_ascii_lowercase();
            // The last resort: the run script's own `... exited with status N`.
            [
                "error",
                "exception",
                "check failed",
                "killed",
                "exited with status",
            ]
            .iter()
            .any(|w| l.contains(w))
        })
        .map(|l| l.trim().chars().take(300).collect())
}
