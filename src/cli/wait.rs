//! `rlctl wait`'s arguments.

use super::complete;
use clap::Args;
use clap_complete::engine::ArgValueCandidates;
use std::time::Duration;

/// `rlctl wait`'s arguments.
#[derive(Debug, Args)]
pub struct WaitArgs {
    /// Runs (preset, preset/job-name, grid/cell, job id), or grids and presets (all their runs),
    /// named as `status` takes them.
    #[arg(required = true, add = ArgValueCandidates::new(complete::runs))]
    pub runs: Vec<String>,
    /// What to wait for: COMPLETED (each run's end, the default) or RUNNING (its job started).
    #[arg(
        long,
        value_name = "STATE",
        ignore_case = true,
        value_parser = ["COMPLETED", "RUNNING"],
        conflicts_with = "step"
    )]
    pub until: Option<String>,
    /// Wait until each run's logged train step (its whole history's) reaches N.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub step: Option<u64>,
    /// Give up after this long, with exit 2: e.g. 90s, 10m, 2h, 1h30m.
    #[arg(long, value_name = "DURATION", value_parser = crate::util::fmt::parse_duration)]
    pub timeout: Option<Duration>,
    /// One JSON event a line (NDJSON), each with `schema_version`: a `change` per change, an
    /// `outcome` last.
    #[arg(long)]
    pub json: bool,
    /// Time between two looks at SLURM (tests shorten it).
    #[arg(
        long,
        hide = true,
        env = "RLCTL_WAIT_INTERVAL",
        default_value = "30s",
        value_parser = crate::util::fmt::parse_duration
    )]
    pub interval: Duration,
}

impl WaitArgs {
    /// What the flags ask to wait for: a step, else a state, else the runs' end.
    pub fn until(&self) -> crate::runs::wait::Until {
        use crate::runs::wait::Until;
        match (self.step, self.until.as_deref()) {
            (Some(n), _) => Until::Step(n),
            (None, Some(s)) if s.eq_ignore_ascii_case("RUNNING") => Until::Running,
            _ => Until::Completed,
        }
    }
}
