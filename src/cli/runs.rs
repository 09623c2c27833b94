//! The arguments of the commands about recorded runs: status, cancel, retire, logs, metrics,
//! watch, tend, clean and report.

use super::complete;
use super::shared;
use crate::runs::alerts::Thresholds;
use crate::runs::wandb_sync;
use camino::Utf8PathBuf;
use clap::Args;
use clap_complete::engine::ArgValueCandidates;
use std::time::Duration;

/// `rlctl status`'s arguments.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// A run (preset, grid/cell, job id) or a whole grid or preset; all runs without it.
    #[arg(add = ArgValueCandidates::new(complete::runs))]
    pub run: Option<String>,
    /// One JSON document, for scripts.
    #[arg(long, conflicts_with = "watch")]
    pub json: bool,
    /// Redraw the table every --interval seconds until no job of the runs is left in SLURM
    /// (Ctrl-C stops); exit 1 if one raised an alert, stalled or failed.
    #[arg(long)]
    pub watch: bool,
    /// Seconds between refreshes, with --watch.
    #[arg(long, default_value_t = 30, value_name = "SECONDS", requires = "watch")]
    pub interval: u64,
    /// With --watch: draw the table once and exit (1 if a run raised an alert, stalled or
    /// failed), as `watch --once` does.
    #[arg(long, requires = "watch")]
    pub once: bool,
    #[command(flatten)]
    pub color: shared::ColorArgs,
}

/// `rlctl cancel`'s arguments.
#[derive(Debug, Args)]
pub struct CancelArgs {
    /// Print what would be done (the question --yes answers) and do nothing.
    #[arg(long, conflicts_with_all = ["yes", "json"])]
    pub dry_run: bool,
    /// A run, a grid or a job id.
    #[arg(add = ArgValueCandidates::new(complete::runs))]
    pub run: String,
    /// Do not ask for confirmation.
    #[arg(long)]
    pub yes: bool,
    /// One JSON object, for scripts: each job cancelled (its run, id and state); without a
    /// terminal, several runs need --yes.
    #[arg(long)]
    pub json: bool,
}

/// `rlctl retire`'s arguments.
#[derive(Debug, Args)]
pub struct RetireArgs {
    /// Print what would be done (the question --yes answers) and do nothing.
    #[arg(long, conflicts_with_all = ["yes", "json"])]
    pub dry_run: bool,
    /// Runs (grid/cell, preset, preset/job-name), grids or job ids.
    #[arg(required = true, add = ArgValueCandidates::new(complete::runs))]
    pub runs: Vec<String>,
    /// Do not ask for confirmation.
    #[arg(long)]
    pub yes: bool,
    /// One JSON object, for scripts: the jobs cancelled and each run retired (where its
    /// checkpoint folder went); without a terminal, several runs need --yes.
    #[arg(long)]
    pub json: bool,
}

/// `rlctl logs`'s arguments.
#[derive(Debug, Args)]
pub struct LogsArgs {
    /// A run or a job id.
    #[arg(add = ArgValueCandidates::new(complete::runs))]
    pub run: String,
    /// Print only the last N lines, read from the log's end (however large the log is).
    #[arg(long, short = 'n', value_name = "N", conflicts_with_all = ["path", "errors"])]
    pub tail: Option<usize>,
    /// Print the last 10 lines (or --tail N), then what the job writes until it ends (Ctrl-C
    /// stops).
    #[arg(long, short = 'f', conflicts_with_all = ["path", "errors"])]
    pub follow: bool,
    /// Print only the path of the log, one per run: `less $(rlctl logs RUN --path)`.
    #[arg(long, conflicts_with = "errors")]
    pub path: bool,
    /// Print the log's last Python traceback, else its last error lines (from its last 4 MiB).
    #[arg(long)]
    pub errors: bool,
    /// One JSON object, for scripts: with --path the logs, with --errors the error block, with
    /// --tail N the last N lines (a whole log is not read into JSON; --follow is text only).
    #[arg(long, conflicts_with = "follow")]
    pub json: bool,
    /// The log's own colour codes (vLLM's, Ray's): kept on a terminal (auto), always, or
    /// never; auto strips them from a pipe or file, so `grep` and `less` see plain text.
    #[command(flatten)]
    pub color: shared::ColorArgs,
}

/// `rlctl metrics`'s arguments.
#[derive(Debug, Args)]
pub struct MetricsArgs {
    /// A run, a job id, or the path of a log file.
    #[arg(add = ArgValueCandidates::new(complete::runs))]
    pub run: String,
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    #[arg(long)]
    pub csv: bool,
}

/// `rlctl watch`'s arguments.
#[derive(Debug, Args)]
pub struct WatchArgs {
    /// A run or a job id; a grid or preset of several runs is a table of them, redrawn in place.
    #[arg(add = ArgValueCandidates::new(complete::runs))]
    pub run: String,
    /// Print the current state and alerts once, and exit (for cron or a sweep loop).
    #[arg(long)]
    pub once: bool,
    /// With --once: one JSON object instead of the text (state, progress, latest metrics,
    /// stall, alerts).
    #[arg(long, requires = "once")]
    pub json: bool,
    /// Seconds between refreshes.
    #[arg(long, default_value_t = 30, value_name = "SECONDS")]
    pub interval: u64,
    /// Entropy collapse: alert below this policy entropy.
    #[arg(long, value_name = "X", allow_negative_numbers = true)]
    pub entropy_floor: Option<f64>,
    /// Entropy collapse: alert below this fraction of the starting entropy.
    #[arg(long, value_name = "X", allow_negative_numbers = true)]
    pub entropy_ratio: Option<f64>,
    /// Grad-norm spike: alert above this many times the recent median.
    #[arg(long, value_name = "X", allow_negative_numbers = true)]
    pub grad_spike: Option<f64>,
    /// Reward stall: alert after this many steps without a better reward.
    #[arg(long, value_name = "N")]
    pub reward_stall_steps: Option<u64>,
    #[command(flatten)]
    pub color: shared::ColorArgs,
}

impl WatchArgs {
    /// The alert thresholds: the defaults, with each one the flags give in its place.
    pub fn thresholds(&self) -> Thresholds {
        let mut thresholds = Thresholds::default();
        if let Some(x) = self.entropy_floor {
            thresholds.entropy_floor = x;
        }
        if let Some(x) = self.entropy_ratio {
            thresholds.entropy_min_ratio = x;
        }
        if let Some(x) = self.grad_spike {
            thresholds.grad_spike_factor = x;
        }
        if let Some(n) = self.reward_stall_steps {
            thresholds.reward_stall_steps = n;
        }
        thresholds
    }
}

/// `rlctl tend`'s arguments.
#[derive(Debug, Args)]
pub struct TendArgs {
    /// Runs or grids (all recorded runs without one).
    #[arg(add = ArgValueCandidates::new(complete::runs))]
    pub runs: Vec<String>,
    /// Resubmissions allowed per run.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub max_attempts: u32,
    /// Cancel a running job that raises an alert.
    #[arg(long)]
    pub cancel_on_alert: bool,
    /// One JSON object for the pass, for scripts: its lines, the runs that need a look, the
    /// grids reported, and the problems.
    #[arg(long)]
    pub json: bool,
    /// After the pass, `wandb sync` the runs' offline W&B runs that gained data since the
    /// last sync, from this login node.
    #[arg(long)]
    pub sync_wandb: bool,
    /// Seconds one `wandb sync` may take; it is killed then.
    #[arg(long, value_name = "S", default_value_t = 60)]
    pub wandb_timeout: u64,
    /// Seconds all of a pass's syncs may take; the rest wait for the next pass (the default
    /// fits a login node's ~100 s with the pass and its summary).
    #[arg(long, value_name = "S", default_value_t = wandb_sync::BUDGET_S)]
    pub wandb_budget: u64,
    /// The wandb program to call.
    #[arg(
        long,
        env = "RLCTL_WANDB",
        default_value = "wandb",
        value_name = "PATH"
    )]
    pub wandb: String,
}

impl TendArgs {
    /// How `wandb sync` is called, when the flags or the profile ask for it.
    pub fn sync(&self) -> wandb_sync::Options {
        wandb_sync::Options {
            program: self.wandb.clone(),
            per_call: Duration::from_secs(self.wandb_timeout),
            budget: Duration::from_secs(self.wandb_budget),
        }
    }
}

/// `rlctl clean`'s arguments.
#[derive(Debug, Args)]
pub struct CleanArgs {
    /// Print what would be done (the question --yes answers) and do nothing.
    #[arg(long, conflicts_with_all = ["yes", "json"])]
    pub dry_run: bool,
    /// A grid, a run or a job id.
    #[arg(add = ArgValueCandidates::new(complete::runs))]
    pub run: String,
    /// Remove the exported models (`export/` in each folder) too; by default they stay.
    #[arg(long)]
    pub exports: bool,
    /// Do not ask for confirmation.
    #[arg(long)]
    pub yes: bool,
    /// One JSON object, for scripts: each folder removed, its size, the export kept; without
    /// a terminal, it needs --yes.
    #[arg(long)]
    pub json: bool,
}

/// `rlctl report`'s arguments.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A grid (its cells, compared with its base), or recorded runs: `preset/job-name`,
    /// `grid/cell`, a preset (all its runs), a bare job name or cell, a job id.
    #[arg(required = true, value_name = "NAME", add = ArgValueCandidates::new(complete::runs))]
    pub names: Vec<String>,
    /// Every column (knobs in full, time split, tok/s, best values, entropy, KL), not only the
    /// compact table's; written to NAME-wide.md.
    #[arg(long)]
    pub wide: bool,
    /// Draw the per-step plots' lines as the mean of their last N steps, the raw values faint
    /// (written as NAME-smoothN-*.svg and NAME-smoothN.md).
    #[arg(long, value_name = "N")]
    pub smooth: Option<usize>,
    /// Where to write the report and plots (default: the grid's run folder, report/; for runs,
    /// report/ in the run root).
    #[arg(long, value_name = "DIR")]
    pub out: Option<Utf8PathBuf>,
    /// One JSON object on stdout in place of the table: the files written, the base, and each
    /// run's row (as `status --json`) with the knobs its cell changes.
    #[arg(long)]
    pub json: bool,
}
