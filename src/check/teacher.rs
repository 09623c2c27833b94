//! The `teacher` check: a hand-set teacher `max_model_len` that holds what the teacher scores.

use crate::check::skyrl_rules::Values;
use crate::plan::Plan;
use crate::plan::layers::TEACHER_MAX_MODEL_LEN;
use crate::schema::knob::Scalar;

/// A teacher `max_model_len` set by hand must hold what the teacher scores, the prompt and the
/// whole response: vLLM accepts the plan, then refuses the first long sequence mid-run. (Left
/// unset, rlctl derives it from these very lengths.)
pub fn length(plan: &Plan, values: &Values) -> Option<String> {
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
