//! The teacher gate of on-policy distillation, before the queue: a teacher with another
//! tokenizer, too short a context, or no room on the job's nodes is refused with its figures;
//! a matching one passes. The tokenizers are real `tokenizer.json` files, trained offline by
//! HF's own `tokenizers` library (installed by tests/setup.sh) in the sandbox's HF cache.

use crate::common::findings::{assert_found, fired};
use crate::common::{QWEN3_32B, Sandbox, ok, python_oracle, stage_teachers, stderr};
use std::path::{Path, PathBuf};

/// The snapshot folder of a model in the sandbox's HF cache.
fn snapshot(sandbox: &Sandbox, model: &str) -> PathBuf {
    (sandbox.root().join("work/hub"))
        .join(format!("models--{}", model.replace('/', "--")))
        .join("snapshots/0123abcd")
}

/// Trains a real BPE tokenizer on `corpus` with HF `tokenizers` and saves its tokenizer.json.
fn train_tokenizer(path: &Path, corpus: &str) {
    let script = r#"
import sys
from tokenizers import Tokenizer, models, pre_tokenizers, trainers
path, corpus = sys.argv[1], sys.argv[2]
tok = Tokenizer(models.BPE(unk_token="<unk>"))
tok.pre_tokenizer = pre_tokenizers.ByteLevel()
trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<unk>", "<|im_start|>", "<|im_end|>"])
tok.train_from_iterator([corpus] * 50, trainer)
tok.save(path)
print(tok.get_vocab_size())
"#;
    let file = path.with_file_name("train_tokenizer.py");
    std::fs::write(&file, script).unwrap();
    let setup = "run tests/setup.sh (it installs HF `tokenizers`)";
    let (script, path_text) = (file.to_str().unwrap(), path.to_str().unwrap());
    python_oracle(script, &[path_text, corpus], b"", setup);
    std::fs::remove_file(&file).unwrap();
    assert!(path.is_file());
}

const STUDENT_TEXT: &str = "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May.";
const OTHER_TEXT: &str =
    "Weng earns 12 dollars an hour for babysitting; yesterday she did 50 minutes of babysitting.";

/// A sandbox with opd-qwen3's student (Qwen3-1.7B) and teacher (Qwen3-32B, the vLLM teacher and
/// the ref worker) staged, the student with a real trained tokenizer.json.
fn staged() -> Sandbox {
    let sandbox = Sandbox::new();
    stage_teachers(sandbox.root());
    train_tokenizer(
        &snapshot(&sandbox, "Qwen/Qwen3-1.7B").join("tokenizer.json"),
        STUDENT_TEXT,
    );
    sandbox
}

fn check(sandbox: &Sandbox, args: &[&str]) -> std::process::Output {
    let mut cmd = sandbox.rlctl();
    cmd.args(["check", "opd-qwen3"]).args(args);
    cmd.output().unwrap()
}

#[test]
fn a_teacher_of_the_students_tokenizer_passes() {
    let sandbox = staged();
    let student = snapshot(&sandbox, "Qwen/Qwen3-1.7B").join("tokenizer.json");
    let teacher = snapshot(&sandbox, "Qwen/Qwen3-32B").join("tokenizer.json");
    std::fs::copy(&student, &teacher).unwrap();
    let found = sandbox.findings(&["check", "opd-qwen3"], 0);
    assert!(
        !found.iter().any(|f| f.code.starts_with("teacher-")),
        "{found:#?}"
    );
}

#[test]
fn a_teacher_of_another_tokenizer_is_refused_with_both_vocabularies() {
    let sandbox = staged();
    train_tokenizer(
        &snapshot(&sandbox, "Qwen/Qwen3-32B").join("tokenizer.json"),
        OTHER_TEXT,
    );
    let out = check(&sandbox, &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    // One model scores the student's tokens twice, as the vLLM teacher and in the ref worker:
    // said once, naming both keys.
    let lines: Vec<&str> = (err.lines())
        .filter(|l| l.contains("[teacher-tokenizer]"))
        .collect();
    assert_eq!(lines.len(), 1, "{err}");
    let line = lines[0];
    assert!(
        line.contains(
            "the teacher reads the student's token ids as other tokens: the student `Qwen/Qwen3-1.7B` has "
        ),
        "{line}"
    );
    assert!(
        line.contains(
            "the teacher `Qwen/Qwen3-32B` (`teacher.model_path`, `trainer.ref.model.path`) "
        ),
        "{line}"
    );
    assert!(line.contains("vocab_size 151936"), "{line}");
    assert!(line.contains(" of the student's ids differ (id "), "{line}");
    assert!(line.contains("--allow teacher-tokenizer"), "{line}");
    // The fingerprints differ, and each is 16 hex digits.
    let prints: Vec<&str> = (err.split("(vocabulary ").skip(1))
        .map(|s| &s[..16])
        .collect();
    assert!(prints.len() >= 2 && prints[0] != prints[1], "{err}");

    // Meant: a warning, and the check passes.
    let found = sandbox.findings(&["check", "opd-qwen3", "--allow", "teacher-tokenizer"], 0);
    assert_found(&found, "warning", "teacher-tokenizer", &[]);
}

/// Same vocabulary, but an embedding with fewer rows than the student's ids.
#[test]
fn a_teacher_without_rows_for_the_students_ids_is_refused() {
    let sandbox = staged();
    let student = snapshot(&sandbox, "Qwen/Qwen3-1.7B").join("tokenizer.json");
    let teacher = snapshot(&sandbox, "Qwen/Qwen3-32B");
    std::fs::copy(&student, teacher.join("tokenizer.json")).unwrap();
    // The trained vocabulary holds the corpus's bytes and merges: about 80 ids.
    let config = QWEN3_32B.replace("151936", "50");
    std::fs::write(teacher.join("config.json"), config).unwrap();
    let found = sandbox.findings(&["check", "opd-qwen3"], 1);
    assert_found(&found, "problem", "teacher-tokenizer", &[]);
    let err = stderr(&check(&sandbox, &[]));
    assert!(
        err.contains("the teacher's embedding has fewer rows than the student's ids")
            && err.contains("the teacher has no logits for ids from 50"),
        "{err}"
    );
}

#[test]
fn a_teacher_of_too_short_a_context_is_refused_with_the_sum() {
    let sandbox = staged();
    let teacher = snapshot(&sandbox, "Qwen/Qwen3-32B");
    let student = snapshot(&sandbox, "Qwen/Qwen3-1.7B").join("tokenizer.json");
    std::fs::copy(&student, teacher.join("tokenizer.json")).unwrap();
    let config = QWEN3_32B.replace('}', r#", "max_position_embeddings": 1024}"#);
    std::fs::write(teacher.join("config.json"), config).unwrap();
    let found = sandbox.findings(&["check", "opd-qwen3"], 1);
    let lengths = [
        "teacher.model_path",
        "trainer.ref.model.path",
        "trainer.max_prompt_length",
        "generator.sampling_params.max_generate_length",
    ];
    assert_found(&found, "problem", "teacher-context", &lengths);
    let err = stderr(&check(&sandbox, &[]));
    assert!(
        err.contains("holds 1024 positions (max_position_embeddings in "),
        "{err}"
    );
    assert!(
        err.contains(
            "fewer than the sequences it scores: `trainer.max_prompt_length=512` + \
             `generator.sampling_params.max_generate_length=1024` + 1 (the token vLLM generates) = 1537: shorten \
             the lengths by 513 or distil from a teacher of a longer context"
        ),
        "{err}"
    );
    // Short enough lengths pass.
    let short = ["--", "generator.sampling_params.max_generate_length=511"];
    let found = sandbox.findings(&[&["check", "opd-qwen3"][..], &short].concat(), 0);
    assert!(!fired(&found, "teacher-context"), "{found:#?}");

    // A context the teacher holds, but a max_model_len set above it: vLLM refuses to start.
    let config = QWEN3_32B.replace('}', r#", "max_position_embeddings": 2048}"#);
    std::fs::write(teacher.join("config.json"), config).unwrap();
    let out = check(
        &sandbox,
        &["--", "+teacher.engine_init_kwargs.max_model_len=4096"],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(
            "[teacher-context] `+teacher.engine_init_kwargs.max_model_len=4096` is more than the teacher \
             `Qwen/Qwen3-32B` holds (2048 positions"
        ),
        "{err}"
    );
    assert!(
        err.contains("set it to at most 2048 (at least 1537 holds the sequences)"),
        "{err}"
    );
}

/// A teacher engine bigger than a node: the count fits the job (4 student + 8 teacher GPUs on 3
/// nodes of 4), but MarinSkyRL places each engine on one node.
#[test]
fn a_teacher_engine_bigger_than_a_node_is_refused_with_the_figures() {
    let sandbox = staged();
    let student = snapshot(&sandbox, "Qwen/Qwen3-1.7B").join("tokenizer.json");
    std::fs::copy(
        &student,
        snapshot(&sandbox, "Qwen/Qwen3-32B").join("tokenizer.json"),
    )
    .unwrap();
    let args = [
        "check",
        "opd-qwen3",
        "--nodes",
        "3",
        "--",
        "trainer.placement.policy_num_nodes=1",
        "generator.num_inference_engines=4",
        "teacher.inference_engine_tensor_parallel_size=8",
    ];
    let found = sandbox.findings(&args, 1);
    let engines = [
        "teacher.num_inference_engines",
        "teacher.inference_engine_tensor_parallel_size",
        "teacher.inference_engine_pipeline_parallel_size",
    ];
    assert_found(&found, "problem", "teacher-gpus", &engines);
    assert!(!fired(&found, "skyrl-rules"), "the count fits: {found:#?}");
    let err = stderr(&check(&sandbox, &args[2..]));
    assert!(
        err.contains(
            "= 1 x 8 x 1, each engine's 8 GPUs on one node (a STRICT_PACK placement group), but the job's nodes \
             have 4 GPUs each"
        ),
        "{err}"
    );
    assert!(
        err.contains("set `teacher.inference_engine_tensor_parallel_size=4` or lower"),
        "{err}"
    );

    // No room at all: the placement rule gives the whole budget (student + teacher vs the job).
    let out = check(&sandbox, &["--nodes", "1"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("= 1 x 2 x 1 = 2 GPUs come on top (its own placement group): 6 GPUs, but the job has 4 (1 node(s) x 4)"),
        "{err}"
    );
}

/// An upstream `skyrl` checkout: its OPD example scores with the reference model, which is then
/// the teacher the gate judges (a preset of the user's, as no embedded OPD preset runs upstream).
#[test]
fn on_upstream_the_reference_model_is_the_teacher() {
    let sandbox = crate::upstream::upstream_sandbox();
    stage_teachers(sandbox.root());
    let student = snapshot(&sandbox, "Qwen/Qwen3-1.7B");
    train_tokenizer(&student.join("tokenizer.json"), STUDENT_TEXT);
    let teacher = snapshot(&sandbox, "Qwen/Qwen3-32B");
    train_tokenizer(&teacher.join("tokenizer.json"), OTHER_TEXT);
    let runs = sandbox.presets().join("runs");
    std::fs::create_dir_all(&runs).unwrap();
    std::fs::write(
        runs.join("opd-upstream.toml"),
        r#"description = "upstream's OPD example: Qwen3-32B (the reference model) into Qwen3-1.7B"
extends = "gsm8k-canary"
entrypoint = "examples.train.on_policy_distillation.main_on_policy_distill"

[model]
policy = "Qwen/Qwen3-1.7B"

[knobs]
"trainer.ref.model.path" = "Qwen/Qwen3-32B"
"trainer.algorithm.advantage_estimator" = "no_op"
"trainer.algorithm.policy_loss_type" = "importance_sampling"
"trainer.algorithm.use_kl_in_reward" = true
"trainer.algorithm.use_kl_loss" = false
"#,
    )
    .unwrap();
    let out = sandbox
        .rlctl()
        .args(["check", "opd-upstream"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let lines: Vec<&str> = (err.lines())
        .filter(|l| l.trim_start().starts_with('['))
        .collect();
    assert_eq!(lines.len(), 1, "only the tokenizer: {err}");
    assert!(
        lines[0].contains(
            "[teacher-tokenizer] the teacher reads the student's token ids as other tokens: the student \
             `Qwen/Qwen3-1.7B` has "
        ),
        "{err}"
    );
    assert!(
        lines[0].contains("the teacher `Qwen/Qwen3-32B` (`trainer.ref.model.path`) "),
        "{err}"
    );
    // The same vocabulary passes.
    std::fs::copy(
        student.join("tokenizer.json"),
        teacher.join("tokenizer.json"),
    )
    .unwrap();
    ok(sandbox.rlctl().args(["check", "opd-upstream"]));
}
