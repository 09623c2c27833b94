//! One run's row, as `status`, `report` and `status --json` show it: its job's state (from a
//! [`Probe`]) and the progress, speed and metrics its log shows.

use crate::error::Result;
use crate::runs::alerts::{self, Thresholds};
use crate::runs::log::read_log;
use crate::runs::metrics::keys::{ENTROPY, REWARD};
use crate::runs::metrics::pulse::Pulse;
use crate::runs::metrics::{self, Series};
use crate::runs::probe::{JobState, Probe, Warning};
use crate::runs::report::{self, CellReport};
use crate::runs::stall::{self, Stall};
use crate::submit::ledger::{Record, Run};
use crate::submit::slurm::Slurm;
use serde::Serialize;

/// One record's state: squeue's while SLURM holds the job, then sacct's, then the log's.
#[derive(Debug, Clone, Serialize)]
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
    /// Which job of the run since a person launched it: 1 for the launch, one more for each
    /// `tend` resubmission (`tend --max-attempts` counts these).
    pub attempt: u32,
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
    #[serde(skip)]
    pub series: Series,
    #[serde(skip)]
    pub pulse: Pulse,
}

impl RunState {
    /// Marks a job SLURM runs whose log went quiet past its limit as stalled (`floor_s` is the
    /// profile's `[watch] stall_floor_s`): it reaches no end, so it has no ETA.
    pub fn judge_stall(&mut self, floor_s: u64) {
        let running = if self.source == "squeue" {
            self.state.as_str()
        } else {
            ""
        };
        self.stall = stall::of_job(running, &self.series, &self.pulse, floor_s);
        if self.stall.is_some() {
            self.eta_s = None;
        }
    }
}

/// The row of each run's newest record, from one squeue and one sacct (which also asks for every
/// job of the runs, for their GPU-hours), and what the probe could not learn.
pub fn latest(
    slurm: &Slurm,
    runs: &[Run],
    gpus_per_node: u32,
) -> Result<(Vec<RunState>, Vec<Warning>)> {
    let latest: Vec<&Record> = runs.iter().map(|r| r.latest()).collect();
    let probe = Probe::read(slurm, None, &latest, runs)?;
    Ok((rows(&probe, runs, &latest, gpus_per_node)?, probe.warnings))
}

/// The row of the record `shown[i]` of each run `runs[i]`, with the GPU-hours of all the run's
/// records (every submission, chain link and requeued attempt) and its job's slots, where the
/// probe asked accounting for them (its `usage`).
pub fn rows(
    probe: &Probe,
    runs: &[Run],
    shown: &[&Record],
    gpus_per_node: u32,
) -> Result<Vec<RunState>> {
    let mut out = Vec::with_capacity(shown.len());
    for (run, record) in runs.iter().zip(shown) {
        let mut state = RunState::of(record, probe.job(record))?;
        state.gpu_hours = probe.gpu_hours(run, gpus_per_node);
        state.slot = probe.slots(&state.job_id);
        out.push(state);
    }
    Ok(out)
}

impl RunState {
    /// The record's row, its job in state `job`; its log is read now.
    fn of(record: &Record, job: JobState) -> Result<RunState> {
        let JobState { state, source, .. } = job;
        let (series, pulse) = read_log(&record.log)?;
        let progress = alerts::progress(&series, record.max_steps);
        // An ended job has no time left to estimate.
        let eta_s = progress.eta_secs.filter(|_| source == "squeue");
        let last = |key: &str| {
            series
                .values(metrics::Kind::Train, key)
                .next_back()
                .map(|v| v.1)
        };
        Ok(RunState {
            target: record.target.clone(),
            job_id: record.job_id.clone(),
            state,
            source,
            step: progress.step,
            total: progress.total,
            secs_per_step: progress.secs_per_step,
            reward: last(REWARD),
            entropy: last(ENTROPY),
            collapse: alerts::collapsed(&series, &Thresholds::default()),
            link: None,
            eta_s,
            stall: None,
            attempt: record.attempt,
            slot: None,
            max_slots: record.max_slots,
            gpu_hours: None,
            samples_per_step: report::samples_per_step(|k| record.knobs.get(k).cloned()),
            series,
            pulse,
        })
    }

    /// The row as a grid report's cell; `base` is the target of the run with the grid's base
    /// configuration, if one is recorded.
    pub fn cell(&self, base: Option<&str>) -> CellReport<'_> {
        CellReport {
            name: self.target.rsplit('/').next().unwrap_or(&self.target),
            state: &self.state,
            series: &self.series,
            gpu_hours: self.gpu_hours,
            samples_per_step: self.samples_per_step,
            base: base == Some(self.target.as_str()),
        }
    }
}
