//! The `resume-world` check of `--resume latest`: FSDP saves one file per rank,
//! `model_world_size_{W}_rank_{r}.pt`, and loads the names its current world size makes, so a
//! checkpoint saved on another GPU count fails to load (FileNotFoundError) only after the queue
//! wait.

use crate::check::resume_pointer::decision;
use crate::check::skyrl_rules::Values;
use crate::check::{Check, Raw};
use crate::checkpoint::Decision;
use crate::plan::Resume;
use camino::Utf8Path;
use std::collections::BTreeSet;

/// Each model SkyRL resumes from the step the job resumes from (the critic only when the
/// plan has one) must have been saved by as many GPUs as the plan gives it.
pub(super) fn check(values: &Values, found: &mut Vec<Raw>) {
    let plan = values.plan;
    if plan.resume != Resume::Latest {
        return;
    }
    // The step the job resumes from: the newest whole one, whatever the pointer says.
    let Decision::Resume { step, .. } = decision(plan) else {
        return;
    };
    let folder = plan.paths.ckpt_path.join(format!("global_step_{step}"));
    for role in ["policy", "critic"] {
        if role == "critic" && !values.uses_critic() {
            continue;
        }
        let Some((saved, from)) = saved_world(&folder.join(role)) else {
            continue;
        };
        let placement = |what: &str| values.int(&format!("trainer.placement.{role}_{what}"));
        let (Some(nodes), Some(per_node)) =
            (placement("num_nodes"), placement("num_gpus_per_node"))
        else {
            continue;
        };
        let gpus = nodes * per_node;
        if saved.contains(&gpus) {
            continue;
        }
        let saved_text = (saved.iter())
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(" or ");
        let same = match saved.iter().next() {
            Some(w)
                if saved.len() == 1 && per_node > 0 && w % per_node == 0 && role == "policy" =>
            {
                format!("{w} GPUs (`--nodes {}`)", w / per_node)
            }
            _ => format!("{saved_text} GPUs"),
        };
        found.push((
            Check::ResumeWorld,
            None,
            format!(
                "`{folder}/{role}` was saved by {saved_text} GPUs ({from}), but this plan trains the {role} on \
                 {gpus} ({nodes} node(s) x {per_node}): FSDP would look for `model_world_size_{gpus}_rank_*.pt` \
                 and fail after the queue wait; resume on {same}, or start in a fresh checkpoint folder \
                 (another --job-name, or --wipe this one)"
            ),
        ));
    }
}

/// The world size a model's checkpoint folder was saved with, and where that was read: rank
/// 0's `fsdp_config.json`, else the sizes its rank files' names carry. None when neither says
/// (no folder, or not an FSDP checkpoint).
fn saved_world(dir: &Utf8Path) -> Option<(BTreeSet<i64>, &'static str)> {
    let config = std::fs::read_to_string(dir.join("fsdp_config.json")).ok();
    let from_config = config
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|json| json.get("world_size")?.as_i64());
    if let Some(w) = from_config {
        return Some((BTreeSet::from([w]), "fsdp_config.json"));
    }
    let names: BTreeSet<i64> = (dir.read_dir_utf8().ok()?.flatten())
        .filter_map(|e| {
            let rest = e.file_name().strip_prefix("model_world_size_")?;
            let (w, rank) = rest.split_once("_rank_")?;
            rank.strip_suffix(".pt")?.parse::<u64>().ok()?;
            w.parse().ok()
        })
        .collect();
    (!names.is_empty()).then_some((names, "its model_world_size_*_rank_*.pt files"))
}
