//! `rlctl estimate`, the `slots` preflight check and the estimate line of `launch`: from staged
//! parquet files written here, the presets' reference speeds, and a fake ledger of recorded runs.

use crate::common::staged;
use crate::common::{Sandbox, fails, ok, stderr, stdout, write_parquet};
use std::path::PathBuf;

fn estimate_json(sandbox: &Sandbox, args: &[&str]) -> serde_json::Value {
    let output = ok(sandbox.rlctl().args(["estimate", "--json"]).args(args));
    serde_json::from_str(&stdout(&output)).unwrap()
}

const KEYS: [&str; 17] = [
    "schema_version",
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
    "startup_s",
    "startup_from",
    "save_s",
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
    // max_steps below the epoch's steps stops the trainer there.
    let e = estimate_json(&sandbox, &["gsm8k-canary", "--", "trainer.max_steps=10"]);
    assert_eq!(e["steps"], 10, "{e}");
    assert!(
        e["steps_from"]
            .as_str()
            .unwrap()
            .starts_with("trainer.max_steps"),
        "{e}"
    );
}

/// SkyRL's total: min(epochs x full batches, max_steps), its train dataloader dropping the
/// last partial batch, each knob read as the trainer reads it (interpolations followed).
#[test]
fn steps_are_the_epochs_full_batches_capped_by_max_steps() {
    let sandbox = Sandbox::new();
    // 100 rows in batches of 32: 3 full batches a epoch, the last 4 rows dropped.
    write_parquet(&sandbox.root().join("work/data/gsm8k/train.parquet"), 100);
    // `trainer.epochs=${generator.n_samples_per_prompt}`: the canary's 4 samples, so 4 epochs.
    let epochs = "trainer.epochs=${generator.n_samples_per_prompt}";
    let steps = |max_steps: &str| {
        let e = estimate_json(&sandbox, &["gsm8k-canary", "--", epochs, max_steps]);
        (
            e["steps"].as_u64(),
            e["steps_from"].as_str().unwrap().to_owned(),
        )
    };
    let (n, from) = steps("trainer.max_steps=50");
    assert_eq!(
        n,
        Some(12),
        "4 epochs x 3 batches, under max_steps 50: {from}"
    );
    assert!(from.contains("4 epoch(s) x 100 rows / batch 32"), "{from}");
    let (n, from) = steps("trainer.max_steps=10");
    assert_eq!(n, Some(10), "max_steps below the epochs' 12: {from}");
    let (n, _) = steps("trainer.max_steps=null");
    assert_eq!(n, Some(12));

    // The ledger's denominator of progress is the same figure.
    ok(sandbox.rlctl().args([
        "launch",
        "gsm8k-canary",
        "--",
        epochs,
        "trainer.max_steps=50",
    ]));
    let ledger = std::fs::read_to_string(sandbox.root().join("work/runs/ledger.jsonl")).unwrap();
    let record: serde_json::Value = serde_json::from_str(ledger.lines().last().unwrap()).unwrap();
    assert_eq!(record["max_steps"], 12, "{record}");
}

/// `estimate` checks its overrides as `check` does: a misspelt key is refused with the same
/// message, and `--allow off-schema` makes it a warning.
#[test]
fn estimate_refuses_a_misspelt_key_as_check_does() {
    let sandbox = staged();
    let typo = ["gsm8k-canary", "--", "trainer.epoch=2"];
    let check = (sandbox.rlctl().arg("check").args(typo)).output().unwrap();
    let estimate = (sandbox.rlctl().arg("estimate").args(typo))
        .output()
        .unwrap();
    assert_eq!(check.status.code(), Some(1));
    assert_eq!(estimate.status.code(), Some(1), "{}", stdout(&estimate));
    let schema_line = |out: &std::process::Output| {
        (stderr(out).lines())
            .find(|l| l.contains("[schema]"))
            .map(str::to_owned)
    };
    let line = schema_line(&check).expect("check names the key");
    assert!(line.contains("did you mean"), "{line}");
    assert_eq!(schema_line(&estimate), Some(line));
    assert_eq!(
        stdout(&estimate),
        "",
        "no figure for a run that would not start"
    );
    let allowed = ok(sandbox
        .rlctl()
        .args(["estimate", "--allow", "off-schema"])
        .args(typo));
    assert!(
        stderr(&allowed).contains("warning: [schema]"),
        "{}",
        stderr(&allowed)
    );
}

#[test]
fn unstaged_data_leaves_the_steps_unknown_and_says_why() {
    // A placeholder, not parquet.
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.root().join("work/data/gsm8k/train.parquet"), "PAR1").unwrap();
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
fn a_grid_gives_one_estimate_per_cell() {
    let sandbox = staged();
    let output = ok(sandbox
        .rlctl()
        .args(["estimate", "--all", "gsm8k-throughput", "--json"]));
    let all: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(all["grid"], "gsm8k-throughput");
    let cells = all["cells"].as_array().unwrap();
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

/// `--until-done` resumes every slot from its last checkpoint, as a chain does: the interval
/// must fit a slot.
#[test]
fn until_done_must_checkpoint_once_per_slot() {
    let sandbox = staged();
    let err = fails(sandbox.rlctl().args([
        "launch",
        "gsm8k-canary",
        "--until-done",
        "--max-slots",
        "3",
        "--dry-run",
    ]));
    assert!(
        err.contains(
            "[slots] --until-done --max-slots 3 resumes from the last checkpoint of every slot, \
             but trainer.ckpt_interval=999999"
        ),
        "{err}"
    );
    assert!(
        err.contains("set trainer.ckpt_interval=162 (the largest that fits)"),
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
    let logs = crate::common::recorded_logs(&sandbox);
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

/// An `--until-done` plan has `--max-slots` slots: one that needs two and may take two is
/// launched; one that may take fewer is refused with the `--max-slots` it needs.
#[test]
fn an_until_done_plan_counts_its_max_slots() {
    let sandbox = staged();
    let knobs = ["--", "trainer.ckpt_interval=20"];
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]).args(knobs));
    let logs = crate::common::recorded_logs(&sandbox);
    let log = &logs["gsm8k-canary"];
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    std::fs::write(log, log_at(&[60.0, 7.0, 8.0, 12.0])).unwrap();
    // 233 x 8 s, measured on these knobs, needs 2 slots of 30 minutes.
    let launch = |extra: &[&str]| {
        let mut cmd = sandbox.rlctl();
        cmd.args(["launch", "gsm8k-canary", "--dry-run"])
            .args(extra)
            .args(knobs);
        cmd
    };
    let err = fails(&mut launch(&[]));
    assert!(
        err.contains("[slots]") && err.contains("--chain 2"),
        "{err}"
    );
    let output = ok(&mut launch(&["--until-done", "--max-slots", "2"]));
    assert!(!stderr(&output).contains("[slots]"), "{}", stderr(&output));
    let err = fails(&mut launch(&["--until-done", "--max-slots", "1"]));
    assert!(
        err.contains(
            "needs 2 slot(s) of 30m00s, and the plan has 1 (--until-done --max-slots 1): launch \
             with --max-slots 2"
        ),
        "{err}"
    );
}

#[test]
fn an_epoch_based_run_shows_progress_over_its_estimated_steps() {
    let sandbox = staged();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    let logs = crate::common::recorded_logs(&sandbox);
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

/// A sandbox whose canary ran once (job 1001) at a median of 8 s/step.
fn canary_at_8s() -> Sandbox {
    let sandbox = staged();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    let logs = crate::common::recorded_logs(&sandbox);
    let log = &logs["gsm8k-canary"];
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    std::fs::write(log, log_at(&[60.0, 7.0, 8.0, 12.0])).unwrap();
    sandbox
}

/// A recorded run that differs in the samples or the length of a step lends its speed scaled
/// by the work, the factor and its basis shown; knobs that leave the work alone lend it as is.
#[test]
fn a_speed_is_scaled_by_the_samples_and_length_of_a_step() {
    let sandbox = canary_at_8s();
    let scaled = |knobs: &[&str]| {
        let mut args = vec!["gsm8k-canary", "--"];
        args.extend(knobs);
        let e = estimate_json(&sandbox, &args);
        let from = e["s_per_step_from"].as_str().unwrap().to_owned();
        (e["s_per_step"].as_f64(), from)
    };
    // 4x the samples a step: 32 x 4 = 128 canary, 128 x 4 = 512 here.
    let (s, from) = scaled(&["trainer.train_batch_size=128"]);
    assert_eq!(s, Some(32.0), "{from}");
    assert!(
        from.contains("job 1001 (gsm8k-canary)")
            && from.contains("8 s/step x 4.0 (samples per step 512 vs 128) = 32 s/step"),
        "{from}"
    );
    let (s, from) = scaled(&[
        "generator.n_samples_per_prompt=8",
        "generator.sampling_params.max_generate_length=4096",
    ]);
    assert_eq!(s, Some(128.0), "{from}");
    assert!(
        from.contains(
            "x 2.0 (samples per step 256 vs 128) x 8.0 (generation length 4096 vs 512) = 128 s/step"
        ),
        "{from}"
    );
    // The learning rate does not change a step's work: borrowed as is.
    let (s, from) = scaled(&["trainer.policy.optimizer_config.lr=1e-5"]);
    assert_eq!(s, Some(8.0), "{from}");
    assert!(from.contains("same work per step"), "{from}");
    // The table shows the same basis, and the wall time follows the scaled speed.
    sandbox
        .expect([
            "estimate",
            "gsm8k-canary",
            "--",
            "trainer.train_batch_size=128",
        ])
        .stdout_has("8 s/step x 4.0 (samples per step 512 vs 128) = 32 s/step")
        .stdout_lacks("same model and layout")
        .run();
}

/// With nothing recorded, a grid cell's reference is its base preset's, measured on the base's
/// own knobs: scaled to the cell's work, not lent as is.
#[test]
fn a_grid_cell_scales_its_base_presets_reference() {
    let sandbox = staged();
    let e = estimate_json(&sandbox, &["gsm8k-throughput/tbs128"]);
    let from = e["s_per_step_from"].as_str().unwrap();
    assert!(
        from.contains("reference of the grid's base preset")
            && from.contains("9.58 s/step x 4.0 (samples per step 512 vs 128) = 38.3 s/step"),
        "{e}"
    );
    assert!(
        (e["s_per_step"].as_f64().unwrap() - 38.32).abs() < 1e-9,
        "{e}"
    );
    // The cell that is the canary itself keeps the reference as is.
    let e = estimate_json(&sandbox, &["gsm8k-throughput/base"]);
    assert_eq!(e["s_per_step"], 9.58, "{e}");
}

/// Another model is another shape: no speed is lent across it, and the estimate says which
/// recorded run is nearest and what differs.
#[test]
fn another_model_leaves_the_speed_unknown_and_names_the_nearest_run() {
    let sandbox = canary_at_8s();
    let model = "trainer.policy.model.path=Qwen/Qwen3-1.7B";
    let e = estimate_json(&sandbox, &["gsm8k-canary", "--", model]);
    assert!(e["s_per_step"].is_null() && e["wall_s"].is_null(), "{e}");
    assert_eq!(
        e["s_per_step_from"],
        "unknown: no recorded run of this shape; the nearest, job 1001 (gsm8k-canary), differs \
         in trainer.policy.model.path (Qwen/Qwen3-1.7B vs Qwen/Qwen2.5-1.5B-Instruct)"
    );
    // Nothing recorded: the preset's reference was measured on the other model.
    let e = estimate_json(&staged(), &["gsm8k-canary", "--", model]);
    assert!(e["s_per_step"].is_null(), "{e}");
    assert!(
        e["s_per_step_from"]
            .as_str()
            .unwrap()
            .starts_with("unknown: no recorded run of this shape, and the preset's reference"),
        "{e}"
    );
}

/// What `estimate` and `launch` say of a run whose data is not staged: in words, with the
/// command that stages it, never `? steps x 9.58 s/step = ? wall`.
#[test]
fn unstaged_data_is_said_in_words() {
    let sandbox = Sandbox::new();
    let data = sandbox.root().join("work/data/gsm8k/train.parquet");
    std::fs::write(&data, "PAR1").unwrap();
    let words = |why: &str| {
        format!(
            "steps unknown: the dataset {} is not staged ({why}); run `rlctl stage gsm8k-canary`",
            data.display()
        )
    };
    let cut = words("it is cut short: footer unreadable");
    sandbox
        .expect(["estimate", "gsm8k-canary"])
        .stdout_has(&cut.replace("steps unknown", "steps: unknown"))
        .run();
    // Where the cluster's $WORK does not exist the data checks are skipped, and the launch
    // goes ahead: its estimate line says what is unknown and why.
    std::fs::remove_dir_all(sandbox.root().join("work")).unwrap();
    let line = format!(
        "rlctl: estimate: gsm8k-canary: {}; 9.58 s/step; slots of 30m00s",
        words("it does not exist")
    );
    sandbox
        .expect(["launch", "gsm8k-canary", "--dry-run"])
        .stderr_has(&line)
        .stderr_lacks("? steps")
        .run();
}

/// `estimate --all` ends with the grid's totals: cells, GPU-hours, the wall time run eight at a
/// time as `grid --all` submits them, and the cells left unknown. `grid --all` records the same
/// GPU-hours.
#[test]
fn a_grid_estimate_ends_with_its_totals() {
    let sandbox = staged();
    let all = estimate_json(&sandbox, &["--all", "gsm8k-accuracy"]);
    let cells = all["cells"].as_array().unwrap();
    let known: Vec<&serde_json::Value> = cells.iter().filter(|c| !c["wall_s"].is_null()).collect();
    let unknown = cells.len() - known.len();
    assert!(
        unknown > 0,
        "the Qwen3 cell has no speed of its shape: {all}"
    );
    let gpu_h: f64 = known.iter().map(|c| c["gpu_hours"].as_f64().unwrap()).sum();
    let output = sandbox
        .expect(["estimate", "--all", "gsm8k-accuracy"])
        .run();
    let text = stdout(&output);
    let last = text.lines().last().unwrap();
    assert!(
        last.starts_with(&format!("total: {} cells, ", cells.len()))
            && last.contains(" wall run 8 at a time")
            && last.ends_with(&format!("; {unknown} unknown, not counted")),
        "{text}"
    );
    let shown: f64 = last
        .split(" GPU-h")
        .next()
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(
        (shown - gpu_h).abs() / gpu_h < 0.01,
        "{shown} vs {gpu_h}: {last}"
    );
}
