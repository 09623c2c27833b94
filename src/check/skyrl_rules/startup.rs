//! What fails (or is silently ignored) right after validate_cfg passes: the entrypoint's
//! strategy and engine backends, vLLM's memory fraction, the trainer's step counts, the
//! datasets, and a resume path SkyRL never reads.

use super::Values;
use crate::schema::knob::Scalar;

/// The inference engine backends SkyRL can create.
const BACKENDS: [&str; 2] = ["vllm", "sglang"];

pub fn check(v: &Values, problems: &mut Vec<String>) {
    name(v, "trainer.strategy", v.names().strategies, problems);
    name(v, "generator.backend", &BACKENDS, problems);
    let mut utilizations = vec![];
    if v.truthy("generator.run_engines_locally") {
        utilizations.push("generator.gpu_memory_utilization");
    }
    if v.uses_teacher() {
        name(v, "teacher.backend", &BACKENDS, problems);
        utilizations.push("teacher.gpu_memory_utilization");
    }
    for key in utilizations {
        memory_fraction(v, key, problems);
    }
    steps(v, problems);
    datasets(v, problems);
    resume_path(v, problems);
}

fn name(v: &Values, key: &str, names: &[&str], problems: &mut Vec<String>) {
    let why = "SkyRL stops with a ValueError once Ray is up";
    super::one_of(v, key, names, why, problems);
}

/// vLLM takes a fraction of each GPU in (0, 1].
fn memory_fraction(v: &Values, key: &str, problems: &mut Vec<String>) {
    let fraction = v.float(key);
    if fraction.is_some_and(|f| f > 0.0 && f <= 1.0) {
        return;
    }
    problems.push(format!(
        "`{key}={}` is not a fraction of GPU memory in (0, 1]: vLLM refuses it when the engines start; set e.g. \
         `{key}=0.7`",
        v.show(key)
    ));
}

fn steps(v: &Values, problems: &mut Vec<String>) {
    if let Some(epochs) = v.int("trainer.epochs")
        && epochs < 1
    {
        problems.push(format!(
            "`trainer.epochs={epochs}` trains no step: set `trainer.epochs=1` or more (and `trainer.max_steps` to stop \
             early)"
        ));
    }
    // SkyRL applies max_steps only when it is positive.
    if let Some(Scalar::Int(steps)) = v.value("trainer.max_steps")
        && steps <= 0
    {
        // Upstream's validate_cfg refuses it outright.
        let what = match v.upstream() {
            true => "is refused by upstream skyrl (it must be > 0)",
            false => "is ignored by SkyRL, which then trains every epoch",
        };
        problems.push(format!(
            "`trainer.max_steps={steps}` {what}: set a positive step count, or `trainer.max_steps=null` for no limit"
        ));
    }
}

fn datasets(v: &Values, problems: &mut Vec<String>) {
    if v.list_len("data.train_data") == Some(0) {
        problems.push(
            "`data.train_data=[]` gives SkyRL no prompt to train on (it fails loading the dataset): list the train \
             parquet file(s)"
                .to_owned(),
        );
    }
    let evaluates = v.int("trainer.eval_interval").is_some_and(|i| i > 0)
        || v.truthy("trainer.eval_before_train");
    if evaluates && v.list_len("data.val_data") == Some(0) {
        problems.push(
            "`data.val_data=[]` silently turns evaluation off, though `trainer.eval_interval` or \
             `trainer.eval_before_train` asks for it: list the validation parquet file(s), or set \
             `trainer.eval_interval=0` and `trainer.eval_before_train=false`"
                .to_owned(),
        );
    }
}

/// rlctl sets `trainer.resume_mode` itself (null or latest); SkyRL reads `trainer.resume_path`
/// only with `from_path`.
fn resume_path(v: &Values, problems: &mut Vec<String>) {
    if v.is_set("trainer.resume_path")
        && v.text("trainer.resume_mode").as_deref() != Some("from_path")
    {
        problems.push(format!(
            "`trainer.resume_path={}` is ignored: SkyRL reads it only with `trainer.resume_mode=from_path`, and this \
             plan starts with `trainer.resume_mode={}`: remove it; to continue this run's own checkpoints use \
             --resume latest",
            v.show("trainer.resume_path"),
            v.show("trainer.resume_mode")
        ));
    }
}
