//! `rlctl watch`: a run's progress and its alerts, live or once. All state comes from SLURM and
//! the logs the ledger names (the run's whole history: see [`history`]), so a restarted watch
//! picks up where things are; each refresh reads only the bytes appended to a log since the
//! last one (through the log's step cache, which also times its steps for the hang watchdog).

use crate::error::{Error, Result};
use crate::runs::alerts::{self, Alert, Thresholds};
use crate::runs::metrics::Kind;
use crate::runs::metrics::keys::{ENTROPY, GRAD_NORM, REWARD, TOKEN_KL};
use crate::runs::probe::{JobState, Probe, Warning};
use crate::runs::seen::{self, Reader};
use crate::runs::stall;
use crate::runs::{ended, history};
use crate::slurm::Slurm;
use crate::store::ledger::{Record, Run};
use crate::util::fmt::{Digits, number};
use crate::util::out::emit as write;
use crate::util::versioned::document;
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::time::Duration;

pub struct Options {
    pub once: bool,
    /// One JSON object in place of the frame (with `once`).
    pub json: bool,
    pub interval: Duration,
    pub thresholds: Thresholds,
    /// The profile's `[watch] stall_floor_s`.
    pub stall_floor_s: u64,
}

/// Watches `run`'s job `record` until it ends (or once); an alert makes the result an error.
/// What SLURM could not tell is handed to `warn` as it is learnt.
pub fn watch(
    slurm: &Slurm,
    run: &Run,
    record: &Record,
    options: &Options,
    warn: &dyn Fn(&[Warning]),
    out: &mut dyn Write,
) -> Result<()> {
    // Everything said so far: a stall, and each alert line once.
    let mut said: BTreeSet<String> = BTreeSet::new();
    let jobs = history::jobs(run, record);
    loop {
        let reading = Reading::take(slurm, record, &jobs, options, warn)?;
        if reading.stalled.is_some() {
            // Said at every refresh while it lasts, counted once.
            said.insert("STALLED".to_owned());
        }
        let fresh: Vec<String> = (reading.alerts.iter())
            .map(|alert| format!("  ALERT {alert}\n"))
            .filter(|line| said.insert(line.clone()))
            .collect();
        let frame = match options.json {
            true => reading.json(),
            false => reading.frame(&fresh),
        };
        write(out, &frame)?;
        out.flush()
            .map_err(|e| Error::io("write", "standard output", e))?;
        let running = reading.job.source == "squeue";
        if reading.dead && cancelled_by_rlctl(record, &reading.job) {
            crate::say!(
                "rlctl: {} job {} ended CANCELLED, as `rlctl cancel` asked; to {}",
                record.target,
                record.job_id,
                crate::submit::again::hint(record)
            );
            return Ok(());
        }
        if reading.dead {
            return Err(Error::Problems(dead_message(
                slurm,
                record,
                &reading.job,
                reading.last_error.as_deref(),
            )));
        }
        if !running && let Some(no_log) = reading.no_log {
            return Err(no_log);
        }
        if options.once || !running {
            return match said.len() {
                0 => Ok(()),
                n => Err(Error::Alerts { count: n }),
            };
        }
        std::thread::sleep(options.interval);
    }
}

/// One refresh of a watched job: what SLURM and the run's logs say of it now.
struct Reading<'a> {
    record: &'a Record,
    job: JobState,
    progress: alerts::Progress,
    /// Which job of its run this is, and the step the run last resumed from.
    attempt: usize,
    resumed_from: Option<u64>,
    /// The last train value of each metric the frame shows, by the name it shows.
    latest: Vec<(&'static str, f64)>,
    /// Ended without finishing its run.
    dead: bool,
    /// A dead job's last error line.
    last_error: Option<String>,
    /// No log at all, said as such, never read as an empty run.
    no_log: Option<Error>,
    /// The log has never shown a step rlctl reads: the hang watchdog cannot judge.
    unknown: bool,
    stalled: Option<stall::Stall>,
    /// A running job before its first step: its start-up phase (`runs::phases`).
    starting: Option<crate::runs::phases::Starting>,
    /// Every alert raised since this reader's last look, this refresh's or an earlier watch's.
    alerts: Vec<Alert>,
}

impl<'a> Reading<'a> {
    /// Reads the job's state and its run's whole history (`jobs`): its step, curve and alerts
    /// the run's, its pulse the job's own.
    fn take(
        slurm: &Slurm,
        record: &'a Record,
        jobs: &[&Record],
        options: &Options,
        warn: &dyn Fn(&[Warning]),
    ) -> Result<Reading<'a>> {
        // SLURM is asked before the log is read: a job seen ended has written all its lines.
        let probe = Probe::read(slurm, None, &[record], &[])?;
        warn(&probe.warnings);
        let job = probe.job(record);
        let history = history::read(jobs)?;
        let (series, pulse) = (&history.series, history.pulse);
        let mut progress = alerts::progress(series, record.max_steps);
        let dead = job.source != "squeue" && is_dead(&job.state);
        let held = if job.source == "squeue" {
            job.state.as_str()
        } else {
            ""
        };
        let watched = stall::of_job(record, held, series, &pulse, options.stall_floor_s);
        let stalled = match &watched {
            stall::Watch::Stalled(stall) => Some(stall.clone()),
            _ => None,
        };
        if dead || stalled.is_some() {
            // A dead or hung run reaches no end: an ETA would promise one.
            progress.eta_secs = None;
        }
        let latest = [
            ("reward", REWARD),
            ("entropy", ENTROPY),
            ("grad norm", GRAD_NORM),
            ("token KL", TOKEN_KL),
        ]
        .iter()
        .filter_map(|(name, key)| Some((*name, series.values(Kind::Train, key).next_back()?.1)))
        .collect();
        Ok(Reading {
            record,
            attempt: jobs.len(),
            resumed_from: history.resumed_from().or(record.resumed_from),
            progress,
            latest,
            dead,
            last_error: dead
                .then(|| crate::runs::log::last_error(&record.log))
                .flatten(),
            no_log: (!record.log.exists()).then(|| Error::NoLog {
                target: record.target.clone(),
                job_id: record.job_id.clone(),
                log: record.log.clone(),
            }),
            unknown: watched == stall::Watch::Unknown,
            starting: (held == "RUNNING")
                .then(|| crate::runs::phases::starting_of(record))
                .flatten(),
            stalled,
            alerts: seen::judge(&record.log, Reader::Watch, series, &options.thresholds),
            job,
        })
    }

    /// The frame shown for this refresh; `fresh` are the alert lines not said before.
    fn frame(&self, fresh: &[String]) -> String {
        let (record, progress) = (self.record, &self.progress);
        let mut frame = head(
            record,
            &self.job.state,
            progress,
            self.attempt,
            self.resumed_from,
        );
        let latest: Vec<String> = (self.latest.iter())
            .map(|(name, v)| format!("{name} {}", number(*v, Digits::Sig(3))))
            .collect();
        if !latest.is_empty() {
            frame.push_str(&format!("  {}\n", latest.join("  ")));
        }
        if let Some(line) = &self.last_error {
            frame.push_str(&format!("  last error in the log: {line}\n"));
        }
        if let Some(no_log) = &self.no_log {
            frame.push_str(&format!("  {no_log}\n"));
        }
        if self.unknown {
            frame.push_str(
                "  progress unknown: the log shows no step in a form rlctl reads yet, so the hang watchdog does not judge this job\n",
            );
        }
        if let (Some(starting), None) = (&self.starting, &self.stalled) {
            frame.push_str(&format!("  {starting}\n"));
        }
        if let Some(stall) = &self.stalled {
            frame.push_str(&format!(
                "  STALLED {stall}: a hung trainer; `rlctl tend` cancels the job and resumes the run from its checkpoint\n"
            ));
        }
        for line in fresh {
            frame.push_str(line);
        }
        frame
    }

    /// The refresh as one JSON object (`watch --once --json`), every alert raised listed.
    fn json(&self) -> String {
        let (record, progress) = (self.record, &self.progress);
        document(&Watched {
            target: record.target.clone(),
            job_id: record.job_id.clone(),
            state: self.job.state.clone(),
            source: self.job.source,
            step: progress.step,
            total: progress.total,
            secs_per_step: progress.secs_per_step,
            eta_s: progress.eta_secs,
            attempt: self.attempt,
            resumed_from: self.resumed_from,
            latest: (self.latest.iter())
                .map(|(name, v)| (name.replace(' ', "_"), v.is_finite().then_some(*v)))
                .collect(),
            last_error: self.last_error.clone(),
            no_log: self.no_log.as_ref().map(|e| e.to_string()),
            stall: self.stalled.clone(),
            progress_unknown: self.unknown,
            starting: self.starting.clone(),
            alerts: self.alerts.iter().map(|a| a.to_string()).collect(),
            alert_kinds: self.alerts.iter().map(|a| a.kind).collect(),
        })
    }
}

/// `watch RUN --once --json`: one run's state, progress, latest metrics, stall and alerts.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Watched {
    pub target: String,
    pub job_id: String,
    pub state: String,
    /// `squeue`, `sacct`, `log` or `none`.
    pub source: &'static str,
    pub step: u64,
    pub total: Option<u64>,
    pub secs_per_step: Option<f64>,
    pub eta_s: Option<f64>,
    pub attempt: usize,
    pub resumed_from: Option<u64>,
    /// The last train value of each metric shown, by its name with `_` for spaces (`null`
    /// when not finite).
    pub latest: BTreeMap<String, Option<f64>>,
    pub last_error: Option<String>,
    pub no_log: Option<String>,
    pub stall: Option<stall::Stall>,
    pub progress_unknown: bool,
    /// A running job before its first step: its start-up phase.
    pub starting: Option<crate::runs::phases::Starting>,
    /// Each alert as the text says it, `[kind] message`.
    pub alerts: Vec<String>,
    /// The kind of each alert of `alerts`, in the same order: its stable code.
    pub alert_kinds: Vec<alerts::AlertKind>,
}

/// `[#####---------------]` for a known fraction, nothing otherwise.
fn bar(fraction: Option<f64>) -> String {
    let Some(f) = fraction else {
        return String::new();
    };
    let done = (f * 20.0).round() as usize;
    format!("[{}{}]", "#".repeat(done), "-".repeat(20 - done.min(20)))
}

/// Whether `job` ended CANCELLED by `rlctl cancel` (its mark names this very job).
fn cancelled_by_rlctl(record: &Record, job: &JobState) -> bool {
    let mark = record.run_dir.join(crate::runs::sealed::CANCEL_MARK);
    job.state == "CANCELLED"
        && std::fs::read_to_string(mark).is_ok_and(|ids| ids.lines().any(|id| id == record.job_id))
}

/// SLURM states of a job that ended without finishing its run.
pub fn is_dead(state: &str) -> bool {
    matches!(
        state,
        "FAILED"
            | "CANCELLED"
            | "TIMEOUT"
            | "NODE_FAIL"
            | "OUT_OF_MEMORY"
            | "BOOT_FAIL"
            | "DEADLINE"
            | "PREEMPTED"
    )
}

/// The frame's first lines: the job, its state and progress, and which job of its run it is
/// (`attempt`, and the step it resumed from) when it is not the run's only one.
fn head(
    record: &Record,
    state: &str,
    progress: &alerts::Progress,
    attempt: usize,
    resumed_from: Option<u64>,
) -> String {
    let mut head = format!(
        "{} job {} {state}  {}  {}\n",
        record.target,
        record.job_id,
        bar(progress.fraction()),
        progress.summary()
    );
    if attempt > 1 || resumed_from.is_some() {
        let from = resumed_from.map_or_else(String::new, |s| format!(", resumed from step {s}"));
        head.push_str(&format!("  attempt {attempt} of the run{from}\n"));
    }
    head
}

/// Why a dead run is dead, and what to do: read its log, then continue it as its checkpoints
/// allow. A log that does not say is completed by what SLURM says ([`ended`]).
fn dead_message(slurm: &Slurm, record: &Record, job: &JobState, error: Option<&str>) -> String {
    let exit = match &job.exit_code {
        Some(code) => format!(" (exit code {code})"),
        None => String::new(),
    };
    let look = match error {
        Some(e) => format!(
            "its last error line is above: read {}{}",
            record.log,
            ended::full_disk(e, record)
        ),
        None => {
            let says = ended::slurm_says(slurm, &record.job_id);
            let hint = ended::likely_full_disk(&says, record);
            match record.log.exists() {
                false => format!(
                    "its log `{}` does not exist (no such file); {says}{hint}",
                    record.log
                ),
                true => format!("its log has no error line; {says}{hint}"),
            }
        }
    };
    format!(
        "{} job {} ended {}{exit}; {look}, fix the cause, then {}",
        record.target,
        record.job_id,
        job.state,
        crate::submit::again::hint(record)
    )
}
