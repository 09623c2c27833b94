//! The flag groups several commands share: the plan flags and overrides, `--deep`, `--dry-run`,
//! and the parsers that take their values from the plan's and the checks' own lists.

use super::complete;
use crate::check::Allow;
use crate::plan::Resume;
use crate::preset::walltime::Walltime;
use clap::Args;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap_complete::engine::ArgValueCandidates;
use clap_complete::engine::ArgValueCompleter;

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

/// `--dry-run` of the commands that submit.
#[derive(Debug, Args)]
pub struct SubmitArgs {
    /// Print the sbatch command and every rendered file; write and submit nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// What shapes a plan beside the preset: the plan flags and the hydra overrides after `--`
/// (`launch`, `grid`, `render`, `estimate`, `check` and `show` take them all).
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
    // No help here: each command says what its overrides apply to (`launch`, `grid`), or nothing.
    #[arg(last = true, value_name = "KEY=VALUE", add = ArgValueCompleter::new(complete::hydra_keys))]
    pub overrides: Vec<String>,
}

/// `--chain`, defined beside the plan that check judges it with.
pub use crate::plan::Chain;

pub(super) fn chain_parser(text: &str) -> Result<Chain, String> {
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
pub(super) fn allow_parser() -> impl TypedValueParser<Value = Allow> {
    let values = Allow::ALL.map(|(_, name, help)| PossibleValue::new(name).help(help));
    PossibleValuesParser::new(values)
        .map(|name| Allow::named(&name).expect("clap checked the name"))
}

/// `--color` of the commands that paint a table (`status`, `watch`).
#[derive(Debug, Args)]
pub struct ColorArgs {
    /// Colour states and alerts: auto (on a terminal, unless NO_COLOR is set), always or never.
    #[arg(long, value_name = "WHEN", default_value = "auto", value_parser = ["auto", "always", "never"])]
    pub color: String,
}

impl ColorArgs {
    /// `Some(true)` for always, `Some(false)` for never, `None` for auto.
    pub fn said(&self) -> Option<bool> {
        match self.color.as_str() {
            "always" => Some(true),
            "never" => Some(false),
            _ => None,
        }
    }
}

/// The SLURM programs `init --discover` reads the cluster with.
#[derive(Debug, Args)]
pub struct DiscoverPrograms {
    /// With --discover: the sinfo program to call.
    #[arg(
        long,
        env = "RLCTL_SINFO",
        default_value = "sinfo",
        value_name = "PATH"
    )]
    pub sinfo: String,
    /// With --discover: the scontrol program to call.
    #[arg(
        long,
        env = "RLCTL_SCONTROL",
        default_value = "scontrol",
        value_name = "PATH"
    )]
    pub scontrol: String,
    /// With --discover: the sacctmgr program to call.
    #[arg(
        long,
        env = "RLCTL_SACCTMGR",
        default_value = "sacctmgr",
        value_name = "PATH"
    )]
    pub sacctmgr: String,
}

/// The SLURM programs rlctl calls.
#[derive(Debug, Args)]
pub struct SlurmArgs {
    /// The sbatch program to call.
    #[arg(
        long,
        global = true,
        help_heading = "Global options",
        env = "RLCTL_SBATCH",
        default_value = "sbatch",
        value_name = "PATH"
    )]
    pub sbatch: String,
    /// The squeue program to call.
    #[arg(
        long,
        global = true,
        help_heading = "Global options",
        env = "RLCTL_SQUEUE",
        default_value = "squeue",
        value_name = "PATH"
    )]
    pub squeue: String,
    /// The sacct program to call.
    #[arg(
        long,
        global = true,
        help_heading = "Global options",
        env = "RLCTL_SACCT",
        default_value = "sacct",
        value_name = "PATH"
    )]
    pub sacct: String,
    /// The scancel program to call.
    #[arg(
        long,
        global = true,
        help_heading = "Global options",
        env = "RLCTL_SCANCEL",
        default_value = "scancel",
        value_name = "PATH"
    )]
    pub scancel: String,
}
