//! Preflight: every lesson that cost a run, checked on the resolved plan before anything is
//! written, submitted or deleted. Every problem is reported at once.

pub mod deep;
pub mod model_size;
pub mod site;
pub mod skyrl_rules;
pub mod slots;
mod staged;

use crate::check::skyrl_rules::Values;
use crate::error::{Error, Result};
use crate::plan::env::LEAKY_VARS;
use crate::plan::layers::TEACHER_MAX_MODEL_LEN;
use crate::plan::{Plan, Resume};
use crate::preset::Library;
use crate::preset::cluster::Cluster;
use crate::schema::Schema;
use crate::schema::knob::Scalar;
use crate::util::fs::resolve;
use camino::Utf8Path;
use std::fmt;
use std::time::Duration;

/// A check that may be turned into a warning, by name only: there is no blanket `--force`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Allow {
    /// Overrides SkyRL's key list does not know, or values of another type than its default.
    OffSchema,
    /// vLLM's gpu_memory_utilization above the cluster's ceiling.
    GpuMemAboveCeiling,
    /// A policy too big for one node, on one node.
    ModelTooBigForOneNode,
}

impl Allow {
    /// Every check that may be allowed: its flag value and what it relaxes.
    pub const ALL: [(Allow, &'static str, &'static str); 3] = [
        (
            Allow::OffSchema,
            "off-schema",
            "Overrides SkyRL's key list does not know, or values of another type than its default",
        ),
        (
            Allow::GpuMemAboveCeiling,
            "gpu-mem-above-ceiling",
            "vLLM's gpu_memory_utilization above the cluster's ceiling",
        ),
        (
            Allow::ModelTooBigForOneNode,
            "model-too-big-for-one-node",
            "A policy too big for one node, on one node",
        ),
    ];

    /// The check named by its flag value, e.g. `off-schema`.
    pub fn named(name: &str) -> Option<Allow> {
        Allow::ALL.iter().find(|a| a.1 == name).map(|a| a.0)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    Schema,
    SkyrlRules,
    SkyrlDeep,
    WritePath,
    Resume,
    Offline,
    Gpu,
    Teacher,
    Qos,
    RaySocket,
    EnvLeak,
    Slots,
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Check::Schema => "schema",
            Check::SkyrlRules => "skyrl-rules",
            Check::SkyrlDeep => "skyrl-deep",
            Check::WritePath => "write-path",
            Check::Resume => "resume",
            Check::Offline => "offline",
            Check::Gpu => "gpu",
            Check::Teacher => "teacher",
            Check::Qos => "qos",
            Check::RaySocket => "ray-socket",
            Check::EnvLeak => "env-leak",
            Check::Slots => "slots",
        })
    }
}

#[derive(Debug, Clone)]
pub struct Finding {
    pub check: Check,
    pub message: String,
}

#[derive(Debug, Default)]
pub struct Report {
    pub problems: Vec<Finding>,
    /// Problems the user turned into warnings with `--allow`.
    pub warnings: Vec<Finding>,
    /// Checks that could not run here, and why.
    pub skipped: Vec<Finding>,
    /// What the job will do that the user should know before submitting (e.g. a wipe).
    pub notes: Vec<Finding>,
}

/// The variables that keep a job offline and quiet, with the values they must have.
const OFFLINE_ENV: [(&str, &str); 6] = [
    ("HF_HUB_OFFLINE", "1"),
    ("TRANSFORMERS_OFFLINE", "1"),
    ("WANDB_MODE", "offline"),
    ("RAY_USAGE_STATS_ENABLED", "0"),
    ("VLLM_NO_USAGE_STATS", "1"),
    ("DO_NOT_TRACK", "1"),
];

/// Runs every check on every plan; prints notes, warnings and skipped checks on stderr, and
/// fails with every problem of every plan at once.
pub fn preflight(
    library: &Library,
    cluster: &Cluster,
    allow: &[Allow],
    plans: &[Plan],
    deep: Option<Duration>,
) -> Result<usize> {
    preflight_with(library, cluster, allow, plans, &[], deep)
}

/// [`preflight`], with findings made before it for some plans (`extra[i]` for `plans[i]`), such
/// as the [`slots`] check on their estimates. With `deep` (the time limit of one), each plan
/// the checks in Rust pass is then judged by SkyRL itself ([`deep`]).
pub fn preflight_with(
    library: &Library,
    cluster: &Cluster,
    allow: &[Allow],
    plans: &[Plan],
    extra: &[Report],
    deep: Option<Duration>,
) -> Result<usize> {
    let schema = library.schema(&cluster.software.schema)?;
    let checks = Preflight {
        cluster,
        schema: &schema,
        allow,
    };
    let mut problems = Vec::new();
    let mut skipped = 0;
    let mut said = std::collections::BTreeSet::new();
    let mut dirs = std::collections::BTreeMap::new();
    for (i, plan) in plans.iter().enumerate() {
        let mut report = checks.run(plan);
        if let Some(more) = extra.get(i) {
            report.problems.extend(more.problems.iter().cloned());
            report.warnings.extend(more.warnings.iter().cloned());
        }
        if let Some(limit) = deep
            && report.problems.is_empty()
        {
            match deep::finding(plan, limit) {
                Ok(note) => report.notes.push(note),
                Err(problem) => report.problems.push(problem),
            }
        }
        skipped += report.skipped.len();
        let prefix = if plans.len() > 1 {
            format!("{}: ", plan.target)
        } else {
            String::new()
        };
        for f in &report.problems {
            problems.push(format!("{prefix}[{}] {}", f.check, f.message));
        }
        let stderr = [
            ("warning", &report.warnings),
            ("note", &report.notes),
            ("skipped", &report.skipped),
        ];
        for (kind, findings) in stderr {
            for f in findings.iter() {
                // The same skip for every cell of a grid is said once.
                let line = if kind == "skipped" {
                    format!("[{}] {}", f.check, f.message)
                } else {
                    format!("{prefix}[{}] {}", f.check, f.message)
                };
                if said.insert(format!("{kind}{line}")) {
                    crate::say!("rlctl: {kind}: {line}");
                }
            }
        }
        // Judged where the folders really are: two links to one folder are one folder.
        let real = resolve(&plan.paths.checkpoint_dir);
        if let Some(other) = dirs.insert(real.clone(), plan.target.clone()) {
            problems.push(format!(
                "[resume] {} and {other} would share the checkpoint folder `{real}`: give one of them its own --job-name",
                plan.target
            ));
        }
    }
    if problems.is_empty() {
        return Ok(skipped);
    }
    Err(Error::Preflight {
        targets: plans.iter().map(|p| p.target.clone()).collect(),
        problems,
    })
}

/// The `schema` checks alone on every plan ([`Preflight::run_schema`]), reported as
/// [`preflight`] reports: warnings on stderr, every problem in one error (exit 1).
pub fn preflight_schema(
    library: &Library,
    cluster: &Cluster,
    allow: &[Allow],
    plans: &[Plan],
) -> Result<()> {
    let schema = library.schema(&cluster.software.schema)?;
    let checks = Preflight {
        cluster,
        schema: &schema,
        allow,
    };
    let mut problems = Vec::new();
    for plan in plans {
        let report = checks.run_schema(plan);
        let prefix = match plans.len() {
            1 => String::new(),
            _ => format!("{}: ", plan.target),
        };
        for f in &report.warnings {
            crate::say!("rlctl: warning: {prefix}[{}] {}", f.check, f.message);
        }
        for f in &report.problems {
            problems.push(format!("{prefix}[{}] {}", f.check, f.message));
        }
    }
    if problems.is_empty() {
        return Ok(());
    }
    Err(Error::Preflight {
        targets: plans.iter().map(|p| p.target.clone()).collect(),
        problems,
    })
}

/// Longest Ray socket path under a job's temp dir, past the temp dir itself:
/// `/r<10-digit job id>w<worker>/session_<YYYY-MM-DD_HH-MM-SS_ffffff>_<7-digit pid>/sockets/plasma_store`.
const RAY_SOCKET_SUFFIX: &str =
    "/r4294967295/session_2026-11-30_10-49-01_123456_4194304/sockets/plasma_store";
const UNIX_SOCKET_MAX: usize = 107;

pub struct Preflight<'a> {
    pub cluster: &'a Cluster,
    pub schema: &'a Schema,
    pub allow: &'a [Allow],
}

/// One raw finding before `--allow` sorts it: the check, the flag that may allow it, the message.
type Raw = (Check, Option<Allow>, String);

impl Preflight<'_> {
    pub fn run(&self, plan: &Plan) -> Report {
        let mut report = Report::default();
        let mut found: Vec<Raw> = self.schema_family(plan);
        let values = Values {
            plan,
            schema: self.schema,
            hf_cache: &self.cluster.storage.hf_home,
        };
        for message in skyrl_rules::check(&values) {
            found.push((Check::SkyrlRules, None, message));
        }
        for message in self.write_paths(plan) {
            found.push((Check::WritePath, None, message));
        }
        self.gpu(plan, &values, &mut found);
        if let Some(message) = teacher_length(plan, &values) {
            found.push((Check::Teacher, None, message));
        }
        for message in self.qos(plan) {
            found.push((Check::Qos, None, message));
        }
        if let Some(message) = ray_socket(&plan.paths.ray_tmp_root) {
            found.push((Check::RaySocket, None, message));
        }
        for (key, _) in &plan.env {
            if LEAKY_VARS.contains(&key.as_str()) {
                found.push((
                    Check::EnvLeak,
                    None,
                    format!("the cluster profile's [env] sets {key}, which rlctl clears or sets per job: remove it"),
                ));
            }
        }
        for message in self.offline_env(plan) {
            found.push((Check::Offline, None, message));
        }
        if self.cluster.storage.work.is_dir() {
            for message in staged::files(&values, &self.cluster.storage.hf_home) {
                found.push((Check::Offline, None, message));
            }
            self.resume(plan, &mut found, &mut report.notes);
        } else {
            report.skipped.push(Finding {
                check: Check::Offline,
                message: format!(
                    "`{}` does not exist on this machine: the model, data and existing-checkpoint checks did not run",
                    self.cluster.storage.work
                ),
            });
        }
        self.sort(found, &mut report);
        report
    }

    /// The `schema` check family: every knob against SkyRL's key list and its types.
    fn schema_family(&self, plan: &Plan) -> Vec<Raw> {
        (plan.knobs.iter())
            .filter_map(|knob| self.schema.check(knob).err())
            .map(|message| (Check::Schema, Some(Allow::OffSchema), message))
            .collect()
    }

    /// Only the [`Preflight::schema_family`], for commands that read the knobs without
    /// submitting them (`estimate`, `stage`): a misspelt key is refused as `check` refuses it.
    pub fn run_schema(&self, plan: &Plan) -> Report {
        let mut report = Report::default();
        self.sort(self.schema_family(plan), &mut report);
        report
    }

    /// Problems, or warnings where `--allow` names their check.
    fn sort(&self, found: Vec<Raw>, report: &mut Report) {
        for (check, allow, message) in found {
            let finding = Finding { check, message };
            match allow {
                Some(a) if self.allow.contains(&a) => report.warnings.push(finding),
                _ => report.problems.push(finding),
            }
        }
    }

    /// Checkpoints, exports and the run folder must resolve, symlinks followed, onto the root
    /// the profile names, never onto scratch: a quota-full scratch kills runs mid-write.
    fn write_paths(&self, plan: &Plan) -> Vec<String> {
        let storage = &self.cluster.storage;
        let (root, forbidden) = storage.checkpoint_volume();
        let root = resolve(root);
        let forbidden = forbidden.map(resolve);
        let mut problems = Vec::new();
        for (what, path) in [
            ("trainer.ckpt_path", &plan.paths.ckpt_path),
            ("trainer.export_path", &plan.paths.export_path),
            ("the run folder", &plan.paths.run_dir),
        ] {
            let real = resolve(path);
            let on_forbidden = forbidden.as_ref().is_some_and(|f| real.starts_with(f));
            if on_forbidden || !real.starts_with(&root) {
                let via = if real == *path {
                    String::new()
                } else {
                    format!(" resolves to `{real}`, which")
                };
                problems.push(format!(
                    "{what} `{path}`{via} is {} `{root}`: checkpoints written there fail mid-run when the quota fills; \
                     make the folder (or the symlink on its way) point under `{root}`",
                    if on_forbidden { "on scratch, not under" } else { "not under" }
                ));
            }
        }
        problems
    }

    fn gpu(&self, plan: &Plan, values: &Values, found: &mut Vec<Raw>) {
        let node = &self.cluster.node;
        let teacher = values
            .get("teacher.model_path")
            .filter(|m| *m != Scalar::Null);
        let mut utilizations = vec!["generator.gpu_memory_utilization"];
        if teacher.is_some() {
            utilizations.push("teacher.gpu_memory_utilization");
        }
        for key in utilizations {
            if let Some(u) = values.get(key).and_then(|v| v.as_float())
                && u > node.max_gpu_memory_utilization
            {
                found.push((
                        Check::Gpu,
                        Some(Allow::GpuMemAboveCeiling),
                        format!(
                            "`{key}={u}` is above the {} ceiling of {}: vLLM runs out of memory in eval; set `{key}={}`",
                            node.gpu_type, node.max_gpu_memory_utilization, node.max_gpu_memory_utilization
                        ),
                    ));
            }
        }
        let hf = &self.cluster.storage.hf_home;
        if let Some(model) = values.get("trainer.policy.model.path")
            && let Some((size, source)) = model_size::estimate(&model, hf)
            && plan.job.nodes == 1
            && size.params_b >= node.max_params_b_one_node
        {
            found.push((
                        Check::Gpu,
                        Some(Allow::ModelTooBigForOneNode),
                        format!(
                            "the policy `{}` has about {:.1}B parameters{} (from {source}): on one node of {} x {} a model \
                             of {}B or more runs out of memory (FSDP backward, weight sync); use --nodes 2",
                            model.as_str().unwrap_or_default(),
                            size.params_b,
                            if size.moe { ", a mixture of experts," } else { "" },
                            node.gpus,
                            node.gpu_type,
                            node.max_params_b_one_node
                        ),
                    ));
        }
        if let Some(teacher) = teacher {
            let tp = values
                .int("teacher.inference_engine_tensor_parallel_size")
                .unwrap_or(1);
            let utilization = values
                .get("teacher.gpu_memory_utilization")
                .and_then(|u| u.as_float())
                .unwrap_or(node.max_gpu_memory_utilization);
            if let Some((size, source)) = model_size::estimate(&teacher, hf) {
                // vLLM may use only `utilization` of each GPU, and the weights must leave room
                // in it for the KV cache.
                let gib = size.bf16_gib();
                let per_gpu = f64::from(node.gpu_mem_gib) * utilization;
                let needed = (gib / per_gpu).ceil() as i64;
                if needed > tp {
                    found.push((
                        Check::Gpu,
                        None,
                        format!(
                            "the teacher `{}` has about {gib:.0} GiB of bf16 weights (from {source}), more than vLLM may use of {tp} GPU(s) ({per_gpu:.0} GiB each at gpu_memory_utilization {utilization}): set \
                             `teacher.inference_engine_tensor_parallel_size={}`",
                            teacher.as_str().unwrap_or_default(),
                            needed.max(2)
                        ),
                    ));
                }
            }
        }
    }

    fn qos(&self, plan: &Plan) -> Vec<String> {
        let Ok(qos) = self.cluster.qos(&plan.job.qos) else {
            return vec![]; // resolving the plan already refused an unknown QOS
        };
        let (time, nodes) = (plan.job.time, plan.job.nodes);
        if time <= qos.max_wall && nodes <= qos.max_nodes {
            return vec![];
        }
        let fits = self
            .cluster
            .qos
            .iter()
            .find(|q| time <= q.max_wall && nodes <= q.max_nodes)
            .map(|q| {
                format!(
                    "use --qos {} (up to {}, {} nodes)",
                    q.name, q.max_wall, q.max_nodes
                )
            })
            .unwrap_or_else(|| {
                let widest = self
                    .cluster
                    .qos
                    .iter()
                    .map(|q| q.max_nodes)
                    .max()
                    .unwrap_or(0);
                let longest = self.cluster.qos.iter().map(|q| q.max_wall).max();
                let mut fixes = Vec::new();
                if nodes > widest {
                    fixes.push(format!("use at most --nodes {widest}"));
                }
                if longest.is_some_and(|l| time > l) {
                    fixes.push("shorten --time and chain jobs (--chain K)".to_owned());
                }
                if fixes.is_empty() {
                    fixes.push("shorten --time or use fewer --nodes".to_owned());
                }
                format!("no QOS of this cluster allows it: {}", fixes.join(" and "))
            });
        let mut over = Vec::new();
        if time > qos.max_wall {
            over.push(format!("--time {time} is over its {} limit", qos.max_wall));
        }
        if nodes > qos.max_nodes {
            over.push(format!(
                "--nodes {nodes} is over its {}-node limit",
                qos.max_nodes
            ));
        }
        vec![format!("QOS {}: {}; {fits}", qos.name, over.join(" and "))]
    }

    fn offline_env(&self, plan: &Plan) -> Vec<String> {
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
        let work = &self.cluster.storage.work;
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

    /// A fresh start over existing checkpoints mixes two runs; only --resume latest or --wipe
    /// say what the user wants.
    fn resume(&self, plan: &Plan, found: &mut Vec<Raw>, notes: &mut Vec<Finding>) {
        let steps = global_steps(&plan.paths.ckpt_path);
        if steps.is_empty() {
            return;
        }
        let listing = steps.join(", ");
        if plan.wipe {
            notes.push(Finding {
                check: Check::Resume,
                message: format!(
                    "--wipe: the job will delete {listing} (and latest_ckpt_global_step.txt) in `{}`{} before it starts",
                    resolve(&plan.paths.ckpt_path),
                    via_link(&plan.paths.ckpt_path)
                ),
            });
        } else if plan.resume == Resume::Fresh {
            found.push((
                Check::Resume,
                None,
                format!(
                    "`{}` already holds {listing}: a fresh start would train from step 0 beside them; pass \
                     --resume latest to continue from {}, or --wipe to delete them first",
                    plan.paths.ckpt_path,
                    steps.last().unwrap()
                ),
            ));
        }
    }
}

/// ` (reached through `PATH`)` when symlinks lead `path` elsewhere: what the user wrote is
/// named after where it really is, so a link into another run's folder cannot hide.
fn via_link(path: &Utf8Path) -> String {
    match resolve(path) {
        real if real == path => String::new(),
        _ => format!(" (reached through `{path}`)"),
    }
}

/// A teacher `max_model_len` set by hand must hold what the teacher scores, the prompt and the
/// whole response: vLLM accepts the plan, then refuses the first long sequence mid-run. (Left
/// unset, rlctl derives it from these very lengths.)
fn teacher_length(plan: &Plan, values: &Values) -> Option<String> {
    if matches!(values.get("teacher.model_path"), None | Some(Scalar::Null)) {
        return None;
    }
    let knob = plan
        .knobs
        .iter()
        .rfind(|k| k.path() == TEACHER_MAX_MODEL_LEN)?;
    let max_model_len = knob.value.scalar().as_int()?;
    let prompt = values.int("trainer.max_prompt_length")?;
    let generate = values.int("generator.sampling_params.max_generate_length")?;
    let needed = prompt + generate;
    (max_model_len < needed).then(|| {
        format!(
            "`{}` ({}) is shorter than the sequences the teacher scores: `trainer.max_prompt_length={prompt}` + \
             `generator.sampling_params.max_generate_length={generate}` = {needed}, and the teacher's vLLM refuses \
             longer ones at run time; drop it (rlctl then derives it from the lengths) or set it to at least {needed}",
            knob.hydra_arg(),
            knob.origin
        )
    })
}

fn ray_socket(root: &Utf8Path) -> Option<String> {
    let length = root.as_str().len() + RAY_SOCKET_SUFFIX.len();
    (length > UNIX_SOCKET_MAX).then(|| {
        format!(
            "storage.ray_tmp_root `{root}` makes Ray's socket path `{root}{RAY_SOCKET_SUFFIX}` {length} bytes long, over \
             the {UNIX_SOCKET_MAX}-byte limit of a Unix socket: use a short node-local folder such as /tmp"
        )
    })
}

/// The knobs naming a model a job reads: policy, reference and teacher (`rlctl stage` too).
pub const MODEL_KEYS: [&str; 3] = [
    "trainer.policy.model.path",
    "trainer.ref.model.path",
    "teacher.model_path",
];

/// The knobs naming parquet files a job reads.
pub const DATA_KEYS: [&str; 2] = ["data.train_data", "data.val_data"];

pub use crate::schema::list_items;

/// `global_step_N` folders, in step order.
pub fn global_steps(ckpt_path: &Utf8Path) -> Vec<String> {
    let Ok(entries) = ckpt_path.read_dir_utf8() else {
        return vec![];
    };
    let mut steps: Vec<(u64, String)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_owned();
            let n = name.strip_prefix("global_step_")?.parse().ok()?;
            Some((n, name))
        })
        .collect();
    steps.sort();
    steps.into_iter().map(|(_, name)| name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ray_socket_budget() {
        assert!(ray_socket(Utf8Path::new("/tmp")).is_none());
        assert!(
            ray_socket(Utf8Path::new(
                "/leonardo_scratch/fast/AIFAC_5C0_290/bfeuer00/ray"
            ))
            .is_some()
        );
    }

    #[test]
    fn list_items_of_hydra_lists() {
        assert_eq!(
            list_items(r#"["/a.parquet", '/b.parquet']"#),
            ["/a.parquet", "/b.parquet"]
        );
        assert!(list_items("[]").is_empty());
    }
}
