//! The `offline` check on the job's environment: the variables that keep it offline and
//! quiet, and the model cache on $WORK. (The files it reads offline: `staged.rs`.)

use crate::plan::Plan;
use camino::Utf8Path;

/// The variables that keep a job offline and quiet, with the values they must have.
const OFFLINE_ENV: [(&str, &str); 6] = [
    ("HF_HUB_OFFLINE", "1"),
    ("TRANSFORMERS_OFFLINE", "1"),
    ("WANDB_MODE", "offline"),
    ("RAY_USAGE_STATS_ENABLED", "0"),
    ("VLLM_NO_USAGE_STATS", "1"),
    ("DO_NOT_TRACK", "1"),
];

pub fn env(plan: &Plan, work: &Utf8Path) -> Vec<String> {
    let mut problems = Vec::new();
    for (key, want) in OFFLINE_ENV {
        let have = plan
            .env
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str());
        if have != Some(want) {
            problems.push(format!(
                "the job must run with {key}={want} (compute nodes have no internet), but the cluster profile's [env] \
                 sets {key}={}: remove it",
                have.unwrap_or("")
            ));
        }
    }
    for key in ["HF_HOME", "HF_HUB_CACHE"] {
        if let Some((_, value)) = plan.env.iter().rev().find(|(k, _)| k == key)
            && !Utf8Path::new(value).starts_with(work)
        {
            problems.push(format!(
                    "{key}={value} is not under `{work}`: the offline model cache belongs on $WORK, where the \
                     login node stages it"
                ));
        }
    }
    problems
}
