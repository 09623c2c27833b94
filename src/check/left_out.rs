//! What MarinSkyRL's OPD recipe loses on upstream skyrl, said as a warning of the `schema`
//! check: the preset's and the grid's knobs `plan::layers` left out because the trainer has no
//! counterpart (the vLLM teacher of the logits OPD, the synchronous engine), with what runs
//! instead. Nothing of it is a problem: the job runs upstream's own on-policy distillation.

use crate::check::skyrl_rules::Values;
use crate::plan::Plan;

/// The warning for the plan's left-out knobs; None when nothing was left out.
pub fn warning(plan: &Plan, values: &Values) -> Option<String> {
    let said: Vec<String> = (plan.left_out.iter())
        .filter(|k| k.path() != "teacher.model_path")
        .map(|k| format!("`{}` ({})", k.hydra_arg(), k.origin))
        .collect();
    if said.is_empty() {
        return None;
    }
    let teacher = match values.schema.teacher_section() {
        true => String::new(),
        false => format!(
            "; its teacher is the reference model (`trainer.ref.model.path={}`), scored by the FSDP ref worker \
             on the student's sampled tokens, not a vLLM teacher's top-k logprobs",
            values.show("trainer.ref.model.path")
        ),
    };
    Some(format!(
        "{} runs upstream skyrl's on-policy distillation `{}`{teacher}: left out, as upstream has no counterpart: {} \
         (a MarinSkyRL checkout takes them)",
        plan.target,
        plan.entrypoint,
        said.join(", ")
    ))
}
