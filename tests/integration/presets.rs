//! A user's presets folder: files replace the embedded ones, `extends` chains work, and every
//! mistake in a preset is an error that names the file, the line and the fix.

use crate::common::{Sandbox, fails, ok, stdout};

fn write(sandbox: &Sandbox, rel: &str, text: &str) -> String {
    let path = sandbox.presets().join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn an_unknown_field_names_the_file_line_and_field() {
    let sandbox = Sandbox::new();
    let file = write(
        &sandbox,
        "runs/mine.toml",
        "extends = \"gsm8k-canary\"\ndescription = \"mine\"\nnode = 2\n",
    );
    let err = fails(sandbox.rlctl().args(["launch", "mine", "--dry-run"]));
    assert_eq!(
        err,
        format!(
            "rlctl: error: {file}: TOML parse error at line 3, column 1\n  |\n3 | node = 2\n  | ^^^^\n\
             unknown field `node`, expected one of `description`, `extends`, `entrypoint`, `qos`, `time`, \
             `nodes`, `model`, `data`, `knobs`\n"
        )
    );
}

#[test]
fn a_user_preset_extends_an_embedded_one_and_overrides_knobs() {
    let sandbox = Sandbox::new();
    write(
        &sandbox,
        "runs/canary-lr.toml",
        "extends = \"gsm8k-canary\"\ndescription = \"canary at lr 1e-5\"\n\n[knobs]\ntrainer.policy.optimizer_config.lr = 1.0e-5\n\"+generator.engine_init_kwargs.max_model_len\" = 1024\n",
    );
    let out = stdout(&ok(sandbox.rlctl().args([
        "launch",
        "canary-lr",
        "--dry-run",
    ])));
    assert!(out.contains("  # preset canary-lr\n  'trainer.policy.optimizer_config.lr=1e-5'\n  '+generator.engine_init_kwargs.max_model_len=1024'\n"), "{out}");
    assert_eq!(out.matches("optimizer_config.lr=").count(), 1);
    assert!(
        out.contains("'trainer.train_batch_size=32'"),
        "inherited knobs stay"
    );
    assert!(out.contains("#SBATCH --job-name=canary-lr"));
}

#[test]
fn a_user_file_replaces_the_embedded_one_of_the_same_name() {
    let sandbox = Sandbox::new();
    write(
        &sandbox,
        "grids/gsm8k-throughput.toml",
        "description = \"mine\"\nbase = \"gsm8k-canary\"\n\n[[cells]]\nname = \"only\"\ndescription = \"the one cell\"\nknobs = { \"trainer.seed\" = 1 }\n",
    );
    let list = stdout(&ok(sandbox.rlctl().arg("list")));
    assert!(
        list.contains("gsm8k-throughput       mine (1 cells, base gsm8k-canary)"),
        "{list}"
    );
    assert!(
        !list.lines().any(|l| l.trim_start().starts_with("tbs128 ")),
        "{list}"
    );
    ok(sandbox.rlctl().args(["grid", "only", "--dry-run"]));
}

#[test]
fn extends_in_a_circle_is_an_error() {
    let sandbox = Sandbox::new();
    write(&sandbox, "runs/a.toml", "extends = \"b\"\n");
    write(&sandbox, "runs/b.toml", "extends = \"a\"\n");
    let err = fails(sandbox.rlctl().args(["show", "a"]));
    assert_eq!(
        err,
        "rlctl: error: presets extend each other in a circle: a -> b -> a\n"
    );
}

#[test]
fn a_preset_missing_a_required_field_says_which() {
    let sandbox = Sandbox::new();
    let file = write(
        &sandbox,
        "runs/bare.toml",
        "description = \"nothing else\"\n",
    );
    let err = fails(sandbox.rlctl().args(["show", "bare"]));
    assert_eq!(
        err,
        format!(
            "rlctl: error: {file}: preset `bare` sets no `entrypoint`, and neither does any preset it extends\n"
        )
    );
}

#[test]
fn a_preset_may_not_set_what_rlctl_computes() {
    let sandbox = Sandbox::new();
    write(
        &sandbox,
        "runs/sneaky.toml",
        "extends = \"gsm8k-canary\"\n[knobs]\n\"trainer.ckpt_path\" = \"/leonardo_scratch/x\"\n",
    );
    let err = fails(sandbox.rlctl().args(["launch", "sneaky", "--dry-run"]));
    assert_eq!(
        err,
        "rlctl: error: preset sneaky sets `trainer.ckpt_path`, which rlctl sets itself: rlctl computes the checkpoint \
         folder per preset and cell; pick another with --job-name\n"
    );
}

#[test]
fn knob_values_must_be_hydra_values() {
    let sandbox = Sandbox::new();
    let file = write(
        &sandbox,
        "runs/bad.toml",
        "extends = \"gsm8k-canary\"\n[knobs]\n\"trainer.x\" = 1979-05-27\n",
    );
    let err = fails(sandbox.rlctl().args(["show", "bad"]));
    assert!(
        err.starts_with(&format!("rlctl: error: {file}: TOML parse error at line 2")),
        "{err}"
    );
    assert!(
        err.contains("knob `trainer.x`: dates are not hydra values; quote it as a string"),
        "{err}"
    );
}

#[test]
fn profiles_keep_checkpoints_off_scratch() {
    let sandbox = Sandbox::new();
    let profile = std::fs::read_to_string(sandbox.presets().join("clusters/test.toml"))
        .unwrap()
        .replace(
            "checkpoint_root = \"${ROOT}/work/checkpoints\"",
            "checkpoint_root = \"${ROOT}/work/../scratch/ckpts\"",
        );
    let file = write(&sandbox, "clusters/test.toml", &profile);
    let err = fails(
        sandbox
            .rlctl()
            .args(["launch", "gsm8k-canary", "--dry-run"]),
    );
    assert_eq!(
        err,
        format!(
            "rlctl: error: {file}: storage.checkpoint_root = `{}/scratch/ckpts` must be under the checkpoint root \
             `{}/work` (storage.checkpoints_on = \"work\"), never on scratch\n",
            sandbox.root().display(),
            sandbox.root().display()
        )
    );
}

#[test]
fn profile_variables_are_checked() {
    let sandbox = Sandbox::new();
    let profile = std::fs::read_to_string(sandbox.presets().join("clusters/test.toml"))
        .unwrap()
        .replace("venv = \"${ROOT}/venv\"", "venv = \"${ROOTS}/venv\"");
    let file = write(&sandbox, "clusters/test.toml", &profile);
    let err = fails(sandbox.rlctl().args(["show", "gsm8k-canary"]));
    assert_eq!(
        err,
        format!(
            "rlctl: error: {file}: `${{ROOTS}}/venv` uses the unknown variable `ROOTS`: did you mean `ROOT`?\n"
        )
    );

    let profile = profile.replace("${ROOTS}/venv", "${env:RLCTL_TEST_UNSET_VAR}/venv");
    write(&sandbox, "clusters/test.toml", &profile);
    let err = fails(
        sandbox
            .rlctl()
            .args(["show", "gsm8k-canary"])
            .env_remove("RLCTL_TEST_UNSET_VAR"),
    );
    assert!(
        err.contains("but `RLCTL_TEST_UNSET_VAR` is not set in the environment"),
        "{err}"
    );
    let out = stdout(&ok(sandbox
        .rlctl()
        .args(["show", "gsm8k-canary"])
        .env("RLCTL_TEST_UNSET_VAR", "/opt/v")));
    assert!(
        out.contains("venv_python = \"/opt/v/venv/bin/python\""),
        "{out}"
    );
}

#[test]
fn a_preset_name_that_the_shell_would_read_is_refused() {
    let sandbox = Sandbox::new();
    let file = write(
        &sandbox,
        "runs/$(touch pwned).toml",
        "extends = \"gsm8k-canary\"\n",
    );
    let err = fails(sandbox.rlctl().args(["list"]));
    assert_eq!(
        err,
        format!(
            "rlctl: error: {file}: `$(touch pwned)` cannot name a preset: use only letters, digits, `_`, `.` and `-` \
             in the file name\n"
        )
    );
}
