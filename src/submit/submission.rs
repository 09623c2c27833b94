//! What became of each plan of a launch, as a typed value: `launch --json` and `grid --json`
//! print it, so that no JSON is read back from the text or the ledger.

use crate::plan::Plan;
use camino::Utf8PathBuf;
use schemars::JsonSchema;
use serde::Serialize;

/// One plan's outcome.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Submission {
    pub target: String,
    /// `recorded`, `occupied`, `waiting`, `submitted`, or `dry-run`.
    pub outcome: Outcome,
    /// The job it was submitted as, is recorded as, or whose folder it would share; none when
    /// it waits or for a dry run.
    pub job_id: Option<String>,
    pub job_name: String,
    #[schemars(with = "String")]
    pub run_dir: Utf8PathBuf,
    #[schemars(with = "String")]
    pub checkpoint_dir: Utf8PathBuf,
    pub qos: String,
    pub nodes: u32,
    /// `HH:MM:SS`, one wall-time slot.
    pub time: String,
    /// The job it waits on (`afterany`).
    pub dependency: Option<String>,
    /// An occupied plan: the state of the job that uses its folder or name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// An occupied plan: the run whose checkpoint folder it shares.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other_run: Option<String>,
}

/// What became of a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// The ledger holds it already: skipped.
    Recorded,
    /// A queued job uses its folder or name: skipped.
    Occupied,
    /// No room in its QOS: not submitted now.
    Waiting,
    /// Submitted now.
    Submitted,
    /// `--dry-run`: shown, nothing submitted.
    DryRun,
}

impl Submission {
    /// `plan`'s outcome, the other fields from the plan.
    pub fn of(plan: &Plan, outcome: Outcome, job_id: Option<String>) -> Submission {
        Submission {
            target: plan.target.clone(),
            outcome,
            job_id,
            job_name: plan.job.name.clone(),
            run_dir: plan.paths.run_dir.clone(),
            checkpoint_dir: plan.paths.checkpoint_dir.clone(),
            qos: plan.job.qos.clone(),
            nodes: plan.job.nodes,
            time: plan.job.time.to_string(),
            dependency: None,
            state: None,
            other_run: None,
        }
    }
}
