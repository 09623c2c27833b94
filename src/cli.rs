//! The command line, parsed once into a validated command.

pub mod complete;
mod init;
pub mod mcp;

mod ask;
mod json;
mod runs;

mod shared;
#[cfg(test)]
mod tests;
pub mod wait;

pub use init::InitArgs;
pub use runs::{
    CancelArgs, CleanArgs, LogsArgs, MetricsArgs, ReportArgs, RetireArgs, StatusArgs, TendArgs,
    WatchArgs,
};
pub use shared::{Chain, DeepArgs, PlanArgs, SlurmArgs, SubmitArgs};

use crate::check::Allow;
use camino::Utf8PathBuf;
use clap::{Args, Parser, Subcommand};
use clap_complete::engine::{ArgValueCandidates, ArgValueCompleter};
use shared::{allow_parser, chain_parser};

/// The cluster profile used without `--cluster` or `RLCTL_CLUSTER`.
pub const DEFAULT_CLUSTER: &str = "leonardo";

#[derive(Debug, Parser)]
#[command(
    name = "rlctl",
    version,
    about = "Launch SkyRL reinforcement-learning runs on SLURM clusters from typed presets",
    long_about = "Launch SkyRL reinforcement-learning runs on SLURM clusters from typed presets.\n\n\
        rlctl resolves a preset (or grid cell), the cluster profile, your flags and your hydra \
        overrides into one plan, renders the sbatch wrapper and the in-container run script, \
        and submits them with sbatch, or prints everything with --dry-run.",
    after_help = "Examples:\n  rlctl launch gsm8k-canary --dry-run\n  rlctl grid tbs128 -- trainer.epochs=2\n  rlctl grid --all gsm8k-throughput\n  rlctl list\n\nExit status: 0 all good; 1 the command ran and found something wrong (preflight problems, an alert, doctor problems); 2 it could not do its job (usage, unreadable input, a failed SLURM command)."
)]
pub struct Cli {
    /// Cluster profile to run on (a file under presets/clusters/).
    #[arg(
        long,
        global = true,
        help_heading = "Global options",
        env = "RLCTL_CLUSTER",
        default_value = DEFAULT_CLUSTER,
        value_name = "NAME",
        add = ArgValueCandidates::new(complete::clusters)
    )]
    pub cluster: String,

    /// Folder of your own presets (clusters/, runs/, grids/); its files replace the embedded
    /// ones of the same name. Default: $XDG_CONFIG_HOME/rlctl (~/.config/rlctl), where `rlctl
    /// init` writes your profile, when it exists.
    #[arg(
        long,
        global = true,
        help_heading = "Global options",
        env = "RLCTL_PRESETS",
        value_name = "DIR"
    )]
    pub presets: Option<Utf8PathBuf>,

    #[command(flatten)]
    pub slurm: SlurmArgs,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Launch a run preset: render its scripts and submit them with sbatch.
    Launch(LaunchArgs),
    /// Launch one grid cell, or every cell of a grid with --all (at most 8 running at once).
    Grid(GridArgs),
    /// Render a preset's or cell's scripts: into --out DIR, or to stdout.
    Render(RenderArgs),
    /// Estimate a preset's or cell's steps, seconds per step, wall time, GPU-hours and wall-time
    /// slots, each with where it comes from (recorded runs, the staged data, the preset).
    Estimate(EstimateArgs),
    /// Run every preflight check on a preset or cell, report all problems, submit nothing.
    Check(CheckArgs),
    /// Print the resolved plan of a preset or cell as TOML, each knob with its layer.
    ///
    /// Knobs are typed as hydra types them; a trailing comment names the layer that set each:
    /// preset, profile, grid, cell, a flag (`--nodes`), the command line, derived, or rlctl.
    Show(ShowArgs),
    /// Compare two recorded runs, presets or cells: the knobs that differ, and runs' metrics.
    ///
    /// Each knob that differs (every knob with --all) is shown with its value and the layer that
    /// set it on each side; a recorded run's side is what it ran with (the ledger's record), a
    /// preset's or cell's its plan now. A name with one recorded run means that run. For recorded
    /// runs, their newest job's state, last step, reward, entropy, s/step and GPU-hours follow.
    /// Exits 0 whether or not they differ, 2 when a name means nothing.
    Diff(DiffArgs),
    /// List the profile and presets folder in use, clusters, run presets, grids and their cells.
    List(ListArgs),
    /// Check the site itself (container, venv, SkyRL checkout, gcc, caches, free space).
    Doctor(DoctorArgs),
    /// Recorded runs: SLURM state (why a pending job waits), step, s/step, ETA, alerts, totals.
    Status(StatusArgs),
    /// Cancel a run's pending or running jobs, or a whole grid's (after confirming).
    Cancel(CancelArgs),
    /// Retire recorded runs: cancel their jobs, move their checkpoint folders aside and record
    /// them as history, so that a grid runs the cell afresh (after confirming several).
    Retire(RetireArgs),
    /// Print a run's SLURM log; --tail N, --follow, --errors (last traceback), --path.
    Logs(LogsArgs),
    /// A run's per-step metrics from its log (or any log file): table, JSON or CSV.
    Metrics(MetricsArgs),
    /// Follow a running job: progress, ETA, latest metrics, and alerts (divergence, entropy
    /// collapse, grad spikes, reward stalls, OPD token KL rising); a grid is one table redrawn
    /// in place. Exits 1 on an alert.
    Watch(WatchArgs),
    /// Block until runs end COMPLETED (or start, or reach a step); exit 1 if one ends otherwise.
    Wait(wait::WaitArgs),
    /// One pass for cron: resubmit runs SLURM ended unfinished (time limit, node failure,
    /// preemption) to resume, report crashes and alerts; exit 1 when a person should look.
    Tend(TendArgs),
    /// Remove finished runs' checkpoints, exports kept unless --exports (after confirming).
    Clean(CleanArgs),
    /// A table (markdown, on stdout) and SVG plots comparing a grid's cells or any runs.
    Report(ReportArgs),
    /// Write your own cluster profile (account, $WORK and scratch folders) into your presets
    /// folder, from the profile rlctl ships; every path follows the folders you give.
    Init(InitArgs),
    /// Stage what a preset's or cell's plan reads offline, on the login node: its models
    /// (`hf download` into the HF cache) and datasets (SkyRL's preparation scripts). Each runs
    /// detached, logging to <run root>/stage/; what is complete already is skipped.
    Stage(StageArgs),
    /// Print a shell completion script: `source <(rlctl completions bash)` in ~/.bashrc.
    /// Completion asks rlctl for presets, cells, grids, clusters, QOS and recorded runs.
    Completions(CompletionsArgs),
    /// Print rlctl's man page (roff): `rlctl man > ~/.local/share/man/man1/rlctl.1`.
    Man,
    /// A Model Context Protocol server on stdio: rlctl's commands as tools for an agent.
    Mcp(mcp::McpArgs),
    /// Manage SkyRL config-key lists (the schema hydra overrides are checked against).
    #[command(subcommand)]
    Schema(SchemaCommand),
}

/// `rlctl launch`'s arguments.
#[derive(Debug, Args)]
// The overrides come with the plan flags; here they say what they apply to.
#[command(mut_arg("overrides", |a| a.help(
    "Hydra overrides for the trainer, after `--`: `trainer.epochs=2`, `+new.key=1`"
)))]
pub struct LaunchArgs {
    /// The run preset, e.g. gsm8k-canary (see `rlctl list`).
    #[arg(add = ArgValueCandidates::new(complete::presets))]
    pub preset: String,
    /// Submit K jobs, each waiting for the previous one to end (afterany) and resuming
    /// from the same checkpoint folder: runs longer than one wall-time slot.
    /// `auto` submits as many as `rlctl estimate` says the run needs.
    #[arg(long, value_name = "K|auto", default_value = "1", value_parser = chain_parser)]
    pub chain: Chain,
    /// One JSON object on stdout, for scripts: the estimate and each job (its id, none with
    /// --dry-run), instead of the submission's text.
    #[arg(long)]
    pub json: bool,
    /// With --resume latest: resume with knobs other than the run's recorded ones (the
    /// overrides given). Without it such a resume is refused with the knobs that differ; a
    /// resume without overrides takes the recorded ones. The preflight checks of a resume
    /// (the world size the checkpoint was saved with) still apply.
    #[arg(long)]
    pub change_knobs: bool,
    #[command(flatten)]
    pub submit: SubmitArgs,
    #[command(flatten)]
    pub plan: PlanArgs,
    #[command(flatten)]
    pub deep: DeepArgs,
}

/// `rlctl grid`'s arguments.
#[derive(Debug, Args)]
// The overrides come with the plan flags; here they say what they apply to.
#[command(mut_arg("overrides", |a| a.help("Hydra overrides applied after the cell's own, after `--`")))]
pub struct GridArgs {
    /// The cell, by name or as GRID/CELL when several grids have one of that name.
    #[arg(required_unless_present = "all", conflicts_with = "all", add = ArgValueCompleter::new(complete::cells))]
    pub cell: Option<String>,
    /// Launch every cell of GRID; cell i waits for cell i-8 to end (afterany). Cells the
    /// ledger already holds are not submitted again; cells with no room in their QOS wait,
    /// and `rlctl tend` submits them in order as jobs end.
    #[arg(long, value_name = "GRID", add = ArgValueCandidates::new(complete::grids))]
    pub all: Option<String>,
    /// With --all: leave out this cell (repeatable); the grid is over without it.
    #[arg(long, value_name = "CELL")]
    pub skip: Vec<String>,
    /// Run the cell as a new cell NEW_CELL (its own job name and folders): how to change a
    /// recorded cell's knobs without altering a controlled grid mid-series.
    #[arg(long = "as", value_name = "NEW_CELL", conflicts_with = "all")]
    pub as_cell: Option<String>,
    /// One JSON object on stdout, for scripts: each cell's submission (recorded, occupied,
    /// waiting, submitted), with its job id and run folder, instead of the text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub submit: SubmitArgs,
    #[command(flatten)]
    pub plan: PlanArgs,
    #[command(flatten)]
    pub deep: DeepArgs,
}

/// `rlctl render`'s arguments.
#[derive(Debug, Args)]
pub struct RenderArgs {
    /// A run preset or a grid cell.
    #[arg(add = ArgValueCompleter::new(complete::targets))]
    pub name: String,
    /// Write sbatch.sh and run.sh (and, for upstream skyrl, rlctl_progress.py) into DIR
    /// instead of printing them; DIR is their run folder (sbatch DIR/sbatch.sh runs DIR/run.sh
    /// and logs into DIR).
    #[arg(long, value_name = "DIR")]
    pub out: Option<Utf8PathBuf>,
    #[command(flatten)]
    pub plan: PlanArgs,
}

/// `rlctl estimate`'s arguments.
#[derive(Debug, Args)]
pub struct EstimateArgs {
    /// A run preset or a grid cell.
    #[arg(required_unless_present = "all", conflicts_with = "all", add = ArgValueCompleter::new(complete::targets))]
    pub name: Option<String>,
    /// Estimate every cell of GRID.
    #[arg(long, value_name = "GRID", add = ArgValueCandidates::new(complete::grids))]
    pub all: Option<String>,
    /// One JSON object per target (an array with --all).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub plan: PlanArgs,
}

/// `rlctl check`'s arguments.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// A run preset or a grid cell.
    #[arg(required_unless_present = "all", conflicts_with = "all", add = ArgValueCompleter::new(complete::targets))]
    pub name: Option<String>,
    /// Check every preset and every cell of every grid, or every cell of GRID: one line
    /// each, `ok` or its problems.
    #[arg(long, value_name = "GRID", num_args = 0..=1, add = ArgValueCandidates::new(complete::grids))]
    pub all: Option<Option<String>>,
    /// One JSON object, for scripts (with --all: one with a row per target).
    #[arg(long)]
    pub json: bool,
    /// Judge the preset as `launch --chain K` would submit it (the slots check counts K
    /// wall-time slots); a grid cell is one job.
    #[arg(long, value_name = "K|auto", default_value = "1", value_parser = chain_parser)]
    pub chain: Chain,
    #[command(flatten)]
    pub plan: PlanArgs,
    #[command(flatten)]
    pub deep: DeepArgs,
}

/// `rlctl doctor`'s arguments.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// One JSON object, for scripts: the profile and each check's status, name and detail.
    #[arg(long)]
    pub json: bool,
}

/// `rlctl show`'s arguments.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// A run preset or a grid cell.
    #[arg(add = ArgValueCompleter::new(complete::targets))]
    pub name: String,
    /// One JSON object, for scripts: the plan's sections, and each knob with its value and layer.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub plan: PlanArgs,
}

/// `rlctl diff`'s arguments.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// A recorded run (as `status` takes it: `preset/job-name`, `grid/cell`, a job id...), else
    /// a preset or cell (its plan as it would run now).
    #[arg(add = ArgValueCompleter::new(complete::runs_and_targets))]
    pub a: String,
    /// The run, preset or cell to compare it with.
    #[arg(add = ArgValueCompleter::new(complete::runs_and_targets))]
    pub b: String,
    /// Every knob, not only those that differ.
    #[arg(long)]
    pub all: bool,
    /// One JSON object, for scripts: each knob with its value and layer on both sides, and
    /// recorded runs' newest rows.
    #[arg(long)]
    pub json: bool,
}

/// `rlctl list`'s arguments.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// One JSON document, for scripts.
    #[arg(long)]
    pub json: bool,
}

/// `rlctl stage`'s arguments.
#[derive(Debug, Args)]
pub struct StageArgs {
    /// A run preset or a grid cell.
    #[arg(required_unless_present = "all", conflicts_with = "all", add = ArgValueCompleter::new(complete::targets))]
    pub name: Option<String>,
    /// Stage what every cell of GRID reads.
    #[arg(long, value_name = "GRID", add = ArgValueCandidates::new(complete::grids))]
    pub all: Option<String>,
    /// Print the commands, one per line; run nothing.
    #[arg(long, conflicts_with = "status")]
    pub dry_run: bool,
    /// Report what is staged, running or missing; start nothing. Exits 1 until all is staged.
    #[arg(long)]
    pub status: bool,
    /// Turn one named check of the overrides into a warning (repeatable), as for launch.
    #[arg(long, value_name = "CHECK", value_parser = allow_parser())]
    pub allow: Vec<Allow>,
    /// Hydra overrides, after `--`, as for launch (e.g. another model).
    #[arg(last = true, value_name = "KEY=VALUE")]
    pub overrides: Vec<String>,
}

/// What `rlctl stage` was asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StageMode {
    Start,
    DryRun,
    Status,
}

impl StageArgs {
    /// `--dry-run`, `--status`, else start (clap refuses both).
    pub fn mode(&self) -> StageMode {
        match (self.dry_run, self.status) {
            (true, _) => StageMode::DryRun,
            (_, true) => StageMode::Status,
            _ => StageMode::Start,
        }
    }

    /// The plan flags at their defaults, with the overrides: staging reads only the knobs.
    pub fn plan(&self) -> PlanArgs {
        PlanArgs {
            nodes: None,
            qos: None,
            time: None,
            job_name: None,
            resume: crate::plan::Resume::Fresh,
            wipe: false,
            until_done: false,
            max_slots: crate::plan::DEFAULT_MAX_SLOTS,
            allow: Vec::new(),
            overrides: self.overrides.clone(),
        }
    }
}

/// `rlctl completions`'s arguments.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_parser = ["bash", "zsh", "fish"])]
    pub shell: String,
}

/// `rlctl schema`'s actions.
#[derive(Debug, Subcommand)]
pub enum SchemaCommand {
    /// Flatten a SkyRL checkout's config into a key list: upstream SkyRL's dataclasses
    /// (`skyrl/train/config/config.py`), or MarinSkyRL's hydra YAML (ppo_base_config.yaml and
    /// its `defaults:`); save it as presets/schemas/NAME.keys in your presets folder and name it
    /// in the cluster profile's `software.schema`.
    Import(SchemaImportArgs),
}

/// `rlctl schema import`'s arguments.
#[derive(Debug, Args)]
pub struct SchemaImportArgs {
    /// An upstream SkyRL checkout (or an installed `skyrl`'s site-packages), a MarinSkyRL
    /// checkout, or the folder holding ppo_base_config.yaml.
    pub config_dir: Utf8PathBuf,
    /// Upstream only: the entry module whose config subclasses and registered advantage
    /// estimators and policy losses the list adds, by path in the checkout
    /// (`examples/train/on_policy_distillation/main_on_policy_distill.py`).
    #[arg(long, value_name = "MODULE")]
    pub entry: Option<String>,
    /// Write the list to FILE instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<Utf8PathBuf>,
}

impl Cli {
    /// The command line, or clap's usage error with the input it echoes clipped (a megabyte
    /// argument gives a readable message), and exit.
    pub fn parse_or_exit() -> Cli {
        Cli::try_parse().unwrap_or_else(|e| json::usage_exit(clip_echoed(e)))
    }
}

/// `e` with every value it quotes from the command line clipped.
fn clip_echoed(mut e: clap::Error) -> clap::Error {
    use crate::error::clip;
    use clap::builder::StyledStr;
    use clap::error::ContextValue;
    let styled = |s: &StyledStr| StyledStr::from(clip(&s.to_string()).into_owned());
    let clipped: Vec<_> = (e.context())
        .filter_map(|(kind, value)| {
            let value = match value {
                ContextValue::String(s) => ContextValue::String(clip(s).into_owned()),
                ContextValue::Strings(v) => {
                    ContextValue::Strings(v.iter().map(|s| clip(s).into_owned()).collect())
                }
                ContextValue::StyledStr(s) => ContextValue::StyledStr(styled(s)),
                ContextValue::StyledStrs(v) => {
                    ContextValue::StyledStrs(v.iter().map(styled).collect())
                }
                _ => return None,
            };
            Some((kind, value))
        })
        .collect();
    for (kind, value) in clipped {
        e.insert(kind, value);
    }
    e
}
