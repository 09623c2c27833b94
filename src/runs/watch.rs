//! `rlctl watch`: a run's progress and its alerts, live or once. All state comes from SLURM and
//! the logs the ledger names (the run's whole history: see [`history`]), so a restarted watch
//! picks up where things are; each refresh reads only the bytes appended to a log since the
//! last one (through the log's step cache, which also times its steps for the hang watchdog).

use crate::error::{Error, Result};
use crate::runs::alerts::{self, Thresholds};
use crate::runs::metrics::Kind;
use crate::runs::metrics::keys::{ENTROPY, GRAD_NORM, REWARD, TOKEN_KL};
use crate::runs::probe::{JobState, Probe, Warning};
use crate::runs::seen::{self, Reader};
use crate::runs::stall;
use crate::runs::{ended, history};
use crate::submit::ledger::{Record, Run};
use crate::submit::slurm::Slurm;
use crate::util::fmt::{Digits, number};
use crate::util::out::emit as write;
use std::collections::BTreeSet;
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
    let mut said: BTreeSet<String> = BTreeSet::new();
    let jobs = history::jobs(run, record);
    loop {
        // SLURM is asked before the log is read: a job seen ended has written all its lines.
        let probe = Probe::read(slurm, None, &[record], &[])?;
        warn(&probe.warnings);
        let job = probe.job(record);
        let (state, source) = (&job.state, job.source);
        // The run's whole history: its step, curve and alerts; its pulse the job's own.
        let history = history::read(&jobs)?;
        let (series, pulse) = (&history.series, history.pulse);
        let attempt = jobs.len();
        let resumed_from = history.resumed_from().or(record.resumed_from);
        let mut progress = alerts::progress(series, record.max_steps);
        let dead = source != "squeue" && is_dead(state);
        let held = if source == "squeue" {
            state.as_str()
        } else {
            ""
        };
        let watched = stall::of_job(record, held, series, &pulse, options.stall_floor_s);
        let unknown = watched == stall::Watch::Unknown;
        let stalled = match watched {
            stall::Watch::Stalled(stall) => Some(stall),
            _ => None,
        };
        if dead || stalled.is_some() {
            // A dead or hung run reaches no end: an ETA would promise one.
            progress.eta_secs = None;
        }
        let mut frame = head(record, state, &progress, attempt, resumed_from);
        let values: Vec<(&str, f64)> = [
            ("reward", REWARD),
            ("entropy", ENTROPY),
            ("grad norm", GRAD_NORM),
            ("token KL", TOKEN_KL),
        ]
        .iter()
        .filter_map(|(name, key)| Some((*name, series.values(Kind::Train, key).next_back()?.1)))
        .collect();
        let latest: Vec<String> = (values.iter())
            .map(|(name, v)| format!("{name} {}", number(*v, Digits::Sig(3))))
            .collect();
        if !latest.is_empty() {
            frame.push_str(&format!("  {}\n", latest.join("  ")));
        }
        let last_error = if dead {
            crate::runs::log::last_error(&record.log)
        } else {
            None
        };
        if let Some(line) = &last_error {
            frame.push_str(&format!("  last error in the log: {line}\n"));
        }
        // No log at all is said as such, never read as an empty run.
        let no_log = (!record.log.exists()).then(|| Error::NoLog {
            target: record.target.clone(),
            job_id: record.job_id.clone(),
            log: record.log.clone(),
        });
        if let Some(no_log) = &no_log {
            frame.push_str(&format!("  {no_log}\n"));
        }
        if unknown {
            frame.push_str(
                "  progress unknown: the log shows no step in a form rlctl reads yet, so the hang watchdog does not judge this job\n",
            );
        }
        if let Some(stall) = &stalled {
            // Said at every refresh while it lasts, counted once.
            said.insert("STALLED".to_owned());
            frame.push_str(&format!(
                "  STALLED {stall}: a hung trainer; `rlctl tend` cancels the job and resumes the run from its checkpoint\n"
            ));
        }
        // Every step since this reader's last look, this refresh's or an earlier watch's.
        let raised = seen::judge(&record.log, Reader::Watch, series, &options.thresholds);
        for alert in &raised {
            let line = format!("  ALERT {alert}\n");
            if said.insert(line.clone()) {
                frame.push_str(&line);
            }
        }
        if options.json {
            let doc = serde_json::json!({
                "target": record.target,
                "job_id": record.job_id,
                "state": state,
                "source": source,
                "step": progress.step,
                "total": progress.total,
                "secs_per_step": progress.secs_per_step,
                "eta_s": progress.eta_secs,
                "attempt": attempt,
                "resumed_from": resumed_from,
                "latest": (values.iter())
                    .map(|(name, v)| (name.replace(' ', "_"), serde_json::json!(v)))
                    .collect::<serde_json::Map<_, _>>(),
                "last_error": last_error,
                "no_log": no_log.as_ref().map(|e| e.to_string()),
                "stall": stalled.as_ref().map(|s| serde_json::json!({"quiet_s": s.quiet_s, "limit_s": s.limit_s, "since": s.since, "clock": s.clock})),
                "progress_unknown": unknown,
                "alerts": raised.iter().map(|a| a.to_string()).collect::<Vec<_>>(),
            });
            frame = format!("{}\n", serde_json::to_string(&doc).expect("serializes"));
        }
        write(out, &frame)?;
        out.flush()
            .map_err(|e| Error::io("write", "standard output", e))?;
        let running = source == "squeue";
        if dead {
            return Err(Error::Problems(dead_message(
                slurm,
                record,
                &job,
                last_error.as_deref(),
            )));
        }
        if !running && let Some(no_log) = no_log {
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

/// `[#####---------------]` for a known fraction, nothing otherwise.
fn bar(fraction: Option<f64>) -> String {
    let Some(f) = fraction else {
        return String::new();
    };
    let done = (f * 20.0).round() as usize;
    format!("[{}{}]", "#".repeat(done), "-".repeat(20 - done.min(20)))
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
