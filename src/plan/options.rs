//! What a run's command line may ask of its plan besides overrides: the resume mode, slots,
//! chain links and the folder to render into.

use crate::preset::walltime::Walltime;
use camino::Utf8PathBuf;
use serde::Serialize;

/// `trainer.resume_mode`: always explicit, so no default can wipe or resume by accident.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Resume {
    /// Start from step 0 (`trainer.resume_mode=null`).
    Fresh,
    /// Continue from the newest `global_step_*` in the checkpoint folder.
    Latest,
}

impl Resume {
    /// Every choice: its flag value and what it does.
    pub const ALL: [(Resume, &'static str, &'static str); 2] = [
        (
            Resume::Fresh,
            "fresh",
            "Start from step 0 (`trainer.resume_mode=null`)",
        ),
        (
            Resume::Latest,
            "latest",
            "Continue from the newest `global_step_*` in the checkpoint folder",
        ),
    ];

    /// The choice named by its flag value.
    pub fn named(name: &str) -> Option<Resume> {
        Resume::ALL.iter().find(|r| r.1 == name).map(|r| r.0)
    }

    pub(super) fn hydra(self) -> &'static str {
        match self {
            Resume::Fresh => "null",
            Resume::Latest => "latest",
        }
    }
}

/// `--max-slots` when not given: ten slots of 24 h cover a run of more than a week, and bound
/// what a run that never finishes can spend.
pub const DEFAULT_MAX_SLOTS: u32 = 10;

/// The most links `--chain` takes.
pub const MAX_CHAIN: u32 = 100;

/// `--chain`: a number of jobs, or as many as the estimate needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chain {
    Jobs(u32),
    Auto,
}

impl Chain {
    /// The longest chain: a hundred slots is days of one run, and a typo past it is likelier.
    pub const MAX: u16 = MAX_CHAIN as u16;
}

/// The most slots `--max-slots` takes.
pub const MAX_MAX_SLOTS: u32 = 1000;

/// How a `--until-done` job ends each slot and asks for the next.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct UntilDone {
    pub max_slots: u32,
    /// Seconds before the time limit that SLURM signals the job (`--signal=B:USR1@grace`).
    pub grace_s: u64,
    /// The slot's time limit, in seconds: its end when SLURM does not say.
    pub limit_s: u64,
    /// The least time from one save's end to the next's that the slot plans for, from
    /// recorded runs (`ckpt_interval` x p95 step + p95 save); 0 when none measured them (the
    /// job then goes by its own saves alone).
    pub cycle_s: u64,
}

impl UntilDone {
    /// The profile's grace, but never more than a quarter of the slot: a short (debug) slot
    /// must still train most of its time.
    pub fn new(max_slots: u32, profile_grace_s: u64, wall_s: u64) -> UntilDone {
        UntilDone {
            max_slots,
            grace_s: profile_grace_s.min(wall_s / 4).max(1),
            limit_s: wall_s,
            cycle_s: 0,
        }
    }
}

/// What the command line may change about a run, besides hydra overrides.
#[derive(Debug, Clone, Default)]
pub struct PlanOptions {
    pub nodes: Option<u32>,
    pub qos: Option<String>,
    pub time: Option<Walltime>,
    pub job_name: Option<String>,
    pub resume: Option<Resume>,
    /// Delete the checkpoint folder's `global_step_*` inside the job, before a fresh start.
    pub wipe: bool,
    /// `--until-done`: the most slots (requeues of the one job) the run may take.
    pub until_done: Option<u32>,
    /// Run a grid cell under another name: a new cell with the same knobs plus overrides.
    pub cell_as: Option<String>,
    /// This folder as the run folder, instead of the next attempt under the run root
    /// (`render --out`): the wrapper then runs, and logs into, the folder it was written to.
    pub run_dir: Option<Utf8PathBuf>,
}
