//! The `env-leak` check: the profile's [env] must not set what rlctl sets or clears per job.

use crate::plan::Plan;
use crate::plan::env::LEAKY_VARS;

/// One message per variable of the profile's [env] that rlctl clears or sets per job.
pub fn check(plan: &Plan) -> Vec<String> {
    (plan.env.iter())
        .filter(|(key, _)| LEAKY_VARS.contains(&key.as_str()))
        .map(|(key, _)| format!("the cluster profile's [env] sets {key}, which rlctl clears or sets per job: remove it"))
        .collect()
}
