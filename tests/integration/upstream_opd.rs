//! On-policy distillation on an upstream `skyrl` checkout: MarinSkyRL's OPD preset renders
//! upstream's OPD entry there. On a checkout of the 0.4.0 wheel that is the example
//! `examples.train.on_policy_distillation.main_on_policy_distill`, whose teacher is the
//! reference model: the recipe's vLLM-teacher knobs are left out with a warning, and a teacher
//! knob a cell or the command line asks for is refused by name. On a checkout with upstream's
//! core entry (`skyrl/train/entrypoints/main_opd.py`) that entry runs, MarinSkyRL's `teacher.*`
//! keys going to the checkout's own `trainer.teacher.*` keys, read from the checkout.
//!
//! The checkouts are tests/standin/upstream_checkout.py's (the wheel's real config); the core
//! entry is tests/standin/upstream_core_opd/main_opd.py, a STAND-IN (no released checkout has
//! one yet), built with the wheel's real `make_config`.

use crate::common::{Sandbox, fails, ok, stage_teachers, stderr, stdout};
use crate::upstream::upstream_sandbox;

/// The upstream sandbox with opd-qwen3's models staged (one tokenizer for both: the gate passes).
fn opd_sandbox() -> Sandbox {
    let sandbox = upstream_sandbox();
    stage_teachers(sandbox.root());
    sandbox
}

/// The upstream sandbox's checkout made one with upstream's core OPD entry, and the profile
/// reading its keys from the checkout (no shipped list has them).
fn core_sandbox() -> Sandbox {
    let sandbox = opd_sandbox();
    let entry = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/standin/upstream_core_opd/main_opd.py"
    );
    let checkout = sandbox.root().join("skyrl");
    std::fs::copy(entry, checkout.join("skyrl/train/entrypoints/main_opd.py")).unwrap();
    let profile = sandbox.presets().join("clusters/test.toml");
    let text = std::fs::read_to_string(&profile).unwrap();
    let text = text.replace("schema = \"skyrl-0.4.0\"\n", "");
    std::fs::write(profile, text).unwrap();
    sandbox
}

/// The job's arguments to the trainer, one per line, as the dry run's script quotes them.
fn trainer_args(text: &str) -> Vec<&str> {
    (text.lines())
        .map(str::trim)
        .filter(|l| l.starts_with('\''))
        .collect()
}

#[test]
fn opd_renders_upstreams_example_with_the_reference_model_as_teacher() {
    let sandbox = opd_sandbox();
    let out =
        ok(sandbox
            .rlctl()
            .args(["launch", "opd-qwen3", "--dry-run", "--allow", "disk-room"]));
    let text = stdout(&out);
    assert!(
        text.contains("entrypoint=examples.train.on_policy_distillation.main_on_policy_distill\n"),
        "{text}"
    );
    let args = trainer_args(&text);
    assert!(
        args.iter()
            .any(|a| a.starts_with("'trainer.ref.model.path=Qwen/Qwen3-32B'")),
        "{args:?}"
    );
    assert!(
        args.iter()
            .any(|a| a.starts_with("'trainer.algorithm.advantage_estimator=no_op'")),
        "{args:?}"
    );
    // No vLLM teacher, and upstream's engine is always async: none of it reaches the trainer.
    assert!(!text.contains("teacher."), "{text}");
    assert!(!text.contains("async_engine"), "{text}");
    // What was left out is said, knob by knob, with what runs instead.
    let err = stderr(&out);
    let warning = (err.lines())
        .find(|l| {
            l.contains("warning: [schema] opd-qwen3 runs upstream skyrl's on-policy distillation")
        })
        .unwrap_or_else(|| panic!("{err}"));
    for said in [
        "`examples.train.on_policy_distillation.main_on_policy_distill`",
        "its teacher is the reference model (`trainer.ref.model.path=Qwen/Qwen3-32B`)",
        "`teacher.top_k_logprobs=64` (preset opd-qwen3)",
        "`teacher.inference_engine_tensor_parallel_size=2` (preset opd-qwen3)",
        "`generator.async_engine=false` (preset opd-qwen3)",
    ] {
        assert!(warning.contains(said), "{said}: {warning}");
    }
    // The smoke passes `check`; the teacher gate judges the reference model as the teacher
    // (the sandbox's snapshots hold no tokenizer to compare: said as skipped).
    let out = ok(sandbox
        .rlctl()
        .args(["check", "opd-qwen3-smoke", "--allow", "disk-room"]));
    assert!(
        stderr(&out).contains("skipped: [teacher-tokenizer] `Qwen/Qwen3-1.7B`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn grid_cells_translate_where_they_can_and_teacher_cells_are_refused_by_name() {
    let sandbox = opd_sandbox();
    // A cell of the student's knobs over the grid's base (its own top-k, left out as the recipe's).
    let out = ok(sandbox.rlctl().args([
        "grid",
        "opd-speed-convergence/opd-lr3e-5",
        "--dry-run",
        "--allow",
        "disk-room",
    ]));
    let text = stdout(&out);
    assert!(
        text.contains("'trainer.policy.optimizer_config.lr=3e-5'"),
        "{text}"
    );
    assert!(!text.contains("teacher."), "{text}");
    assert!(
        stderr(&out).contains("`teacher.top_k_logprobs=128` (grid opd-speed-convergence)"),
        "{}",
        stderr(&out)
    );
    // A cell that changes the teacher on a trainer without one: refused, naming the key and the fix.
    let err = fails(
        sandbox
            .rlctl()
            .args(["check", "opd-throughput/opdtp-topk16"]),
    );
    assert!(
        err.contains(
            "[schema] `teacher.top_k_logprobs`: MarinSkyRL's vLLM teacher has no counterpart"
        ),
        "{err}"
    );
    assert!(err.contains("drop the knob"), "{err}");
    assert!(err.contains("skyrl/train/entrypoints/main_opd.py"), "{err}");
    // A teacher of its own: the cell sets both models, and the reference model is the teacher.
    let out = ok(sandbox.rlctl().args([
        "grid",
        "opd-throughput/opdtp-teacher8b",
        "--dry-run",
        "--allow",
        "disk-room",
    ]));
    assert!(
        stdout(&out).contains("'trainer.ref.model.path=Qwen/Qwen3-8B'"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn teacher_knobs_asked_for_on_the_command_line_are_refused_by_name() {
    let sandbox = opd_sandbox();
    let err = fails(sandbox.rlctl().args([
        "check",
        "opd-qwen3-smoke",
        "--",
        "teacher.gpu_memory_utilization=0.5",
        "teacher.model_path=Qwen/Qwen3-8B",
    ]));
    assert!(
        err.contains("`teacher.gpu_memory_utilization`, `teacher.model_path`: MarinSkyRL's vLLM teacher has no counterpart"),
        "{err}"
    );
    assert!(
        err.contains("the reference model (`trainer.ref.model.path`) is the teacher"),
        "{err}"
    );
    let err = fails(sandbox.rlctl().args([
        "check",
        "opd-qwen3-smoke",
        "--",
        "generator.async_engine=false",
    ]));
    assert!(
        err.contains("upstream skyrl always runs the async engine"),
        "{err}"
    );
}

#[test]
fn a_checkout_with_upstreams_core_entry_runs_it_with_its_own_teacher_keys() {
    let sandbox = core_sandbox();
    let out =
        ok(sandbox
            .rlctl()
            .args(["launch", "opd-qwen3", "--dry-run", "--allow", "disk-room"]));
    let text = stdout(&out);
    assert!(
        text.contains("entrypoint=skyrl.train.entrypoints.main_opd\n"),
        "{text}"
    );
    let args = trainer_args(&text);
    for arg in [
        "'trainer.teacher.model_path=Qwen/Qwen3-32B'",
        "'trainer.ref.model.path=Qwen/Qwen3-32B'",
        "'trainer.teacher.top_k_logprobs=64'",
        // Renamed in the checkout's config: found by the rules of the rename table.
        "'trainer.teacher.num_engines=1'",
        "'trainer.teacher.inference_engine_tensor_parallel_size=2'",
        // Derived from the lengths, below the checkout's dict field (no `+` upstream).
        "'trainer.teacher.engine_init_kwargs.max_model_len=1537'",
    ] {
        assert!(args.iter().any(|a| a.starts_with(arg)), "{arg}: {args:?}");
    }
    assert!(!args.iter().any(|a| a.starts_with("'teacher.")), "{args:?}");
    // The trainer's own parser (the stand-in core entry's config) takes the whole command line.
    let keys: Vec<String> = (args.iter())
        .map(|a| a.trim_end_matches(" \\").trim_matches('\'').to_owned())
        .collect();
    let checkout = sandbox.root().join("skyrl");
    let parsed = std::process::Command::new("python3")
        .arg("-c")
        .arg("import sys; from skyrl.train.entrypoints.main_opd import OPDTrainConfig as C; c = C.from_cli_overrides(sys.argv[1:]); print(c.trainer.teacher.model_path, c.trainer.teacher.num_engines)")
        .args(&keys)
        .current_dir(&checkout)
        .env("PYTHONPATH", &checkout)
        .output()
        .unwrap();
    assert!(parsed.status.success(), "{}", stderr(&parsed));
    assert_eq!(stdout(&parsed), "Qwen/Qwen3-32B 1\n");
    // A MarinSkyRL teacher key the checkout's core lacks: refused by name, with what to do.
    let err = fails(sandbox.rlctl().args([
        "check",
        "opd-qwen3",
        "--",
        "teacher.inference_engine_pipeline_parallel_size=2",
    ]));
    assert!(
        err.contains("`teacher.inference_engine_pipeline_parallel_size` has no counterpart under `trainer.teacher.*` in this checkout's core on-policy distillation"),
        "{err}"
    );
}
