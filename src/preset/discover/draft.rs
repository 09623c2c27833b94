//! The profile draft: every value from what discovery read (`# discovered: ...`), what the user
//! gave (`# given: ...`), or rlctl's guess (`# guess: confirm (why)`), which `rlctl doctor`
//! lists until the user deletes the mark.

mod node;
mod partition;
mod slurm;

use super::host::Nic;
use super::{GUESS, Origin, Sourced, sacctmgr, scontrol, sinfo};
use crate::preset::container::Runtime;
use camino::Utf8PathBuf;
use node::{Nodes, gpus_of, node_table};
use slurm::{account, qos};

/// Everything discovery read on the login node.
#[derive(Debug, Clone)]
pub struct Facts {
    /// The SLURM programs' names, as the comments cite them.
    pub sinfo: String,
    pub scontrol: String,
    pub sacctmgr: String,
    /// The partitions, as sinfo lists them, else as `scontrol show partition` does; empty when
    /// neither answered.
    pub partitions: Vec<sinfo::Partition>,
    /// The command that listed them, as comments cite it, and how it marks the default.
    pub partitions_said: String,
    pub default_mark: &'static str,
    /// Empty when `scontrol show partition` gave no answer.
    pub limits: Vec<scontrol::Partition>,
    /// `scontrol show node`'s nodes, or why it gave none: their values are then guesses.
    pub nodes: Result<Vec<scontrol::Node>, String>,
    /// What could not be read, and why (a program that failed, hung or flooded).
    pub unread: Vec<String>,
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
    /// What the draft passed over and why: a frozen QOS, a default partition rlctl cannot name.
    pub notes: Vec<String>,
}

/// The profile text, or why discovery cannot draft one (no GPU partition, an unknown one).
pub fn draft(facts: &Facts, wishes: &Wishes) -> Result<Draft, String> {
    let mut notes = Vec::new();
    let chosen = partition::choose(facts, wishes, &mut notes)?;
    let partition = chosen.value.clone();
    let nodes = node::of_partition(facts, &partition);
    let mut w = Writer::default();
    header(&mut w, facts, wishes, &partition, &nodes);
    w.table("vars");
    w.value("WORK", &wishes.work);
    w.value("SCRATCH", &wishes.scratch);
    slurm_table(&mut w, facts, wishes, chosen, &mut notes);
    for note in &notes {
        w.line(&format!("# passed over: {}", one_line(note)));
    }
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
        notes,
    })
}

/// Where the draft came from and how to confirm it, then its description.
fn header(w: &mut Writer, facts: &Facts, wishes: &Wishes, partition: &str, nodes: &Nodes) {
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
    for why in &facts.unread {
        w.line(&format!(
            "# could not read: {}; what it would say is guessed below",
            one_line(why)
        ));
    }
    let description = match nodes {
        Ok(nodes) => {
            let (gpus, gpu_kind) = gpus_of(nodes);
            Sourced::discovered(
                format!(
                    "{}: partition {partition}, {} node{} of {gpus} GPUs{} (drafted by rlctl init --discover)",
                    wishes.name,
                    nodes.len(),
                    if nodes.len() == 1 { "" } else { "s" },
                    gpu_kind
                        .as_ref()
                        .map(|k| format!(" ({k})"))
                        .unwrap_or_default()
                ),
                format!(
                    "{} and {}",
                    facts.partitions_said,
                    shown(&facts.scontrol, scontrol::NODE_ARGS)
                ),
            )
        }
        Err(why) => Sourced::guess(
            format!(
                "{}: partition {partition} (drafted by rlctl init --discover)",
                wishes.name
            ),
            format!("its nodes could not be read ({why}): describe the cluster"),
        ),
    };
    w.value("description", &description);
}

/// A line that fits in a comment: what a program printed may carry anything.
fn one_line(text: &str) -> String {
    text.replace(|c: char| c.is_control(), " ")
}

/// `[slurm]`: the account, the partition, how GPUs are asked for, and the QOS the partition
/// takes.
fn slurm_table(
    w: &mut Writer,
    facts: &Facts,
    wishes: &Wishes,
    chosen: Sourced<String>,
    notes: &mut Vec<String>,
) {
    let partition = chosen.value.as_str();
    let limits = facts.limits.iter().find(|p| p.name == partition);
    w.table("slurm");
    w.value("account", &account(facts, wishes, partition));
    w.value("partition", &chosen);
    w.value(
        "gpu_request",
        &Sourced::guess(
            "gres".to_owned(),
            "every SLURM takes --gres=gpu:N; some sites (JUPITER) ask for \"gpus-per-node\"",
        ),
    );
    for q in qos(facts, wishes, partition, limits, notes) {
        w.array_table("slurm.qos");
        w.value("name", &q.name);
        w.value("max_wall", &q.max_wall);
        w.raw_value("max_nodes", &q.max_nodes);
        if let Some(submit) = &q.max_submit {
            w.raw_value("max_submit_jobs", submit);
        }
    }
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
