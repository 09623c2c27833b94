//! Submission through the real binary with a fake `sbatch` first on PATH: what reaches sbatch,
//! what lands on disk, and what happens when sbatch fails.

use crate::common::{Sandbox, fails, ok, stderr, stdout};

fn run_dir(sandbox: &Sandbox, group: &str, member: &str, attempt: &str) -> std::path::PathBuf {
    sandbox
        .root()
        .join("work/runs")
        .join(group)
        .join(member)
        .join(attempt)
}

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
            "rlctl: error: `sbatch --parsable {}` failed (exit status: 1):\n  \
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
    let script = run_dir(&sandbox, "gsm8k-throughput", "tbs256", "001").join("sbatch.sh");
    assert_eq!(
        err,
        format!(
            "rlctl: error: cell `gsm8k-throughput/tbs256` was not submitted: `sbatch --parsable {}` \
             failed (exit status: 1):\n  \
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

#[test]
fn the_ledger_records_every_submission_and_a_rerun_adds_only_what_is_missing() {
    let sandbox = Sandbox::new();
    fails(
        sandbox
            .rlctl()
            .args(["grid", "--all", "gsm8k-throughput"])
            .env("FAKE_SBATCH_FAIL_AT", "6"),
    );
    let ledger =
        std::fs::read_to_string(sandbox.root().join("work/runs/ledger.jsonl")).unwrap_or_default();
    assert_eq!(
        ledger.lines().count(),
        5,
        "five cells were queued before sbatch failed:\n{ledger}"
    );
    let first: serde_json::Value = serde_json::from_str(ledger.lines().next().unwrap()).unwrap();
    assert_eq!(first["target"], "gsm8k-throughput/base");
    assert_eq!(first["job_id"], "1001");
    assert_eq!(first["knobs"]["trainer.train_batch_size"], "32");
    let out = stdout(&ok(sandbox.rlctl().args([
        "grid",
        "--all",
        "gsm8k-throughput",
    ])));
    assert_eq!(out.matches("already submitted as job").count(), 5, "{out}");
    assert_eq!(
        sandbox.sbatch_calls(),
        6 + 13,
        "only the 13 missing cells are submitted again"
    );
    let ledger = std::fs::read_to_string(sandbox.root().join("work/runs/ledger.jsonl")).unwrap();
    assert_eq!(ledger.lines().count(), 18);
}

#[test]
fn a_recorded_cell_is_never_altered_mid_series() {
    let sandbox = Sandbox::new();
    ok(sandbox.rlctl().args(["grid", "tbs128"]));
    let err = fails(
        sandbox
            .rlctl()
            .args(["grid", "tbs128", "--", "trainer.epochs=2"]),
    );
    assert_eq!(
        err,
        "rlctl: error: gsm8k-throughput/tbs128 ran as job 1001 with other knobs (trainer.epochs: 1 -> 2): a controlled \
         grid never alters a cell mid-series; run the change as a new cell, e.g. `rlctl grid gsm8k-throughput/tbs128 \
         --as tbs128-v2 ...`\n"
    );
    let out = stdout(&ok(sandbox.rlctl().args([
        "grid",
        "tbs128",
        "--as",
        "tbs128-e2",
        "--",
        "trainer.epochs=2",
    ])));
    assert!(
        out.starts_with("gsm8k-throughput/tbs128-e2: job 1002"),
        "{out}"
    );
    assert!(
        sandbox
            .root()
            .join("work/runs/gsm8k-throughput/tbs128-e2/001/run.sh")
            .is_file()
    );
    let err = fails(sandbox.rlctl().args(["grid", "tbs128", "--as", "tbs64"]));
    assert!(
        err.contains("gsm8k-throughput already has a cell `tbs64`"),
        "{err}"
    );
}

#[test]
fn status_falls_back_to_the_log_without_accounting() {
    let sandbox = Sandbox::new();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    let log = sandbox
        .root()
        .join("work/runs/gsm8k-canary/gsm8k-canary/001/gsm8k-canary_1001.out");
    std::fs::write(
        &log,
        "\x1b[36m(skyrl_entrypoint pid=7)\x1b[0m WANDB_MIRROR kind=train step=1 metrics={\"timing/step\": 9.5, \
         \"reward/avg_raw_reward\": 0.25, \"policy/policy_entropy\": 0.8}\nrlctl: job 1001 finished with status 0\n",
    )
    .unwrap();
    // No sacct on this PATH: the log's last line tells how the job ended.
    let out = stdout(&ok(sandbox
        .rlctl()
        .args(["status"])
        .env("RLCTL_SACCT", "/nonexistent/sacct")));
    let row = out.lines().nth(1).unwrap();
    let words: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        words,
        [
            "gsm8k-canary",
            "1001",
            "COMPLETED",
            "1",
            "9.5",
            "0.25",
            "0.8"
        ],
        "{out}"
    );
    let err = fails(sandbox.rlctl().args(["status", "gsm8k-canry"]));
    assert!(
        err.contains("unknown recorded run `gsm8k-canry`: did you mean `gsm8k-canary`?"),
        "{err}"
    );
}

#[test]
fn a_sites_notices_around_the_job_id_are_read_past() {
    let sandbox = Sandbox::new();
    let out = ok(sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary"])
        .env("FAKE_SBATCH_NOTICE", "maintenance on Friday"));
    assert!(
        stdout(&out).starts_with("gsm8k-canary: job 1001\n"),
        "{}",
        stdout(&out)
    );
    let ledger = std::fs::read_to_string(sandbox.root().join("work/runs/ledger.jsonl")).unwrap();
    assert!(ledger.contains("\"job_id\":\"1001\""), "{ledger}");
}

#[test]
fn an_sbatch_that_succeeds_without_an_id_keeps_the_run_folder() {
    let sandbox = Sandbox::new();
    let err = fails(
        sandbox
            .rlctl()
            .args(["launch", "gsm8k-canary"])
            .env("FAKE_SBATCH_NO_ID", "1"),
    );
    let dir = run_dir(&sandbox, "gsm8k-canary", "gsm8k-canary", "001");
    assert!(err.contains("sbatch printed no job id"), "{err}");
    assert!(err.contains("squeue --me"), "{err}");
    assert!(
        dir.join("run.sh").is_file(),
        "the job sbatch queued reads this run.sh: it must stay"
    );
}

#[test]
fn a_torn_ledger_line_is_skipped_with_a_warning_and_never_glued_to() {
    let sandbox = Sandbox::new();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    let path = sandbox.root().join("work/runs/ledger.jsonl");
    // $WORK filled up in the middle of an append.
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("{\"job_id\":\"1002\",\"tar");
    std::fs::write(&path, &text).unwrap();

    let status = sandbox.rlctl().arg("status").output().unwrap();
    assert!(status.status.success(), "{}", stderr(&status));
    assert!(
        stderr(&status).contains(&format!(
            "rlctl: warning: {}:2: not a ledger record",
            path.display()
        )),
        "{}",
        stderr(&status)
    );
    assert!(
        stdout(&status).contains("gsm8k-canary"),
        "{}",
        stdout(&status)
    );

    ok(sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--job-name", "second"]));
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    let third: serde_json::Value = serde_json::from_str(lines[2]).unwrap();
    assert_eq!(third["job_name"], "second");
}

/// The test profile with Leonardo's submit limit on the debug QOS.
fn with_debug_submit_limit(sandbox: &Sandbox) {
    let path = sandbox.presets().join("clusters/test.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let from = "name = \"boost_qos_dbg\"\nmax_wall = \"00:30:00\"\nmax_nodes = 2\n";
    assert!(text.contains(from));
    std::fs::write(
        path,
        text.replace(from, &format!("{from}max_submit_jobs = 2\n")),
    )
    .unwrap();
}

fn queue(sandbox: &Sandbox, lines: &str) {
    std::fs::write(sandbox.root().join("sbatch-calls/queue"), lines).unwrap();
}

#[test]
fn grid_all_submits_what_the_qos_allows_and_a_rerun_submits_the_next() {
    let sandbox = Sandbox::new();
    with_debug_submit_limit(&sandbox);
    // One job of the user's already holds a debug slot; a job in another QOS does not count.
    queue(
        &sandbox,
        "900|other|RUNNING|boost_qos_dbg\n901|long|RUNNING|normal\n",
    );
    let out = stdout(&ok(sandbox.rlctl().args([
        "grid",
        "--all",
        "gsm8k-throughput",
    ])));
    assert_eq!(sandbox.sbatch_calls(), 1, "{out}");
    assert!(
        out.starts_with("gsm8k-throughput/base: job 1001\n"),
        "{out}"
    );
    assert!(
        out.contains("gsm8k-throughput/tbs64: not submitted: QOS boost_qos_dbg is full\n"),
        "{out}"
    );
    assert!(
        out.ends_with(
            "17 of 18 cells were not submitted: SLURM lets a user have only so many jobs submitted (pending or \
             running) in QOS boost_qos_dbg (2 jobs per user). Once some have ended, run `rlctl grid --all \
             gsm8k-throughput` again with the same flags and overrides: the cells already submitted are in the \
             ledger and are skipped, and the next ones go in.\n"
        ),
        "{out}"
    );

    // Both slots taken (the other job and base): the rerun submits nothing.
    queue(
        &sandbox,
        "900|other|RUNNING|boost_qos_dbg\n1001|gsm8k-throughput.base|PENDING|boost_qos_dbg\n",
    );
    let out = stdout(&ok(sandbox.rlctl().args([
        "grid",
        "--all",
        "gsm8k-throughput",
    ])));
    assert_eq!(sandbox.sbatch_calls(), 1, "{out}");
    assert!(
        out.starts_with("gsm8k-throughput/base: already submitted as job 1001; skipped\n"),
        "{out}"
    );

    // Both ended: the next two go in, waiting on nothing that has left the queue.
    queue(&sandbox, "");
    let out = stdout(&ok(sandbox.rlctl().args([
        "grid",
        "--all",
        "gsm8k-throughput",
    ])));
    assert_eq!(sandbox.sbatch_calls(), 3, "{out}");
    assert!(out.contains("gsm8k-throughput/tbs64: job 1002\n"), "{out}");
    assert!(out.contains("gsm8k-throughput/tbs128: job 1003\n"), "{out}");
    assert!(out.contains("15 of 18 cells were not submitted"), "{out}");
    for n in 2..=3 {
        assert!(
            !sandbox
                .sbatch_argv(n)
                .iter()
                .any(|a| a.starts_with("--dependency")),
            "{:?}",
            sandbox.sbatch_argv(n)
        );
    }
    let ledger = std::fs::read_to_string(sandbox.root().join("work/runs/ledger.jsonl")).unwrap();
    assert_eq!(ledger.lines().count(), 3);
}

#[test]
fn a_launch_or_chain_that_does_not_fit_the_qos_is_refused_before_anything_is_written() {
    let sandbox = Sandbox::new();
    with_debug_submit_limit(&sandbox);
    queue(
        &sandbox,
        "900|a|RUNNING|boost_qos_dbg\n901|b|PENDING|boost_qos_dbg\n",
    );
    let err = fails(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    assert_eq!(
        err,
        "rlctl: error: QOS boost_qos_dbg lets a user have 2 jobs submitted (pending or running) at once, and you \
         have 2 there: sbatch would refuse this job; launch again once one has ended, or pick another QOS with \
         --qos\n"
    );
    assert_eq!(sandbox.sbatch_calls(), 0);
    assert!(!sandbox.root().join("work/runs").exists());
    ok(sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--qos", "normal"]));

    queue(&sandbox, "");
    let err = fails(
        sandbox
            .rlctl()
            // A chain saves once per slot, or `slots` refuses it first.
            .args([
                "launch",
                "gsm8k-canary",
                "--job-name",
                "c3",
                "--chain",
                "3",
                "--",
                "trainer.ckpt_interval=20",
            ]),
    );
    assert!(
        err.contains(
            "and these 3 jobs are submitted together: chain fewer slots, or pick another QOS"
        ),
        "{err}"
    );
    assert_eq!(sandbox.sbatch_calls(), 1);
}

#[test]
fn a_dry_run_says_how_many_cells_the_qos_lets_in() {
    let sandbox = Sandbox::new();
    with_debug_submit_limit(&sandbox);
    let output = sandbox
        .rlctl()
        .args(["grid", "--all", "gsm8k-throughput", "--dry-run"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let err = crate::common::stderr(&output);
    assert!(
        err.contains(
            "rlctl: note: QOS boost_qos_dbg lets a user have 2 jobs submitted at once: a launch submits at most 2 \
             of these 18"
        ),
        "{err}"
    );
}

#[test]
fn a_submit_limit_of_zero_is_refused() {
    let sandbox = Sandbox::new();
    let path = sandbox.presets().join("clusters/test.toml");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("max_nodes = 64\n", "max_nodes = 64\nmax_submit_jobs = 0\n");
    std::fs::write(&path, text).unwrap();
    let err = fails(sandbox.rlctl().args(["show", "gsm8k-canary"]));
    assert!(
        err.ends_with(
            "slurm.qos `normal`: max_submit_jobs = 0 would let no job in; give the limit, or leave it out for none\n"
        ),
        "{err}"
    );
}
