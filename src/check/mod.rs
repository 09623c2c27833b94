//! Preflight: every lesson that cost a run, checked on the resolved plan before anything is
//! written, submitted or deleted. Every problem is reported at once.

mod arch;
pub mod arg_max;
pub mod borrowed;
mod ckpt_keep;
pub mod controlled;
mod data_rows;
pub mod deep;
pub mod disk_room;
mod env_leak;
mod finding;
mod gpu;
mod left_out;
mod log_path;
pub mod model_files;
pub mod model_size;
mod offline;
pub mod purge;
mod qos;
mod ray_socket;
pub mod ready;
mod resume;
mod resume_pointer;
mod resume_world;
pub mod site;
pub mod skyrl_rules;
pub mod slots;
mod staged;
mod teacher;
mod visible;
mod write_path;

pub use finding::{Finding, Found, Message};
pub use resume::global_steps;

use crate::check::skyrl_rules::Values;
use crate::error::{Error, Result};
use crate::plan::Plan;
use crate::preset::Library;
use crate::preset::cluster::Cluster;
use crate::schema::Schema;
use crate::util::fs::resolve;
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
    /// A checkpoint filesystem with less free space than one save needs.
    DiskRoom,
    /// A distillation teacher whose vocabulary is not the student's.
    TeacherTokenizer,
}

impl Allow {
    /// Every check that may be allowed: its flag value and what it relaxes.
    pub const ALL: [(Allow, &'static str, &'static str); 5] = [
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
        (
            Allow::DiskRoom,
            "disk-room",
            "A checkpoint filesystem with less free space than one save needs (statvfs sees the filesystem, not a quota)",
        ),
        (
            Allow::TeacherTokenizer,
            "teacher-tokenizer",
            "A distillation teacher whose token ids name other tokens than the student's",
        ),
    ];

    /// The check named by its flag value, e.g. `off-schema`.
    pub fn named(name: &str) -> Option<Allow> {
        Allow::ALL.iter().find(|a| a.1 == name).map(|a| a.0)
    }
}

/// A check family; its kebab-case name is the stable `code` of its findings in `--json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Check {
    Schema,
    SkyrlRules,
    SkyrlDeep,
    WritePath,
    Resume,
    Offline,
    Gpu,
    TeacherTokenizer,
    TeacherContext,
    TeacherGpus,
    Qos,
    RaySocket,
    EnvLeak,
    Slots,
    ResumeWorld,
    ResumePointer,
    ResumeFlavour,
    CkptKeep,
    DataRows,
    LogPath,
    Visible,
    Arch,
    Purge,
    DiskRoom,
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
            Check::TeacherTokenizer => "teacher-tokenizer",
            Check::TeacherContext => "teacher-context",
            Check::TeacherGpus => "teacher-gpus",
            Check::Qos => "qos",
            Check::RaySocket => "ray-socket",
            Check::EnvLeak => "env-leak",
            Check::Slots => "slots",
            Check::ResumeWorld => "resume-world",
            Check::ResumePointer => "resume-pointer",
            Check::ResumeFlavour => "resume-flavour",
            Check::CkptKeep => "ckpt-keep",
            Check::DataRows => "data-rows",
            Check::LogPath => "log-path",
            Check::Visible => "visible",
            Check::Arch => "arch",
            Check::Purge => "purge",
            Check::DiskRoom => "disk-room",
        })
    }
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

impl Report {
    /// Every finding of the report, typed, about `target`, in the trainer's names.
    fn found(&self, target: &str, schema: &Schema) -> Vec<Found> {
        let levels = [
            ("problem", &self.problems),
            ("warning", &self.warnings),
            ("note", &self.notes),
            ("skipped", &self.skipped),
        ];
        (levels.into_iter())
            .flat_map(|(level, findings)| {
                findings.iter().map(move |f| f.found(level, target, schema))
            })
            .collect()
    }
}

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
    let verdict = judge(library, cluster, allow, plans, extra, deep)?;
    // Grouped by kind, each naming its cell: a grid's warnings read as one list, not scattered
    // between its notes.
    for shown in ["warning", "note", "skipped"] {
        for (kind, line) in verdict.said.iter().filter(|(k, _)| *k == shown) {
            crate::say!("rlctl: {kind}: {line}");
        }
    }
    verdict.into_result(plans)
}

/// What preflight found on some plans, before anything is printed: `check --all` gathers it
/// per row, [`preflight_with`] says it.
#[derive(Debug, Default)]
pub struct Verdict {
    /// Each problem, `[check] message`, named after its plan when there are several.
    pub problems: Vec<String>,
    /// What goes on stderr: (`warning`, `note` or `skipped`, the line), each once.
    pub said: Vec<(&'static str, String)>,
    /// How many checks could not run here.
    pub skipped: usize,
    /// Every finding, typed, for `check --json`: what `problems` and `said` say as lines.
    pub findings: Vec<Found>,
}

impl Verdict {
    /// The number of checks skipped, or every problem at once (exit 1).
    pub fn into_result(self, plans: &[Plan]) -> Result<usize> {
        if self.problems.is_empty() {
            return Ok(self.skipped);
        }
        Err(Error::Preflight {
            targets: plans.iter().map(|p| p.target.clone()).collect(),
            problems: self.problems,
        })
    }
}

/// Every check of [`preflight_with`] on every plan, said nowhere.
pub fn judge(
    library: &Library,
    cluster: &Cluster,
    allow: &[Allow],
    plans: &[Plan],
    extra: &[Report],
    deep: Option<Duration>,
) -> Result<Verdict> {
    let mut verdict = Verdict::default();
    let mut said = std::collections::BTreeSet::new();
    let mut dirs = std::collections::BTreeMap::new();
    for (i, plan) in plans.iter().enumerate() {
        // Each plan's own config group choices (a grid's cells may differ) make its schema.
        let schema = library.plan_schema(cluster, &plan.knobs)?;
        let checks = Preflight {
            cluster,
            schema: &schema,
            allow,
        };
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
        verdict.skipped += report.skipped.len();
        let prefix = if plans.len() > 1 {
            format!("{}: ", plan.target)
        } else {
            String::new()
        };
        for f in &report.problems {
            (verdict.problems).push(format!("{prefix}{}", f.line(&schema)));
        }
        verdict.findings.extend(report.found(&plan.target, &schema));
        let stderr = [
            ("warning", &report.warnings),
            ("note", &report.notes),
            ("skipped", &report.skipped),
        ];
        for (kind, findings) in stderr {
            for f in findings.iter() {
                // The same skip for every cell of a grid is said once.
                let line = if kind == "skipped" {
                    f.line(&schema)
                } else {
                    format!("{prefix}{}", f.line(&schema))
                };
                if said.insert(format!("{kind}{line}")) {
                    verdict.said.push((kind, line));
                }
            }
        }
        // Judged where the folders really are: two links to one folder are one folder.
        let real = resolve(&plan.paths.checkpoint_dir);
        if let Some(other) = dirs.insert(real.clone(), plan.target.clone()) {
            let message = format!(
                "{} and {other} would share the checkpoint folder `{real}`: give one of them its own --job-name",
                plan.target
            );
            let finding = Finding::new(Check::Resume, message);
            verdict.problems.push(finding.line(&schema));
            (verdict.findings).push(finding.found("problem", &plan.target, &schema));
        }
    }
    Ok(verdict)
}

/// The `schema` checks alone on every plan ([`Preflight::run_schema`]), reported as
/// [`preflight`] reports: warnings on stderr, every problem in one error (exit 1).
pub fn preflight_schema(
    library: &Library,
    cluster: &Cluster,
    allow: &[Allow],
    plans: &[Plan],
) -> Result<()> {
    let mut problems = Vec::new();
    for plan in plans {
        let schema = library.plan_schema(cluster, &plan.knobs)?;
        let checks = Preflight {
            cluster,
            schema: &schema,
            allow,
        };
        let report = checks.run_schema(plan);
        let prefix = match plans.len() {
            1 => String::new(),
            _ => format!("{}: ", plan.target),
        };
        for f in &report.warnings {
            crate::say!("rlctl: warning: {prefix}{}", f.line(&schema));
        }
        for f in &report.problems {
            problems.push(format!("{prefix}{}", f.line(&schema)));
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
        // Said under rlctl's names: the keys left out never reach the trainer.
        if let Some(message) = left_out::warning(plan, &values) {
            let check = Check::Schema;
            report
                .warnings
                .push(Finding::in_rlctl_names(check, message));
        }
        for message in write_path::check(&self.cluster.storage, plan) {
            found.push((Check::WritePath, None, message));
        }
        for message in visible::check(self.cluster, plan, &values) {
            found.push((Check::Visible, None, message));
        }
        if let Some(message) = arch::check(self.cluster, &plan.paths.venv_python) {
            found.push((Check::Arch, None, message));
        }
        gpu::check(self.cluster, plan, &values, &mut found);
        if let Some(message) = ckpt_keep::check(&values) {
            found.push((Check::CkptKeep, None, message));
        }
        teacher::check(self.cluster, &values, &mut found, &mut report);
        for message in qos::check(self.cluster, plan) {
            found.push((Check::Qos, None, message));
        }
        if let Some(message) = ray_socket::check(&plan.paths.ray_tmp_root) {
            found.push((Check::RaySocket, None, message));
        }
        for message in env_leak::check(plan) {
            found.push((Check::EnvLeak, None, message));
        }
        let shared = [&*self.cluster.storage.work, &*self.cluster.storage.scratch];
        if let Some(message) = log_path::check(&values, shared) {
            found.push((Check::LogPath, None, message));
        }
        for message in offline::env(plan, &self.cluster.storage.work) {
            found.push((Check::Offline, None, message));
        }
        if self.cluster.storage.work.is_dir() {
            for message in staged::files(&values, &self.cluster.storage.hf_home) {
                found.push((Check::Offline, None, message));
            }
            resume::check(plan, &mut found, &mut report.notes);
            resume_pointer::check(plan, &mut found, &mut report.notes);
            resume_world::check(&values, &mut found);
            if let Some(message) = data_rows::check(plan) {
                found.push((Check::DataRows, None, message));
            }
            self.disk_room(&values, plan, &mut found, &mut report);
        } else {
            report.skipped.push(Finding::new(
                Check::Offline,
                format!(
                    "`{}` does not exist on this machine: the model, data, existing-checkpoint and disk-room checks did not run",
                    self.cluster.storage.work
                ),
            ));
        }
        self.sort(found, &mut report);
        report
    }

    /// The [`disk_room`] check: a refusal is a problem; a warning or a skip is said.
    fn disk_room(&self, values: &Values, plan: &Plan, found: &mut Vec<Raw>, report: &mut Report) {
        for said in disk_room::check(values, plan) {
            let finding = |message: String| Finding::new(Check::DiskRoom, message);
            match said {
                disk_room::Said::Problem(m) => {
                    found.push((Check::DiskRoom, Some(Allow::DiskRoom), m))
                }
                disk_room::Said::Warning(m) => report.warnings.push(finding(m)),
                disk_room::Said::Skipped(m) => report.skipped.push(finding(m)),
            }
        }
    }

    /// The `schema` check family: every knob against SkyRL's key list and its types.
    fn schema_family(&self, plan: &Plan) -> Vec<Raw> {
        // A section upstream lacks (`teacher.*`) is one reason for all its knobs: said once.
        let mut sections: Vec<(&str, Vec<&str>)> = Vec::new();
        let mut messages = Vec::new();
        for knob in &plan.knobs {
            match self.schema.no_counterpart(knob.path()) {
                Some(why) => match sections.iter_mut().find(|(w, _)| *w == why) {
                    Some((_, keys)) => keys.push(knob.path()),
                    None => sections.push((why, vec![knob.path()])),
                },
                None => messages.extend(self.schema.check(knob).err()),
            }
        }
        let sections =
            (sections.into_iter()).map(|(why, keys)| format!("`{}`: {why}", keys.join("`, `")));
        let mut found: Vec<Raw> = (sections.chain(messages))
            .map(|message| (Check::Schema, Some(Allow::OffSchema), message))
            .collect();
        let argv: Vec<String> = (plan.trainer_overrides())
            .map(|k| plan.trainer_arg(k))
            .collect();
        if let Some(why) = arg_max::check(&argv) {
            found.push((
                Check::Schema,
                None,
                format!("the job's command line: {why}"),
            ));
        }
        // Knob by knob the keys are right; the trainer's parser reads the line as a whole.
        if found.is_empty()
            && let Err(why) = self.schema.check_trainer_args(&argv)
        {
            let message = format!(
                "the job's command line: {} refuses it ({why})",
                plan.flavour
            );
            found.push((Check::Schema, None, message));
        }
        found
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
            // The rules name keys as rlctl does; the printer spells them as the trainer does.
            let finding = Finding::new(check, message);
            match allow {
                Some(a) if self.allow.contains(&a) => report.warnings.push(finding),
                _ => report.problems.push(finding),
            }
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_items_of_hydra_lists() {
        assert_eq!(
            list_items(r#"["/a.parquet", '/b.parquet']"#),
            ["/a.parquet", "/b.parquet"]
        );
        assert!(list_items("[]").is_empty());
    }
}
