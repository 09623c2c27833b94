//! The index of sealed runs (`<run_root>/.sealed`) is only a faster read: `status` and `tend`
//! answer for a run that ended for good as its log and accounting did, without reading its log
//! again; a corrupted index is rebuilt; a new job of the run unseals it. The row `status` keeps
//! next to a running job's log (`.<log>.row`) is as transparent.

use crate::common::{Sandbox, ok, stdout};
use std::path::{Path, PathBuf};

/// The canary launched for 30 steps, its log at step 3 with reward and entropy and a last error
/// line, accounting saying how job 1001 ended; returns the log.
fn ended(sandbox: &Sandbox, sacct: &str) -> PathBuf {
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]).args([
        "--",
        "trainer.max_steps=30",
        "trainer.ckpt_interval=5",
    ]));
    let ledger = sandbox.root().join("work/runs/ledger.jsonl");
    let record: serde_json::Value =
        serde_json::from_str(std::fs::read_to_string(&ledger).unwrap().trim()).unwrap();
    let log = PathBuf::from(record["log"].as_str().unwrap());
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    let mut text = String::new();
    for step in 1..=3 {
        text.push_str(&format!(
            "WANDB_MIRROR kind=train step={step} metrics={{\"timing/step\": {}.5, \
             \"reward/avg_raw_reward\": 0.{step}, \"policy/policy_entropy\": NaN}}\n",
            40 + step
        ));
    }
    text.push_str("RuntimeError: CUDA error: an illegal memory access was encountered\n");
    std::fs::write(&log, text).unwrap();
    let ckpt = sandbox
        .root()
        .join("work/checkpoints/gsm8k-canary/gsm8k-canary/ckpt");
    crate::common::save_whole(&ckpt, 3);
    sandbox.sacct(sacct);
    log
}

fn index(sandbox: &Sandbox) -> PathBuf {
    sandbox.root().join("work/runs/.sealed")
}

fn status(sandbox: &Sandbox) -> (String, String) {
    let json = stdout(&ok(sandbox.rlctl().args(["status", "--json"])));
    let table = stdout(&ok(sandbox.rlctl().arg("status")));
    (json, table)
}

fn tend(sandbox: &Sandbox) -> String {
    let out = sandbox.rlctl().arg("tend").output().unwrap();
    format!("{:?}\n{}", out.status.code(), stdout(&out))
}

/// Hides the log and the checkpoint pointer: a call that still answers as before read neither.
fn hide(log: &Path, sandbox: &Sandbox) {
    std::fs::rename(log, log.with_extension("hidden")).unwrap();
    let steps = log.with_file_name(format!(
        ".{}.steps",
        log.file_name().unwrap().to_str().unwrap()
    ));
    let _ = std::fs::remove_file(steps);
    let pointer = sandbox
        .root()
        .join("work/checkpoints/gsm8k-canary/gsm8k-canary/ckpt/latest_ckpt_global_step.txt");
    std::fs::remove_file(pointer).unwrap();
}

#[test]
fn a_sealed_run_answers_as_its_log_did_without_reading_it() {
    let sandbox = Sandbox::new();
    let log = ended(&sandbox, "1001|FAILED|1:0|3600|node=1");
    // Without an index: what the log and accounting say.
    let (json, table) = status(&sandbox);
    assert!(
        json.contains("\"state\": \"FAILED\"") && json.contains("\"step\": 3"),
        "{json}"
    );
    assert!(json.contains("\"gpu_hours\""), "{json}");
    std::fs::remove_file(index(&sandbox)).unwrap();
    let told = tend(&sandbox);
    assert!(told.contains("CUDA error"), "{told}");
    assert!(index(&sandbox).is_file(), "tend seals the run");
    std::fs::remove_file(index(&sandbox)).unwrap();
    // The first call seals it; later ones answer from the index the same, even with the log,
    // its steps cache and the checkpoint pointer gone, and accounting silent.
    assert_eq!(status(&sandbox), (json.clone(), table.clone()));
    assert!(index(&sandbox).is_file());
    hide(&log, &sandbox);
    sandbox.sacct("");
    assert_eq!(status(&sandbox), (json, table));
    assert_eq!(tend(&sandbox), told);
}

#[test]
fn a_corrupted_index_is_rebuilt_and_changes_no_answer() {
    let sandbox = Sandbox::new();
    let log = ended(&sandbox, "1001|COMPLETED|0:0|3600|node=1");
    let before = status(&sandbox);
    let good = std::fs::read(index(&sandbox)).unwrap();
    for bad in [
        b"garbage".to_vec(),
        good[..good.len() - 3].to_vec(),
        String::from_utf8(good.clone())
            .unwrap()
            .replace("COMPLETED", "CANCELLED")
            .into_bytes(),
    ] {
        std::fs::write(index(&sandbox), &bad).unwrap();
        assert_eq!(status(&sandbox), before);
        assert_eq!(std::fs::read(index(&sandbox)).unwrap(), good, "rebuilt");
    }
    // Rebuilt whole: it answers with the log gone.
    hide(&log, &sandbox);
    assert_eq!(status(&sandbox), before);
}

#[test]
fn a_new_job_of_a_sealed_run_unseals_it() {
    let sandbox = Sandbox::new();
    ended(&sandbox, "1001|TIMEOUT|0:0|3600|node=1");
    let (json, _) = status(&sandbox);
    assert!(json.contains("\"state\": \"TIMEOUT\""), "{json}");
    assert!(index(&sandbox).is_file());
    // tend resumes it as job 1002 (from the pointer the seal kept), which SLURM holds.
    let told = tend(&sandbox);
    assert!(told.contains("resumed as job 1002"), "{told}");
    sandbox.queue("1002|gsm8k-canary|PENDING|boost_qos_dbg\n");
    let (json, _) = status(&sandbox);
    assert!(
        json.contains("\"job_id\": \"1002\"") && json.contains("\"state\": \"PENDING\""),
        "{json}"
    );
}

#[test]
fn a_running_runs_row_cache_changes_no_answer() {
    let sandbox = Sandbox::new();
    let log = ended(&sandbox, "");
    sandbox.queue("1001|gsm8k-canary|RUNNING|boost_qos_dbg\n");
    let first = status(&sandbox);
    assert!(first.0.contains("\"step\": 3"), "{}", first.0);
    let row = log.with_file_name(format!(
        ".{}.row",
        log.file_name().unwrap().to_str().unwrap()
    ));
    assert!(row.is_file(), "status keeps the log's row next to it");
    assert_eq!(status(&sandbox), first);
    // Corrupted, cut short: read as none, and written again.
    for bad in ["garbage", ""] {
        std::fs::write(&row, bad).unwrap();
        assert_eq!(status(&sandbox), first);
    }
    // A step appended: the row follows the log.
    let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    std::io::Write::write_all(
        &mut f,
        b"WANDB_MIRROR kind=train step=4 metrics={\"timing/step\": 44.5, \"reward/avg_raw_reward\": 0.9}\n",
    )
    .unwrap();
    let (json, _) = status(&sandbox);
    assert!(
        json.contains("\"step\": 4") && json.contains("0.9"),
        "{json}"
    );
    assert!(!index(&sandbox).exists(), "a running run is not sealed");
}

/// A stand-in sacct that says every job it is asked of COMPLETED after an hour on one node, and
/// notes each job list it was asked in `sbatch-calls/sacct.asked`.
fn counted_sacct(sandbox: &Sandbox) -> PathBuf {
    crate::common::write_exec(
        &sandbox.root().join("bin/sacct"),
        "#!/bin/bash\nwhile [ $# -gt 0 ]; do [ \"$1\" = -j ] && l=$2; shift; done\n\
         echo \"$l\" >> \"$FAKE_SBATCH_DIR/sacct.asked\"\n\
         tr ',' '\\n' <<< \"$l\" | sed 's/$/|COMPLETED|0:0|3600|node=1/'\n",
    );
    sandbox.root().join("sbatch-calls/sacct.asked")
}

#[test]
fn a_grid_whose_cells_are_sealed_is_summed_and_reported_without_asking_accounting() {
    let sandbox = Sandbox::new();
    ok(sandbox
        .rlctl()
        .args(["grid", "--all", "gsm8k-throughput", "--skip", "tbs512"]));
    let asked = counted_sacct(&sandbox);
    // The first pass asks accounting of all 17 cells and seals them with their GPU-hours.
    let first = tend(&sandbox);
    let line = |out: &str| {
        (out.lines())
            .find(|l| l.starts_with("grid gsm8k-throughput: 17 cells"))
            .unwrap_or_else(|| panic!("{out}"))
            .to_owned()
    };
    assert!(
        line(&first).contains("17 ended, 1 skipped; 68 GPU-hours so far"),
        "{first}"
    );
    assert!(std::fs::read_to_string(&asked).unwrap().contains("1017"));
    std::fs::remove_file(&asked).unwrap();
    // Later passes and the report: the same GPU-hours, accounting not asked of any cell.
    let second = tend(&sandbox);
    assert_eq!(line(&second), line(&first));
    sandbox
        .expect(["report", "gsm8k-throughput"])
        .stdout_has("tbs64")
        .stderr_lacks("accounting")
        .run();
    assert!(
        !asked.exists(),
        "{}",
        std::fs::read_to_string(&asked).unwrap()
    );
    // A corrupted index changes no answer: accounting is asked again.
    std::fs::write(index(&sandbox), "{").unwrap();
    assert_eq!(line(&tend(&sandbox)), line(&first));
    assert!(asked.exists());
}

#[test]
fn a_log_that_gained_only_noise_is_read_only_for_what_it_gained() {
    let sandbox = Sandbox::new();
    let log = ended(&sandbox, "");
    sandbox.queue("1001|gsm8k-canary|RUNNING|boost_qos_dbg\n");
    let first = status(&sandbox);
    assert!(first.0.contains("\"step\": 3"), "{}", first.0);
    let steps = log.with_file_name(format!(
        ".{}.steps",
        log.file_name().unwrap().to_str().unwrap()
    ));
    let append = |text: &str| {
        let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
        std::io::Write::write_all(&mut f, text.as_bytes()).unwrap();
    };
    // vLLM's lines, and half a line still being written: the row stands, and the steps' cache
    // (taken away here) is not needed to say so.
    std::fs::remove_file(&steps).unwrap();
    append(
        &"(AsyncVLLMInferenceEngine pid=7) INFO Avg prompt throughput: 1.5 tokens/s\n".repeat(50),
    );
    append("WANDB_MIRROR kind=train step=4 metrics={\"timing/st");
    assert_eq!(status(&sandbox), first);
    assert!(
        !steps.exists(),
        "the steps were loaded for a log that gained no step"
    );
    // The step's line finished: the row follows the log, as a cold read says it.
    append("ep\": 44.5, \"reward/avg_raw_reward\": 0.9}\n");
    let (json, table) = status(&sandbox);
    assert!(
        json.contains("\"step\": 4") && json.contains("0.9"),
        "{json}"
    );
    std::fs::remove_file(log.with_file_name(format!(
        ".{}.row",
        log.file_name().unwrap().to_str().unwrap()
    )))
    .unwrap();
    std::fs::remove_file(&steps).unwrap();
    assert_eq!(status(&sandbox), (json, table));
}

#[test]
fn a_sealed_run_whose_job_is_requeued_loses_its_seal_for_good() {
    let sandbox = Sandbox::new();
    ended(&sandbox, "1001|FAILED|1:0|3600|node=1");
    let (json, _) = status(&sandbox);
    assert!(json.contains("\"state\": \"FAILED\""), "{json}");
    let sealed = |s: &Sandbox| std::fs::read(index(s)).unwrap_or_default();
    assert!(String::from_utf8_lossy(&sealed(&sandbox)).contains("1001"));
    // An admin's `scontrol requeue`: SLURM holds the job again, under its id.
    sandbox.queue("1001|gsm8k-canary|RUNNING|boost_qos_dbg\n");
    let (json, _) = status(&sandbox);
    assert!(json.contains("\"state\": \"RUNNING\""), "{json}");
    assert!(!String::from_utf8_lossy(&sealed(&sandbox)).contains("1001"));
    // Its later end is judged afresh, not answered by the old seal.
    sandbox.queue("");
    sandbox.sacct("1001|COMPLETED|0:0|7200|node=1");
    let (json, _) = status(&sandbox);
    assert!(json.contains("\"state\": \"COMPLETED\""), "{json}");
}
