//! Cluster profiles: the one file a different user or cluster edits, resolved into typed paths.

use crate::error::{Error, Result};
use crate::preset::container::ContainerFile;
pub use crate::preset::container::{Container, ImageKind, Runtime};
use crate::preset::fields::Fields;
pub use crate::preset::fields::absolute;
pub use crate::preset::network::{HeadAddress, Network};
pub use crate::preset::node::{Arch, GpuRequest};
use crate::preset::storage::StorageFile;
pub use crate::preset::storage::{Purge, Root, Storage};
use crate::preset::walltime::Walltime;
use crate::util::names::is_env_name;
use camino::Utf8PathBuf;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileFile {
    description: String,
    #[serde(default)]
    vars: BTreeMap<String, String>,
    slurm: SlurmFile,
    node: Node,
    storage: StorageFile,
    software: SoftwareFile,
    container: ContainerFile,
    #[serde(default)]
    network: Network,
    #[serde(default)]
    check: CheckSettings,
    #[serde(default)]
    watch: Watch,
    #[serde(default)]
    env: toml::Table,
}

/// How `status`, `watch` and `tend` follow running jobs.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Watch {
    /// Seconds without a new train step after which a running job is stalled, whatever its
    /// pace (5 × its median s/step when that is longer): a hung trainer (a wedged NCCL
    /// collective, a stuck Ray actor) that `tend` cancels and resumes.
    #[serde(default = "default_stall_floor")]
    pub stall_floor_s: u64,
    /// Every `tend` pass uploads the runs' offline W&B runs, as `tend --sync-wandb` does.
    #[serde(default)]
    pub sync_wandb: bool,
}

impl Default for Watch {
    fn default() -> Self {
        Watch {
            stall_floor_s: default_stall_floor(),
            sync_wandb: false,
        }
    }
}

/// Ten minutes: longer than any step's checkpoint save or eval pause at the sizes rlctl runs.
fn default_stall_floor() -> u64 {
    600
}

/// How preflight runs on this cluster.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CheckSettings {
    /// Run the deep check (SkyRL's own composition and validate_cfg, in the container) on
    /// `check`, `launch` and `grid` without `--deep`; `--no-deep` skips it.
    #[serde(default)]
    pub deep: bool,
    /// Seconds the deep check may take before it is killed: torch's imports alone take
    /// minutes on a busy Lustre.
    #[serde(default = "default_deep_timeout")]
    pub deep_timeout_s: u64,
}

impl Default for CheckSettings {
    fn default() -> Self {
        CheckSettings {
            deep: false,
            deep_timeout_s: default_deep_timeout(),
        }
    }
}

fn default_deep_timeout() -> u64 {
    300
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct SlurmFile {
    account: String,
    partition: String,
    qos: Vec<Qos>,
    /// `--until-done`: seconds before a slot's time limit that the job stops the trainer and
    /// requeues itself (SkyRL needs no time to save: it resumes from its last checkpoint).
    #[serde(default = "default_requeue_grace")]
    requeue_grace_s: u64,
    /// Seconds from a job's start to its first training step (container, Ray, model loading):
    /// what `estimate` and the `slots` check add to every slot.
    #[serde(default = "default_startup")]
    startup_s: u64,
    /// How the job asks for its GPUs: `gres` (`--gres=gpu:N`) or `gpus-per-node`.
    #[serde(default)]
    gpu_request: GpuRequest,
    /// A reservation every job runs in (`--reservation`).
    #[serde(default)]
    reservation: Option<String>,
}

/// The canary's vLLM engines alone take about two minutes to start on Leonardo; four minutes
/// leaves room for a slow Lustre.
fn default_startup() -> u64 {
    240
}

fn default_requeue_grace() -> u64 {
    300
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Qos {
    pub name: String,
    pub max_wall: Walltime,
    pub max_nodes: u32,
    /// How many jobs one user may have submitted (pending or running) in this QOS; sbatch
    /// refuses the next one. `grid --all` submits only what fits and says how to submit the
    /// rest. Absent: no such limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_submit_jobs: Option<u32>,
    /// Other clusters' QOS names a preset may ask for that this one takes on this cluster
    /// (presets name Leonardo's `boost_qos_dbg`; JUPITER runs such jobs in `normal`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stands_for: Vec<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Node {
    pub gpus: u32,
    pub cpus: u32,
    pub mem: String,
    pub gpu_type: String,
    pub gpu_mem_gib: u32,
    /// vLLM's `gpu_memory_utilization` above which this GPU runs out of memory (0.85 on the
    /// A100-64GB: 0.90 dies in eval).
    pub max_gpu_memory_utilization: f64,
    /// Policy size (billions of parameters) from which one node runs out of memory.
    pub max_params_b_one_node: f64,
    pub interconnect: String,
    /// The CPU architecture the venv, image and wheels must be built for.
    #[serde(default)]
    pub arch: Arch,
    /// `--cpus-per-task` of the job's one task a node (default: `cpus`, which Ray gets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus_per_task: Option<u32>,
}

impl Node {
    /// What the job asks of SLURM for its one task a node.
    pub fn cpus_per_task(&self) -> u32 {
        self.cpus_per_task.unwrap_or(self.cpus)
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct SoftwareFile {
    skyrl: String,
    venv: String,
    gcc_bin: String,
    /// The SkyRL key list (presets/schemas/NAME.keys) of the checkout this cluster runs;
    /// without it, the checkout's own config is read.
    #[serde(default)]
    schema: Option<String>,
    /// The Hugging Face CLI `rlctl stage` downloads models with on the login node.
    #[serde(default)]
    hf: Option<String>,
    /// The Python `rlctl stage` runs SkyRL's dataset scripts with (default: the venv's).
    #[serde(default)]
    stage_python: Option<String>,
}

/// A profile with every variable expanded and every path absolute and normalized.
#[derive(Debug, Clone, Serialize)]
pub struct Cluster {
    pub name: String,
    /// The shipped profile as it is, not one `rlctl init` (or you) wrote: its account and
    /// folders are its author's. See [`crate::preset::Library::cluster`].
    #[serde(skip)]
    pub shipped: bool,
    pub description: String,
    #[serde(flatten)]
    pub sbatch: SbatchHeader,
    pub qos: Vec<Qos>,
    /// See `SlurmFile::requeue_grace_s`.
    pub requeue_grace_s: u64,
    /// See `SlurmFile::startup_s`.
    pub startup_s: u64,
    pub gpu_request: GpuRequest,
    pub node: Node,
    pub storage: Storage,
    pub software: Software,
    pub container: Container,
    pub network: Network,
    pub check: CheckSettings,
    pub watch: Watch,
    pub env: Vec<(String, String)>,
}

/// The profile's `[slurm]` words that every job's `#SBATCH` header carries as they are: a plan's
/// job holds them whole (its `sbatch`, flattened), so a field added here (read in
/// `SlurmFile`, checked in its `validate`) reaches `sbatch.sh.tera` with no other Rust.
#[derive(Debug, Clone, Serialize)]
pub struct SbatchHeader {
    pub account: String,
    pub partition: String,
    /// A reservation every job runs in (`--reservation`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reservation: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Software {
    pub skyrl: Utf8PathBuf,
    pub venv: Utf8PathBuf,
    pub gcc_bin: Utf8PathBuf,
    /// The key list named by the profile; `None`: the checkout's own.
    pub schema: Option<String>,
    /// `hf` on PATH, or a path: the login node's model downloader.
    pub hf: String,
    /// `<venv>/bin/python` unless the profile names another: runs the dataset scripts.
    pub stage_python: String,
}

impl Cluster {
    pub fn qos(&self, name: &str) -> Result<&Qos> {
        self.qos
            .iter()
            .find(|q| q.name == name)
            .ok_or_else(|| Error::unknown("QOS", name, self.qos.iter().map(|q| q.name.as_str())))
    }

    /// The QOS a preset's or flag's name asks for here: the one of that name, else the one that
    /// stands for it (`stands_for`).
    pub fn qos_for(&self, name: &str) -> Result<&Qos> {
        match self
            .qos
            .iter()
            .find(|q| q.stands_for.iter().any(|s| s == name))
        {
            Some(qos) if !self.qos.iter().any(|q| q.name == name) => Ok(qos),
            _ => self.qos(name),
        }
    }

    /// Resolves a parsed profile, one table at a time; `file` names it in errors.
    pub fn resolve(name: &str, file: &str, profile: ProfileFile) -> Result<Cluster> {
        let f = Fields::new(file, &profile.vars);
        profile.slurm.validate(&f)?;
        profile.node.validate(&f)?;
        profile.network.validate(&f)?;
        if profile.description.contains(char::is_control) {
            return Err(f.invalid(
                "description holds a newline or another control character: write it on one line"
                    .into(),
            ));
        }
        let storage = profile.storage.resolve(&f)?;
        let container = profile.container.resolve(&f)?;
        let env = resolve_env(&profile.env, &f)?;
        profile.check.validate(&f)?;
        profile.watch.validate(&f)?;
        let software = profile.software.resolve(&f)?;
        Ok(Cluster {
            name: name.to_owned(),
            shipped: false,
            description: profile.description,
            sbatch: SbatchHeader {
                account: profile.slurm.account,
                partition: profile.slurm.partition,
                reservation: profile.slurm.reservation,
            },
            qos: profile.slurm.qos,
            requeue_grace_s: profile.slurm.requeue_grace_s,
            startup_s: profile.slurm.startup_s,
            gpu_request: profile.slurm.gpu_request,
            node: profile.node,
            software,
            storage,
            container,
            network: profile.network,
            check: profile.check,
            watch: profile.watch,
            env,
        })
    }
}

impl SlurmFile {
    /// The words that reach `#SBATCH` lines, and QOS that each stand for names no other one has.
    fn validate(&self, f: &Fields) -> Result<()> {
        f.word("slurm.account", &self.account)?;
        f.word("slurm.partition", &self.partition)?;
        for q in &self.qos {
            f.word("slurm.qos.name", &q.name)?;
            for other in &q.stands_for {
                f.word("slurm.qos.stands_for", other)?;
                let taken = (self.qos.iter()).find(|p| {
                    p.name == *other || (p.name != q.name && p.stands_for.contains(other))
                });
                if let Some(taken) = taken {
                    return Err(f.invalid(format!(
                        "slurm.qos `{}` stands for `{other}`, which QOS `{}` already is or stands for: keep one",
                        q.name, taken.name
                    )));
                }
            }
        }
        if let Some(reservation) = &self.reservation {
            f.word("slurm.reservation", reservation)?;
        }
        if self.qos.is_empty() {
            return Err(f.invalid("slurm.qos must list at least one QOS".into()));
        }
        if let Some(q) = (self.qos.iter()).find(|q| q.max_submit_jobs == Some(0)) {
            return Err(f.invalid(format!(
                "slurm.qos `{}`: max_submit_jobs = 0 would let no job in; give the limit, or leave it out for none",
                q.name
            )));
        }
        Ok(())
    }
}

impl Node {
    /// Words that reach `#SBATCH` lines and the network setup, and at least one CPU a task.
    fn validate(&self, f: &Fields) -> Result<()> {
        f.word("node.mem", &self.mem)?;
        f.word("node.gpu_type", &self.gpu_type)?;
        // A network interface name, as `ip addr show dev` and NCCL_SOCKET_IFNAME take it.
        f.word("node.interconnect", &self.interconnect)?;
        if self.cpus_per_task == Some(0) {
            return Err(f.invalid(
                "node.cpus_per_task = 0 would give the job no CPU: give the count, or leave it out for node.cpus".into(),
            ));
        }
        Ok(())
    }
}

impl CheckSettings {
    /// A deep check that has time to run.
    fn validate(&self, f: &Fields) -> Result<()> {
        if self.deep_timeout_s == 0 {
            return Err(f.invalid(
                "check.deep_timeout_s = 0 would kill the deep check at once: give it seconds (default 300)".into(),
            ));
        }
        Ok(())
    }
}

impl Watch {
    /// A stall floor longer than the pause between two steps.
    fn validate(&self, f: &Fields) -> Result<()> {
        if self.stall_floor_s == 0 {
            return Err(f.invalid(
                "watch.stall_floor_s = 0 would call every running job stalled between two steps: give it seconds (default 600)".into(),
            ));
        }
        Ok(())
    }
}

impl SoftwareFile {
    /// The checkout, venv and compilers as folders the job's lists can hold, and the login
    /// node's programs as names on PATH or paths.
    fn resolve(&self, f: &Fields) -> Result<Software> {
        // The checkout is PYTHONPATH inside the container, and passed with --env.
        let skyrl = f.list_entry("software.skyrl", &self.skyrl, ":,")?;
        let venv = f.list_entry("software.venv", &self.venv, ",")?;
        let hf = login_program(f, "software.hf", self.hf.as_deref(), "hf".to_owned())?;
        let stage_python = login_program(
            f,
            "software.stage_python",
            self.stage_python.as_deref(),
            venv.join("bin/python").into_string(),
        )?;
        Ok(Software {
            skyrl,
            venv,
            // Prepended to PATH, and CC/CXX passed with --env.
            gcc_bin: f.list_entry("software.gcc_bin", &self.gcc_bin, ":,")?,
            schema: self.schema.clone(),
            hf,
            stage_python,
        })
    }
}

/// A program the login node runs: a bare name is looked up on PATH; anything else is a path
/// with variables. `None`: `default`.
fn login_program(f: &Fields, field: &str, text: Option<&str>, default: String) -> Result<String> {
    match text {
        None => Ok(default),
        Some(t) if !t.contains(['/', '$']) => {
            f.word(field, t)?;
            Ok(t.to_owned())
        }
        Some(t) => Ok(f.path(field, t)?.into_string()),
    }
}

/// The `[env]` table: string values, expanded, under valid names, that singularity's `--env`
/// passes whole.
fn resolve_env(table: &toml::Table, f: &Fields) -> Result<Vec<(String, String)>> {
    let mut env = Vec::new();
    for (key, value) in table {
        let Some(text) = value.as_str() else {
            return Err(f.invalid(format!("env.{key} must be a string")));
        };
        if !is_env_name(key) {
            return Err(f.invalid(format!("env.{key}: not a valid environment variable name")));
        }
        let value = f.expand(text)?;
        // singularity's --env splits on commas; a newline would end the word on its line.
        if value.contains(|c: char| c == ',' || c.is_control()) {
            return Err(f.invalid(format!(
                "env.{key} = {value:?}: a value passed into the container cannot hold a comma, newline or other control character"
            )));
        }
        env.push((key.clone(), value));
    }
    Ok(env)
}
