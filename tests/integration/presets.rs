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
             `nodes`, `model`, `data`, `reference`, `knobs`\n"
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
            "rlctl: error: {file}: `$(touch pwned)` cannot name a preset: use only letters, digits, `_`, `.` and `-`, \
             not starting with `.` (at most 128) in the file name\n"
        )
    );
}

#[test]
fn preset_strings_that_reach_scripts_are_checked_for_what_they_are() {
    let cases = [
        (
            "entrypoint = \"skyrl_train.entrypoints.main_base$(touch pwned)\"\n",
            "entrypoint `skyrl_train.entrypoints.main_base$(touch pwned)` is not a Python module path",
        ),
        (
            "[model]\npolicy = \"Qwen/../../scratch\"\n",
            "model.policy `Qwen/../../scratch` is not a Hugging Face model id",
        ),
        (
            "[data]\ndataset = \"../scratch\"\n",
            "data.dataset `../scratch` must be a plain name under the data root",
        ),
        (
            "[data]\ntrain = \"x.parquet;rm -rf ~\"\n",
            "data.train `x.parquet;rm -rf ~` must be a plain name under the data root",
        ),
    ];
    for (body, message) in cases {
        let sandbox = Sandbox::new();
        let file = write(
            &sandbox,
            "runs/hostile.toml",
            &format!("extends = \"gsm8k-canary\"\n{body}"),
        );
        let err = fails(sandbox.rlctl().args(["launch", "hostile", "--dry-run"]));
        assert!(
            err.starts_with(&format!(
                "rlctl: error: {file}: preset `hostile`: {message}"
            )),
            "{err}"
        );
        assert!(
            !sandbox.root().join("work/runs").exists(),
            "nothing written"
        );
    }
}

#[test]
fn a_missing_parent_or_base_names_the_file_that_points_at_it() {
    let sandbox = Sandbox::new();
    let child = write(
        &sandbox,
        "runs/child.toml",
        "extends = \"no-such-parent\"\n",
    );
    let grid = write(
        &sandbox,
        "grids/orphans.toml",
        "description = \"d\"\nbase = \"no-such-base\"\n[[cells]]\nname = \"c1\"\ndescription = \"d\"\n",
    );
    let err = fails(sandbox.rlctl().args(["show", "child"]));
    assert!(
        err.starts_with(&format!(
            "rlctl: error: {child}: preset `child` extends `no-such-parent`: unknown preset `no-such-parent`"
        )),
        "{err}"
    );
    let err = fails(sandbox.rlctl().args(["show", "orphans/c1"]));
    assert!(
        err.starts_with(&format!(
            "rlctl: error: {grid}: grid `orphans` has base `no-such-base`: unknown preset `no-such-base`"
        )),
        "{err}"
    );
    // `list` still lists everything else, names the broken files, and exits 1.
    let output = sandbox.rlctl().arg("list").output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let out = stdout(&output);
    assert!(out.contains("gsm8k-canary "), "{out}");
    assert!(
        out.contains("child                  (broken: see below)"),
        "{out}"
    );
    let err = String::from_utf8(output.stderr).unwrap();
    assert!(err.contains("2 preset files did not load"), "{err}");
    assert!(err.contains(&child) && err.contains(&grid), "{err}");
}

#[test]
fn a_presets_folder_is_read_as_the_user_meant() {
    let sandbox = Sandbox::new();
    // An editor's lock file beside a preset being edited is not a preset.
    write(&sandbox, "runs/.#mine.toml", "this is not toml");
    ok(sandbox.rlctl().arg("list"));
    // A misspelt subfolder would be silently ignored: it is an error with the fix.
    write(&sandbox, "run/mine.toml", "extends = \"gsm8k-canary\"\n");
    let err = fails(sandbox.rlctl().arg("list"));
    assert!(
        err.contains("unknown presets subfolder")
            && err.contains("did you mean")
            && err.contains("/runs`"),
        "{err}"
    );
}

#[test]
fn a_grid_without_cells_and_names_of_the_wrong_kind_are_explained() {
    let sandbox = Sandbox::new();
    let grid = write(
        &sandbox,
        "grids/empty.toml",
        "description = \"d\"\nbase = \"gsm8k-canary\"\ncells = []\n",
    );
    let err = fails(
        sandbox
            .rlctl()
            .args(["grid", "--all", "empty", "--dry-run"]),
    );
    assert_eq!(
        err,
        format!(
            "rlctl: error: {grid}: the grid has no cells: add `[[cells]]` tables, each with a `name`\n"
        )
    );
    let err = fails(sandbox.rlctl().args(["grid", "gsm8k-canary", "--dry-run"]));
    assert!(
        err.contains("`gsm8k-canary` is a run preset, not a grid cell: run it with `rlctl launch gsm8k-canary`"),
        "{err}"
    );
    let err = fails(
        sandbox
            .rlctl()
            .args(["grid", "gsm8k-throughput", "--dry-run"]),
    );
    assert!(err.contains("rlctl grid --all gsm8k-throughput"), "{err}");
}

#[test]
fn flag_values_that_would_misbehave_are_refused() {
    let sandbox = Sandbox::new();
    let err = fails(sandbox.rlctl().args([
        "launch",
        "gsm8k-canary",
        "--dry-run",
        "--time",
        "99999999999999-00:00:00",
    ]));
    assert!(err.contains("a wall time is at most 365 days"), "{err}");
    let err = fails(
        sandbox
            .rlctl()
            .args(["render", "gsm8k-canary", "--out", ""]),
    );
    assert!(err.contains("invalid --out ``"), "{err}");
    let err =
        fails(
            sandbox
                .rlctl()
                .args(["launch", "gsm8k-canary", "--dry-run", "--job-name", ".."]),
        );
    assert!(err.contains("invalid --job-name `..`"), "{err}");
    let err =
        fails(
            sandbox
                .rlctl()
                .args(["check", "gsm8k-canary", "--nodes", "65", "--qos", "normal"]),
        );
    assert!(!err.contains("shorten --time"), "{err}");
}
