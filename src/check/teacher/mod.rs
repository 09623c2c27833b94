//! The teacher gate of on-policy distillation, before the queue: the teacher must read the
//! student's token ids as the same tokens ([`vocab`]), hold every sequence it scores
//! ([`context`]), and find GPUs on the job's nodes ([`gpus`]). Each is a finding of its own code.

mod context;
mod gpus;
mod vocab;

use crate::check::skyrl_rules::Values;
use crate::check::{Allow, Check, Finding, Raw, Report};
use crate::preset::cluster::Cluster;
use crate::schema::knob::Scalar;

/// A model the student is distilled from, and the keys that name it (the vLLM teacher and the
/// ref worker are one model in every real OPD run: judged once).
pub(crate) struct Teacher {
    pub keys: Vec<&'static str>,
    pub model: String,
}

impl Teacher {
    /// How messages name it: the model, then its keys.
    pub fn shown(&self) -> String {
        format!("`{}` (`{}`)", self.model, self.keys.join("`, `"))
    }

    /// Whether it is the vLLM teacher, whose engine has a `max_model_len`.
    pub fn vllm(&self) -> bool {
        self.keys.contains(&"teacher.model_path")
    }
}

/// The models whose scores of the student's tokens become its reward: MarinSkyRL's vLLM teacher
/// or upstream's core one (`teacher.model_path`), and, under a distillation entry point, the
/// reference model when it is another model than the policy (the FSDP ref worker is loaded with
/// the teacher: it computes `base_action_log_probs` of the student's token ids; upstream's
/// example has no other teacher).
pub(crate) fn teachers(values: &Values) -> Vec<Teacher> {
    let mut found = Vec::new();
    if !values.distills() && !values.uses_teacher() {
        return found;
    }
    let student = text(values, "trainer.policy.model.path");
    // Upstream's core OPD has a teacher of its own (`trainer.teacher.model_path`, here under
    // MarinSkyRL's name); its example has only the reference model.
    let core = values.upstream() && values.schema.teacher_section() && values.distills();
    if (values.uses_teacher() || core)
        && let Some(model) = text(values, "teacher.model_path")
    {
        found.push(Teacher {
            keys: vec!["teacher.model_path"],
            model,
        });
    }
    if values.uses_ref()
        && let Some(model) = text(values, "trainer.ref.model.path")
        && Some(&model) != student.as_ref()
    {
        match found.iter_mut().find(|t| t.model == model) {
            Some(same) => same.keys.push("trainer.ref.model.path"),
            None => found.push(Teacher {
                keys: vec!["trainer.ref.model.path"],
                model,
            }),
        }
    }
    found
}

/// A model path as the job reads it; None for null or an unresolved interpolation.
fn text(values: &Values, key: &str) -> Option<String> {
    match values.value(key)? {
        Scalar::Str(s) if !s.is_empty() && !s.starts_with("${") => Some(s),
        _ => None,
    }
}

/// Every teacher finding of the plan: problems into `found`, what could not be judged into
/// `report.skipped`.
pub fn check(cluster: &Cluster, values: &Values, found: &mut Vec<Raw>, report: &mut Report) {
    let hf = &cluster.storage.hf_home;
    if let Some(message) = context::length(values.plan, values) {
        found.push((Check::TeacherContext, None, message));
    }
    let teachers = teachers(values);
    for message in context::positions(values, &teachers, hf) {
        found.push((Check::TeacherContext, None, message));
    }
    if cluster.storage.work.is_dir() {
        for said in vocab::check(values, &teachers, hf) {
            match said {
                Ok(message) => found.push((
                    Check::TeacherTokenizer,
                    Some(Allow::TeacherTokenizer),
                    message,
                )),
                Err(message) => report
                    .skipped
                    .push(Finding::new(Check::TeacherTokenizer, message)),
            }
        }
    }
    if let Some(message) = gpus::check(values) {
        found.push((Check::TeacherGpus, None, message));
    }
}
