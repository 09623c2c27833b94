//! The command line, parsed once into a validated command.

pub mod complete;

use crate::check::Allow;
use crate::plan::Resume;
use crate::preset::walltime::Walltime;
use camino::Utf8PathBuf;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand};
use clap_complete::engine::{ArgValueCandidates, ArgValueCompleter};

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
        env = "RLCTL_CLUSTER",
        default_value = DEFAULT_CLUSTER,
        value_name = "NAME",
        add = ArgValueCandidates::new(complete::clusters)
    )]
    pub cluster: String,

    /// Folder of your own presets (clusters/, runs/, grids/); its files replace the embedded
    /// ones of the same name. Default: $XDG_CONFIG_HOME/rlctl (~/.config/rlctl), where `rlctl
    /// init` writes your profile, when it exists.
    #[arg(long, global = true, env = "RLCTL_PRESETS", value_name = "DIR")]
    pub presets: Option<Utf8PathBuf>,

    #[command(flatten)]
    pub slurm: SlurmArgs,

    #[command(subcommand)]
    pub command: Command,
}

/// The SLURM programs rlctl calls.
#[derive(Debug, Args)]
pub struct SlurmArgs {
    /// The sbatch program to call.
    #[arg(
        long,
        global = true,
        env = "RLCTL_SBATCH",
        default_value = "sbatch",
        value_name = "PATH"
    )]
    pub sbatch: String,
    /// The squeue program to call.
    #[arg(
        long,
        global = true,
        env = "RLCTL_SQUEUE",
        default_value = "squeue",
        value_name = "PATH"
    )]
    pub squeue: String,
    /// The sacct program to call.
    #[arg(
        long,
        global = true,
        env = "RLCTL_SACCT",
        default_value = "sacct",
        value_name = "PATH"
    )]
    pub sacct: String,
    /// The scancel program to call.
    #[arg(
        long,
        global = true,
        env = "RLCTL_SCANCEL",
        default_value = "scancel",
        value_name = "PATH"
    )]
    pub scancel: String,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Launch a run preset: render its scripts and submit them with sbatch.
    Launch {
        /// The run preset, e.g. gsm8k-canary (see `rlctl list`).
        #[arg(add = ArgValueCandidates::new(complete::presets))]
        preset: String,
        /// Submit K jobs, each waiting for the previous one to end (afterany) and resuming
        /// from the same checkpoint folder: runs longer than one wall-time slot.
        /// `auto` submits as many as `rlctl estimate` says the run needs.
        #[arg(long, value_name = "K|auto", default_value = "1", value_parser = chain_parser)]
        chain: Chain,
        #[command(flatten)]
        submit: SubmitArgs,
        #[command(flatten)]
        plan: PlanArgs,
        #[command(flatten)]
        deep: DeepArgs,
        /// Hydra overrides for the trainer, after `--`: `trainer.epochs=2`, `+new.key=1`.
        #[arg(last = true, value_name = "KEY=VALUE")]
        overrides: Vec<String>,
    },
    /// Launch one grid cell, or every cell of a grid with --all (at most 8 running at once).
    Grid {
        /// The cell, by name or as GRID/CELL when several grids have one of that name.
        #[arg(required_unless_present = "all", conflicts_with = "all", add = ArgValueCompleter::new(complete::cells))]
        cell: Option<String>,
        /// Launch every cell of GRID; cell i waits for cell i-8 to end (afterany). Cells the
        /// ledger already holds are not submitted again; cells with no room in their QOS wait,
        /// and `rlctl tend` submits them in order as jobs end.
        #[arg(long, value_name = "GRID", add = ArgValueCandidates::new(complete::grids))]
        all: Option<String>,
        /// With --all: leave out this cell (repeatable); the grid is over without it.
        #[arg(long, value_name = "CELL")]
        skip: Vec<String>,
        /// Run the cell as a new cell NEW_CELL (its own job name and folders): how to change a
        /// recorded cell's knobs without altering a controlled grid mid-series.
        #[arg(long = "as", value_name = "NEW_CELL", conflicts_with = "all")]
        as_cell: Option<String>,
        #[command(flatten)]
        submit: SubmitArgs,
        #[command(flatten)]
        plan: PlanArgs,
        #[command(flatten)]
        deep: DeepArgs,
        /// Hydra overrides applied after the cell's own, after `--`.
        #[arg(last = true, value_name = "KEY=VALUE")]
        overrides: Vec<String>,
    },
    /// Render a preset's or cell's scripts: into --out DIR, or to stdout.
    Render {
        /// A run preset or a grid cell.
        #[arg(add = ArgValueCompleter::new(complete::targets))]
        name: String,
        /// Write sbatch.sh and run.sh into DIR instead of printing them; DIR is their run
        /// folder (sbatch DIR/sbatch.sh runs DIR/run.sh and logs into DIR).
        #[arg(long, value_name = "DIR")]
        out: Option<Utf8PathBuf>,
        #[command(flatten)]
        plan: PlanArgs,
        #[arg(last = true, value_name = "KEY=VALUE")]
        overrides: Vec<String>,
    },
    /// Estimate a preset's or cell's steps, seconds per step, wall time, GPU-hours and wall-time
    /// slots, each with where it comes from (recorded runs, the staged data, the preset).
    Estimate {
        /// A run preset or a grid cell.
        #[arg(required_unless_present = "all", conflicts_with = "all", add = ArgValueCompleter::new(complete::targets))]
        name: Option<String>,
        /// Estimate every cell of GRID.
        #[arg(long, value_name = "GRID", add = ArgValueCandidates::new(complete::grids))]
        all: Option<String>,
        /// One JSON object per target (an array with --all).
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        plan: PlanArgs,
        #[arg(last = true, value_name = "KEY=VALUE")]
        overrides: Vec<String>,
    },
    /// Run every preflight check on a preset or cell, report all problems, submit nothing.
    Check {
        /// A run preset or a grid cell.
        #[arg(required_unless_present = "all", conflicts_with = "all", add = ArgValueCompleter::new(complete::targets))]
        name: Option<String>,
        /// Check every preset and every cell of every grid, or every cell of GRID: one line
        /// each, `ok` or its problems.
        #[arg(long, value_name = "GRID", num_args = 0..=1, add = ArgValueCandidates::new(complete::grids))]
        all: Option<Option<String>>,
        #[command(flatten)]
        plan: PlanArgs,
        #[command(flatten)]
        deep: DeepArgs,
        #[arg(last = true, value_name = "KEY=VALUE")]
        overrides: Vec<String>,
    },
    /// Print the resolved plan of a preset or cell as TOML.
    Show {
        /// A run preset or a grid cell.
        #[arg(add = ArgValueCompleter::new(complete::targets))]
        name: String,
        #[command(flatten)]
        plan: PlanArgs,
        #[arg(last = true, value_name = "KEY=VALUE")]
        overrides: Vec<String>,
    },
    /// List the profile and presets folder in use, clusters, run presets, grids and their cells.
    List {
        /// One JSON document, for scripts.
        #[arg(long)]
        json: bool,
    },
    /// Check the site itself (container, venv, SkyRL checkout, gcc, caches, free space).
    Doctor,
    /// Recorded runs with their SLURM state, step, s/step, reward and entropy.
    Status {
        /// A run (preset, grid/cell, job id) or a whole grid or preset; all runs without it.
        #[arg(add = ArgValueCandidates::new(complete::runs))]
        run: Option<String>,
        /// One JSON document, for scripts.
        #[arg(long)]
        json: bool,
    },
    /// Cancel a run's pending or running jobs, or a whole grid's (after confirming).
    Cancel {
        /// A run, a grid or a job id.
        #[arg(add = ArgValueCandidates::new(complete::runs))]
        run: String,
        /// Do not ask for confirmation.
        #[arg(long)]
        yes: bool,
    },
    /// Retire recorded runs: cancel their jobs, move their checkpoint folders aside and record
    /// them as history, so that a grid runs the cell afresh (after confirming several).
    Retire {
        /// Runs (grid/cell, preset, preset/job-name), grids or job ids.
        #[arg(required = true, add = ArgValueCandidates::new(complete::runs))]
        runs: Vec<String>,
        /// Do not ask for confirmation.
        #[arg(long)]
        yes: bool,
    },
    /// Print a run's SLURM log.
    Logs {
        /// A run or a job id.
        #[arg(add = ArgValueCandidates::new(complete::runs))]
        run: String,
        /// Keep printing what the job writes until it ends.
        #[arg(long)]
        follow: bool,
    },
    /// A run's per-step metrics from its log (or any log file): table, JSON or CSV.
    Metrics {
        /// A run, a job id, or the path of a log file.
        #[arg(add = ArgValueCandidates::new(complete::runs))]
        run: String,
        #[arg(long, conflicts_with = "csv")]
        json: bool,
        #[arg(long)]
        csv: bool,
    },
    /// Follow a running job: progress, ETA, latest metrics, and alerts (divergence, entropy
    /// collapse, grad spikes, reward stalls, OPD token KL rising). Exits 1 on an alert.
    Watch {
        /// A run or a job id.
        #[arg(add = ArgValueCandidates::new(complete::runs))]
        run: String,
        /// Print the current state and alerts once, and exit (for cron or a sweep loop).
        #[arg(long)]
        once: bool,
        /// Seconds between refreshes.
        #[arg(long, default_value_t = 30, value_name = "SECONDS")]
        interval: u64,
        /// Entropy collapse: alert below this policy entropy.
        #[arg(long, value_name = "X", allow_negative_numbers = true)]
        entropy_floor: Option<f64>,
        /// Entropy collapse: alert below this fraction of the starting entropy.
        #[arg(long, value_name = "X", allow_negative_numbers = true)]
        entropy_ratio: Option<f64>,
        /// Grad-norm spike: alert above this many times the recent median.
        #[arg(long, value_name = "X", allow_negative_numbers = true)]
        grad_spike: Option<f64>,
        /// Reward stall: alert after this many steps without a better reward.
        #[arg(long, value_name = "N")]
        reward_stall_steps: Option<u64>,
    },
    /// One pass for cron: resubmit runs SLURM ended unfinished (time limit, node failure,
    /// preemption) to resume, report crashes and alerts; exit 1 when a person should look.
    Tend {
        /// Runs or grids (all recorded runs without one).
        #[arg(add = ArgValueCandidates::new(complete::runs))]
        runs: Vec<String>,
        /// Resubmissions allowed per run.
        #[arg(long, value_name = "N", default_value_t = 3)]
        max_attempts: u32,
        /// Cancel a running job that raises an alert.
        #[arg(long)]
        cancel_on_alert: bool,
        /// After the pass, `wandb sync` the runs' offline W&B runs that gained data since the
        /// last sync, from this login node.
        #[arg(long)]
        sync_wandb: bool,
        /// Seconds one `wandb sync` may take; it is killed then.
        #[arg(long, value_name = "S", default_value_t = 60)]
        wandb_timeout: u64,
        /// Seconds all of a pass's syncs may take; the rest wait for the next pass.
        #[arg(long, value_name = "S", default_value_t = 300)]
        wandb_budget: u64,
        /// The wandb program to call.
        #[arg(
            long,
            env = "RLCTL_WANDB",
            default_value = "wandb",
            value_name = "PATH"
        )]
        wandb: String,
    },
    /// Remove the checkpoint folders of finished runs of a grid or run (after confirming).
    Clean {
        /// A grid, a run or a job id.
        #[arg(add = ArgValueCandidates::new(complete::runs))]
        run: String,
        /// Do not ask for confirmation.
        #[arg(long)]
        yes: bool,
    },
    /// A grid's table (markdown, on stdout) and plots (SVG) of reward, entropy and s/step.
    Report {
        /// The grid.
        #[arg(add = ArgValueCandidates::new(complete::grids))]
        grid: String,
        /// Where to write the report and plots (default: the grid's run folder, report/).
        #[arg(long, value_name = "DIR")]
        out: Option<Utf8PathBuf>,
    },
    /// Write your own cluster profile (account, $WORK and scratch folders) into your presets
    /// folder, from the profile rlctl ships; every path follows the folders you give.
    Init {
        /// The cluster profile to start from, e.g. leonardo.
        #[arg(value_name = "CLUSTER", add = ArgValueCandidates::new(complete::clusters))]
        profile: String,
        /// Your SLURM account (#SBATCH --account).
        #[arg(long, value_name = "ACCOUNT")]
        account: Option<String>,
        /// Your folder on the work file system, where checkpoints, runs, data and the HF cache
        /// go (default: $WORK/$USER).
        #[arg(long, value_name = "DIR")]
        work: Option<String>,
        /// Your scratch folder, for the container, the venv and caches (default: $FAST/$USER,
        /// else $SCRATCH).
        #[arg(long, value_name = "DIR")]
        scratch: Option<String>,
        /// Replace a profile you already have.
        #[arg(long)]
        force: bool,
    },
    /// Stage what a preset's or cell's plan reads offline, on the login node: its models
    /// (`hf download` into the HF cache) and datasets (SkyRL's preparation scripts). Each runs
    /// detached, logging to <run root>/stage/; what is complete already is skipped.
    Stage {
        /// A run preset or a grid cell.
        #[arg(required_unless_present = "all", conflicts_with = "all", add = ArgValueCompleter::new(complete::targets))]
        name: Option<String>,
        /// Stage what every cell of GRID reads.
        #[arg(long, value_name = "GRID", add = ArgValueCandidates::new(complete::grids))]
        all: Option<String>,
        /// Print the commands, one per line; run nothing.
        #[arg(long, conflicts_with = "status")]
        dry_run: bool,
        /// Report what is staged, running or missing; start nothing. Exits 1 until all is staged.
        #[arg(long)]
        status: bool,
        /// Turn one named check of the overrides into a warning (repeatable), as for launch.
        #[arg(long, value_name = "CHECK", value_parser = allow_parser())]
        allow: Vec<Allow>,
        /// Hydra overrides, after `--`, as for launch (e.g. another model).
        #[arg(last = true, value_name = "KEY=VALUE")]
        overrides: Vec<String>,
    },
    /// Print a shell completion script: `source <(rlctl completions bash)` in ~/.bashrc.
    /// Completion asks rlctl for presets, cells, grids, clusters, QOS and recorded runs.
    Completions {
        /// The shell.
        #[arg(value_parser = ["bash", "zsh", "fish"])]
        shell: String,
    },
    /// Print rlctl's man page (roff): `rlctl man > ~/.local/share/man/man1/rlctl.1`.
    Man,
    /// Manage SkyRL config-key lists (the schema hydra overrides are checked against).
    Schema {
        #[command(subcommand)]
        action: SchemaCommand,
    },
}

#[derive(Debug, Subcommand)]
pub enum SchemaCommand {
    /// Flatten a SkyRL `config/` folder (ppo_base_config.yaml and its `defaults:`) into a key
    /// list; save it as presets/schemas/NAME.keys in your presets folder and name it in the
    /// cluster profile's `software.schema`.
    Import {
        /// The folder holding ppo_base_config.yaml.
        config_dir: Utf8PathBuf,
        /// Write the list to FILE instead of stdout.
        #[arg(long, value_name = "FILE")]
        out: Option<Utf8PathBuf>,
    },
}

/// Whether preflight also asks SkyRL itself: `--deep`, `--no-deep`, else the cluster profile's
/// `[check] deep`.
#[derive(Debug, Args)]
pub struct DeepArgs {
    /// Once the checks in rlctl pass, also run the SkyRL checkout's own hydra composition and
    /// validate_cfg with the cluster's venv, in the job's container, on this machine: exact for
    /// any checkout, and slower (seconds to minutes). Default: the profile's `[check] deep`.
    #[arg(long, overrides_with = "no_deep")]
    pub deep: bool,
    /// Skip the deep check, also where the cluster profile turns it on.
    #[arg(long, overrides_with = "deep")]
    pub no_deep: bool,
}

impl DeepArgs {
    /// The flags' choice, else `default` (the profile's).
    pub fn wanted(&self, default: bool) -> bool {
        match (self.deep, self.no_deep) {
            (true, _) => true,
            (_, true) => false,
            _ => default,
        }
    }
}

#[derive(Debug, Args)]
pub struct SubmitArgs {
    /// Print the sbatch command and every rendered file; write and submit nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Args)]
pub struct PlanArgs {
    /// Nodes to run on (default: the preset's).
    #[arg(long, value_name = "N")]
    pub nodes: Option<u32>,
    /// SLURM QOS (default: the preset's or grid's).
    #[arg(long, value_name = "Q", add = ArgValueCandidates::new(complete::qos))]
    pub qos: Option<String>,
    /// Wall-clock limit, HH:MM:SS or D-HH:MM:SS (default: the preset's or grid's).
    #[arg(long, value_name = "HH:MM:SS")]
    pub time: Option<Walltime>,
    /// SLURM job name; for a preset it also names the checkpoint folder.
    #[arg(long, value_name = "NAME")]
    pub job_name: Option<String>,
    /// Start fresh or resume from the newest checkpoint (trainer.resume_mode).
    #[arg(long, default_value = "fresh", value_parser = resume_parser())]
    pub resume: Resume,
    /// Before a fresh start, delete the checkpoint folder's global_step_* (inside the job,
    /// after re-checking the folder); they are listed first.
    #[arg(long)]
    pub wipe: bool,
    /// Keep the run going across wall-time slots under one job id: shortly before the time
    /// limit the job stops the trainer and requeues itself, and the next slot resumes.
    #[arg(long)]
    pub until_done: bool,
    /// With --until-done: the most slots the run may take, the first included. The last one
    /// keeps its trainer to the time limit (TIMEOUT, which `rlctl tend` resumes).
    #[arg(long, value_name = "N", default_value_t = crate::plan::DEFAULT_MAX_SLOTS,
          requires = "until_done", value_parser = clap::value_parser!(u32).range(1..=crate::plan::MAX_MAX_SLOTS as i64))]
    pub max_slots: u32,
    /// Turn one named preflight check into a warning (repeatable).
    #[arg(long, value_name = "CHECK", value_parser = allow_parser())]
    pub allow: Vec<Allow>,
}

/// `--chain`: a number of jobs, or as many as the estimate needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chain {
    Jobs(u32),
    Auto,
}

impl Cli {
    /// The command line, or clap's usage error with the input it echoes clipped (a megabyte
    /// argument gives a readable message), and exit.
    pub fn parse_or_exit() -> Cli {
        Cli::try_parse().unwrap_or_else(|e| clip_echoed(e).exit())
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

impl Chain {
    /// The longest chain: a hundred slots is days of one run, and a typo past it is likelier.
    pub const MAX: u16 = crate::plan::MAX_CHAIN as u16;
}

fn chain_parser(text: &str) -> Result<Chain, String> {
    if text == "auto" {
        return Ok(Chain::Auto);
    }
    match text.parse::<u32>() {
        Ok(k) if (1..=u32::from(Chain::MAX)).contains(&k) => Ok(Chain::Jobs(k)),
        _ => Err(format!(
            "expected a number from 1 to {} or `auto`",
            Chain::MAX
        )),
    }
}

/// `--resume`'s choices, with their help, from the plan's own list.
fn resume_parser() -> impl TypedValueParser<Value = Resume> {
    let values = Resume::ALL.map(|(_, name, help)| PossibleValue::new(name).help(help));
    PossibleValuesParser::new(values)
        .map(|name| Resume::named(&name).expect("clap checked the name"))
}

/// `--allow`'s choices, with their help, from the checks' own list.
fn allow_parser() -> impl TypedValueParser<Value = Allow> {
    let values = Allow::ALL.map(|(_, name, help)| PossibleValue::new(name).help(help));
    PossibleValuesParser::new(values)
        .map(|name| Allow::named(&name).expect("clap checked the name"))
}
