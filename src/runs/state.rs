//! One run's row, as `status`, `report` and `status --json` show it: its job's state (from a
//! [`Probe`]) and the progress, speed and metrics its log shows.

use crate::error::Result;
use crate::runs::alerts::{self, AlertKind, Thresholds};
use crate::runs::history;
use crate::runs::log::read_row;
use crate::runs::metrics::keys::{ENTROPY, REWARD};
use crate::runs::metrics::pulse::Pulse;
use crate::runs::metrics::{self, Series};
use crate::runs::probe::{JobState, Probe};
use crate::runs::report::{self, CellReport};
use crate::runs::stall::{self, Stall, Watch};
use crate::store::ledger::{Record, Run};
use serde::{Deserialize, Serialize};

/// What a run's row shows of its steps, as rlctl keeps it on disk: in a log's row cache (what the
/// log's steps show) and in the sealed index ([`crate::runs::sealed`], which adds the job's slots
/// and the step it resumed from). One format for both, floats as their bits (so that NaN and
/// infinities read back as they were). `slot` and `resumed_from` are written only when known,
/// so a row cache is byte for byte what it was before the two formats were one, and a row either
/// reader wrote before then still loads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Shown {
    pub step: u64,
    secs_per_step: Option<u64>,
    reward: Option<u64>,
    entropy: Option<u64>,
    pub collapse: Option<bool>,
    /// The kinds of alert the latest step raises with the default thresholds (no default: a
    /// cache written before it is read afresh).
    pub alerts: Vec<AlertKind>,
    /// The slots the job had, where accounting told them (the sealed index's alone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<u32>,
    /// The step the job resumed from (the sealed index's alone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resumed_from: Option<u64>,
}

impl Shown {
    /// What the steps of `series` show: no slots, no resume (the log does not say them).
    fn of(series: &Series) -> Shown {
        let last = |key: &str| {
            (series.values(metrics::Kind::Train, key))
                .next_back()
                .map(|v| v.1.to_bits())
        };
        let progress = alerts::progress(series, None);
        Shown {
            step: progress.step,
            secs_per_step: progress.secs_per_step.map(f64::to_bits),
            reward: last(REWARD),
            entropy: last(ENTROPY),
            collapse: alerts::collapsed(series, &Thresholds::default()),
            alerts: alert_kinds(series, &Thresholds::default()),
            slot: None,
            resumed_from: None,
        }
    }

    /// What `row` shows, its slots and resume included: what a seal keeps.
    pub fn of_row(row: &RunState) -> Shown {
        let bits = |v: Option<f64>| v.map(f64::to_bits);
        Shown {
            step: row.step,
            secs_per_step: bits(row.secs_per_step),
            reward: bits(row.reward),
            entropy: bits(row.entropy),
            collapse: row.collapse,
            alerts: row.alerts.clone(),
            slot: row.slot,
            resumed_from: row.resumed_from,
        }
    }

    pub fn secs_per_step(&self) -> Option<f64> {
        float(self.secs_per_step)
    }

    pub fn reward(&self) -> Option<f64> {
        float(self.reward)
    }

    pub fn entropy(&self) -> Option<f64> {
        float(self.entropy)
    }
}

/// The kinds of alert the latest train step of `series` raises (see [`alerts::alerts`]).
pub fn alert_kinds(series: &Series, t: &Thresholds) -> Vec<AlertKind> {
    alerts::alerts(series, t).iter().map(|a| a.kind).collect()
}

fn float(v: Option<u64>) -> Option<f64> {
    v.map(f64::from_bits)
}

/// One record's state: squeue's while SLURM holds the job, then sacct's, then the log's.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RunState {
    pub target: String,
    pub job_id: String,
    pub state: String,
    /// `squeue`, `sacct`, `log` or `none`.
    pub source: &'static str,
    pub step: u64,
    pub total: Option<u64>,
    pub secs_per_step: Option<f64>,
    pub reward: Option<f64>,
    pub entropy: Option<f64>,
    /// Whether the entropy collapsed, by `watch`'s rule with its default thresholds (`None`
    /// without a verdict): for scripts reading `status --json`.
    pub collapse: Option<bool>,
    /// The kinds of alert the latest step raises, by `watch`'s rules with their default
    /// thresholds (a live `watch` of several runs shows those it raised since it started).
    pub alerts: Vec<AlertKind>,
    /// Why a pending job waits, as squeue says it (`Priority`, `Resources`, `Dependency`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// `k/K` when the job is link k of a chain of K (`launch --chain K`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    /// Seconds left at the recent pace, for a job SLURM still holds (none for a stalled one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eta_s: Option<f64>,
    /// How long a running job's log has gained no step, past its limit (see [`stall`]), once
    /// [`RunState::judge_stall`] has looked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stall: Option<Stall>,
    /// A running job whose log has shown no step in a form rlctl reads, from a trainer not known
    /// to print one: how it progresses cannot be told, and it is never called stalled.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub progress_unknown: bool,
    /// A running job before its first step: its latest start-up phase, from the phase clock
    /// its wrapper writes ([`crate::runs::phases`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub starting: Option<crate::runs::phases::Starting>,
    /// Why a log of the run's history could not be read (the row then shows what SLURM and the
    /// record say, no step): the other runs' rows are shown all the same.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<String>,
    /// Which job of the run's history the row's job is (1 the first): every chain link, `tend`
    /// resubmission and manual resume counts (`--until-done` slots are one job: see `slot`).
    pub attempt: u32,
    /// The step the row's job resumed from: the step before the first it logged, else the one a
    /// `tend` resubmission recorded; none for a job that started from step 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resumed_from: Option<u64>,
    /// The slots (SLURM allocations: `--until-done` requeues, a node failure's requeue) the job
    /// has had so far, where the [`Probe`] asked accounting and it knows them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slot: Option<u32>,
    /// The most slots the job may take (`--until-done --max-slots`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_slots: Option<u32>,
    /// GPU-hours of all the run's jobs and attempts, where the [`Probe`] asked accounting.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_hours: Option<f64>,
    /// The samples a train step generates, from the run's knobs (for effective tokens/s).
    #[serde(skip)]
    pub samples_per_step: Option<f64>,
    /// The job's log, for a reader that judges its steps again (a live `watch`).
    #[serde(skip)]
    pub log: camino::Utf8PathBuf,
    /// The logs of the run's history up to the job, oldest first (the job's own last): what
    /// such a reader joins (see [`history`]).
    #[serde(skip)]
    pub history: Vec<camino::Utf8PathBuf>,
    #[serde(skip)]
    pub series: Series,
    #[serde(skip)]
    pub pulse: Pulse,
}

impl RunState {
    /// Marks a job SLURM runs whose log went quiet past its limit as stalled (`floor_s` is the
    /// profile's `[watch] stall_floor_s`): it reaches no end, so it has no ETA.
    pub fn judge_stall(&mut self, record: &Record, floor_s: u64) {
        if self.source != "squeue" || self.state != "RUNNING" {
            return;
        }
        self.starting = crate::runs::phases::starting_of(record);
        // The row's s/step is the median the rule takes.
        match stall::of_running(record, self.secs_per_step, &self.pulse, floor_s) {
            Watch::Fine => {}
            Watch::Unknown => self.progress_unknown = true,
            Watch::Stalled(stall) => {
                self.stall = Some(stall);
                self.eta_s = None;
            }
        }
    }
}

/// The row of the run's record `record`, with the GPU-hours of all the run's records (every
/// submission, chain link and requeued attempt) and its job's slots, where the probe asked
/// accounting for them (its `usage`); with the steps of the run's history up to `record` (see
/// [`history`]) when `series` (a report draws them), else what its row shows of them.
pub fn row(
    probe: &Probe,
    run: &Run,
    record: &Record,
    gpus_per_node: u32,
    series: bool,
) -> Result<RunState> {
    let mut state = RunState::of(&history::jobs(run, record), probe.job(record), series)?;
    state.reason = probe.queue.reason(&record.job_id).map(str::to_owned);
    state.gpu_hours = probe.gpu_hours(run, gpus_per_node);
    state.slot = probe.slots(&state.job_id);
    Ok(state)
}

/// The row of the run's record `record` with the steps of its history, its job in state `job`
/// (known without the probe).
pub fn with_steps(run: &Run, record: &Record, job: JobState) -> Result<RunState> {
    RunState::of(&history::jobs(run, record), job, true)
}

impl RunState {
    /// The row of the last of `jobs` (a run's history up to it, see [`history::jobs`]), its job
    /// in state `job`; the logs are read now, and the joined steps kept in the row when
    /// `series` (a report draws them), else only what the row shows. A run of one job is read
    /// through its log's row cache.
    fn of(jobs: &[&Record], job: JobState, series: bool) -> Result<RunState> {
        let record = *jobs.last().expect("a history holds the job it is of");
        let mut row = RunState::bare(record, job);
        let (shown, pulse) = if series || jobs.len() > 1 {
            // A row alone reads only the steps its rules judge: a run of 50,000 jobs is not
            // held whole.
            let history = match series {
                true => history::read(jobs)?,
                false => history::row::read(jobs)?,
            };
            row.resumed_from = history.resumed_from();
            let shown = Shown::of(&history.series);
            if series {
                row.series = history.series;
            }
            (shown, history.pulse)
        } else {
            read_row(&record.log, Shown::of)?
        };
        row.resumed_from = row.resumed_from.or(record.resumed_from);
        row.attempt = jobs.len() as u32;
        row.history = history::logs(jobs);
        let progress = alerts::Progress::at(shown.step, record.max_steps, shown.secs_per_step());
        // An ended job has no time left to estimate.
        row.eta_s = progress.eta_secs.filter(|_| row.source == "squeue");
        row.step = shown.step;
        row.secs_per_step = progress.secs_per_step;
        row.reward = shown.reward();
        row.entropy = shown.entropy();
        row.collapse = shown.collapse;
        row.alerts = shown.alerts;
        row.pulse = pulse;
        Ok(row)
    }

    /// The record's row, its job in state `job`, before its log is read: what the record says.
    pub fn bare(record: &Record, job: JobState) -> RunState {
        let JobState { state, source, .. } = job;
        RunState {
            target: record.target.clone(),
            job_id: record.job_id.clone(),
            state,
            source,
            step: 0,
            total: record.max_steps,
            secs_per_step: None,
            reward: None,
            entropy: None,
            collapse: None,
            alerts: Vec::new(),
            reason: None,
            link: None,
            eta_s: None,
            stall: None,
            progress_unknown: false,
            starting: None,
            unreadable: None,
            attempt: record.attempt,
            resumed_from: record.resumed_from,
            slot: None,
            max_slots: record.max_slots,
            gpu_hours: None,
            samples_per_step: report::samples_per_step(|k| record.knobs.get(k).cloned()),
            log: record.log.clone(),
            history: vec![record.log.clone()],
            series: Series::default(),
            pulse: Pulse::default(),
        }
    }

    /// The row as a grid report's cell; `base` is the target of the run with the grid's base
    /// configuration, if one is recorded.
    pub fn cell(&self, base: Option<&str>) -> CellReport<'_> {
        let name = self.target.rsplit('/').next().unwrap_or(&self.target);
        CellReport {
            total_steps: self.total,
            gpu_hours: self.gpu_hours,
            samples_per_step: self.samples_per_step,
            base: base == Some(self.target.as_str()),
            ..CellReport::new(name, &self.state, &self.series)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The two formats as the version before them wrote them: a log's row cache, and a seal's row.
    const ROW_CACHE: &str = r#"{"step":7,"secs_per_step":4621819117588971520,"reward":null,"entropy":null,"collapse":false,"alerts":["entropy-missing"]}"#;
    const SEAL_ROW: &str = r#"{"step":7,"secs_per_step":4621819117588971520,"reward":null,"entropy":null,"collapse":null,"alerts":[],"slot":2,"resumed_from":4}"#;

    #[test]
    fn rows_the_previous_version_wrote_still_load() {
        let cached: Shown = serde_json::from_str(ROW_CACHE).unwrap();
        assert_eq!(
            (
                cached.step,
                cached.secs_per_step(),
                cached.slot,
                cached.resumed_from
            ),
            (7, Some(10.0), None, None)
        );
        assert_eq!(cached.alerts, [AlertKind::EntropyMissing]);
        let sealed: Shown = serde_json::from_str(SEAL_ROW).unwrap();
        assert_eq!((sealed.slot, sealed.resumed_from), (Some(2), Some(4)));
        let unknown: Shown = serde_json::from_str(&SEAL_ROW.replace("4}", "null}")).unwrap();
        assert_eq!(unknown.resumed_from, None);
    }

    #[test]
    fn a_row_cache_is_written_as_the_previous_version_wrote_it() {
        // An older rlctl (a cron `tend` not yet upgraded) reads the caches a newer one writes.
        let cached: Shown = serde_json::from_str(ROW_CACHE).unwrap();
        assert_eq!(serde_json::to_string(&cached).unwrap(), ROW_CACHE);
        let sealed: Shown = serde_json::from_str(SEAL_ROW).unwrap();
        assert_eq!(serde_json::to_string(&sealed).unwrap(), SEAL_ROW);
        // And the previous version's seal row, which always had `slot` and `resumed_from`,
        // reads a seal whose row leaves them out (unknown) as none.
        #[derive(Deserialize)]
        struct Before {
            slot: Option<u32>,
            resumed_from: Option<u64>,
        }
        let before: Before = serde_json::from_str(ROW_CACHE).unwrap();
        assert_eq!((before.slot, before.resumed_from), (None, None));
    }
}
