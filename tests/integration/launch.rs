//! Submission through the real binary with a fake `sbatch` first on PATH: what reaches sbatch,
//! what lands on disk, and what happens when sbatch fails.

use crate::common::run_dir;
use crate::common::{Sandbox, fails, ok, stdout};

#[test]
fn launch_writes_the_run_folder_then_submits_and_records_the_job() {
    let sandbox = Sandbox::new();
    let dry = ok(sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--dry-run"]));
    assert!(
        !sandbox.root().join("work/runs").exists(),
        "a dry run writes nothing"
    );
    assert_eq!(sandbox.sbatch_calls(), 0, "a dry run submits nothing");

    let out = ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    let dir = run_dir(&sandbox, "gsm8k-canary", "gsm8k-canary", "001");
    assert!(
        stdout(&out).starts_with("gsm8k-canary: job 1001\n"),
        "{}",
        stdout(&out)
    );
    assert_eq!(
        sandbox.sbatch_argv(1),
        [
            "--parsable".to_owned(),
            dir.join("sbatch.sh").display().to_string()
        ]
    );
    // What was submitted is exactly what the dry run showed.
    let dry = stdout(&dry);
    for script in ["sbatch.sh", "run.sh"] {
        let text = std::fs::read_to_string(dir.join(script)).unwrap();
        assert!(dry.contains(&text), "{script} differs from the dry run");
    }
    let record: toml::Table =
        toml::from_str(&std::fs::read_to_string(dir.join("submission.toml")).unwrap()).unwrap();
    assert_eq!(record["job_id"].as_str(), Some("1001"));
    assert_eq!(record["target"].as_str(), Some("gsm8k-canary"));

    // A second launch never overwrites the scripts a queued job will read.
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    assert!(
        run_dir(&sandbox, "gsm8k-canary", "gsm8k-canary", "002")
            .join("run.sh")
            .is_file()
    );
    assert!(dir.join("run.sh").is_file());
}

#[test]
fn a_failing_sbatch_is_an_error_with_its_stderr_and_leaves_nothing() {
    let sandbox = Sandbox::new();
    let err = fails(
        sandbox
            .rlctl()
            .args(["launch", "gsm8k-canary"])
            .env("FAKE_SBATCH_FAIL_AT", "1"),
    );
    let script = run_dir(&sandbox, "gsm8k-canary", "gsm8k-canary", "001").join("sbatch.sh");
    assert_eq!(
        err,
        format!(
            "rlctl: error: sbatch failed: `sbatch --parsable {}` (exit status: 1):\n  \
             sbatch: error: invalid partition specified: boost_usr_prod\n  \
             sbatch: error: Batch job submission failed: Invalid partition name specified\n",
            script.display()
        )
    );
    assert!(
        !script.parent().unwrap().exists(),
        "no run folder for a job that was not queued"
    );
}

#[test]
fn a_missing_sbatch_names_the_flag_and_variable_to_set() {
    let sandbox = Sandbox::new();
    let err =
        fails(
            sandbox
                .rlctl()
                .args(["launch", "gsm8k-canary", "--sbatch", "/nonexistent/sbatch"]),
        );
    assert!(
        err.starts_with("rlctl: error: cannot run `/nonexistent/sbatch`: "),
        "{err}"
    );
    assert!(
        err.contains("pass --sbatch PATH (or set RLCTL_SBATCH)"),
        "{err}"
    );
    let err = fails(
        sandbox
            .rlctl()
            .args(["launch", "gsm8k-canary"])
            .env("RLCTL_SBATCH", "/nonexistent/sbatch2"),
    );
    assert!(err.contains("`/nonexistent/sbatch2`"), "{err}");
}

#[test]
fn grid_all_submits_every_cell_eight_wide() {
    let sandbox = Sandbox::new();
    let out = ok(sandbox
        .rlctl()
        .args(["grid", "--all", "gsm8k-accuracy", "--", "trainer.seed=7"]));
    assert_eq!(sandbox.sbatch_calls(), 20);
    let text = stdout(&out);
    for i in 1..=20 {
        let argv = sandbox.sbatch_argv(i);
        let script =
            std::fs::read_to_string(sandbox.root().join(format!("sbatch-calls/script.{i}")))
                .unwrap();
        if i > 8 {
            assert_eq!(argv[1], format!("--dependency=afterany:{}", 1000 + i - 8));
        } else {
            assert!(
                !argv.iter().any(|a| a.starts_with("--dependency")),
                "{argv:?}"
            );
        }
        assert!(script.contains("#SBATCH --job-name=gsm8k-accuracy."));
        assert!(text.contains(&format!("job {}", 1000 + i)));
    }
    let ckpt_dirs: std::collections::BTreeSet<String> = (1..=20)
        .map(|i| {
            let script =
                std::fs::read_to_string(sandbox.root().join(format!("sbatch-calls/script.{i}")))
                    .unwrap();
            script
                .lines()
                .find(|l| l.starts_with("ckpt_path="))
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(
        ckpt_dirs.len(),
        20,
        "every cell has its own checkpoint folder"
    );
}

#[test]
fn a_grid_interrupted_by_sbatch_reports_what_was_queued() {
    let sandbox = Sandbox::new();
    let err = fails(
        sandbox
            .rlctl()
            .args(["grid", "--all", "gsm8k-throughput"])
            .env("FAKE_SBATCH_FAIL_AT", "4"),
    );
    // The big-batch cells are warned about first: the reference scaled to their samples per
    // step needs a second slot.
    let (slots, err): (Vec<&str>, Vec<&str>) = err.lines().partition(|l| l.contains("[slots]"));
    assert!(
        slots.len() == 2 && slots[0].contains("combo_C") && slots[1].contains("combo_D"),
        "{slots:?}"
    );
    let err: String = err.iter().map(|l| format!("{l}\n")).collect();
    let script = run_dir(&sandbox, "gsm8k-throughput", "tbs256", "001").join("sbatch.sh");
    assert_eq!(
        err,
        format!(
            "rlctl: error: cell `gsm8k-throughput/tbs256` was not submitted: sbatch failed: \
             `sbatch --parsable {}` (exit status: 1):\n  \
             sbatch: error: invalid partition specified: boost_usr_prod\n  \
             sbatch: error: Batch job submission failed: Invalid partition name specified\n\
             these cells were submitted before it and are queued:\n  \
             gsm8k-throughput/base: job 1001\n  gsm8k-throughput/tbs64: job 1002\n  gsm8k-throughput/tbs128: job 1003\n",
            script.display()
        )
    );
    assert_eq!(
        sandbox.sbatch_calls(),
        4,
        "nothing after the failed cell is submitted"
    );
    for (cell, recorded) in [
        ("base", true),
        ("tbs64", true),
        ("tbs128", true),
        ("tbs256", false),
        ("tbs512", false),
    ] {
        let record = run_dir(&sandbox, "gsm8k-throughput", cell, "001").join("submission.toml");
        assert_eq!(record.is_file(), recorded, "{cell}");
    }
}

#[test]
fn user_overrides_come_after_the_cells_own() {
    let sandbox = Sandbox::new();
    let out = stdout(&ok(sandbox.rlctl().args([
        "grid",
        "tbs128",
        "--dry-run",
        "--",
        "trainer.epochs=2",
    ])));
    let tail: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.contains("# cell gsm8k-throughput/tbs128"))
        .take(6)
        .collect();
    assert_eq!(
        tail,
        [
            "  # cell gsm8k-throughput/tbs128",
            "  'trainer.train_batch_size=128'",
            "  'trainer.policy_mini_batch_size=128'",
            "  # command line",
            "  'trainer.epochs=2'",
            "  # set by rlctl",
        ]
    );
    assert_eq!(
        out.matches("trainer.epochs=").count(),
        1,
        "the canary's epochs=1 is replaced, not repeated"
    );
}

#[test]
fn names_that_do_not_exist_get_a_suggestion() {
    let sandbox = Sandbox::new();
    let err = fails(sandbox.rlctl().args(["launch", "gsm8k-canry", "--dry-run"]));
    assert_eq!(
        err,
        "rlctl: error: unknown preset `gsm8k-canry`: did you mean `gsm8k-canary`? (known: gsm8k-canary, gsm8k-multinode, math-longcot, math-multinode, opd-qwen3, opd-qwen3-smoke)\n"
    );
    let err = fails(sandbox.rlctl().args(["grid", "tbs129", "--dry-run"]));
    assert!(
        err.starts_with(
            "rlctl: error: unknown cell `tbs129`: did you mean `gsm8k-throughput/tbs128`?"
        ),
        "{err}"
    );
    let err = fails(sandbox.rlctl().args([
        "--cluster",
        "leonard",
        "launch",
        "gsm8k-canary",
        "--dry-run",
    ]));
    assert!(
        err.starts_with("rlctl: error: unknown cluster `leonard`: did you mean `leonardo`?"),
        "{err}"
    );
    let err = fails(sandbox.rlctl().args(["launch", "tbs128", "--dry-run"]));
    assert_eq!(
        err,
        "rlctl: error: `tbs128` is a grid cell, not a preset: run it with `rlctl grid gsm8k-throughput/tbs128`\n"
    );
    let err = fails(sandbox.rlctl().args([
        "launch",
        "gsm8k-canary",
        "--qos",
        "boost_qos_dgb",
        "--dry-run",
    ]));
    assert!(
        err.starts_with("rlctl: error: unknown QOS `boost_qos_dgb`: did you mean `boost_qos_dbg`?"),
        "{err}"
    );
}

#[test]
fn a_cell_name_in_two_grids_must_be_qualified() {
    let sandbox = Sandbox::new();
    let err = fails(sandbox.rlctl().args(["grid", "n16", "--dry-run"]));
    assert_eq!(
        err,
        "rlctl: error: `n16` is ambiguous: it is `gsm8k-accuracy/n16` or `gsm8k-throughput/n16`; name one of them\n"
    );
    ok(sandbox
        .rlctl()
        .args(["grid", "gsm8k-accuracy/n16", "--dry-run"]));
}

#[test]
fn environment_knobs_after_the_separator_are_refused_before_anything_happens() {
    let sandbox = Sandbox::new();
    let err = fails(sandbox.rlctl().args([
        "launch",
        "gsm8k-canary",
        "--",
        "trainer.epochs=2",
        "RESUME_MODE=latest",
    ]));
    assert_eq!(
        err,
        "rlctl: error: override `RESUME_MODE=latest`: `RESUME_MODE` is not a hydra key, and environment knobs \
         are not passed after `--`: use --resume fresh|latest\n"
    );
    assert_eq!(sandbox.sbatch_calls(), 0);
    assert!(!sandbox.root().join("work/runs").exists());
}

#[test]
fn resume_latest_makes_every_slot_resume() {
    let sandbox = Sandbox::new();
    let out = stdout(&ok(sandbox.rlctl().args([
        "launch",
        "gsm8k-canary",
        "--resume",
        "latest",
        "--dry-run",
    ])));
    // The job decides the mode from the checkpoint folder; no slot is a fresh run's first.
    assert!(out.contains("\nfirst_slot=false\n"), "{out}");
    assert!(out.contains("overrides+=(\"trainer.resume_mode=$resume_mode\")"));
    assert!(!out.contains("'trainer.resume_mode="));
}

#[test]
fn flags_reach_the_sbatch_header() {
    let sandbox = Sandbox::new();
    let out = stdout(&ok(sandbox.rlctl().args([
        "launch",
        "gsm8k-canary",
        "--dry-run",
        "--qos",
        "normal",
        "--time",
        "12:00:00",
        "--job-name",
        "canary-b",
    ])));
    for line in [
        "#SBATCH --qos=normal",
        "#SBATCH --time=12:00:00",
        "#SBATCH --job-name=canary-b",
        "#SBATCH --account=rlctl_test",
    ] {
        assert!(out.lines().any(|l| l == line), "{line}");
    }
    assert!(
        out.contains("/work/checkpoints/gsm8k-canary/canary-b/ckpt"),
        "the job name picks the checkpoint folder"
    );
    let err = fails(
        sandbox
            .rlctl()
            .args(["launch", "gsm8k-canary", "--time", "90", "--dry-run"]),
    );
    assert!(
        err.contains("`90` is not a wall time: write HH:MM:SS or D-HH:MM:SS"),
        "{err}"
    );
    let err =
        fails(
            sandbox
                .rlctl()
                .args(["launch", "gsm8k-canary", "--job-name", "a b", "--dry-run"]),
        );
    assert!(err.contains("invalid --job-name `a b`"), "{err}");
    let out = stdout(&ok(sandbox.rlctl().args([
        "launch",
        "gsm8k-canary",
        "--nodes",
        "2",
        "--dry-run",
    ])));
    assert!(out.lines().any(|l| l == "#SBATCH --nodes=2"));
    assert!(
        out.contains("  # implied by --nodes 2\n  'generator.num_inference_engines=8'\n"),
        "{out}"
    );
}

#[test]
fn queued_cells_are_skipped_and_chained_on() {
    let sandbox = Sandbox::new();
    std::fs::write(
        sandbox.root().join("sbatch-calls/queue"),
        "777|gsm8k-throughput.base|RUNNING\n778|gsm8k-throughput.tbs64|PENDING\n",
    )
    .unwrap();
    let out = stdout(&ok(sandbox.rlctl().args([
        "grid",
        "--all",
        "gsm8k-throughput",
    ])));
    assert!(
        out.starts_with(
            "gsm8k-throughput/base: already queued as job 777 (RUNNING); skipped\n\
         gsm8k-throughput/tbs64: already queued as job 778 (PENDING); skipped\n\
         gsm8k-throughput/tbs128: job 1001\n"
        ),
        "{out}"
    );
    assert_eq!(sandbox.sbatch_calls(), 16);
    // Cell 9 (gmu080) waits on cell 1 (base), which is job 777.
    assert_eq!(sandbox.sbatch_argv(7)[1], "--dependency=afterany:777");
    assert_eq!(sandbox.sbatch_argv(8)[1], "--dependency=afterany:778");
    assert_eq!(sandbox.sbatch_argv(9)[1], "--dependency=afterany:1001");
}

#[test]
fn a_single_launch_of_a_queued_run_is_refused() {
    let sandbox = Sandbox::new();
    std::fs::write(
        sandbox.root().join("sbatch-calls/queue"),
        "555|gsm8k-canary|PENDING\n",
    )
    .unwrap();
    let err = fails(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    assert_eq!(
        err,
        "rlctl: error: gsm8k-canary is already queued as job 555 (PENDING) under the job name `gsm8k-canary`, and a \
         second job would write to its checkpoint folder: wait for it, `scancel 555`, or pick another --job-name\n"
    );
    assert_eq!(sandbox.sbatch_calls(), 0);
    ok(sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--job-name", "canary-2"]));
}
