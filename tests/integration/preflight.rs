//! Every preflight check rejects its bad case with the exact message a user acts on, all
//! problems are reported at once, and a failed check writes, submits and deletes nothing.

use crate::common::{Sandbox, stderr, stdout};
use std::process::Output;

fn run(sandbox: &Sandbox, args: &[&str]) -> Output {
    sandbox
        .rlctl()
        .args(args)
        .env_remove("WANDB_API_KEY")
        .output()
        .unwrap()
}

/// stderr with the sandbox's temp path replaced, for snapshots.
fn redacted(sandbox: &Sandbox, output: &Output) -> String {
    stderr(output).replace(&sandbox.root().display().to_string(), "[ROOT]")
}

fn assert_rejected(sandbox: &Sandbox, output: &Output) {
    assert!(
        !output.status.success(),
        "expected a preflight failure:\n{}",
        stdout(output)
    );
    assert!(
        stderr(output).contains("nothing was written or submitted"),
        "{}",
        stderr(output)
    );
    assert_eq!(sandbox.sbatch_calls(), 0, "a failed check submits nothing");
    assert!(
        !sandbox.root().join("work/runs").exists(),
        "a failed check writes nothing"
    );
}

fn edit_profile(sandbox: &Sandbox, from: &str, to: &str) {
    let path = sandbox.presets().join("clusters/test.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{from}");
    std::fs::write(path, text.replace(from, to)).unwrap();
}

#[test]
fn the_canary_passes_every_check() {
    let sandbox = Sandbox::new();
    let output = run(&sandbox, &["check", "gsm8k-canary"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(
        stdout(&output),
        "gsm8k-canary: every preflight check passed\n"
    );
    assert_eq!(stderr(&output), "");
}

#[test]
fn every_embedded_preset_and_cell_passes_on_a_staged_cluster() {
    let sandbox = Sandbox::new();
    for grid in ["gsm8k-throughput", "gsm8k-accuracy"] {
        let output = run(&sandbox, &["grid", "--all", grid, "--dry-run"]);
        assert!(output.status.success(), "{grid}: {}", stderr(&output));
    }
    for preset in ["gsm8k-canary", "math-longcot"] {
        let output = run(&sandbox, &["check", preset]);
        assert!(output.status.success(), "{preset}: {}", stderr(&output));
    }
}

#[test]
fn skyrl_rules() {
    let sandbox = Sandbox::new();
    let output = run(
        &sandbox,
        &[
            "launch",
            "gsm8k-canary",
            "--",
            "trainer.algorithm.use_kl_in_reward=true",
            "trainer.algorithm.use_kl_loss=true",
            "generator.num_inference_engines=2",
            "trainer.train_batch_size=100",
            "trainer.micro_train_batch_size_per_gpu=5",
            "generator.async_engine=false",
            "generator.batched=false",
            "trainer.logger=wandb",
        ],
    );
    assert_rejected(&sandbox, &output);
    insta::assert_snapshot!(redacted(&sandbox, &output));
}

#[test]
fn disaggregated_placement_must_fit_the_node() {
    let sandbox = Sandbox::new();
    let output = run(
        &sandbox,
        &[
            "launch",
            "colocate_off",
            "--",
            "generator.num_inference_engines=3",
        ],
    );
    // colocate_off is a grid cell; launch refuses it before any check.
    assert!(stderr(&output).contains("is a grid cell, not a preset"));
    let output = run(
        &sandbox,
        &[
            "grid",
            "colocate_off",
            "--",
            "generator.num_inference_engines=3",
        ],
    );
    assert_rejected(&sandbox, &output);
    insta::assert_snapshot!(redacted(&sandbox, &output));
}

#[test]
fn write_path_follows_symlinks_to_scratch() {
    let sandbox = Sandbox::new();
    let root = sandbox.root();
    std::fs::create_dir_all(root.join("scratch/ckpts")).unwrap();
    std::os::unix::fs::symlink(root.join("scratch/ckpts"), root.join("work/checkpoints")).unwrap();
    let output = run(&sandbox, &["launch", "gsm8k-canary"]);
    assert_rejected(&sandbox, &output);
    insta::assert_snapshot!(redacted(&sandbox, &output));
}

fn existing_steps(sandbox: &Sandbox) -> std::path::PathBuf {
    let ckpt = sandbox
        .root()
        .join("work/checkpoints/gsm8k-canary/gsm8k-canary/ckpt");
    for step in [10, 20, 5] {
        crate::common::whole_step(&ckpt, step, 4);
    }
    ckpt
}

#[test]
fn a_fresh_start_over_checkpoints_is_refused() {
    let sandbox = Sandbox::new();
    let ckpt = existing_steps(&sandbox);
    let output = run(&sandbox, &["launch", "gsm8k-canary"]);
    assert_rejected(&sandbox, &output);
    insta::assert_snapshot!(redacted(&sandbox, &output));
    assert!(
        ckpt.join("global_step_20").is_dir(),
        "a failed check deletes nothing"
    );

    let output = run(&sandbox, &["launch", "gsm8k-canary", "--resume", "latest"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(ckpt.join("global_step_20").is_dir());
}

#[test]
fn wipe_lists_the_steps_and_the_job_rechecks_the_folder() {
    let sandbox = Sandbox::new();
    let ckpt = existing_steps(&sandbox);
    let output = run(&sandbox, &["launch", "gsm8k-canary", "--wipe"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(
        redacted(&sandbox, &output),
        "rlctl: note: [resume] --wipe: the job will delete global_step_5, global_step_10, global_step_20 (and \
         latest_ckpt_global_step.txt) in `[ROOT]/work/checkpoints/gsm8k-canary/gsm8k-canary/ckpt` before it starts\n\
         rlctl: estimate: gsm8k-canary: 100 steps x 9.58 s/step = 19m58s wall, 1.33 GPU-h, 1 slot(s) of 30m00s\n\
         next: `rlctl watch gsm8k-canary` follows it; `rlctl status gsm8k-canary` lists its jobs\n"
    );
    assert!(
        ckpt.join("global_step_20").is_dir(),
        "rlctl itself deletes nothing; the job does"
    );

    // Run the wipe part of the rendered job for real: it deletes the steps and nothing else.
    std::fs::write(ckpt.join("latest_ckpt_global_step.txt"), "20").unwrap();
    std::fs::write(ckpt.join("keep.txt"), "mine").unwrap();
    let script = sandbox.sbatch_argv(1).last().unwrap().clone();
    let text = std::fs::read_to_string(&script).unwrap();
    let wipe_only: String = text.split("\nmkdir -p").next().unwrap().to_owned();
    let status = std::process::Command::new("bash")
        .arg("-c")
        .arg(&wipe_only)
        .status()
        .unwrap();
    assert!(status.success());
    assert!(
        !ckpt.join("global_step_10").exists() && !ckpt.join("latest_ckpt_global_step.txt").exists()
    );
    assert!(ckpt.join("keep.txt").is_file());

    // The job refuses a folder that moved outside the checkpoint root since rlctl checked it.
    std::fs::create_dir_all(ckpt.join("global_step_30")).unwrap();
    let elsewhere = sandbox.root().join("scratch/moved");
    std::fs::create_dir_all(elsewhere.parent().unwrap()).unwrap();
    std::fs::rename(&ckpt, &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &ckpt).unwrap();
    let output = std::process::Command::new("bash")
        .arg("-c")
        .arg(&wipe_only)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("rlctl: refusing to wipe"));
    assert!(elsewhere.join("global_step_30").is_dir());

    let output = run(
        &sandbox,
        &["launch", "gsm8k-canary", "--wipe", "--resume", "latest"],
    );
    assert!(
        stderr(&output).contains("invalid --wipe `with --resume latest`"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn missing_model_and_data_print_the_staging_commands() {
    let sandbox = Sandbox::new();
    std::fs::remove_dir_all(
        sandbox
            .root()
            .join("work/hub/models--Qwen--Qwen2.5-1.5B-Instruct"),
    )
    .unwrap();
    std::fs::remove_file(sandbox.root().join("work/data/gsm8k/validation.parquet")).unwrap();
    let output = run(&sandbox, &["launch", "gsm8k-canary"]);
    assert_rejected(&sandbox, &output);
    insta::assert_snapshot!(redacted(&sandbox, &output));
}

#[test]
fn without_the_cluster_filesystem_the_file_checks_say_they_were_skipped() {
    let output = crate::common::rlctl()
        .args(["check", "gsm8k-canary"])
        .output()
        .unwrap();
    assert!(output.status.success());
    assert_eq!(
        stderr(&output),
        "rlctl: note: profile leonardo: the embedded default (account AIFAC_5C0_290, folders of \
         /leonardo_work/AIFAC_5C0_290/bfeuer00), not yours; run `rlctl init leonardo --account ACCOUNT`\n\
         rlctl: skipped: [offline] `/leonardo_work/AIFAC_5C0_290/bfeuer00` does not exist on this machine: the model, \
         data, existing-checkpoint and disk-room checks did not run\n"
    );
    assert_eq!(
        stdout(&output),
        "gsm8k-canary: every preflight check passed (1 could not run here; see above)\n"
    );
}

#[test]
fn the_profile_cannot_turn_the_offline_environment_off() {
    let sandbox = Sandbox::new();
    std::fs::write(
        sandbox.presets().join("clusters/test.toml"),
        std::fs::read_to_string(sandbox.presets().join("clusters/test.toml")).unwrap()
            + "\n[env]\nHF_HUB_OFFLINE = \"0\"\nRAY_TMPDIR = \"/x\"\n",
    )
    .unwrap();
    let output = run(&sandbox, &["launch", "gsm8k-canary"]);
    assert_rejected(&sandbox, &output);
    insta::assert_snapshot!(redacted(&sandbox, &output));
}

#[test]
fn gpu_ceilings() {
    let sandbox = Sandbox::new();
    let output = run(
        &sandbox,
        &[
            "launch",
            "gsm8k-canary",
            "--",
            "generator.gpu_memory_utilization=0.9",
            "trainer.policy.model.path=Qwen/Qwen3-32B",
            "teacher.model_path=Qwen/Qwen3-32B",
            // No saves: the disk-room check, whose figures are this machine's free space, has
            // nothing to judge (its own tests are in disk_room.rs).
            "trainer.ckpt_interval=-1",
        ],
    );
    assert_rejected(&sandbox, &output);
    insta::assert_snapshot!(redacted(&sandbox, &output));
}

#[test]
fn allow_turns_one_named_check_into_a_warning() {
    let sandbox = Sandbox::new();
    let args = [
        "launch",
        "gsm8k-canary",
        "--",
        "generator.gpu_memory_utilization=0.9",
    ];
    let mut with_allow = args[..2].to_vec();
    with_allow.extend(["--allow", "gpu-mem-above-ceiling"]);
    with_allow.extend(&args[2..]);
    let output = run(&sandbox, &with_allow);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output)
            .starts_with("rlctl: warning: [gpu] `generator.gpu_memory_utilization=0.9` is above")
    );
    let output = run(&sandbox, &["launch", "gsm8k-canary", "--force"]);
    assert!(
        stderr(&output).contains("unexpected argument '--force'"),
        "no blanket force"
    );
}

#[test]
fn qos_limits_name_the_qos_that_fits() {
    let sandbox = Sandbox::new();
    let output = run(&sandbox, &["launch", "gsm8k-canary", "--time", "01:00:00"]);
    assert_rejected(&sandbox, &output);
    insta::assert_snapshot!(redacted(&sandbox, &output));
    let output = run(
        &sandbox,
        &[
            "launch",
            "gsm8k-canary",
            "--qos",
            "normal",
            "--time",
            "1-00:00:00",
        ],
    );
    assert_rejected(&sandbox, &output);
    assert!(
        stderr(&output).contains("no QOS of this cluster allows it"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_long_ray_temp_root_overflows_the_socket_path() {
    let sandbox = Sandbox::new();
    edit_profile(
        &sandbox,
        "ray_tmp_root = \"/tmp\"",
        "ray_tmp_root = \"/leonardo_scratch/fast/AIFAC_5C0_290/bfeuer00/ray\"",
    );
    let output = run(&sandbox, &["launch", "gsm8k-canary"]);
    assert_rejected(&sandbox, &output);
    insta::assert_snapshot!(redacted(&sandbox, &output));
}

#[test]
fn the_wrapper_unsets_every_leaky_variable() {
    let sandbox = Sandbox::new();
    let output = run(&sandbox, &["render", "gsm8k-canary"]);
    let text = stdout(&output);
    let unset = text.lines().find(|l| l.starts_with("unset ")).unwrap();
    for var in rlctl::plan::env::LEAKY_VARS {
        assert!(unset.split(' ').any(|w| w == var), "{var} is not unset");
    }
}

#[test]
fn bad_inputs_are_all_rejected_with_nothing_written() {
    // Each bad input, and the one check that must refuse it: a case refused by some other
    // check would hide that its own check let it through.
    let corpus: &[(&str, &[&str])] = &[
        ("skyrl-rules", &["--", "trainer.train_batch_size=33"]),
        ("gpu", &["--", "generator.gpu_memory_utilization=0.95"]),
        ("skyrl-rules", &["--", "trainer.policy_mini_batch_size=64"]),
        (
            "skyrl-rules",
            &["--", "generator.inference_engine_tensor_parallel_size=2"],
        ),
        ("skyrl-rules", &["--", "trainer.logger=wandb"]),
        (
            "skyrl-rules",
            &["--", "trainer.micro_train_batch_size_per_gpu=3"],
        ),
        ("skyrl-rules", &["--", "generator.n_samples_per_prompt=0"]),
        (
            "offline",
            &["--", "trainer.policy.model.path=Qwen/Qwen2.5-7B-Instruct"],
        ),
        (
            "offline",
            &["--", "data.train_data=['/nonexistent/train.parquet']"],
        ),
        ("qos", &["--time", "00:31:00"]),
        ("qos", &["--qos", "normal", "--time", "1-00:00:00"]),
    ];
    for (check, args) in corpus {
        let sandbox = Sandbox::new();
        let mut full = vec!["launch", "gsm8k-canary"];
        full.extend(*args);
        let output = run(&sandbox, &full);
        assert_rejected(&sandbox, &output);
        let err = stderr(&output);
        let tags: Vec<&str> = (err.lines())
            .filter_map(|l| l.trim_start().strip_prefix('[')?.split_once(']'))
            .map(|(tag, _)| tag)
            .collect();
        assert!(
            tags.contains(check),
            "{args:?} must be refused by [{check}], was by {tags:?}:\n{err}"
        );
    }
}

#[test]
fn a_grid_reports_every_cells_problems_and_submits_none() {
    let sandbox = Sandbox::new();
    let output = run(
        &sandbox,
        &[
            "grid",
            "--all",
            "gsm8k-throughput",
            "--",
            "trainer.policy_mini_batch_size=48",
        ],
    );
    assert_rejected(&sandbox, &output);
    let err = stderr(&output);
    assert!(
        err.contains("gsm8k-throughput/tbs64: [skyrl-rules]"),
        "{err}"
    );
    assert!(err.lines().count() > 10, "{err}");
}

/// The teacher scores prompt + response with one token to generate: rlctl gives its engine that
/// context (+1) unless a layer sets one, and refuses a set one that is shorter. (On the leonardo profile, where the file checks
/// are skipped: the sandbox stages no 32B teacher.)
#[test]
fn the_teacher_context_follows_the_lengths_and_a_set_one_must_hold_them() {
    let knob = |args: &[&str]| -> Option<String> {
        let out = crate::common::ok(crate::common::rlctl().args(args));
        let plan: toml::Table = toml::from_str(&stdout(&out)).unwrap();
        let knobs = plan["knobs"].as_table().unwrap();
        knobs
            .get("+teacher.engine_init_kwargs.max_model_len")
            .map(|v| v.as_integer().unwrap().to_string())
    };
    assert_eq!(knob(&["show", "opd-qwen3"]).as_deref(), Some("1537"));
    assert_eq!(
        knob(&[
            "show",
            "opd-qwen3",
            "--",
            "generator.sampling_params.max_generate_length=2048"
        ])
        .as_deref(),
        Some("2561"),
        "a longer generation on the command line lengthens the teacher's context"
    );
    assert_eq!(
        knob(&["show", "opd-speed-convergence/opd-gen512"]).as_deref(),
        Some("1025")
    );
    assert_eq!(knob(&["show", "gsm8k-canary"]), None, "no teacher, no key");

    let output = crate::common::rlctl()
        .args([
            "check",
            "opd-qwen3",
            "--",
            "+teacher.engine_init_kwargs.max_model_len=2560",
            "generator.sampling_params.max_generate_length=2048",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(
        stderr(&output).contains(
            "  [teacher-context] `+teacher.engine_init_kwargs.max_model_len=2560` (command line) is shorter than \
             the sequences the teacher scores: `trainer.max_prompt_length=512` + \
             `generator.sampling_params.max_generate_length=2048` + 1 (the token vLLM generates) = 2561; \
             MarinSkyRL cuts a longer one to 2559 tokens and the cut tokens get no teacher score: drop it (rlctl \
             then derives it from the lengths) or set it to at least 2561\n"
        ),
        "{}",
        stderr(&output)
    );
    // Set by hand and long enough: kept as given.
    let args = [
        "show",
        "opd-qwen3",
        "--",
        "+teacher.engine_init_kwargs.max_model_len=4096",
        "generator.sampling_params.max_generate_length=2048",
    ];
    assert_eq!(knob(&args).as_deref(), Some("4096"));
    let mut check = args;
    check[0] = "check";
    crate::common::ok(crate::common::rlctl().args(check));
}
