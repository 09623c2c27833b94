//! `rlctl tend`: one pass over recorded runs, for cron. A run that SLURM ended before it was
//! done (time limit, node failure, preemption, boot failure) is submitted again as the run's
//! next attempt, which resumes from its checkpoints, and so is one whose trainer was killed by
//! SIGKILL (once: see `end_state`); a crash is reported with its last error
//! line and left alone; a running job whose trainer hangs (see `runs::stall`) is cancelled and
//! its run resumed the same way; a live run's alerts are reported (and with
//! `--cancel-on-alert` every live job of the run cancelled).
//!
//! The whole pass holds the run root's turn, and chooses its runs, reads the ledger and the
//! queue under it: two passes at once, or a pass and a `launch`, never put two jobs on one
//! checkpoint folder. A run that cannot be judged is reported and the pass goes on.

use crate::checkpoint::Decision;
use crate::error::{Error, Result};
use crate::runs::log::{last_error, trainer_status};
use crate::runs::metrics::Series;
use crate::runs::metrics::pulse::Pulse;
use crate::runs::probe::{JobState, Probe, Queue, Warning};
use crate::runs::sealed::{STALL_MARK, Seal, Sealed};
use crate::runs::seen::{self, Reader};
use crate::runs::{self, alerts, ended, grids, history, roster, stall};
use crate::slurm::Slurm;
use crate::store::ledger::{Ledger, Record, Run};
use crate::submit::occupancy::Occupancy;
use crate::submit::resubmit::{Resubmitted, qos_of, resubmit};
use crate::submit::room::Room;
use crate::util::out::emit_line;
use crate::util::turn::Turn;
use camino::Utf8Path;
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Write;

/// SLURM's end states that say nothing about the trainer: the run resumes in a new attempt.
/// `KILLED` is rlctl's: see [`end_state`].
pub(crate) const RESUMABLE: &[&str] = &[
    "TIMEOUT",
    "NODE_FAIL",
    "PREEMPTED",
    "BOOT_FAIL",
    "STALLED",
    "KILLED",
];

/// The state a job is judged in: SLURM's, except a FAILED job whose trainer was killed by
/// SIGKILL (exit 137 = 128 + 9, as accounting or the run script's last line says): that comes
/// from outside the trainer (the host's OOM killer, a node health check, an admin), so the run
/// resumes once, like after a hang; the same kill again without a newer checkpoint is left for a
/// person by the rule every resumable end follows. Any other failure is the trainer's own.
fn end_state<'a>(job: &'a JobState, record: &Record) -> &'a str {
    if job.state != "FAILED" {
        return &job.state;
    }
    // Accounting shows the wrapper's `exit 137` as `9:0` on some SLURM versions, which an
    // `exit 9` would also give: the run script's own line is the evidence, accounting's
    // unambiguous forms a second source.
    let sigkill = |code: &str| code == "137:0" || code == "0:9";
    let killed =
        job.exit_code.as_deref().is_some_and(sigkill) || trainer_status(&record.log) == Some(137);
    if killed { "KILLED" } else { &job.state }
}

pub struct Options {
    /// Resubmissions allowed per run (attempts after the first).
    pub max_attempts: u32,
    pub cancel_on_alert: bool,
    pub thresholds: alerts::Thresholds,
    /// The profile's `[watch] stall_floor_s`.
    pub stall_floor_s: u64,
    /// QOS -> jobs a user may have submitted there: room for a grid's waiting cells.
    pub submit_limits: BTreeMap<String, u32>,
    pub gpus_per_node: u32,
}

/// What a pass came to.
pub struct Pass {
    /// Runs a person should look at.
    pub look: usize,
    /// The grids whose every cell has ended, each with the key its report is written for.
    pub over: Vec<(String, String)>,
    /// What the pass said, in order: each line of the text is one event's message.
    pub events: Vec<Event>,
}

/// One thing a pass says: `tend --json`'s `events`, and a line of the text.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Event {
    pub kind: EventKind,
    /// The run (`preset/job-name`, `grid/cell`) or grid it is about; none for the summary.
    pub run: Option<String>,
    /// The job the pass judged.
    pub job_id: Option<String>,
    /// The line the text prints.
    pub message: String,
}

/// What an event says; stable, for scripts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum EventKind {
    /// The run was resubmitted to resume (or someone else had resumed it).
    Resumed,
    /// Said, and fine.
    Said,
    /// A person should look at the run.
    Look,
    /// An alert a live job raised (a person should look).
    Alert,
    /// The pass's count of runs, resumed and needing a look.
    Summary,
    /// What the pass did for a grid's waiting cells.
    Grid,
    /// A grid whose every cell has ended: its report was written, or could not be.
    Report,
    /// Uploading the runs' offline W&B runs.
    WandbSync,
}

impl Event {
    /// An event about no run or job in particular.
    pub fn said(kind: EventKind, run: Option<&str>, message: String) -> Event {
        Event {
            kind,
            run: run.map(str::to_owned),
            job_id: None,
            message,
        }
    }
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
    /// A person should look: the alerts a live job raised, one a line.
    Alerts(Vec<String>),
}

impl Verdict {
    /// What the pass says of `record`'s run, an event a line.
    fn events(self, record: &Record) -> Vec<Event> {
        let (kind, lines) = match self {
            Verdict::Quiet => return Vec::new(),
            Verdict::Resumed(line) => (EventKind::Resumed, vec![line]),
            Verdict::Said(line) => (EventKind::Said, vec![line]),
            Verdict::Look(line) => (EventKind::Look, vec![line]),
            Verdict::Alerts(lines) => (EventKind::Alert, lines),
        };
        (lines.into_iter())
            .map(|message| Event {
                kind,
                run: Some(record.target.clone()),
                job_id: Some(record.job_id.clone()),
                message,
            })
            .collect()
    }
}

/// One pass over the runs `names` mean (every recorded run without names), then over the grids
/// with cells waiting for room: what it came to, with the runs a person should look at. What
/// SLURM could not tell is handed to `warn` as it is learnt.
pub fn tend(
    slurm: &Slurm,
    ledger: &Ledger,
    run_root: &Utf8Path,
    names: &[String],
    options: &Options,
    warn: &dyn Fn(&[Warning]),
    out: &mut dyn Write,
) -> Result<Pass> {
    let turn = Turn::take(run_root)?;
    let grids = grids::tended(run_root, names)?;
    // Chosen, and the queue read, under the turn: what another pass or a launch did before it
    // is seen here. A grid whose cells all wait has no recorded run yet. A pass over every run
    // reads the roster of runs (see `roster`), not the whole ledger.
    let rostered = match names.is_empty() {
        true => roster::entries(ledger)?,
        false => None,
    };
    let selected = match rostered {
        Some(_) => Vec::new(),
        None => match select(ledger, names) {
            Err(Error::UnknownName { .. }) if !grids.is_empty() => Vec::new(),
            other => other?,
        },
    };
    let occupancy = Occupancy::read(&turn, slurm, ledger)?;
    let queue = Queue::of(&occupancy.queued);
    // A sealed run's end is known: neither accounting nor its log is asked again.
    let mut index = Sealed::load(run_root);
    let (runs, total) = match rostered.map(|e| roster::live(ledger, e, &index, &queue, RESUMABLE)) {
        Some(Some(live)) => live,
        // A record the roster names did not read back: the whole ledger.
        Some(None) => {
            let runs = select(ledger, names)?;
            let total = runs.len();
            (runs, total)
        }
        None => {
            let total = selected.len();
            (selected, total)
        }
    };
    let judged: Vec<&Record> = runs.iter().map(|r| judged(r, &queue)).collect();
    index.unseal_held(&runs, &queue);
    // A run settled on its log's word is judged afresh: accounting may know it by now.
    let seals: Vec<Option<Seal>> = (runs.iter())
        .map(|r| index.get(r, &queue).filter(|s| !s.is_settled()).cloned())
        .collect();
    let asked: Vec<&Record> = (judged.iter().zip(&seals))
        .filter(|(_, seal)| seal.is_none())
        .map(|(r, _)| *r)
        .collect();
    let probe = Probe::read(slurm, Some(queue), &asked, &[])?;
    warn(&probe.warnings);
    let states: Vec<JobState> = (judged.iter().zip(&seals))
        .map(|(r, seal)| seal.as_ref().map_or_else(|| probe.job(r), Seal::job))
        .collect();
    let (mut resumed, mut look) = (0, 0);
    let mut events = Vec::new();
    // Room in the QOSes, taken as this pass resubmits: sbatch would refuse a job past the limit.
    let mut room = Room::new(&options.submit_limits, &occupancy.queued);
    for (((run, record), state), seal) in runs.iter().zip(&judged).zip(&states).zip(&seals) {
        let verdict = judge(
            slurm,
            ledger,
            &occupancy,
            &mut room,
            run,
            record,
            end_state(state, record),
            seal.as_ref(),
            options,
        )
        .unwrap_or_else(|e| {
            Verdict::Look(format!(
                "{} job {}: could not be tended: {e}",
                record.target, record.job_id
            ))
        });
        // A run left as it is, ended for good, is sealed (a resumed one has a new job), its
        // log unread: a `status` adds its row.
        if seal.is_none()
            && matches!(
                verdict,
                Verdict::Quiet | Verdict::Look(_) | Verdict::Alerts(_)
            )
        {
            index.seal_end(run, &probe.queue, state, None);
        }
        resumed += usize::from(matches!(verdict, Verdict::Resumed(_)));
        look += usize::from(matches!(verdict, Verdict::Look(_) | Verdict::Alerts(_)));
        // A run's line is one line, whatever its names and paths hold (a folder named with a
        // newline would forge a line of the cron mail).
        for event in verdict.events(record) {
            say(out, &mut events, event)?;
        }
    }
    index.store();
    let summary = format!("tend: {total} runs, {resumed} resumed, {look} need a look");
    say(
        out,
        &mut events,
        Event::said(EventKind::Summary, None, summary),
    )?;
    // The grids after their runs: a cell resumed above holds its room in the QOS.
    let (over, said, failed) = advance_grids(&turn, slurm, ledger, run_root, grids, options, warn);
    look += failed;
    for event in said {
        say(out, &mut events, event)?;
    }
    Ok(Pass { look, over, events })
}

/// Each grid's waiting cells submitted as room allows: the grids whose every cell has ended,
/// what to say of each grid, and how many could not be tended (a person should look).
fn advance_grids(
    turn: &Turn,
    slurm: &Slurm,
    ledger: &Ledger,
    run_root: &Utf8Path,
    grids: Vec<String>,
    options: &Options,
    warn: &dyn Fn(&[Warning]),
) -> (Vec<(String, String)>, Vec<Event>, usize) {
    let (mut over, mut events, mut failed) = (Vec::new(), Vec::new(), 0);
    for grid in grids {
        let pass = grids::advance(
            turn,
            slurm,
            ledger,
            run_root,
            &grid,
            &options.submit_limits,
            options.gpus_per_node,
        );
        match pass {
            Ok(pass) => {
                warn(&pass.warnings);
                for line in pass.lines.into_iter().chain([pass.summary]) {
                    events.push(Event::said(EventKind::Grid, Some(&grid), line));
                }
                over.extend(pass.over.map(|key| (grid, key)));
            }
            Err(e) => {
                failed += 1;
                let line = format!("grid {grid}: could not be tended: {e}");
                events.push(Event::said(EventKind::Look, Some(&grid), line));
            }
        }
    }
    (over, events, failed)
}

/// Prints `event` as its line (one line, whatever it holds) and keeps it for the pass.
pub fn say(out: &mut dyn Write, events: &mut Vec<Event>, event: Event) -> Result<()> {
    emit_line(out, &event.message)?;
    events.push(event);
    Ok(())
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
fn judged<'a>(run: &'a Run, queue: &Queue) -> &'a Record {
    let running = |r: &&Record| queue.runs(&r.job_id);
    let ended = |r: &&Record| !queue.holds(&r.job_id);
    let waiting = run.records.iter().any(|r| queue.holds(&r.job_id));
    (run.records.iter().rev().find(running))
        .or_else(|| {
            waiting
                .then(|| run.records.iter().rev().find(ended))
                .flatten()
        })
        .unwrap_or_else(|| run.latest())
}

/// What a pass does with one run, whose judged job is `record` in SLURM state `state`.
#[allow(clippy::too_many_arguments)]
fn judge(
    slurm: &Slurm,
    ledger: &Ledger,
    occupancy: &Occupancy,
    room: &mut Room,
    run: &Run,
    record: &Record,
    state: &str,
    seal: Option<&Seal>,
    options: &Options,
) -> Result<Verdict> {
    let head = format!("{} job {}", record.target, record.job_id);
    let live = live_jobs(&run.records, occupancy);
    if !live.is_empty() {
        return Live {
            slurm,
            ledger,
            occupancy,
            options,
        }
        .judge(room, run, record, state, &head, &live);
    }
    // A job this tend cancelled as hung, on a pass whose QOS had no room for its next attempt
    // (a sealed run never is one).
    let state = match state {
        "CANCELLED" if seal.is_none() && record.run_dir.join(STALL_MARK).is_file() => "STALLED",
        other => other,
    };
    // The checkpoints are read only for a job that may resume: after any other end they decide
    // nothing. It resumes from the newest whole step, whatever the pointer says.
    let decision = (RESUMABLE.contains(&state)).then(|| record.resume_decision());
    let (saved, note) = resumes_from(decision.as_ref());
    let done = saved.zip(record.max_steps).is_some_and(|(s, max)| s >= max);
    match state {
        s if RESUMABLE.contains(&s) && !done => {
            if let Some(Decision::Refuse(why)) = &decision {
                return Ok(Verdict::Look(format!(
                    "{head}: {s}; not resubmitted: {why}"
                )));
            }
            // A hang or a kill resumes from nothing when it saved nothing yet: it need not stop
            // there again.
            let saved = match (saved, s) {
                (None, "STALLED" | "KILLED") if record.resumed_from.is_none() => Some(0),
                (saved, _) => saved,
            };
            let Some(saved) = saved else {
                return Ok(Verdict::Look(format!(
                    "{head}: {s}, and no checkpoint was saved in `{}`: a new attempt would start from step 0 \
                     and stop at the same place; not resubmitted. Save within a slot (a smaller \
                     trainer.ckpt_interval: `rlctl estimate` names the largest that fits) or give a longer \
                     --time, then start it again from step 0 with that change: `{}`",
                    record.ckpt_path(),
                    crate::submit::again::ask(record).command()
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
            if let Some(qos) = qos_of(record).filter(|q| !room.take(q)) {
                return Ok(Verdict::Said(format!(
                    "{head}: {s}; resumes from step {saved} once QOS {qos} has room (a later pass){note}"
                )));
            }
            Ok(
                match resubmit(slurm, ledger, occupancy, record, saved, None)? {
                    Resubmitted::Queued(next) => Verdict::Resumed(format!(
                        "{head}: {s}; resumed as job {} (attempt {}, from step {saved}){note}",
                        next.job_id, next.attempt
                    )),
                    Resubmitted::Occupied { job_id, state } => Verdict::Said(format!(
                        "{head}: {s}; job {job_id} ({state}) already uses its checkpoint folder: not resubmitted"
                    )),
                },
            )
        }
        "FAILED" | "OUT_OF_MEMORY" => {
            let error = seal.map_or_else(|| last_error(&record.log), |s| s.last_error.clone());
            Ok(Verdict::Look(format!(
                "{head}: {state} ({}), not resubmitted: {}",
                record.log,
                why_failed(slurm, record, error)
            )))
        }
        _ => Ok(Verdict::Quiet),
    }
}

/// The jobs of `records` SLURM holds.
fn live_jobs<'r>(records: &'r [Record], occupancy: &Occupancy) -> Vec<&'r str> {
    (records.iter())
        .filter(|r| occupancy.holds(&r.job_id))
        .map(|r| r.job_id.as_str())
        .collect()
}

/// What a pass needs to judge a run SLURM holds a job of.
struct Live<'a> {
    slurm: &'a Slurm,
    ledger: &'a Ledger,
    occupancy: &'a Occupancy,
    options: &'a Options,
}

impl Live<'_> {
    /// A hung job cancelled and its run resumed, else the alerts its steps raised since the
    /// last pass; `live` are the run's jobs SLURM holds, `head` what each line begins with.
    fn judge(
        &self,
        room: &mut Room,
        run: &Run,
        record: &Record,
        state: &str,
        head: &str,
        live: &[&str],
    ) -> Result<Verdict> {
        let (slurm, options) = (self.slurm, self.options);
        // A run of one job: its log is read once for the hang and the alerts alike.
        let jobs = history::jobs(run, record);
        let mut own = match jobs.len() {
            1 if self.occupancy.holds(&record.job_id) => Some(runs::read_log(&record.log)?),
            _ => None,
        };
        let read = own.as_ref().map(|(series, pulse)| (series, pulse));
        let (ledger, occupancy) = (self.ledger, self.occupancy);
        let hung = stalled(slurm, ledger, occupancy, room, record, state, read, options)?;
        if let Some(verdict) = hung {
            return Ok(verdict);
        }
        // The run's whole history: a resumed job's alerts compare with the run's start.
        let series = match own.take() {
            Some((series, _)) => series,
            None => history::read(&jobs)?.series,
        };
        // Every step since tend's last look: a spike between two passes is reported once.
        let raised = seen::judge(&record.log, Reader::Tend, &series, &options.thresholds);
        if raised.is_empty() {
            return Ok(Verdict::Quiet);
        }
        let mut said: Vec<String> = raised
            .iter()
            .map(|a| format!("{head}: ALERT {a}"))
            .collect();
        if options.cancel_on_alert {
            // Every live link: a later one would resume from what raised the alert.
            slurm.cancel(live)?;
            if let Some(last) = said.last_mut() {
                last.push_str(&format!(
                    " (cancelled job{} {})",
                    plural(live.len()),
                    live.join(", ")
                ));
            }
        }
        Ok(Verdict::Alerts(said))
    }
}

/// Why a failed job failed: its log's last error line, else what SLURM says ([`ended`]); with
/// the full-disk advice when either points at one.
fn why_failed(slurm: &Slurm, record: &Record, error: Option<String>) -> String {
    if let Some(e) = error {
        let hint = ended::full_disk(&e, record);
        return format!("{e}{hint}");
    }
    let says = ended::slurm_says(slurm, &record.job_id);
    let hint = ended::likely_full_disk(&says, record);
    let log = match record.log.exists() {
        true => "no error line in the log",
        false => "it left no log",
    };
    format!("{log}; {says}{hint}")
}

/// A running job whose trainer hangs: cancelled, and its run resumed from its checkpoint as the
/// next attempt, as after a TIMEOUT (from step 0 when it saved none yet: the wrapper resumes
/// from nothing). The new job waits for the hung one to end (`afterany`), and is submitted
/// before the cancel, so a failed sbatch never leaves the run with no job. `None`: not stalled.
/// `read` is the job's log as the caller read it, if it did.
#[allow(clippy::too_many_arguments)]
fn stalled(
    slurm: &Slurm,
    ledger: &Ledger,
    occupancy: &Occupancy,
    room: &mut Room,
    record: &Record,
    state: &str,
    read: Option<(&Series, &Pulse)>,
    options: &Options,
) -> Result<Option<Verdict>> {
    if !occupancy.holds(&record.job_id) {
        return Ok(None);
    }
    // The log as the caller read it, else read now.
    let kept;
    let (series, pulse) = match read {
        Some(read) => read,
        None => {
            kept = runs::read_log(&record.log)?;
            (&kept.0, &kept.1)
        }
    };
    let stall::Watch::Stalled(hang) =
        stall::of_job(record, state, series, pulse, options.stall_floor_s)
    else {
        return Ok(None);
    };
    let id = record.job_id.as_str();
    // What was read, and when: the cron log says why a job was cancelled.
    let read = match series.last_train_step() {
        Some(step) => format!("its log `{}` shows step {step} last", record.log),
        None => format!("its log `{}` shows no step yet", record.log),
    };
    let head = format!(
        "{} job {id}: stalled, {hang}: {read}, {}",
        record.target,
        hang.evidence()
    );
    let decision = record.resume_decision();
    let (saved, note) = resumes_from(Some(&decision));
    let from = saved.unwrap_or(0);
    let done = saved.zip(record.max_steps).is_some_and(|(s, max)| s >= max);
    let left = if let Decision::Refuse(why) = &decision {
        Some(Verdict::Look(format!(
            "{head}; cancelled, not resubmitted: {why}"
        )))
    } else if done {
        Some(Verdict::Said(format!(
            "{head}; cancelled: its last step ({from}) is saved, nothing to resume"
        )))
    } else if let Some(resumed) = record.resumed_from.filter(|r| from <= *r) {
        Some(Verdict::Look(format!(
            "{head}; cancelled, not resubmitted: attempt {} resumed from step {resumed} and hung again \
             before saving a later checkpoint, so a new attempt would hang at the same place (a \
             deterministic hang: a stuck collective or a step that never ends). Read where its log \
             `{}` stops, fix the cause, then {}",
            record.attempt,
            record.log,
            crate::submit::again::hint(record)
        )))
    } else if record.attempt > options.max_attempts {
        Some(Verdict::Look(format!(
            "{head}; cancelled at attempt {}, not resubmitted (--max-attempts {})",
            record.attempt, options.max_attempts
        )))
    } else {
        None
    };
    if let Some(verdict) = left {
        slurm.cancel(&[id])?;
        return Ok(Some(verdict));
    }
    // The hung job holds its QOS's room until it ends: with none left, cancel it now and resume
    // the run on a later pass, once it has gone.
    let qos = (occupancy.queued.iter())
        .find(|j| j.id == id)
        .map(|j| j.qos.clone())
        .filter(|q| !q.is_empty());
    if let Some(qos) = qos.filter(|q| !room.take(q)) {
        let mark = record.run_dir.join(STALL_MARK);
        crate::util::fs::write_atomic(&mark, &format!("{head}\n"), 0o644)?;
        slurm.cancel(&[id])?;
        return Ok(Some(Verdict::Said(format!(
            "{head}; cancelled; QOS {qos} has no room for its next attempt yet: a later pass resumes it from \
             step {from}"
        ))));
    }
    let (next, queued) = match resubmit(slurm, ledger, occupancy, record, from, Some(id))? {
        Resubmitted::Queued(next) => (
            format!(
                "resumed as job {} (attempt {}, from step {from}){note}",
                next.job_id, next.attempt
            ),
            true,
        ),
        Resubmitted::Occupied { job_id, state } => (
            format!(
                "job {job_id} ({state}) already uses its checkpoint folder and resumes from it"
            ),
            false,
        ),
    };
    Ok(Some(match slurm.cancel(&[id]) {
        Ok(()) if queued => Verdict::Resumed(format!("{head}; cancelled, {next}")),
        Ok(()) => Verdict::Said(format!("{head}; cancelled; {next}")),
        Err(e) => Verdict::Look(format!(
            "{head}; {next}, but it could not be cancelled ({e}): cancel it with `scancel {id}`; \
             the run goes on once it has ended"
        )),
    }))
}

/// The step a decision resumes from (`None`: nothing saved, or no safe step), and what its
/// line says of a pointer the job will repair first.
fn resumes_from(decision: Option<&Decision>) -> (Option<u64>, String) {
    match decision {
        Some(Decision::Resume { step, repair }) => (
            Some(*step),
            repair.as_ref().map_or_else(String::new, |why| {
                format!("; {why}: the job makes it name step {step}, the newest whole checkpoint")
            }),
        ),
        _ => (None, String::new()),
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
