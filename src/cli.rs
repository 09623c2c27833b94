//! The command line, parsed once into a validated command.

use crate::plan::{PlanOptions, Resume};
use crate::preflight::Allow;
use crate::walltime::Walltime;
use camino::Utf8PathBuf;
use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "rlctl",
    version,
    about = "Launch SkyRL reinforcement-learning runs on SLURM clusters from typed presets",
    long_about = "Launch SkyRL reinforcement-learning runs on SLURM clusters from typed presets.\n\n\
        rlctl resolves a preset (or grid cell), the cluster profile, your flags and your hydra \
        overrides into one plan, renders the sbatch wrapper and the in-container run script, \
        and submits them with sbatch, or prints everything with --dry-run.",
    after_help = "Examples:\n  rlctl launch gsm8k-canary --dry-run\n  rlctl grid tbs128 -- trainer.epochs=2\n  rlctl grid --all gsm8k-throughput\n  rlctl list"
)]
pub struct Cli {
    /// Cluster profile to run on (a file under presets/clusters/).
    #[arg(
        long,
        global = true,
        env = "RLCTL_CLUSTER",
        default_value = "leonardo",
        value_name = "NAME"
    )]
    pub cluster: String,

    /// Folder of your own presets (clusters/, runs/, grids/); its files replace the embedded
    /// ones of the same name.
    #[arg(long, global = true, env = "RLCTL_PRESETS", value_name = "DIR")]
    pub presets: Option<Utf8PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Launch a run preset: render its scripts and submit them with sbatch.
    Launch {
        /// The run preset, e.g. gsm8k-canary (see `rlctl list`).
        preset: String,
        /// Submit K jobs, each waiting for the previous one to end (afterany) and resuming
        /// from the same checkpoint folder: runs longer than one wall-time slot.
        #[arg(long, value_name = "K", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
        chain: u32,
        #[command(flatten)]
        submit: SubmitArgs,
        #[command(flatten)]
        plan: PlanArgs,
        /// Hydra overrides for the trainer, after `--`: `trainer.epochs=2`, `+new.key=1`.
        #[arg(last = true, value_name = "KEY=VALUE")]
        overrides: Vec<String>,
    },
    /// Launch one grid cell, or every cell of a grid with --all (at most 8 running at once).
    Grid {
        /// The cell, by name or as GRID/CELL when several grids have one of that name.
        #[arg(required_unless_present = "all", conflicts_with = "all")]
        cell: Option<String>,
        /// Launch every cell of GRID; cell i waits for cell i-8 to end (afterany).
        #[arg(long, value_name = "GRID")]
        all: Option<String>,
        #[command(flatten)]
        submit: SubmitArgs,
        #[command(flatten)]
        plan: PlanArgs,
        /// Hydra overrides applied after the cell's own, after `--`.
        #[arg(last = true, value_name = "KEY=VALUE")]
        overrides: Vec<String>,
    },
    /// Render a preset's or cell's scripts: into --out DIR, or to stdout.
    Render {
        /// A run preset or a grid cell.
        name: String,
        /// Write sbatch.sh and run.sh into DIR instead of printing them.
        #[arg(long, value_name = "DIR")]
        out: Option<Utf8PathBuf>,
        #[command(flatten)]
        plan: PlanArgs,
        #[arg(last = true, value_name = "KEY=VALUE")]
        overrides: Vec<String>,
    },
    /// Run every preflight check on a preset or cell, report all problems, submit nothing.
    Check {
        /// A run preset or a grid cell.
        name: String,
        #[command(flatten)]
        plan: PlanArgs,
        #[arg(last = true, value_name = "KEY=VALUE")]
        overrides: Vec<String>,
    },
    /// Print the resolved plan of a preset or cell as TOML.
    Show {
        /// A run preset or a grid cell.
        name: String,
        #[command(flatten)]
        plan: PlanArgs,
        #[arg(last = true, value_name = "KEY=VALUE")]
        overrides: Vec<String>,
    },
    /// List clusters, run presets, grids and their cells.
    List,
    /// Check the site itself (container, venv, SkyRL checkout, gcc, caches, free space).
    Doctor,
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

#[derive(Debug, Args)]
pub struct SubmitArgs {
    /// Print the sbatch command and every rendered file; write and submit nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The sbatch program to call.
    #[arg(
        long,
        env = "RLCTL_SBATCH",
        default_value = "sbatch",
        value_name = "PATH"
    )]
    pub sbatch: String,
    /// The squeue program to call (a run already queued is not submitted twice).
    #[arg(
        long,
        env = "RLCTL_SQUEUE",
        default_value = "squeue",
        value_name = "PATH"
    )]
    pub squeue: String,
}

#[derive(Debug, Args)]
pub struct PlanArgs {
    /// Nodes to run on (default: the preset's).
    #[arg(long, value_name = "N")]
    pub nodes: Option<u32>,
    /// SLURM QOS (default: the preset's or grid's).
    #[arg(long, value_name = "Q")]
    pub qos: Option<String>,
    /// Wall-clock limit, HH:MM:SS or D-HH:MM:SS (default: the preset's or grid's).
    #[arg(long, value_name = "HH:MM:SS")]
    pub time: Option<Walltime>,
    /// SLURM job name; for a preset it also names the checkpoint folder.
    #[arg(long, value_name = "NAME")]
    pub job_name: Option<String>,
    /// Start fresh or resume from the newest checkpoint (trainer.resume_mode).
    #[arg(long, value_enum, default_value_t = Resume::Fresh)]
    pub resume: Resume,
    /// Before a fresh start, delete the checkpoint folder's global_step_* (inside the job,
    /// after re-checking the folder); they are listed first.
    #[arg(long)]
    pub wipe: bool,
    /// Turn one named preflight check into a warning (repeatable).
    #[arg(long, value_enum, value_name = "CHECK")]
    pub allow: Vec<Allow>,
}

impl PlanArgs {
    pub fn options(&self) -> PlanOptions {
        PlanOptions {
            nodes: self.nodes,
            qos: self.qos.clone(),
            time: self.time,
            job_name: self.job_name.clone(),
            resume: Some(self.resume),
            wipe: self.wipe,
        }
    }
}
