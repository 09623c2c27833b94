//! Cluster profiles: the one file a different user or cluster edits, resolved into typed paths.

use crate::error::{Error, Result, closest};
pub use crate::preset::container::{Container, ImageKind, Runtime};
use crate::preset::container::{ContainerFile, Paths};
pub use crate::preset::network::{HeadAddress, Network};
pub use crate::preset::node::{Arch, GpuRequest};
pub use crate::preset::storage::Purge;
use crate::preset::storage::PurgeFile;
use crate::preset::walltime::Walltime;
use crate::util::fs::Folder;
use crate::util::names::{PLAIN_WORD, is_env_name, is_plain_word};
use camino::{Utf8Component, Utf8Path, Utf8PathBuf};
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Root {
    Work,
    Scratch,
}

impl Root {
    pub fn as_str(self) -> &'static str {
        match self {
            Root::Work => "work",
            Root::Scratch => "scratch",
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct StorageFile {
    work: String,
    scratch: String,
    checkpoints_on: Root,
    checkpoint_root: String,
    run_root: String,
    data_root: String,
    hf_home: String,
    home: String,
    cache_root: String,
    ray_tmp_root: String,
    #[serde(default = "default_min_free_gib")]
    min_free_gib: u64,
    /// The folders compute nodes can see; empty: all of them.
    #[serde(default)]
    compute_visible: Vec<String>,
    #[serde(default)]
    purge: Vec<PurgeFile>,
}

fn default_min_free_gib() -> u64 {
    100
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
    pub account: String,
    pub partition: String,
    pub qos: Vec<Qos>,
    /// See `SlurmFile::requeue_grace_s`.
    pub requeue_grace_s: u64,
    /// See `SlurmFile::startup_s`.
    pub startup_s: u64,
    pub gpu_request: GpuRequest,
    pub reservation: Option<String>,
    pub node: Node,
    pub storage: Storage,
    pub software: Software,
    pub container: Container,
    pub network: Network,
    pub check: CheckSettings,
    pub watch: Watch,
    pub env: Vec<(String, String)>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Storage {
    pub work: Utf8PathBuf,
    pub scratch: Utf8PathBuf,
    pub checkpoints_on: Root,
    pub checkpoint_root: Utf8PathBuf,
    pub run_root: Utf8PathBuf,
    pub data_root: Utf8PathBuf,
    pub hf_home: Utf8PathBuf,
    pub home: Utf8PathBuf,
    pub cache_root: Utf8PathBuf,
    /// Node-local folder for Ray's per-job temp dir: short, for the 107-byte socket path.
    pub ray_tmp_root: Utf8PathBuf,
    /// `rlctl doctor` warns below this much free space where checkpoints go.
    pub min_free_gib: u64,
    /// Every folder a job touches must be under one of these (JUPITER's nodes see `/e`, not
    /// `/p`); empty when the nodes see every folder the login node does.
    pub compute_visible: Vec<Utf8PathBuf>,
    /// File systems that delete old files: no checkpoint folder of a longer run goes there.
    pub purge: Vec<Purge>,
}

impl Storage {
    /// The volume `checkpoints_on` names, which checkpoints and run folders must be under, and
    /// the one they must never be on (scratch, when it is work): a quota-full scratch kills
    /// runs mid-write. The profile's check and preflight both ask here.
    pub fn checkpoint_volume(&self) -> (&Utf8Path, Option<&Utf8Path>) {
        match self.checkpoints_on {
            Root::Work => (&self.work, Some(&self.scratch)),
            Root::Scratch => (&self.scratch, None),
        }
    }
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

    /// Resolves a parsed profile; `file` names it in errors.
    pub fn resolve(name: &str, file: &str, profile: ProfileFile) -> Result<Cluster> {
        let invalid = |message: String| Error::PresetInvalid {
            file: file.to_owned(),
            message,
        };
        let vars = Vars {
            file,
            vars: &profile.vars,
        };
        // Paths reach scripts quoted as one word, but also `#SBATCH` lines, `PATH`-like lists
        // and singularity's comma lists, none of which can carry a control character.
        let path = |field: &str, text: &str| -> Result<Utf8PathBuf> {
            let expanded = vars.expand(text, &mut Vec::new())?;
            if expanded.contains(char::is_control) {
                return Err(invalid(format!(
                    "{field} = {expanded:?} holds a newline or another control character: write the path on one line"
                )));
            }
            absolute(&expanded)
                .ok_or_else(|| invalid(format!("{field} = `{expanded}` must be an absolute path")))
        };
        // A folder that becomes one entry of a `:`-separated list (PATH, PYTHONPATH) or of
        // singularity's `,`-separated --bind list must not hold that list's separator.
        let list_entry = |field: &str, text: &str, separators: &str| -> Result<Utf8PathBuf> {
            let dir = path(field, text)?;
            match dir.as_str().chars().find(|c| separators.contains(*c)) {
                Some(c) => Err(invalid(format!(
                    "{field} = `{dir}` holds `{c}`, which would split it in two where the job uses it: choose a folder without `{c}`"
                ))),
                None => Ok(dir),
            }
        };
        // Words that go on `#SBATCH` lines and into commands unquoted by sbatch itself.
        let word = |field: &str, text: &str| -> Result<()> {
            if is_plain_word(text) {
                Ok(())
            } else {
                Err(invalid(format!("{field} = {text:?}: {PLAIN_WORD}")))
            }
        };
        word("slurm.account", &profile.slurm.account)?;
        word("slurm.partition", &profile.slurm.partition)?;
        word("node.mem", &profile.node.mem)?;
        word("node.gpu_type", &profile.node.gpu_type)?;
        // A network interface name, as `ip addr show dev` and NCCL_SOCKET_IFNAME take it.
        word("node.interconnect", &profile.node.interconnect)?;
        for q in &profile.slurm.qos {
            word("slurm.qos.name", &q.name)?;
            for other in &q.stands_for {
                word("slurm.qos.stands_for", other)?;
                let taken = (profile.slurm.qos.iter()).find(|p| {
                    p.name == *other || (p.name != q.name && p.stands_for.contains(other))
                });
                if let Some(taken) = taken {
                    return Err(invalid(format!(
                        "slurm.qos `{}` stands for `{other}`, which QOS `{}` already is or stands for: keep one",
                        q.name, taken.name
                    )));
                }
            }
        }
        if let Some(reservation) = &profile.slurm.reservation {
            word("slurm.reservation", reservation)?;
        }
        if profile.node.cpus_per_task == Some(0) {
            return Err(invalid(
                "node.cpus_per_task = 0 would give the job no CPU: give the count, or leave it out for node.cpus".into(),
            ));
        }
        let network = &profile.network;
        match (network.head_address, network.hostname_suffix.is_empty()) {
            (HeadAddress::HostnameSuffix, true) => {
                return Err(invalid(
                    "network.head_address = \"hostname_suffix\" needs network.hostname_suffix, the text that makes a \
                     hostname the interconnect's name (JUWELS Booster: \"i\", jwb0001 -> jwb0001i)"
                        .into(),
                ));
            }
            (HeadAddress::HostnameSuffix, false) => {
                word("network.hostname_suffix", &network.hostname_suffix)?
            }
            (_, false) => {
                return Err(invalid(
                    "network.hostname_suffix is read only with head_address = \"hostname_suffix\": set that, or drop the suffix".into(),
                ));
            }
            (_, true) => {}
        }
        if profile.description.contains(char::is_control) {
            return Err(invalid(
                "description holds a newline or another control character: write it on one line"
                    .into(),
            ));
        }
        let s = &profile.storage;
        let storage = Storage {
            work: path("storage.work", &s.work)?,
            scratch: path("storage.scratch", &s.scratch)?,
            checkpoints_on: s.checkpoints_on,
            checkpoint_root: path("storage.checkpoint_root", &s.checkpoint_root)?,
            run_root: path("storage.run_root", &s.run_root)?,
            data_root: path("storage.data_root", &s.data_root)?,
            // Passed into the container with --env (HF_HOME, VLLM_CACHE_ROOT, ...).
            hf_home: list_entry("storage.hf_home", &s.hf_home, ",")?,
            home: path("storage.home", &s.home)?,
            cache_root: list_entry("storage.cache_root", &s.cache_root, ",")?,
            ray_tmp_root: path("storage.ray_tmp_root", &s.ray_tmp_root)?,
            min_free_gib: s.min_free_gib,
            compute_visible: (s.compute_visible.iter())
                .map(|dir| path("storage.compute_visible", dir))
                .collect::<Result<_>>()?,
            purge: (s.purge.iter())
                .map(|p| match p.days {
                    0 => Err(invalid(format!(
                        "storage.purge `{}`: days = 0 would delete files at once; give the site's window in days",
                        p.path
                    ))),
                    days => Ok(Purge {
                        path: path("storage.purge.path", &p.path)?,
                        days,
                    }),
                })
                .collect::<Result<_>>()?,
        };
        // The run folder holds the job's log, named by `#SBATCH --output`, which SLURM reads
        // itself: no quoting there.
        if (storage.run_root.as_str())
            .contains(|c: char| c.is_whitespace() || "%'\"\\$`".contains(c))
        {
            return Err(invalid(format!(
                "storage.run_root = `{}`: SLURM's --output cannot carry spaces, quotes, `\\`, `$`, `%` or backticks; choose a folder without them",
                storage.run_root
            )));
        }
        let (required, forbidden) = storage.checkpoint_volume();
        for (field, dir) in [
            ("storage.checkpoint_root", &storage.checkpoint_root),
            ("storage.run_root", &storage.run_root),
        ] {
            let on_forbidden = forbidden.is_some_and(|f| dir.starts_with(f));
            if !dir.starts_with(required) || on_forbidden {
                return Err(invalid(format!(
                    "{field} = `{dir}` must be under the checkpoint root `{required}` (storage.checkpoints_on = \"{}\"){}",
                    storage.checkpoints_on.as_str(),
                    if on_forbidden {
                        ", never on scratch"
                    } else {
                        ""
                    }
                )));
            }
        }
        // `clean` removes a run's checkpoint folder whole: a run folder (scripts, the job's log)
        // inside it would go too, and a checkpoint folder inside the run root would be taken
        // for run folders. Judged where they really are.
        let (checkpoints, runs) = (
            Folder::of(&storage.checkpoint_root),
            Folder::of(&storage.run_root),
        );
        if checkpoints.is_within(&runs) || runs.is_within(&checkpoints) {
            return Err(invalid(format!(
                "storage.checkpoint_root = `{}` and storage.run_root = `{}` nest (resolved: `{}` and `{}`): \
                 `rlctl clean` removes checkpoint folders whole and would take run folders, their scripts \
                 and logs, with them; give them sibling folders, e.g. `{}/checkpoints` and `{}/runs`",
                storage.checkpoint_root,
                storage.run_root,
                checkpoints.path,
                runs.path,
                required,
                required
            )));
        }
        let container = profile.container.resolve(&Paths {
            path: &path,
            list_entry: &list_entry,
            invalid: &invalid,
        })?;
        let mut env = Vec::new();
        for (key, value) in &profile.env {
            let Some(text) = value.as_str() else {
                return Err(invalid(format!("env.{key} must be a string")));
            };
            if !is_env_name(key) {
                return Err(invalid(format!(
                    "env.{key}: not a valid environment variable name"
                )));
            }
            let value = vars.expand(text, &mut Vec::new())?;
            // singularity's --env splits on commas; a newline would end the word on its line.
            if value.contains(|c: char| c == ',' || c.is_control()) {
                return Err(invalid(format!(
                    "env.{key} = {value:?}: a value passed into the container cannot hold a comma, newline or other control character"
                )));
            }
            env.push((key.clone(), value));
        }
        if profile.slurm.qos.is_empty() {
            return Err(invalid("slurm.qos must list at least one QOS".into()));
        }
        if let Some(q) = (profile.slurm.qos.iter()).find(|q| q.max_submit_jobs == Some(0)) {
            return Err(invalid(format!(
                "slurm.qos `{}`: max_submit_jobs = 0 would let no job in; give the limit, or leave it out for none",
                q.name
            )));
        }
        if profile.check.deep_timeout_s == 0 {
            return Err(invalid(
                "check.deep_timeout_s = 0 would kill the deep check at once: give it seconds (default 300)".into(),
            ));
        }
        if profile.watch.stall_floor_s == 0 {
            return Err(invalid(
                "watch.stall_floor_s = 0 would call every running job stalled between two steps: give it seconds (default 600)".into(),
            ));
        }
        let sw = &profile.software;
        // The checkout is PYTHONPATH inside the container, and passed with --env.
        let skyrl = list_entry("software.skyrl", &sw.skyrl, ":,")?;
        let venv = list_entry("software.venv", &sw.venv, ",")?;
        // A bare program name is looked up on PATH; anything else is a path with variables.
        let login_program =
            |field: &str, text: &Option<String>, default: String| -> Result<String> {
                match text {
                    None => Ok(default),
                    Some(t) if !t.contains(['/', '$']) => {
                        word(field, t)?;
                        Ok(t.clone())
                    }
                    Some(t) => Ok(path(field, t)?.into_string()),
                }
            };
        let hf = login_program("software.hf", &sw.hf, "hf".to_owned())?;
        let stage_python = login_program(
            "software.stage_python",
            &sw.stage_python,
            venv.join("bin/python").into_string(),
        )?;
        Ok(Cluster {
            name: name.to_owned(),
            shipped: false,
            description: profile.description,
            account: profile.slurm.account,
            partition: profile.slurm.partition,
            qos: profile.slurm.qos,
            requeue_grace_s: profile.slurm.requeue_grace_s,
            startup_s: profile.slurm.startup_s,
            gpu_request: profile.slurm.gpu_request,
            reservation: profile.slurm.reservation,
            node: profile.node,
            software: Software {
                skyrl,
                venv,
                // Prepended to PATH, and CC/CXX passed with --env.
                gcc_bin: list_entry("software.gcc_bin", &sw.gcc_bin, ":,")?,
                schema: sw.schema.clone(),
                hf,
                stage_python,
            },
            storage,
            container,
            network: profile.network.clone(),
            check: profile.check.clone(),
            watch: profile.watch.clone(),
            env,
        })
    }
}

/// The profile's own `[vars]`, plus `${env:NAME}` for the submitting shell's environment.
struct Vars<'a> {
    file: &'a str,
    vars: &'a BTreeMap<String, String>,
}

impl Vars<'_> {
    fn expand(&self, text: &str, stack: &mut Vec<String>) -> Result<String> {
        let invalid = |message: String| Error::PresetInvalid {
            file: self.file.to_owned(),
            message,
        };
        let mut out = String::new();
        let mut rest = text;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let end = after
                .find('}')
                .ok_or_else(|| invalid(format!("`{text}`: `${{` without a closing `}}`")))?;
            let name = &after[..end];
            out.push_str(&self.lookup(name, text, stack)?);
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }

    fn lookup(&self, name: &str, text: &str, stack: &mut Vec<String>) -> Result<String> {
        let invalid = |message: String| Error::PresetInvalid {
            file: self.file.to_owned(),
            message,
        };
        if let Some(env_name) = name.strip_prefix("env:") {
            return std::env::var(env_name).map_err(|_| {
                invalid(format!(
                    "`{text}` uses ${{{name}}}, but `{env_name}` is not set in the environment"
                ))
            });
        }
        let Some(value) = self.vars.get(name) else {
            let hint = closest(name, self.vars.keys().map(String::as_str))
                .map(|s| format!(": did you mean `{s}`?"))
                .unwrap_or_else(|| "; define it under [vars]".to_owned());
            return Err(invalid(format!(
                "`{text}` uses the unknown variable `{name}`{hint}"
            )));
        };
        if stack.iter().any(|s| s == name) {
            stack.push(name.to_owned());
            return Err(invalid(format!(
                "variables refer to each other in a circle: {}",
                stack.join(" -> ")
            )));
        }
        stack.push(name.to_owned());
        let expanded = self.expand(value, stack)?;
        stack.pop();
        Ok(expanded)
    }
}

/// An absolute path with `.` and `..` removed, without touching the filesystem.
pub fn absolute(text: &str) -> Option<Utf8PathBuf> {
    let path = Utf8Path::new(text);
    if !path.is_absolute() {
        return None;
    }
    let mut out = Utf8PathBuf::from("/");
    for component in path.components() {
        match component {
            Utf8Component::Normal(part) => out.push(part),
            Utf8Component::ParentDir => {
                out.pop();
            }
            _ => {}
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_normalizes_dot_dot_lexically() {
        assert_eq!(absolute("/w/a/../b/./c").unwrap(), "/w/b/c");
        assert_eq!(absolute("/../x").unwrap(), "/x");
        assert!(absolute("relative/x").is_none());
    }
}
