//! `teacher-context`: the teacher holds every sequence it scores. It scores the prompt and the
//! student's whole response as one prompt with one token to generate, and vLLM takes a prompt
//! only when `prompt + max_tokens <= max_model_len`: so `max_model_len >= max_input +
//! max_generate_length + 1`. MarinSkyRL's teacher client cuts a longer sequence to
//! `max_model_len - 1` with a warning, and the cut tokens get no teacher score.

use super::Teacher;
use crate::check::model_size;
use crate::check::skyrl_rules::Values;
use crate::plan::Plan;
use crate::plan::layers::TEACHER_MAX_MODEL_LEN;
use camino::Utf8Path;

/// The longest sequence the teacher scores, plus vLLM's one generated token, and how it adds up.
struct Needed {
    total: i64,
    sum: String,
}

/// The generator's input bound (`generator.max_input_length` when set to a number; it defaults
/// to the prompt length), the response bound, and the one token vLLM generates.
fn needed(values: &Values) -> Option<Needed> {
    use crate::schema::knob::Scalar;
    let input_key = match values.get("generator.max_input_length") {
        Some(Scalar::Int(_)) => "generator.max_input_length",
        _ => "trainer.max_prompt_length",
    };
    let input = values.int(input_key)?;
    let generate = values.int("generator.sampling_params.max_generate_length")?;
    let total = input + generate + 1;
    Some(Needed {
        total,
        sum: format!(
            "`{input_key}={input}` + `generator.sampling_params.max_generate_length={generate}` + 1 (the token \
             vLLM generates) = {total}"
        ),
    })
}

/// A teacher `max_model_len` set by hand must hold what the teacher scores. (Left unset, rlctl
/// derives it from these very lengths.)
pub fn length(plan: &Plan, values: &Values) -> Option<String> {
    if !values.uses_teacher() {
        return None;
    }
    let knob = plan
        .knobs
        .iter()
        .rfind(|k| k.path() == TEACHER_MAX_MODEL_LEN)?;
    let max_model_len = knob.value.scalar().as_int()?;
    let needed = needed(values)?;
    (max_model_len < needed.total).then(|| {
        format!(
            "`{}` ({}) is shorter than the sequences the teacher scores: {}; MarinSkyRL cuts a longer one to \
             {} tokens and the cut tokens get no teacher score: drop it (rlctl then derives it from the lengths) \
             or set it to at least {}",
            knob.hydra_arg(),
            knob.origin,
            needed.sum,
            max_model_len - 1,
            needed.total
        )
    })
}

/// Each staged teacher's own context (config.json's `max_position_embeddings`) must hold the
/// sequences too: vLLM refuses a `max_model_len` above it when the engine starts, and a ref
/// worker scores positions the model never saw.
pub(super) fn positions(values: &Values, teachers: &[Teacher], hf: &Utf8Path) -> Vec<String> {
    let Some(needed) = needed(values) else {
        return Vec::new();
    };
    let set = (values.plan.knobs.iter())
        .rfind(|k| k.path() == TEACHER_MAX_MODEL_LEN)
        .and_then(|k| k.value.scalar().as_int());
    let mut problems = Vec::new();
    for teacher in teachers {
        let Some(path) = model_size::config_json(&teacher.model, hf) else {
            continue;
        };
        let Some(limit) = (std::fs::read_to_string(&path).ok())
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|c| c.get("max_position_embeddings")?.as_i64())
        else {
            continue;
        };
        if needed.total > limit {
            problems.push(format!(
                "the teacher {} holds {limit} positions (max_position_embeddings in {path}), fewer than \
                 the sequences it scores: {}: shorten the lengths by {} or distil from a teacher of a longer context",
                teacher.shown(),
                needed.sum,
                needed.total - limit
            ));
        } else if teacher.vllm()
            && let Some(set) = set.filter(|s| *s > limit)
        {
            problems.push(format!(
                "`+{TEACHER_MAX_MODEL_LEN}={set}` is more than the teacher `{}` holds ({limit} positions, \
                 max_position_embeddings in {path}): its vLLM engine refuses to start; set it to at most {limit} \
                 (at least {} holds the sequences)",
                teacher.model,
                needed.total
            ));
        }
    }
    problems
}
