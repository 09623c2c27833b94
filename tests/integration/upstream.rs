//! Upstream SkyRL (the `skyrl` package) beside MarinSkyRL: the flavour comes from the checkout,
//! one preset renders for either, and the upstream job's command line is the one the real
//! `SkyRLTrainConfig.from_cli_overrides` accepts (the stand-in checkout of
//! tests/standin/upstream_checkout.py parses it with the wheel's own config).

use crate::common::{Sandbox, fails, ok, slurm_slot, stdout, write_exec};
use rlctl::preset::Library;
use rlctl::schema::Schema;
use std::process::Command;

/// The sandbox's `test` profile on an upstream checkout: the stand-in package with the wheel's
/// real config, and the venv's python the tests' python3 (which has omegaconf and the wheel's
/// dependencies that the config imports).
pub(crate) fn upstream_sandbox() -> Sandbox {
    let sandbox = Sandbox::new();
    let root = sandbox.root();
    let checkout = root.join("skyrl");
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/standin/upstream_checkout.py"
    );
    ok(Command::new("python3").arg(script).arg(&checkout));
    let python = ok(Command::new("python3").args(["-c", "import sys; print(sys.executable)"]));
    std::fs::create_dir_all(root.join("venv/bin")).unwrap();
    write_exec(
        &root.join("venv/bin/python"),
        &format!("#!/bin/bash\nexec {} \"$@\"\n", stdout(&python).trim()),
    );
    let profile = sandbox.presets().join("clusters/test.toml");
    let text = std::fs::read_to_string(&profile).unwrap();
    let text = text.replace(
        "schema = \"marinskyrl-a559688\"",
        "schema = \"skyrl-0.4.0\"",
    );
    std::fs::write(profile, text).unwrap();
    sandbox
}

fn upstream_view() -> Schema {
    let library = Library::load(None).unwrap();
    let upstream = library.schema("skyrl-0.4.0").unwrap();
    let marin = library.schema("marinskyrl-a559688").unwrap();
    Schema::upstream_view(&upstream, &marin).unwrap()
}

#[test]
fn the_rename_table_is_worked_out_from_the_two_key_lists() {
    let view = upstream_view();
    let table: String = (view.renamed().iter())
        .map(|(marin, upstream)| format!("{marin} -> {upstream}\n"))
        .collect();
    insta::assert_snapshot!(table);
    // Every pair names a key of each list, and each key once.
    let library = Library::load(None).unwrap();
    let marin = library.schema("marinskyrl-a559688").unwrap();
    let upstream = library.schema("skyrl-0.4.0").unwrap();
    for (m, u) in view.renamed() {
        assert!(marin.default_text(m).is_some(), "{m}");
        if m != "generator.async_engine" {
            assert!(upstream.default_text(u).is_some(), "{u}");
        }
    }
}

#[test]
fn one_preset_renders_for_upstream_with_its_module_folder_and_names() {
    let sandbox = upstream_sandbox();
    let out = ok(sandbox.rlctl().args([
        "launch",
        "gsm8k-canary",
        "--dry-run",
        "--",
        "trainer.max_steps=5",
    ]));
    let text = stdout(&out);
    let root = sandbox.root().display();
    assert!(
        text.contains("entrypoint=skyrl.train.entrypoints.main_base"),
        "{text}"
    );
    assert!(text.contains(&format!("checkout={root}/skyrl\n")), "{text}");
    assert!(
        text.contains("'generator.inference_engine.num_engines="),
        "{text}"
    );
    assert!(text.contains("'trainer.max_training_steps=5'"), "{text}");
    assert!(!text.contains("'+"), "upstream refuses `+`: {text}");
    assert!(!text.contains("skyrl-train"), "{text}");
    // A key typed under upstream's name is the same knob.
    let out = ok(sandbox.rlctl().args([
        "launch",
        "gsm8k-canary",
        "--dry-run",
        "--",
        "trainer.max_training_steps=7",
    ]));
    assert!(stdout(&out).contains("'trainer.max_training_steps=7'"));
    // `show` names each knob as the trainer reads it.
    let shown = stdout(&ok(sandbox.rlctl().args([
        "show",
        "gsm8k-canary",
        "--",
        "trainer.max_steps=7",
    ])));
    assert!(shown.contains("flavour = \"upstream\""), "{shown}");
    assert!(
        shown.contains("\"trainer.max_training_steps\" = 7  # command line"),
        "{shown}"
    );
    assert!(
        !shown.contains("\"generator.num_inference_engines\""),
        "{shown}"
    );
}

#[test]
fn knobs_without_a_counterpart_are_refused_with_the_reason() {
    let sandbox = upstream_sandbox();
    let error = fails(sandbox.rlctl().args(["check", "opd-qwen3-smoke"]));
    // One reason for the teacher's knobs, said once with every key.
    assert!(
        error.contains("`teacher.model_path`, `teacher.num_inference_engines`, "),
        "{error}"
    );
    assert_eq!(
        error.matches("MarinSkyRL's vLLM teacher").count(),
        1,
        "{error}"
    );
    assert!(!error.contains("[skyrl-rules]"), "{error}");
    assert!(
        error.contains("`generator.inference_engine.async_engine=false`")
            || error.contains("`generator.async_engine=false`"),
        "{error}"
    );
    let error =
        fails(
            sandbox
                .rlctl()
                .args(["check", "gsm8k-canary", "--", "+trainer.not_a_key=1"]),
        );
    assert!(
        error.contains("upstream skyrl refuses `+` and has no `trainer.not_a_key`"),
        "{error}"
    );
}

#[test]
fn a_list_of_the_other_flavour_than_the_checkout_is_refused_naming_schema_import() {
    let sandbox = upstream_sandbox();
    let profile = sandbox.presets().join("clusters/test.toml");
    let text = std::fs::read_to_string(&profile).unwrap();
    let text = text.replace(
        "schema = \"skyrl-0.4.0\"",
        "schema = \"marinskyrl-a559688\"",
    );
    std::fs::write(profile, text).unwrap();
    let error = fails(
        sandbox
            .rlctl()
            .args(["launch", "gsm8k-canary", "--dry-run"]),
    );
    assert!(
        error.contains("is a upstream skyrl checkout")
            || error.contains("is an upstream skyrl checkout"),
        "{error}"
    );
    assert!(error.contains("rlctl schema import"), "{error}");
}

/// The canary's job on the upstream stand-in, run by bash as SLURM would: the real
/// `from_cli_overrides` accepts its whole command line and the loop completes.
#[test]
fn the_canary_runs_to_the_end_on_an_upstream_checkout() {
    let sandbox = upstream_sandbox();
    let out = ok(sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--", "trainer.max_steps=2"]));
    assert!(stdout(&out).contains("job "), "{}", stdout(&out));
    let script = sandbox.last_script();
    let log = script.with_file_name("canary.out");
    let status = slurm_slot(&script, &log, "1001", 0)
        .env("PATH", "/usr/bin:/bin")
        .status()
        .unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(status.success(), "{text}");
    assert!(text.contains("WANDB_MIRROR kind=train step=2"), "{text}");
    assert!(!text.contains("CHECK FAILED"), "{text}");
    let ckpt = sandbox
        .root()
        .join("work/checkpoints/gsm8k-canary/gsm8k-canary/ckpt");
    assert_eq!(
        std::fs::read_to_string(ckpt.join("latest_ckpt_global_step.txt"))
            .unwrap()
            .trim(),
        "2"
    );
}

/// Without `software.schema`, the checkout's own config is read (and cached): the same plan as
/// with the shipped list, which was read from the same wheel.
#[test]
fn a_profile_without_a_key_list_reads_the_checkouts_own_config() {
    let sandbox = upstream_sandbox();
    let args = [
        "launch",
        "gsm8k-canary",
        "--dry-run",
        "--",
        "trainer.max_steps=5",
    ];
    let listed = stdout(&ok(sandbox.rlctl().args(args)));
    let profile = sandbox.presets().join("clusters/test.toml");
    let text = std::fs::read_to_string(&profile).unwrap();
    std::fs::write(&profile, text.replace("schema = \"skyrl-0.4.0\"\n", "")).unwrap();
    let read = stdout(&ok(sandbox.rlctl().args(args)));
    let scripts = |text: &str| text.split("==> sbatch command").next().unwrap().to_owned();
    // The run folder's number differs (each dry run takes the next); nothing else may.
    assert_eq!(
        scripts(&listed).replace("/002/", "/001/"),
        scripts(&read).replace("/002/", "/001/")
    );
    assert!(read.contains("'trainer.max_training_steps=5'"), "{read}");
    let error = fails(sandbox.rlctl().args([
        "check",
        "gsm8k-canary",
        "--",
        "generator.inference_engine.not_a_key=1",
    ]));
    assert!(error.contains("not_a_key"), "{error}");
}

/// A `Dict` field whose default is None (`Optional[Dict]`) takes any key below it, upstream's
/// parser and rlctl alike; a key below a plain field is refused by both.
#[test]
fn keys_below_an_optional_dict_are_taken() {
    let sandbox = upstream_sandbox();
    let out = ok(sandbox.rlctl().args([
        "launch",
        "gsm8k-canary",
        "--dry-run",
        "--",
        "generator.sampling_params.additional_kwargs.top_k=3",
        "generator.inference_engine.speculative_config.method=ngram",
    ]));
    assert!(
        stdout(&out).contains("'generator.inference_engine.speculative_config.method=ngram'"),
        "{}",
        stdout(&out)
    );
    let error = fails(sandbox.rlctl().args([
        "check",
        "gsm8k-canary",
        "--",
        "generator.sampling_params.temperature.x=1",
    ]));
    assert!(error.contains("temperature"), "{error}");
}

#[test]
fn async_megatron_saves_keeping_under_two_checkpoints_are_refused_before_the_queue() {
    let sandbox = upstream_sandbox();
    let check = |keep: &str| {
        sandbox
            .rlctl()
            .args(["check", "gsm8k-canary", "--"])
            .arg("trainer.policy.megatron_config.async_dist_ckpt_save=true")
            .arg(format!("trainer.max_ckpts_to_keep={keep}"))
            .output()
            .unwrap()
    };
    let refused = check("1");
    let said = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{said}");
    assert!(
        said.contains(
            "[ckpt-keep] `trainer.policy.megatron_config.async_dist_ckpt_save=true` with \
             `trainer.max_ckpts_to_keep=1`"
        ) && said.contains("set `trainer.max_ckpts_to_keep=2` or more"),
        "{said}"
    );
    for keep in ["2", "-1"] {
        let out = check(keep);
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(!said.contains("[ckpt-keep]"), "{keep}: {said}");
    }
}
