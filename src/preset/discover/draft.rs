//! The profile draft: every value from what discovery read (`# discovered: ...`), what the user
//! gave (`# given: ...`), or rlctl's guess (`# guess: confirm (why)`), which `rlctl doctor`
//! lists until the user deletes the mark.

mod slurm;

use super::host::Nic;
use super::{GUESS, Origin, Sourced, gres_gpus, sacctmgr, scontrol, sinfo};
use crate::preset::container::Runtime;
use crate::util::names::is_plain_word;
use camino::Utf8PathBuf;
use slurm::{account, qos};

/// Everything discovery read on the login node.
#[derive(Debug, Clone)]
pub struct Facts {
    /// The SLURM programs' names, as the comments cite them.
    pub sinfo: String,
    pub scontrol: String,
    pub sacctmgr: String,
    pub partitions: Vec<sinfo::Partition>,
    pub limits: Vec<scontrol::Partition>,
    pub nodes: Vec<scontrol::Node>,
    /// sacctmgr's answer, or why it gave none (no slurmdbd: no accounting, no QOS).
    pub qos: Result<Vec<sacctmgr::Qos>, String>,
    pub assoc: Result<Vec<sacctmgr::Assoc>, String>,
    pub container: Option<(Runtime, Utf8PathBuf)>,
    pub gcc: Option<Utf8PathBuf>,
    pub nic: Option<Nic>,
    pub host: String,
}

/// What the user asked for.
#[derive(Debug, Clone)]
pub struct Wishes {
    pub name: String,
    pub account: Option<String>,
    pub partition: Option<String>,
    pub work: Sourced<String>,
    pub scratch: Sourced<String>,
}

/// The draft's text and what it says of itself.
#[derive(Debug, Clone)]
pub struct Draft {
    pub text: String,
    pub partition: String,
    /// `table.key` of every guessed value, in the file's order.
    pub guesses: Vec<String>,
    pub discovered: usize,
}

/// The profile text, or why discovery cannot draft one (no GPU partition, an unknown one).
pub fn draft(facts: &Facts, wishes: &Wishes) -> Result<Draft, String> {
    let (partition, partition_from) = choose_partition(facts, wishes)?;
    let nodes: Vec<&scontrol::Node> = (facts.nodes.iter())
        .filter(|n| n.partitions.contains(&partition) && gres_gpus(&n.gres).is_some())
        .collect();
    let mut w = Writer::default();
    header(&mut w, facts, wishes, &partition, &nodes);
    w.table("vars");
    w.value("WORK", &wishes.work);
    w.value("SCRATCH", &wishes.scratch);
    slurm_table(&mut w, facts, wishes, &partition, partition_from);
    node_table(&mut w, facts, &nodes);
    storage_table(&mut w);
    software_table(&mut w, facts);
    w.table("container");
    container(&mut w, facts);
    network_table(&mut w, facts);
    Ok(Draft {
        text: w.text,
        partition,
        guesses: w.guesses,
        discovered: w.discovered,
    })
}

/// The GPUs of the partition's nodes: the fewest a node has, and the kind the first names.
fn gpus_of(nodes: &[&scontrol::Node]) -> (u32, Option<String>) {
    let gpus_said = (nodes.iter())
        .map(|n| gres_gpus(&n.gres).expect("filtered on GPUs"))
        .collect::<Vec<_>>();
    let gpus = gpus_said.iter().map(|g| g.0).min().unwrap_or(0);
    (gpus, gpus_said.first().and_then(|g| g.1.clone()))
}

/// Where the draft came from and how to confirm it, then its description.
fn header(
    w: &mut Writer,
    facts: &Facts,
    wishes: &Wishes,
    partition: &str,
    nodes: &[&scontrol::Node],
) {
    w.line(&format!(
        "# Written by `rlctl init {} --discover` on {}: a draft from what SLURM and this login",
        wishes.name,
        if facts.host.is_empty() {
            "this login node"
        } else {
            &facts.host
        }
    ));
    w.line(
        "# node say. `# discovered:` says where each value came from; check every value under a",
    );
    w.line(&format!(
        "# `# {GUESS}` line, then delete that line: `rlctl doctor` lists the guesses left."
    ));
    let (gpus, gpu_kind) = gpus_of(nodes);
    w.value(
        "description",
        &Sourced::discovered(
            format!(
                "{}: partition {partition}, {} node{} of {gpus} GPUs{} (drafted by rlctl init --discover)",
                wishes.name,
                nodes.len(),
                if nodes.len() == 1 { "" } else { "s" },
                gpu_kind.as_ref().map(|k| format!(" ({k})")).unwrap_or_default()
            ),
            format!("{} and {}", shown(&facts.sinfo, sinfo::ARGS), shown(&facts.scontrol, scontrol::NODE_ARGS)),
        ),
    );
}

/// `[slurm]`: the account, the partition, how GPUs are asked for, and the QOS the partition
/// takes.
fn slurm_table(
    w: &mut Writer,
    facts: &Facts,
    wishes: &Wishes,
    partition: &str,
    partition_from: String,
) {
    let limits = facts.limits.iter().find(|p| p.name == partition);
    w.table("slurm");
    w.value("account", &account(facts, wishes, partition));
    w.value(
        "partition",
        &Sourced::discovered(partition.to_owned(), partition_from),
    );
    w.value(
        "gpu_request",
        &Sourced::guess(
            "gres".to_owned(),
            "every SLURM takes --gres=gpu:N; some sites (JUPITER) ask for \"gpus-per-node\"",
        ),
    );
    for q in qos(facts, wishes, partition, limits) {
        w.array_table("slurm.qos");
        w.value("name", &q.name);
        w.value("max_wall", &q.max_wall);
        w.raw_value("max_nodes", &q.max_nodes);
        if let Some(submit) = &q.max_submit {
            w.raw_value("max_submit_jobs", submit);
        }
    }
}

/// `[node]`: what the partition's nodes have (the least of each), and the guesses SLURM
/// cannot confirm (GPU memory, the sizes one node holds).
fn node_table(w: &mut Writer, facts: &Facts, nodes: &[&scontrol::Node]) {
    w.table("node");
    let (gpus, gpu_kind) = gpus_of(nodes);
    let nodes_named = names(nodes);
    let node_cmd = format!(
        "{} ({nodes_named})",
        shown(&facts.scontrol, scontrol::NODE_ARGS)
    );
    let gres_said = (nodes.iter().map(|n| n.gres.as_str()))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect::<Vec<_>>()
        .join(" ");
    w.raw_value(
        "gpus",
        &Sourced::discovered(gpus, format!("{node_cmd}: Gres={gres_said}")),
    );
    let cpus = nodes.iter().map(|n| n.cpus).min().unwrap_or(0);
    w.raw_value(
        "cpus",
        &Sourced::discovered(
            cpus,
            format!("{node_cmd}: CPUEfctv/CPUTot={cpus} (the fewest)"),
        ),
    );
    let mem = nodes.iter().map(|n| n.real_memory_mb).min().unwrap_or(0);
    w.value(
        "mem",
        &Sourced::discovered(
            format!("{mem}M"),
            format!("{node_cmd}: RealMemory={mem} (MB, the least)"),
        ),
    );
    let gpu_type = match gpu_kind.clone().filter(|k| is_plain_word(k)) {
        Some(kind) => Sourced::discovered(
            kind.clone(),
            format!("{node_cmd}: the GRES type of Gres={gres_said}"),
        ),
        None => Sourced::guess(
            "GPU".to_owned(),
            "the GRES names no GPU type: give the card's name, e.g. A100-64GB; it only labels messages",
        ),
    };
    w.value("gpu_type", &gpu_type);
    let gib = gpu_memory_gib(gpu_kind.as_deref());
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
    w.value("arch", &arch(nodes, &node_cmd));
}

/// `[storage]`: rlctl's layout under the user's two folders.
fn storage_table(w: &mut Writer) {
    w.table("storage");
    w.line("# derived: rlctl's layout under your two folders; checkpoints never go on scratch.");
    for (key, value) in [
        ("work", "${WORK}"),
        ("scratch", "${SCRATCH}"),
        ("checkpoints_on", "work"),
        ("checkpoint_root", "${WORK}/rlctl/checkpoints"),
        ("run_root", "${WORK}/rlctl/runs"),
        ("data_root", "${WORK}/data"),
        ("hf_home", "${WORK}/data/hub"),
        ("home", "${SCRATCH}/rlctl_home"),
        ("cache_root", "${SCRATCH}/rlctl_cache"),
    ] {
        w.plain(key, &toml_string(value));
    }
    w.value(
        "ray_tmp_root",
        &Sourced::guess(
            "/tmp".to_owned(),
            "a node-local folder with a short path: Ray's socket paths must fit in 107 bytes",
        ),
    );
}

/// `[software]`: the checkout, its venv, the compiler and the key list.
fn software_table(w: &mut Writer, facts: &Facts) {
    w.table("software");
    w.value(
        "skyrl",
        &Sourced::guess(
            "${WORK}/code/MarinSkyRL".to_owned(),
            "where you cloned the SkyRL checkout",
        ),
    );
    w.value(
        "venv",
        &Sourced::guess(
            "${SCRATCH}/skyrl_venv".to_owned(),
            "the checkout's uv venv, with bin/python",
        ),
    );
    let gcc = match &facts.gcc {
        Some(file) => Sourced::discovered(
            file.parent().map(|p| p.to_string()).unwrap_or_default(),
            format!("`gcc` on this login node's PATH: {file}"),
        ),
        None => Sourced::guess(
            "/usr/bin".to_owned(),
            "no gcc on PATH here; Triton's JIT needs one",
        ),
    };
    w.value("gcc_bin", &gcc);
    w.value(
        "schema",
        &Sourced::guess(
            "marinskyrl-a559688".to_owned(),
            "the MarinSkyRL key list rlctl ships; upstream SkyRL: \"skyrl-0.4.0\"; without the line the checkout's own config is read",
        ),
    );
}

/// `[network]`: how the head's address is read.
fn network_table(w: &mut Writer, facts: &Facts) {
    w.table("network");
    let head = match &facts.nic {
        Some(Nic::InfiniBand(nic)) => Sourced::discovered(
            "interface".to_owned(),
            format!("the head's address is {nic}'s, the InfiniBand NIC"),
        ),
        _ => Sourced::guess(
            "interface".to_owned(),
            "the address of node.interconnect on the head node; \"hostname\" where a node's name resolves to the address others reach",
        ),
    };
    w.value("head_address", &head);
}

/// The partition asked for, else the default one when it has GPUs, else the first that has.
fn choose_partition(facts: &Facts, wishes: &Wishes) -> Result<(String, String), String> {
    let sinfo_cmd = shown(&facts.sinfo, sinfo::ARGS);
    let with_gpus = |name: &str| {
        (facts.nodes.iter())
            .any(|n| n.partitions.iter().any(|p| p == name) && gres_gpus(&n.gres).is_some())
    };
    let gpu_partitions: Vec<&str> = (facts.partitions.iter())
        .map(|p| p.name.as_str())
        .filter(|p| with_gpus(p))
        .collect();
    let listed = |names: &[&str]| match names {
        [] => "none has".to_owned(),
        _ => format!(
            "{} {}",
            names.join(", "),
            if names.len() == 1 { "has" } else { "have" }
        ),
    };
    if let Some(asked) = &wishes.partition {
        if !facts.partitions.iter().any(|p| &p.name == asked) {
            let all: Vec<&str> = facts.partitions.iter().map(|p| p.name.as_str()).collect();
            return Err(format!(
                "--partition {asked}: `{sinfo_cmd}` lists no such partition; it lists {}",
                all.join(", ")
            ));
        }
        if !with_gpus(asked) {
            return Err(format!(
                "--partition {asked}: no node of it has GPUs in its GRES (`{}`: Gres=(null)); rlctl runs GPU jobs: \
                 of this cluster's partitions {} GPUs; pass one of them",
                shown(&facts.scontrol, scontrol::NODE_ARGS),
                listed(&gpu_partitions)
            ));
        }
        return Ok((asked.clone(), "--partition (it has GPU nodes)".to_owned()));
    }
    let default = facts.partitions.iter().find(|p| p.default);
    if let Some(d) = default.filter(|d| with_gpus(&d.name)) {
        return Ok((
            d.name.clone(),
            format!("{sinfo_cmd}: the default partition (marked `*`)"),
        ));
    }
    match gpu_partitions.first() {
        Some(first) => Ok((
            (*first).to_owned(),
            format!(
                "{sinfo_cmd}: the first partition with GPU nodes{}",
                default
                    .map(|d| format!("; the default, {}, has none", d.name))
                    .unwrap_or_default()
            ),
        )),
        None => Err(format!(
            "no partition of this cluster has GPUs in its GRES (`{}` shows no `gpu:` in any node's Gres=, `{sinfo_cmd}` \
             none in %G): rlctl runs GPU jobs; run this on the login node of a GPU cluster, or ask the site how its \
             GPUs are requested (they may be listed under another GRES name)",
            shown(&facts.scontrol, scontrol::NODE_ARGS)
        )),
    }
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

fn container(w: &mut Writer, facts: &Facts) {
    match &facts.container {
        Some((runtime, program)) => {
            let said = format!("`{}` on this login node's PATH: {program}", runtime.as_str());
            w.value("runtime", &Sourced::discovered(runtime.as_str().to_owned(), said.clone()));
            w.value("program", &Sourced::discovered(program.to_string(), said));
            let (image, kind) = match runtime {
                Runtime::Apptainer => ("${WORK}/images/skyrl.sif", "sif"),
                _ => ("${SCRATCH}/skyrl_sandbox", "sandbox"),
            };
            w.value("image", &Sourced::guess(image.to_owned(), "the image you built or pulled for SkyRL"));
            w.value(
                "image_kind",
                &Sourced::guess(kind.to_owned(), "\"sif\" for an image file, \"sandbox\" for a folder"),
            );
            w.line("# derived: your two folders, so that jobs see them inside the container.");
            w.plain("binds", "[\"${WORK}\", \"${SCRATCH}\"]");
        }
        None => w.value(
            "runtime",
            &Sourced::guess(
                "none".to_owned(),
                "neither apptainer nor singularity is on PATH; where a module provides one (`module load Apptainer`), \
                 set runtime, program, image and modules",
            ),
        ),
    }
}

/// A command line as a comment cites it: the program's name, then its arguments.
fn shown(program: &str, args: &[&str]) -> String {
    format!("{} {}", sinfo::base(program), args.join(" "))
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

fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_owned()).to_string()
}

/// The draft's lines, and what it wrote of each kind.
#[derive(Default)]
struct Writer {
    text: String,
    table: String,
    guesses: Vec<String>,
    discovered: usize,
}

impl Writer {
    fn line(&mut self, line: &str) {
        self.text.push_str(line);
        self.text.push('\n');
    }

    fn table(&mut self, name: &str) {
        self.text.push_str(&format!("\n[{name}]\n"));
        self.table = name.to_owned();
    }

    fn array_table(&mut self, name: &str) {
        self.text.push_str(&format!("\n[[{name}]]\n"));
        self.table = name.to_owned();
    }

    fn plain(&mut self, key: &str, value: &str) {
        self.line(&format!("{key} = {value}"));
    }

    fn value(&mut self, key: &str, value: &Sourced<String>) {
        self.note(key, &value.origin);
        self.plain(key, &toml_string(&value.value));
    }

    fn raw_value<T: std::fmt::Display>(&mut self, key: &str, value: &Sourced<T>) {
        self.note(key, &value.origin);
        self.plain(key, &value.value.to_string());
    }

    fn note(&mut self, key: &str, origin: &Origin) {
        self.line(&origin.comment());
        match origin {
            Origin::Guess(_) => self.guesses.push(match self.table.as_str() {
                "" => key.to_owned(),
                table => format!("{table}.{key}"),
            }),
            Origin::Discovered(_) => self.discovered += 1,
            Origin::Given(_) => {}
        }
    }
}
