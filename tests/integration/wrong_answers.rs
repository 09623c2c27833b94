//! Issue 33's smaller wrong answers, each as the user met it: a resubmitted log SLURM never
//! writes, a status that drops runs, an echoed megabyte, a forged summary line, a wipe through
//! a link, a sync that outlives the login node.

use crate::common::{Sandbox, ok, save_whole, stdout};
use std::path::PathBuf;

/// The ledger's records, in order.
fn records(sandbox: &Sandbox) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(sandbox.root().join("work/runs/ledger.jsonl")).unwrap();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_resubmitted_run_named_with_its_job_ids_digits_records_the_log_slurm_writes() {
    let sandbox = Sandbox::new();
    // The fake sbatch's first job is 1001: the name holds the id's digits before the id itself.
    ok(sandbox.rlctl().args([
        "launch",
        "gsm8k-canary",
        "--job-name",
        "lr1001",
        "--",
        "trainer.max_steps=30",
        "trainer.ckpt_interval=5",
    ]));
    let ckpt = sandbox
        .root()
        .join("work/checkpoints/gsm8k-canary/lr1001/ckpt");
    save_whole(&ckpt, 10);
    sandbox.sacct("1001|TIMEOUT|0:0");
    let pass = sandbox.rlctl().arg("tend").output().unwrap();
    assert!(pass.status.success(), "{}", stdout(&pass));
    let records = records(&sandbox);
    let last = records.last().unwrap();
    assert_eq!(last["job_id"], "1002", "{}", stdout(&pass));
    // SLURM expands `%x_%j.out` for job 1002 named lr1001.
    let log = PathBuf::from(last["log"].as_str().unwrap());
    assert_eq!(log.file_name().unwrap(), "lr1001_1002.out");
    assert_eq!(
        log.parent().unwrap(),
        PathBuf::from(last["run_dir"].as_str().unwrap())
    );
}
