//! Runs SLURM no longer knows (not in squeue, not in sacct: accounting purged, or none) are
//! settled once on their logs' word and then cost one `stat` a call: the answer is the same as
//! without the index, a changed log or a new job reopens the run, and one `status` asks squeue
//! once and sacct at most once, for any number of runs.

use crate::common::{Sandbox, ok, stdout, write_exec};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Stand-ins first on PATH that imitate squeue and sacct and note each call in
/// `sbatch-calls/{squeue,sacct}.calls`: squeue prints the sandbox's queue file, sacct prints
/// nothing (it knows no job) unless `sbatch-calls/accounted` holds lines to print.
fn counted(sandbox: &Sandbox) {
    let bin = sandbox.root().join("bin");
    write_exec(
        &bin.join("squeue"),
        "#!/bin/bash\necho \"$*\" >> \"$FAKE_SBATCH_DIR/squeue.calls\"\n\
         cat \"$FAKE_SBATCH_DIR/queue\" 2>/dev/null || true\n",
    );
    write_exec(
        &bin.join("sacct"),
        "#!/bin/bash\necho \"$*\" >> \"$FAKE_SBATCH_DIR/sacct.calls\"\n\
         cat \"$FAKE_SBATCH_DIR/accounted\" 2>/dev/null || true\n",
    );
}

/// The squeue and sacct calls since the last look.
fn calls(sandbox: &Sandbox) -> (usize, usize) {
    let count = |name: &str| {
        let path = sandbox.root().join(format!("sbatch-calls/{name}.calls"));
        let n = std::fs::read_to_string(&path).map_or(0, |t| t.lines().count());
        let _ = std::fs::remove_file(&path);
        n
    };
    (count("squeue"), count("sacct"))
}

fn records(sandbox: &Sandbox) -> Vec<serde_json::Value> {
    let ledger = sandbox.root().join("work/runs/ledger.jsonl");
    (std::fs::read_to_string(ledger).unwrap().lines())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Writes `steps` steps and the wrapper's last line to the log of `record`, written an hour ago.
fn write_log(record: &serde_json::Value, steps: u64, status: u32) -> PathBuf {
    let log = PathBuf::from(record["log"].as_str().unwrap());
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    let mut text = String::new();
    for step in 1..=steps {
        text.push_str(&format!(
            "WANDB_MIRROR kind=train step={step} metrics={{\"timing/step\": 2.5, \
             \"reward/avg_raw_reward\": 0.{step}, \"policy/policy_entropy\": 0.7}}\n"
        ));
    }
    let job = record["job_id"].as_str().unwrap();
    text.push_str(&format!("rlctl: job {job} finished with status {status}\n"));
    std::fs::write(&log, text).unwrap();
    age(&log);
    log
}

/// Sets the file's modification time an hour back: quiet long enough to be settled.
fn age(path: &Path) {
    let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(3600))
        .unwrap();
}

fn index(sandbox: &Sandbox) -> PathBuf {
    sandbox.root().join("work/runs/.sealed")
}

fn status(sandbox: &Sandbox) -> String {
    stdout(&ok(sandbox.rlctl().args(["status", "--json"])))
}

/// `status --json` without the sealed index (nor what it was settled from), then the index put
/// back as it was: the answer a call without the cache gives.
fn uncached(sandbox: &Sandbox) -> String {
    let kept = std::fs::read(index(sandbox)).ok();
    let _ = std::fs::remove_file(index(sandbox));
    let answer = status(sandbox);
    match kept {
        Some(bytes) => std::fs::write(index(sandbox), bytes).unwrap(),
        None => {
            let _ = std::fs::remove_file(index(sandbox));
        }
    }
    calls(sandbox);
    answer
}

#[test]
fn a_run_slurm_no_longer_knows_is_settled_once_with_the_same_answer() {
    let sandbox = Sandbox::new();
    ok(sandbox
        .rlctl()
        .args(["grid", "--all", "gsm8k-throughput", "--skip", "tbs512"]));
    counted(&sandbox);
    let cells = records(&sandbox);
    for (i, record) in cells.iter().enumerate() {
        write_log(record, 3 + i as u64 % 4, (i % 3 == 0) as u32);
    }
    let without = uncached(&sandbox);
    assert!(
        without.contains("\"FAILED\"") && without.contains("\"COMPLETED\""),
        "{without}"
    );
    // The first call asks accounting of every job and settles every run ...
    assert_eq!(status(&sandbox), without);
    assert_eq!(calls(&sandbox), (1, 1));
    let settled = std::fs::read_to_string(index(&sandbox)).unwrap();
    assert_eq!(
        settled.matches("\"settled\"").count(),
        cells.len(),
        "{settled}"
    );
    // ... later calls ask it nothing, and answer the same.
    for _ in 0..2 {
        assert_eq!(status(&sandbox), without);
        assert_eq!(calls(&sandbox), (1, 0));
    }
    // `tend` judges a settled run afresh (accounting may know it by now): the same words.
    let tended = |sandbox: &Sandbox| stdout(&sandbox.rlctl().arg("tend").output().unwrap());
    // The first pass writes the grid's report, once.
    tended(&sandbox);
    let with_index = tended(&sandbox);
    let kept = std::fs::read(index(&sandbox)).unwrap();
    std::fs::remove_file(index(&sandbox)).unwrap();
    assert_eq!(tended(&sandbox), with_index);
    std::fs::write(index(&sandbox), kept).unwrap();
    assert_eq!(status(&sandbox), without);
}

#[test]
fn a_changed_log_or_a_new_job_reopens_a_settled_run() {
    let sandbox = Sandbox::new();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    counted(&sandbox);
    let record = records(&sandbox).remove(0);
    let log = write_log(&record, 3, 1);
    let first = status(&sandbox);
    assert!(first.contains("\"FAILED\""), "{first}");
    calls(&sandbox);
    assert_eq!(status(&sandbox), first);
    assert_eq!(calls(&sandbox), (1, 0), "settled: accounting not asked");

    // The log rewritten (a slot that ran again, a person's fix): read again, a new answer.
    write_log(&record, 5, 0);
    let rewritten = status(&sandbox);
    assert!(rewritten.contains("\"COMPLETED\"") && rewritten.contains("\"step\": 5"));
    assert_eq!(calls(&sandbox).1, 1, "reopened: accounting asked again");
    assert_eq!(rewritten, uncached(&sandbox));

    // A log written within the last minutes is not settled: accounting may not have it yet.
    let mut text = std::fs::read_to_string(&log).unwrap();
    text.push_str("one more line\n");
    std::fs::write(&log, text).unwrap();
    status(&sandbox);
    calls(&sandbox);
    status(&sandbox);
    assert_eq!(
        calls(&sandbox),
        (1, 1),
        "a fresh log is asked of accounting again"
    );
    age(&log);
    status(&sandbox);
    calls(&sandbox);
    status(&sandbox);
    assert_eq!(calls(&sandbox), (1, 0));

    // Accounting that knows a settled run's job is heard on a new job; SLURM holding the job
    // again reopens it at once.
    sandbox.queue(&format!(
        "{}|{}|RUNNING|normal\n",
        record["job_id"].as_str().unwrap(),
        record["job_name"].as_str().unwrap()
    ));
    let held = status(&sandbox);
    assert!(held.contains("\"RUNNING\""), "{held}");
    sandbox.queue("");
    // A new job of the run (a relaunch): its row, not the settled one.
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    let again = status(&sandbox);
    let newest = records(&sandbox).pop().unwrap();
    assert!(
        again.contains(&format!(
            "\"job_id\": \"{}\"",
            newest["job_id"].as_str().unwrap()
        )),
        "{again}"
    );
    assert_eq!(again, uncached(&sandbox));
}

#[test]
fn one_status_call_runs_squeue_once_and_sacct_at_most_once() {
    let sandbox = Sandbox::new();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    ok(sandbox
        .rlctl()
        .args(["grid", "--all", "gsm8k-throughput", "--skip", "tbs512"]));
    counted(&sandbox);
    let all = records(&sandbox);
    assert!(all.len() > 15, "{}", all.len());
    // A third running, a third ended with accounting, a third SLURM knows nothing of.
    let (mut queue, mut accounted) = (String::new(), String::new());
    for (i, record) in all.iter().enumerate() {
        let job = record["job_id"].as_str().unwrap();
        match i % 3 {
            0 => queue.push_str(&format!(
                "{job}|{}|RUNNING|normal\n",
                record["job_name"].as_str().unwrap()
            )),
            1 => accounted.push_str(&format!("{job}|COMPLETED|0:0|3600|node=1\n")),
            _ => {}
        }
        write_log(record, 2, 0);
    }
    sandbox.queue(&queue);
    std::fs::write(sandbox.root().join("sbatch-calls/accounted"), accounted).unwrap();
    for _ in 0..3 {
        let out = status(&sandbox);
        assert!(out.contains("\"RUNNING\"") && out.contains("\"COMPLETED\""));
        let (squeue, sacct) = calls(&sandbox);
        assert_eq!(squeue, 1);
        assert!(sacct <= 1, "{sacct} sacct calls");
    }
    // The table too, and one run alone.
    ok(sandbox.rlctl().arg("status"));
    let (squeue, sacct) = calls(&sandbox);
    assert!(squeue == 1 && sacct <= 1, "{squeue} {sacct}");
}

#[test]
fn a_failed_squeue_is_never_taken_for_every_job_ended() {
    let sandbox = Sandbox::new();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    counted(&sandbox);
    let record = records(&sandbox).remove(0);
    write_log(&record, 3, 0);
    write_exec(
        &sandbox.root().join("bin/squeue"),
        "#!/bin/bash\necho 'squeue: error: slurm_load_jobs error: Socket timed out' >&2\nexit 1\n",
    );
    let out = sandbox.rlctl().args(["status", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(!index(&sandbox).exists(), "nothing sealed or settled");
}
