//! `rlctl estimate`, the `slots` preflight check and the estimate line of `launch`: from staged
//! parquet files written here, the presets' reference speeds, and a fake ledger of recorded runs.

use crate::common::{Sandbox, fails, ok, stderr, stdout};
use parquet::data_type::Int32Type;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A real parquet file of `rows` rows (one INT32 column), as the login node stages it.
pub(crate) fn write_parquet(path: &Path, rows: i32) {
    let schema = Arc::new(parse_message_type("message m { REQUIRED INT32 id; }").unwrap());
    let file = std::fs::File::create(path).unwrap();
    let mut writer = SerializedFileWriter::new(file, schema, Default::default()).unwrap();
    let mut group = writer.next_row_group().unwrap();
    let values: Vec<i32> = (0..rows).collect();
    while let Some(mut column) = group.next_column().unwrap() {
        (column.typed::<Int32Type>())
            .write_batch(&values, None, None)
            .unwrap();
        column.close().unwrap();
    }
    group.close().unwrap();
    writer.close().unwrap();
}

/// A sandbox whose gsm8k train split is the real one's size: 7,473 rows.
fn staged() -> Sandbox {
    let sandbox = Sandbox::new();
    write_parquet(&sandbox.root().join("work/data/gsm8k/train.parquet"), 7473);
    sandbox
}

fn estimate_json(sandbox: &Sandbox, args: &[&str]) -> serde_json::Value {
    let output = ok(sandbox.rlctl().args(["estimate", "--json"]).args(args));
    serde_json::from_str(&stdout(&output)).unwrap()
}

const KEYS: [&str; 13] = [
    "target",
    "steps",
    "steps_from",
    "s_per_step",
    "s_per_step_from",
    "wall_s",
    "gpu_hours",
    "nodes",
    "gpus",
    "qos",
    "max_wall_s",
    "slots",
    "ckpt_interval",
];

#[test]
fn the_canary_is_233_steps_of_the_staged_epoch_at_its_reference_speed() {
    let sandbox = staged();
    let e = estimate_json(&sandbox, &["gsm8k-canary"]);
    let keys: Vec<&str> = e.as_object().unwrap().keys().map(String::as_str).collect();
    let mut want = KEYS.to_vec();
    want.sort_unstable();
    let mut got = keys.clone();
    got.sort_unstable();
    assert_eq!(got, want, "exactly the documented keys: {e}");
    assert_eq!(e["steps"], 233, "1 epoch x floor(7473 / 32): {e}");
    assert!(e["steps_from"].as_str().unwrap().contains("7473 rows"));
    assert_eq!(e["s_per_step"], 9.58);
    assert!(e["s_per_step_from"].as_str().unwrap().contains("44478923"));
    assert_eq!(e["gpus"], 4);
    assert_eq!(e["qos"], "boost_qos_dbg");
    assert_eq!(e["max_wall_s"], 1800);
    // 233 x 9.58 s = 2232 s of steps: two 30-minute slots, each with its start-up.
    assert_eq!(e["slots"], 2);
    let wall = e["wall_s"].as_f64().unwrap();
    assert!((wall - (233.0 * 9.58 + 2.0 * 240.0)).abs() < 1e-6, "{wall}");
    let gpu_h = e["gpu_hours"].as_f64().unwrap();
    assert!((gpu_h - 4.0 * wall / 3600.0).abs() < 1e-9);
    assert_eq!(e["ckpt_interval"], 162, "floor((1800 - 240) / 9.58)");
    // max_steps wins over the epoch.
    let e = estimate_json(&sandbox, &["gsm8k-canary", "--", "trainer.max_steps=10"]);
    assert_eq!(
        (e["steps"].clone(), e["steps_from"].clone()),
        (10.into(), "trainer.max_steps".into())
    );
}

#[test]
fn unstaged_data_leaves_the_steps_unknown_and_says_why() {
    // The sandbox's own files are placeholders, not parquet.
    let sandbox = Sandbox::new();
    let e = estimate_json(&sandbox, &["gsm8k-canary"]);
    assert!(e["steps"].is_null() && e["wall_s"].is_null() && e["slots"].is_null());
    assert!(
        e["steps_from"].as_str().unwrap().contains("not staged"),
        "{e}"
    );
    let table = stdout(&ok(sandbox.rlctl().args(["estimate", "gsm8k-canary"])));
    assert!(
        table.contains("GPU-h") && table.contains("not staged"),
        "{table}"
    );
}

#[test]
fn a_grid_gives_an_array_of_one_estimate_per_cell() {
    let sandbox = staged();
    let output = ok(sandbox
        .rlctl()
        .args(["estimate", "--all", "gsm8k-throughput", "--json"]));
    let all: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    let cells = all.as_array().unwrap();
    assert!(cells.len() > 1);
    assert!(cells.iter().all(|c| {
        c["target"]
            .as_str()
            .unwrap()
            .starts_with("gsm8k-throughput/")
    }));
}

#[test]
fn a_chain_must_checkpoint_once_per_slot() {
    let sandbox = staged();
    let err = fails(
        sandbox
            .rlctl()
            .args(["launch", "gsm8k-canary", "--chain", "3", "--dry-run"]),
    );
    assert!(err.contains("[slots]"), "{err}");
    assert!(
        err.contains("trainer.ckpt_interval=162"),
        "names the largest that fits: {err}"
    );
    let output = ok(sandbox.rlctl().args([
        "launch",
        "gsm8k-canary",
        "--chain",
        "3",
        "--time",
        "00:10:00",
        "--dry-run",
        "--",
        "trainer.ckpt_interval=20",
    ]));
    let err = stderr(&output);
    assert!(
        err.contains("rlctl: estimate: gsm8k-canary: 233 steps"),
        "{err}"
    );
    // Seven 10-minute slots are needed, three given: the reference speed only warns.
    assert!(
        err.contains("warning: [slots]") && err.contains("--chain 7"),
        "{err}"
    );
    let output = ok(sandbox.rlctl().args([
        "launch",
        "gsm8k-canary",
        "--chain",
        "auto",
        "--time",
        "00:10:00",
        "--dry-run",
        "--",
        "trainer.ckpt_interval=20",
    ]));
    let err = stderr(&output);
    assert!(
        err.contains("(--chain 7)") && !err.contains("warning: [slots]"),
        "{err}"
    );
}

/// A finished canary's log at `secs` per step (its first step slower, as compilation makes it).
fn log_at(secs: &[f64]) -> String {
    let mut log = String::new();
    for (i, s) in secs.iter().enumerate() {
        log.push_str(&format!(
            "WANDB_MIRROR kind=train step={} metrics={{\"timing/step\": {s}}}\n",
            i + 1
        ));
    }
    log
}

#[test]
fn recorded_runs_of_the_same_knobs_give_their_median_and_refuse_an_overlong_plan() {
    let sandbox = staged();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    let logs = crate::report::recorded_logs(&sandbox);
    let log = &logs["gsm8k-canary"];
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    std::fs::write(log, log_at(&[60.0, 7.0, 8.0, 12.0])).unwrap();
    let e = estimate_json(&sandbox, &["gsm8k-canary"]);
    assert_eq!(e["s_per_step"], 8.0, "median after the first step: {e}");
    assert!(
        e["s_per_step_from"]
            .as_str()
            .unwrap()
            .contains("same knobs"),
        "{e}"
    );
    // 233 x 8 s + start-up > 30 min, measured on these knobs: refused, naming the fixes.
    let err = fails(
        sandbox
            .rlctl()
            .args(["launch", "gsm8k-canary", "--dry-run"]),
    );
    assert!(
        err.contains("[slots]") && err.contains("--chain 2") && err.contains("--time"),
        "{err}"
    );
    // Other knobs, same model and layout: the nearest recorded run, named.
    let e = estimate_json(
        &sandbox,
        &[
            "gsm8k-canary",
            "--",
            "trainer.policy.optimizer_config.lr=1e-5",
        ],
    );
    assert_eq!(e["s_per_step"], 8.0);
    assert!(
        e["s_per_step_from"]
            .as_str()
            .unwrap()
            .contains("nearest recorded run: job 1001"),
        "{e}"
    );
}

#[test]
fn an_epoch_based_run_shows_progress_over_its_estimated_steps() {
    let sandbox = staged();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    let logs = crate::report::recorded_logs(&sandbox);
    let log = &logs["gsm8k-canary"];
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    std::fs::write(log, log_at(&[30.0, 10.0, 10.0])).unwrap();
    // The log has no entropy, so watch alerts (exit 1); its progress line is what counts here.
    let output = (sandbox.rlctl())
        .args(["watch", "gsm8k-canary", "--once"])
        .output()
        .unwrap();
    let text = stdout(&output);
    assert!(
        text.contains("step 3/233") && text.contains("ETA"),
        "{text}"
    );
}

#[test]
fn a_slot_shorter_than_the_start_up_is_refused() {
    let sandbox = staged();
    let err =
        fails(
            sandbox
                .rlctl()
                .args(["launch", "gsm8k-canary", "--time", "00:03:00", "--dry-run"]),
        );
    assert!(
        err.contains("[slots]") && err.contains("no step would run"),
        "{err}"
    );
}

/// The `s_per_step_from` of the canary's estimate, and what the command said on stderr.
fn canary_speed_from(sandbox: &Sandbox) -> (String, String) {
    let out = ok(sandbox.rlctl().args(["estimate", "gsm8k-canary", "--json"]));
    let e: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let from = e["s_per_step_from"].as_str().unwrap().to_owned();
    (from, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn the_ledgers_groups_follow_appended_torn_and_rewritten_ledgers() {
    let sandbox = staged();
    let ledger = sandbox.root().join("work/runs/ledger.jsonl");
    let groups = sandbox.root().join("work/runs/.ledger.jsonl.groups");
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    let first_record = std::fs::read_to_string(&ledger).unwrap();
    // The log the ledger names for `job`.
    let write_log = |job: &str, secs: &[f64]| {
        let text = std::fs::read_to_string(&ledger).unwrap();
        let log = (text.lines())
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .find(|r| r["job_id"] == job)
            .map(|r| PathBuf::from(r["log"].as_str().unwrap()))
            .unwrap();
        std::fs::create_dir_all(log.parent().unwrap()).unwrap();
        std::fs::write(log, log_at(secs)).unwrap();
    };
    write_log("1001", &[60.0, 2.0, 3.0, 4.0]);
    let (from, _) = canary_speed_from(&sandbox);
    assert!(from.contains("job(s) 1001 (same knobs)"), "{from}");
    assert!(groups.exists(), "the groups are kept next to the ledger");

    // A second run of the same knobs, appended: read on from where the groups left off.
    ok(sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--job-name", "again"]));
    write_log("1002", &[60.0, 2.0, 2.0]);
    let (from, _) = canary_speed_from(&sandbox);
    assert!(from.contains("job(s) 1002, 1001 (same knobs)"), "{from}");

    // A torn last line (a disk that filled mid-write) is left alone until it is complete...
    let mut torn = std::fs::read_to_string(&ledger).unwrap();
    torn.push_str("{\"job_id\": \"10");
    std::fs::write(&ledger, &torn).unwrap();
    let (from, err) = canary_speed_from(&sandbox);
    assert!(from.contains("1002, 1001"), "{from}");
    assert_eq!(err, "", "a line still being written is not a bad line");
    // ...and once the next record ends it, skipped with a warning, the new record counted.
    ok(sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--job-name", "third"]));
    write_log("1003", &[60.0, 3.0]);
    let (from, err) = canary_speed_from(&sandbox);
    assert!(
        from.contains("job(s) 1003, 1002, 1001 (same knobs)"),
        "{from}"
    );
    assert!(err.contains("not a ledger record"), "{err}");

    // Rewritten by hand down to its first record: grouped again from the start.
    std::fs::write(&ledger, &first_record).unwrap();
    let (from, _) = canary_speed_from(&sandbox);
    assert!(from.contains("job(s) 1001 (same knobs)"), "{from}");
}
