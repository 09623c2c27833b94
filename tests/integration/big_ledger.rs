//! A ledger of tens of thousands of recorded jobs: `status` asks accounting in calls whose
//! arguments stay under the kernel's limit for one argument (128 KiB), merges their answers,
//! and asks only about the jobs of the runs it shows.

use crate::common::{Sandbox, ok, stderr, write_exec};

/// A stand-in sacct that refuses any argument over 100,000 bytes (the kernel refuses 128 KiB
/// before it even starts), writes each `-j` list it got on a line of `calls`, and says every
/// job COMPLETED after one 60 s attempt on one node.
const SACCT: &str = r#"#!/bin/bash
for a in "$@"; do
  if [ "${#a}" -gt 100000 ]; then echo "argument of ${#a} bytes" >&2; exit 7; fi
done
while [ $# -gt 0 ]; do
  if [ "$1" = -j ]; then list=$2; shift; fi
  shift
done
echo "$list" >> "$SACCT_CALLS"
tr ',' '\n' <<< "$list" | sed 's/$/|COMPLETED|0:0|60|node=1/'
"#;

#[test]
fn status_over_twenty_thousand_jobs_asks_accounting_in_a_few_bounded_calls() {
    let sandbox = Sandbox::new();
    let root = sandbox.root();
    ok(sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--job-name", "big"]));
    ok(sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--job-name", "other"]));
    let path = root.join("work/runs/ledger.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // 20,000 submissions of one run (as `tend` resubmits), then the other run's one.
    let first: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
    let mut ledger = String::new();
    for i in 0..20_000 {
        let mut r = first.clone();
        r["job_id"] = format!("{}", 30_000_000 + i).into();
        ledger.push_str(&serde_json::to_string(&r).unwrap());
        ledger.push('\n');
    }
    ledger.push_str(lines[1]);
    ledger.push('\n');
    std::fs::write(&path, ledger).unwrap();

    let sacct = root.join("bin/sacct-bounded");
    write_exec(&sacct, SACCT);
    let calls = root.join("sacct-calls");
    let out = ok(sandbox
        .rlctl()
        .args(["status", "gsm8k-canary/big", "--json"])
        .env("RLCTL_SACCT", &sacct)
        .env("SACCT_CALLS", &calls));
    assert!(!stderr(&out).contains("unreachable"), "{}", stderr(&out));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = &rows["runs"];
    let row = &rows[0];
    assert_eq!(rows.as_array().unwrap().len(), 1, "{rows}");
    assert_eq!(
        (&row["job_id"], &row["state"], &row["source"]),
        (&"30019999".into(), &"COMPLETED".into(), &"sacct".into()),
        "{row}"
    );
    // Every job's GPU-hours counted (60 s on a node of 4 GPUs each): every call's answer merged.
    let gpu_hours = row["gpu_hours"].as_f64().unwrap();
    assert!(
        (gpu_hours - 20_000.0 * 60.0 * 4.0 / 3600.0).abs() < 1e-6,
        "{row}"
    );
    let calls = std::fs::read_to_string(&calls).unwrap();
    let asked: Vec<&str> = calls.lines().flat_map(|l| l.split(',')).collect();
    assert!((2..=5).contains(&calls.lines().count()), "{calls}");
    assert_eq!(asked.len(), 20_000);
    // Only the jobs of the run shown: not the other run's job 1002, nor the replaced 1001.
    assert!(!asked.contains(&"1002") && !asked.contains(&"1001"));
}
