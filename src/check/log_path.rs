//! The `log-path` check: upstream SkyRL sends every Ray worker's output to a file in
//! `trainer.log_path` (default `/tmp/skyrl-logs`), made on whichever node the worker runs; with
//! several nodes a node-local folder leaves the other nodes' logs in their own `/tmp`, out of
//! reach once the job ends.

use crate::check::skyrl_rules::Values;
use crate::util::fs::resolve;
use camino::Utf8Path;

const KEY: &str = "trainer.log_path";

/// With it set, SkyRL writes the workers' logs to stdout instead (`skyrl/env_vars.py`).
const TO_STDOUT: &str = "SKYRL_DUMP_INFRA_LOG_TO_STDOUT";

/// A multi-node plan's `trainer.log_path` off the profile's shared storage (`/tmp` among it),
/// for schemas that have the key (MarinSkyRL's has not).
pub(super) fn check(values: &Values, shared: [&Utf8Path; 2]) -> Option<String> {
    let plan = values.plan;
    if plan.job.nodes < 2 || values.schema.default_text(KEY).is_none() {
        return None;
    }
    let to_stdout = (plan.env.iter().chain(&plan.host_env))
        .any(|(k, v)| k == TO_STDOUT && ["true", "1", "yes"].contains(&v.to_lowercase().as_str()));
    let text = values.text(KEY)?;
    if to_stdout || text.starts_with("${") {
        return None;
    }
    // Python's Path.resolve(), from the folder the trainer starts in.
    let path = plan.paths.trainer_dir.join(&text);
    let real = resolve(&path);
    if shared.iter().any(|root| real.starts_with(resolve(root))) {
        return None;
    }
    let via = match real == path {
        true => String::new(),
        false => format!(" (`{real}`)"),
    };
    Some(format!(
        "`{KEY}={text}`{via} is node-local, and this plan runs on {} nodes: SkyRL writes each worker's \
         log there on the worker's own node, where it is out of reach once the job ends; put it on \
         shared storage, e.g. `{KEY}={}`",
        plan.job.nodes,
        plan.paths.checkpoint_dir.join("skyrl-logs")
    ))
}
