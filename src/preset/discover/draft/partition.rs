//! Which partition the draft is for: the one asked for, else the default when it has GPU nodes
//! and a name rlctl can write on an `#SBATCH` line, else the first that has both. Where the
//! nodes could not be read, whether a partition has GPUs is unknown and the choice is a guess.

use super::{Facts, Wishes, shown};
use crate::preset::discover::{Sourced, gres_gpus, scontrol};
use crate::util::names::{PLAIN_WORD, is_plain_word};

/// The partition, or why none can be drafted (each message names `--partition`); `notes` gets
/// what the choice passed over.
pub(super) fn choose(
    facts: &Facts,
    wishes: &Wishes,
    notes: &mut Vec<String>,
) -> Result<Sourced<String>, String> {
    let node_cmd = shown(&facts.scontrol, scontrol::NODE_ARGS);
    let listed_by = &facts.partitions_said;
    if let Some(asked) = &wishes.partition {
        return asked_for(facts, asked, &node_cmd);
    }
    if facts.partitions.is_empty() {
        return Err(format!(
            "no partition list could be read ({}): pass --partition NAME to draft the profile of that partition",
            facts.unread.join("; ")
        ));
    }
    let default = facts.partitions.iter().find(|p| p.default);
    let refused = default.filter(|d| !is_plain_word(&d.name));
    if let Some(d) = refused {
        notes.push(format!(
            "the default partition `{}` has a name rlctl cannot write on an #SBATCH line ({PLAIN_WORD}): \
             pass --partition NAME to draft another",
            d.name
        ));
    }
    let candidates: Vec<&str> = (facts.partitions.iter())
        .map(|p| p.name.as_str())
        .filter(|p| is_plain_word(p) && has_gpus(facts, p) != Some(false))
        .collect();
    let plain_default = default.filter(|d| is_plain_word(&d.name));
    let nodes_unread = facts.nodes.as_ref().err();
    match (plain_default, nodes_unread) {
        (Some(d), None) if has_gpus(facts, &d.name) == Some(true) => {
            return Ok(Sourced::discovered(
                d.name.clone(),
                format!(
                    "{listed_by}: the default partition ({})",
                    facts.default_mark
                ),
            ));
        }
        (Some(d), Some(why)) => {
            return Ok(Sourced::guess(
                d.name.clone(),
                format!(
                    "{listed_by}: the default partition; whether it has GPU nodes is unknown: {why}"
                ),
            ));
        }
        _ => {}
    }
    let Some(first) = candidates.first() else {
        return Err(none_fits(
            facts,
            refused.map(|d| d.name.as_str()),
            &node_cmd,
        ));
    };
    let also = candidates.join(", ");
    Ok(match (refused, nodes_unread) {
        (_, Some(why)) => Sourced::guess(
            (*first).to_owned(),
            format!(
                "{listed_by}: the first partition rlctl can name ({also}); whether it has GPU nodes is unknown: {why}"
            ),
        ),
        (Some(d), None) => Sourced::guess(
            (*first).to_owned(),
            format!(
                "the default partition, {}, has a name rlctl cannot write; of those with GPU nodes ({also}) this is the first: \
                 confirm, or draft again with --partition NAME",
                d.name
            ),
        ),
        (None, None) => Sourced::discovered(
            (*first).to_owned(),
            format!(
                "{listed_by}: the first partition with GPU nodes{}",
                default
                    .map(|d| format!("; the default, {}, has none", d.name))
                    .unwrap_or_default()
            ),
        ),
    })
}

/// `--partition NAME`: it must be listed and have GPU nodes, where SLURM said.
fn asked_for(facts: &Facts, asked: &str, node_cmd: &str) -> Result<Sourced<String>, String> {
    let listed_by = &facts.partitions_said;
    if facts.partitions.is_empty() {
        return Ok(Sourced::guess(
            asked.to_owned(),
            format!(
                "--partition; no partition list could be read to confirm it: {}",
                facts.unread.join("; ")
            ),
        ));
    }
    if !facts.partitions.iter().any(|p| p.name == asked) {
        let all: Vec<&str> = facts.partitions.iter().map(|p| p.name.as_str()).collect();
        return Err(format!(
            "--partition {asked}: `{listed_by}` lists no such partition; it lists {}",
            all.join(", ")
        ));
    }
    match (has_gpus(facts, asked), facts.nodes.as_ref().err()) {
        (Some(true), _) => Ok(Sourced::discovered(
            asked.to_owned(),
            "--partition (it has GPU nodes)",
        )),
        (Some(false), _) => Err(format!(
            "--partition {asked}: no node of it has GPUs in its GRES (`{node_cmd}`: Gres=(null)); rlctl runs GPU jobs: \
             of this cluster's partitions {}; pass one of them",
            gpu_partitions(facts)
        )),
        (None, why) => Ok(Sourced::guess(
            asked.to_owned(),
            format!(
                "--partition; whether it has GPU nodes is unknown: {}",
                why.map(String::as_str).unwrap_or("")
            ),
        )),
    }
}

/// Whether a node of `partition` has GPUs; `None` where the nodes could not be read.
fn has_gpus(facts: &Facts, partition: &str) -> Option<bool> {
    let nodes = facts.nodes.as_ref().ok()?;
    Some(
        (nodes.iter())
            .any(|n| n.partitions.iter().any(|p| p == partition) && gres_gpus(&n.gres).is_some()),
    )
}

/// The partitions with GPU nodes, as a message lists them.
fn gpu_partitions(facts: &Facts) -> String {
    let names: Vec<&str> = (facts.partitions.iter())
        .map(|p| p.name.as_str())
        .filter(|p| has_gpus(facts, p) == Some(true))
        .collect();
    match names.as_slice() {
        [] => "none has GPUs".to_owned(),
        [one] => format!("{one} has GPUs"),
        _ => format!("{} have GPUs", names.join(", ")),
    }
}

/// Why no partition can be drafted without `--partition`.
fn none_fits(facts: &Facts, refused_default: Option<&str>, node_cmd: &str) -> String {
    let listed_by = &facts.partitions_said;
    if let Some(name) = refused_default {
        return format!(
            "the default partition `{name}` has a name rlctl cannot write on an #SBATCH line ({PLAIN_WORD}), \
             and no other partition with GPU nodes has a plain name ({}): pass --partition NAME with the plain name of \
             a GPU partition, or ask the site for one",
            gpu_partitions(facts)
        );
    }
    format!(
        "no partition of this cluster has GPUs in its GRES (`{node_cmd}` shows no `gpu:` in any node's Gres=, `{listed_by}` \
         none in %G): rlctl runs GPU jobs; run this on the login node of a GPU cluster, or ask the site how its \
         GPUs are requested (they may be listed under another GRES name), then pass --partition NAME"
    )
}
