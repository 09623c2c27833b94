//! `rlctl init`'s arguments.

use super::{complete, shared};
use clap::Args;
use clap_complete::engine::ArgValueCandidates;

/// `rlctl init`'s arguments.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// The cluster profile to start from, e.g. leonardo; with --discover, the name of the new
    /// profile.
    #[arg(value_name = "CLUSTER", add = ArgValueCandidates::new(complete::clusters))]
    pub profile: String,
    /// Draft a new profile from this login node's SLURM (sinfo, scontrol, sacctmgr), its
    /// container program and network: every value says where it came from, and each guess is
    /// marked `# guess: confirm` for you to check (`rlctl doctor` lists those left).
    #[arg(long)]
    pub discover: bool,
    /// With --discover: the partition jobs run in (default: the default partition, if it has
    /// GPUs, else the first that has).
    #[arg(long, value_name = "PARTITION", requires = "discover")]
    pub partition: Option<String>,
    #[command(flatten)]
    pub programs: shared::DiscoverPrograms,
    /// Your SLURM account (#SBATCH --account).
    #[arg(long, value_name = "ACCOUNT")]
    pub account: Option<String>,
    /// Your folder on the work file system, where checkpoints, runs, data and the HF cache
    /// go (default: $WORK/$USER).
    #[arg(long, value_name = "DIR")]
    pub work: Option<String>,
    /// Your scratch folder, for the container, the venv and caches (default: $FAST/$USER,
    /// else $SCRATCH).
    #[arg(long, value_name = "DIR")]
    pub scratch: Option<String>,
    /// Replace a profile you already have.
    #[arg(long)]
    pub force: bool,
}
