//! The ledger of submissions: what a launch records, reruns that add only what is missing, and
//! what survives a torn line, a site's notices and an sbatch that prints no id.

use crate::common::run_dir;
use crate::common::{Sandbox, fails, ok, stderr, stdout};

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
         --as tbs128-v2 -- trainer.epochs=2`; or, to run this cell afresh, `rlctl retire gsm8k-throughput/tbs128` \
         (its jobs cancelled, its folders kept, the ledger keeps its history), then `rlctl grid tbs128 -- \
         trainer.epochs=2`; or run the grid without it: `rlctl grid --all gsm8k-throughput --skip tbs128 -- \
         trainer.epochs=2`\n"
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
            "1/100",
            "9.5",
            "0.25",
            "0.8",
            // The launch is attempt 1; no accounting: no slots or GPU-hours; ended: no ETA.
            "1",
            "-",
            "-",
            "-"
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

#[test]
fn status_shows_the_attempt_of_its_slots_the_eta_and_the_gpu_hours_of_every_attempt() {
    let sandbox = Sandbox::new();
    ok(sandbox.rlctl().args([
        "launch",
        "gsm8k-canary",
        "--until-done",
        "--max-slots",
        "4",
        "--",
        "trainer.ckpt_interval=20",
        "trainer.max_steps=50",
    ]));
    let log = sandbox
        .root()
        .join("work/runs/gsm8k-canary/gsm8k-canary/001/gsm8k-canary_1001.out");
    let steps: String = (1..=10)
        .map(|n| format!("WANDB_MIRROR kind=train step={n} metrics={{\"timing/step\": 9.0}}\n"))
        .collect();
    std::fs::write(&log, steps).unwrap();
    let queue = sandbox.root().join("sbatch-calls/queue");
    std::fs::write(&queue, "1001|gsm8k-canary|RUNNING|boost_qos_dbg\n").unwrap();
    // Its first slot ran 30 min and requeued itself; the second has run 10 min; 4 GPUs each.
    let sacct = sandbox.root().join("bin/sacct-fake");
    let attempts = "echo '1001|REQUEUED|0:0|1800|billing=4,cpu=32,gres/gpu=4,node=1'\n\
                    echo '1001|RUNNING|0:0|600|billing=4,cpu=32,gres/gpu=4,node=1'\n";
    crate::common::write_exec(&sacct, &format!("#!/bin/bash\n{attempts}"));
    let status = |json: bool| {
        let mut cmd = sandbox.rlctl();
        cmd.arg("status").env("RLCTL_SACCT", &sacct);
        if json {
            cmd.arg("--json");
        }
        stdout(&ok(&mut cmd))
    };
    let table = status(false);
    let words: Vec<&str> = table.lines().nth(1).unwrap().split_whitespace().collect();
    // 40 steps left at 9 s: 6m00s; 2 x 40 min x 4 GPUs: 2.67 GPU-h.
    assert_eq!(
        words,
        [
            "gsm8k-canary",
            "1001",
            "RUNNING",
            // Its log's steps have no policy entropy: the collapse guard cannot run.
            "entropy-missing",
            "10/50",
            "9",
            "-",
            "-",
            "1",
            "2/4",
            "6m00s",
            "2.67"
        ],
        "{table}"
    );
    let json: serde_json::Value = serde_json::from_str(&status(true)).unwrap();
    let row = &json["runs"][0];
    assert_eq!(
        (
            &row["attempt"],
            &row["slot"],
            &row["max_slots"],
            &row["eta_s"]
        ),
        (&1.into(), &2.into(), &4.into(), &(40.0 * 9.0).into()),
        "{row}"
    );
    // Ended: no time left to estimate, the attempts and GPU-hours stay.
    std::fs::write(&queue, "").unwrap();
    crate::common::write_exec(
        &sacct,
        &format!("#!/bin/bash\n{}", attempts.replace("RUNNING", "COMPLETED")),
    );
    let table = status(false);
    let words: Vec<&str> = table.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(
        &words[2..],
        [
            "COMPLETED",
            "entropy-missing",
            "10/50",
            "9",
            "-",
            "-",
            "1",
            "2/4",
            "-",
            "2.67"
        ],
        "{table}"
    );
}
