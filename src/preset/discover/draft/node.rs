//! The draft's `[node]` table: what the partition's nodes have (the least of each), as
//! `scontrol show node` says; a value it did not say, or said as no count a profile can hold
//! (a CPU count past 2^32), is a guess, never a wrapped number marked discovered.

use super::{Facts, Writer, shown};
use crate::preset::discover::host::Nic;
use crate::preset::discover::{Sourced, gres_gpus, scontrol};
use crate::util::names::is_plain_word;

/// The partition's GPU nodes, or why they are not known (read, or none listed).
pub(super) type Nodes<'a> = Result<Vec<&'a scontrol::Node>, String>;

/// The GPU nodes of `partition` among those scontrol listed.
pub(super) fn of_partition<'a>(facts: &'a Facts, partition: &str) -> Nodes<'a> {
    let all = facts.nodes.as_ref().map_err(Clone::clone)?;
    let nodes: Vec<&scontrol::Node> = (all.iter())
        .filter(|n| n.partitions.iter().any(|p| p == partition) && gres_gpus(&n.gres).is_some())
        .collect();
    match nodes.is_empty() {
        true => Err(format!(
            "`{}` lists no node of {partition} with GPUs",
            shown(&facts.scontrol, scontrol::NODE_ARGS)
        )),
        false => Ok(nodes),
    }
}

/// The GPUs of the partition's nodes: the fewest a node has, and the kind the first names.
pub(super) fn gpus_of(nodes: &[&scontrol::Node]) -> (u32, Option<String>) {
    let gpus_said = (nodes.iter())
        .filter_map(|n| gres_gpus(&n.gres))
        .collect::<Vec<_>>();
    let gpus = gpus_said.iter().map(|g| g.0).min().unwrap_or(0);
    (gpus, gpus_said.first().and_then(|g| g.1.clone()))
}

/// `[node]`: what the partition's nodes have, and the guesses SLURM cannot confirm (GPU
/// memory, the sizes one node holds).
pub(super) fn node_table(w: &mut Writer, facts: &Facts, nodes: &Nodes) {
    w.table("node");
    let node_cmd = match nodes {
        Ok(nodes) => format!(
            "{} ({})",
            shown(&facts.scontrol, scontrol::NODE_ARGS),
            names(nodes)
        ),
        Err(_) => shown(&facts.scontrol, scontrol::NODE_ARGS),
    };
    let (gpus, gpu_kind) = match nodes {
        Ok(nodes) => {
            let (gpus, kind) = gpus_of(nodes);
            let gres_said = (nodes.iter().map(|n| n.gres.as_str()))
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect::<Vec<_>>()
                .join(" ");
            w.raw_value(
                "gpus",
                &Sourced::discovered(gpus, format!("{node_cmd}: Gres={gres_said}")),
            );
            let gpu_type = match kind.clone().filter(|k| is_plain_word(k)) {
                Some(k) => Sourced::discovered(
                    k.clone(),
                    format!("{node_cmd}: the GRES type of Gres={gres_said}"),
                ),
                None => Sourced::guess(
                    "GPU".to_owned(),
                    "the GRES names no GPU type: give the card's name, e.g. A100-64GB; it only labels messages",
                ),
            };
            (gpus, (gpu_type, kind))
        }
        Err(why) => {
            let gpus = Sourced::guess(
                4,
                format!("the nodes could not be read ({why}): give the GPUs one node has"),
            );
            w.raw_value("gpus", &gpus);
            let gpu_type = Sourced::guess(
                "GPU".to_owned(),
                "the nodes could not be read: give the card's name, e.g. A100-64GB; it only labels messages",
            );
            (gpus.value, (gpu_type, None))
        }
    };
    w.raw_value("cpus", &cpus(nodes, &node_cmd, gpus));
    w.value("mem", &mem(nodes, &node_cmd));
    let (gpu_type, kind) = gpu_kind;
    w.value("gpu_type", &gpu_type);
    let gib = gpu_memory_gib(kind.as_deref());
    w.raw_value(
        "gpu_mem_gib",
        &Sourced::guess(
            gib,
            "SLURM does not say a GPU's memory: `nvidia-smi --query-gpu=memory.total --format=csv` on a compute node does",
        ),
    );
    w.raw_value(
        "max_gpu_memory_utilization",
        &Sourced::guess(
            0.85,
            "Leonardo's A100-64GB ceiling (0.90 ran out of memory in eval); not measured here",
        ),
    );
    let params = ((f64::from(gpus) * f64::from(gib) * 30.0 / 256.0).round()).max(1.0);
    w.raw_value(
        "max_params_b_one_node",
        &Sourced::guess(
            params,
            "Leonardo's 30B on 4 x 64 GB, scaled to this node's GPU memory; not measured here",
        ),
    );
    w.value("interconnect", &interconnect(facts));
    let said: &[&scontrol::Node] = nodes.as_deref().unwrap_or(&[]);
    w.value("arch", &arch(said, &node_cmd));
}

/// The fewest CPUs a node has; a count no node said plainly (missing, 0, past 2^32) makes the
/// value a guess that quotes what was said.
fn cpus(nodes: &Nodes, node_cmd: &str, gpus: u32) -> Sourced<u32> {
    // Where nothing is known: 8 CPUs a GPU, a common ratio of GPU nodes.
    let fallback = (gpus * 8).max(1);
    let nodes = match nodes {
        Ok(nodes) => nodes,
        Err(why) => {
            return Sourced::guess(
                fallback,
                format!(
                    "the nodes could not be read ({why}): give the CPUs a job may use on one node"
                ),
            );
        }
    };
    let fewest = nodes.iter().filter_map(|n| n.cpus).min();
    match (nodes.iter().find(|n| n.cpus.is_none()), fewest) {
        (None, Some(cpus)) => Sourced::discovered(
            cpus,
            format!("{node_cmd}: CPUEfctv/CPUTot={cpus} (the fewest)"),
        ),
        (Some(odd), fewest) => Sourced::guess(
            fewest.unwrap_or(fallback),
            format!(
                "{node_cmd}: {} says CPUEfctv/CPUTot={}, not a CPU count rlctl can hold (1 to 4294967295): give the CPUs a job may use on one node",
                odd.name, odd.cpus_said
            ),
        ),
        (None, None) => Sourced::guess(
            fallback,
            "no node said its CPUs: give the CPUs a job may use on one node",
        ),
    }
}

/// The least memory a node has; where it is not known, `0`, which sbatch reads as all of a
/// node's memory.
fn mem(nodes: &Nodes, node_cmd: &str) -> Sourced<String> {
    let why = match nodes {
        Ok(nodes) => match nodes.iter().map(|n| n.real_memory_mb).min() {
            Some(mb) if mb > 0 => {
                return Sourced::discovered(
                    format!("{mb}M"),
                    format!("{node_cmd}: RealMemory={mb} (MB, the least)"),
                );
            }
            _ => format!("{node_cmd}: a node says no RealMemory"),
        },
        Err(why) => format!("the nodes could not be read ({why})"),
    };
    Sourced::guess(
        "0".to_owned(),
        format!("{why}; \"0\" asks sbatch for all of a node's memory: give it, e.g. 494000M"),
    )
}

fn interconnect(facts: &Facts) -> Sourced<String> {
    match &facts.nic {
        Some(Nic::InfiniBand(nic)) => Sourced::discovered(
            nic.clone(),
            format!(
                "/sys/class/net/{nic} on this login node: InfiniBand; compute nodes name theirs alike on the clusters rlctl knows"
            ),
        ),
        Some(Nic::DefaultRoute(nic)) => Sourced::guess(
            nic.clone(),
            format!(
                "no InfiniBand NIC here; {nic} carries this login node's default route: give the NIC compute nodes reach each other by"
            ),
        ),
        None => Sourced::guess(
            "eth0".to_owned(),
            "no network interface found: give the NIC compute nodes reach each other by",
        ),
    }
}

fn arch(nodes: &[&scontrol::Node], node_cmd: &str) -> Sourced<String> {
    let mut arches: Vec<&str> = nodes
        .iter()
        .map(|n| n.arch.as_str())
        .filter(|a| !a.is_empty() && *a != "(null)")
        .collect();
    arches.sort();
    arches.dedup();
    match arches.as_slice() {
        [one] if ["x86_64", "aarch64"].contains(one) => {
            Sourced::discovered((*one).to_owned(), format!("{node_cmd}: Arch={one}"))
        }
        _ => Sourced::guess(
            std::env::consts::ARCH.to_owned(),
            format!(
                "the nodes report Arch={}: rlctl knows x86_64 and aarch64; this is the login node's",
                if arches.is_empty() {
                    "nothing".to_owned()
                } else {
                    arches.join(",")
                }
            ),
        ),
    }
}

/// Up to three node names, then how many more.
fn names(nodes: &[&scontrol::Node]) -> String {
    let first: Vec<&str> = nodes.iter().take(3).map(|n| n.name.as_str()).collect();
    match nodes.len() {
        n if n > 3 => format!("{} and {} more", first.join(", "), n - 3),
        _ => first.join(", "),
    }
}

/// A GPU's memory by its GRES type, where the name says it; else the smallest common card's.
fn gpu_memory_gib(kind: Option<&str>) -> u32 {
    let kind = kind.unwrap_or_default().to_ascii_lowercase();
    let known = [
        ("gh200", 95),
        ("h200", 141),
        ("h100", 80),
        ("a100", 40),
        ("l40", 48),
        ("a40", 48),
        ("v100", 16),
    ];
    (known.iter())
        .find(|(name, _)| kind.contains(name))
        .map(|(_, gib)| *gib)
        .unwrap_or(40)
}
