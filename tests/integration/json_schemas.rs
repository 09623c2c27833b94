//! The JSON Schemas shipped in docs/reference/schemas/ are what the output types generate, and
//! every command's real `--json` output (each NDJSON event of a stream, and a failed command's
//! error object) validates against its schema and carries `schema_version` 1.
//!
//! Regenerate the files after changing an output type:
//! `RLCTL_WRITE_SCHEMAS=1 cargo test --test integration json_schemas`.

use crate::common::{Sandbox, ok, staged, stdout};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Output;

fn schemas_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/reference/schemas")
}

#[test]
fn shipped_schemas_are_what_the_types_generate() {
    let dir = schemas_dir();
    let generated = rlctl::cmd::schemas::all();
    if std::env::var_os("RLCTL_WRITE_SCHEMAS").is_some() {
        std::fs::create_dir_all(&dir).unwrap();
        for (name, text) in &generated {
            std::fs::write(dir.join(format!("{name}.schema.json")), text).unwrap();
        }
    }
    let mut stale = Vec::new();
    for (name, text) in &generated {
        let path = dir.join(format!("{name}.schema.json"));
        if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            stale.push(name.to_string());
        }
    }
    let mut shipped: Vec<String> = (std::fs::read_dir(&dir).unwrap())
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    shipped.sort();
    let wanted: Vec<String> = (generated.iter())
        .map(|(name, _)| format!("{name}.schema.json"))
        .collect();
    let extra: Vec<&String> = shipped.iter().filter(|f| !wanted.contains(f)).collect();
    assert!(
        stale.is_empty() && extra.is_empty(),
        "docs/reference/schemas/ differs from the output types (stale: {stale:?}, not generated: \
         {extra:?}): regenerate with `RLCTL_WRITE_SCHEMAS=1 cargo test --test integration \
         json_schemas`, and review the diff (keys are appended, never renamed)"
    );
}

/// `doc` validates against the shipped schema `name` and carries `schema_version` 1.
fn valid(name: &str, doc: &Value) {
    let path = schemas_dir().join(format!("{name}.schema.json"));
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{name}: {errors:#?}\n{doc:#}");
    assert_eq!(doc["schema_version"], 1, "{name}: {doc}");
}

/// The one document on stdout, validated against `name`.
fn document(name: &str, output: &Output) -> Value {
    let text = stdout(output);
    let doc: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}: {text}"));
    valid(name, &doc);
    doc
}

#[test]
fn looks_without_runs_validate() {
    let sandbox = staged();
    document("list", &ok(sandbox.rlctl().args(["list", "--json"])));
    let shown = ok(sandbox.rlctl().args(["show", "gsm8k-canary", "--json"]));
    let doc = document("show", &shown);
    assert_eq!(doc["plan"]["target"], "gsm8k-canary", "{doc}");
    let epochs = (doc["knobs"].as_array().unwrap().iter())
        .find(|k| k["key"] == "trainer.epochs")
        .unwrap();
    assert!(
        epochs["value"].is_i64(),
        "typed as hydra types it: {epochs}"
    );
    assert!(
        epochs["layer"].as_str().unwrap().starts_with("preset "),
        "{epochs}"
    );
    let doctor = sandbox.rlctl().args(["doctor", "--json"]).output().unwrap();
    document("doctor", &doctor);
    let check = ok(sandbox.rlctl().args(["check", "gsm8k-canary", "--json"]));
    let doc = document("check", &check);
    // Each finding carries its family as a stable code.
    let codes: Vec<&str> = (doc["findings"].as_array().unwrap().iter())
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert!(codes.contains(&"slots"), "{doc}");
    let refused = (sandbox.rlctl())
        .args(["check", "gsm8k-canary", "--json", "--chain", "3"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(1));
    let doc = document("check", &refused);
    let problem = (doc["findings"].as_array().unwrap().iter())
        .find(|f| f["level"] == "problem")
        .unwrap();
    assert_eq!(
        (&problem["code"], &problem["target"]),
        (&"slots".into(), &"gsm8k-canary".into())
    );
    let all = (sandbox.rlctl())
        .args(["check", "--all", "gsm8k-accuracy", "--json"])
        .output()
        .unwrap();
    document("check-all", &all);
    let estimate = ok(sandbox.rlctl().args(["estimate", "gsm8k-canary", "--json"]));
    document("estimate", &estimate);
    let all = ok(sandbox
        .rlctl()
        .args(["estimate", "--all", "gsm8k-throughput", "--json"]));
    let doc = document("estimate-all", &all);
    assert_eq!(doc["grid"], "gsm8k-throughput");
    assert!(!doc["cells"].as_array().unwrap().is_empty(), "{doc}");
}

#[test]
fn launches_say_each_submission_typed() {
    let sandbox = staged();
    let args = ["launch", "gsm8k-canary", "--json", "--chain", "2"];
    let knobs = ["--", "trainer.ckpt_interval=100"];
    let dry = ok(sandbox.rlctl().args(args).arg("--dry-run").args(knobs));
    let doc = document("launch", &dry);
    assert_eq!(doc["jobs"][0]["outcome"], "dry-run");
    let real = document("launch", &ok(sandbox.rlctl().args(args).args(knobs)));
    let outcomes: Vec<(&str, &str)> = (real["jobs"].as_array().unwrap().iter())
        .map(|j| {
            (
                j["outcome"].as_str().unwrap(),
                j["job_id"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(outcomes, [("submitted", "1001"), ("submitted", "1002")]);
    // A grid: the cell submitted, then the same cell again, recorded.
    let cell = ["grid", "gsm8k-accuracy/lr1e-6", "--json"];
    let grid = document("grid", &ok(sandbox.rlctl().args(cell)));
    assert_eq!(
        (&grid["jobs"][0]["outcome"], &grid["jobs"][0]["job_id"]),
        (&"submitted".into(), &"1003".into()),
        "{grid}"
    );
    // The whole grid: the cell the ledger holds is recorded, not submitted again.
    let all = ["grid", "--all", "gsm8k-accuracy", "--json"];
    let again = document("grid", &ok(sandbox.rlctl().args(all)));
    let cell = (again["jobs"].as_array().unwrap().iter())
        .find(|j| j["target"] == "gsm8k-accuracy/lr1e-6")
        .unwrap();
    assert_eq!(
        (&cell["outcome"], &cell["job_id"]),
        (&"recorded".into(), &"1003".into()),
        "{again}"
    );
    assert_eq!(again["grid"], "gsm8k-accuracy");
}

#[test]
fn recorded_runs_validate() {
    let sandbox = staged();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    let logs = crate::common::recorded_logs(&sandbox);
    let log = &logs["gsm8k-canary"];
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    let text: String = (1..=3)
        .map(|step| {
            format!(
                "WANDB_MIRROR kind=train step={step} metrics={{\"timing/step\": 10.0, \"reward/avg_raw_reward\": 0.5}}\n"
            )
        })
        .collect();
    std::fs::write(log, text).unwrap();
    sandbox.queue("1001|gsm8k-canary|RUNNING\n");
    let status = document("status", &ok(sandbox.rlctl().args(["status", "--json"])));
    let diff = ["diff", "gsm8k-canary", "gsm8k-accuracy/lr1e-6", "--json"];
    let diff = document("diff", &ok(sandbox.rlctl().args(diff)));
    assert_eq!(
        diff["runs"][0]["job_id"], "1001",
        "the recorded run's row: {diff}"
    );
    assert!(diff["runs"][1].is_null(), "a cell has no row: {diff}");
    let knobs = diff["knobs"].as_array().unwrap();
    assert!(
        !knobs.is_empty() && knobs.iter().all(|k| k["differs"] == true),
        "{diff}"
    );
    assert_eq!(diff["differ"], knobs.len());
    assert_eq!(status["runs"][0]["job_id"], "1001", "{status}");
    let metrics = ok(sandbox.rlctl().args(["metrics", "gsm8k-canary", "--json"]));
    let doc = document("metrics", &metrics);
    assert_eq!(doc["train"].as_array().unwrap().len(), 3, "{doc}");
    let watch = (sandbox.rlctl())
        .args(["watch", "gsm8k-canary", "--once", "--json"])
        .output()
        .unwrap();
    document("watch", &watch);
    // The run raises an alert (no entropy logged): a look is needed, exit 1, and the document.
    let tend = sandbox.rlctl().args(["tend", "--json"]).output().unwrap();
    assert_eq!(tend.status.code(), Some(1));
    let tend = document("tend", &tend);
    let alert = &tend["events"][0];
    assert_eq!(
        (&alert["kind"], &alert["run"], &alert["job_id"]),
        (&"alert".into(), &"gsm8k-canary".into(), &"1001".into()),
        "{tend}"
    );
    let kinds: Vec<&str> = (tend["events"].as_array().unwrap().iter())
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds.last(), Some(&"summary"), "{tend}");
    // A wait that times out: a `change` event, then the `outcome`, each its own line.
    let wait = (sandbox.rlctl())
        .args(["wait", "gsm8k-canary", "--timeout", "1s", "--json"])
        .env("RLCTL_WAIT_INTERVAL", "300ms")
        .output()
        .unwrap();
    assert_eq!(wait.status.code(), Some(2));
    let events: Vec<Value> = (stdout(&wait).lines())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(events.len() >= 2, "{events:?}");
    for event in &events {
        let name = format!("wait-{}", event["event"].as_str().unwrap());
        valid(&name, event);
    }
    assert_eq!(events.last().unwrap()["event"], "outcome");
    // Cancelling it: the job, typed.
    sandbox.scancel();
    let cancel = ["cancel", "gsm8k-canary", "--json"];
    let cancelled = document("cancel", &ok(sandbox.rlctl().args(cancel)));
    assert_eq!(cancelled["confirmed"], true);
    assert_eq!(
        (
            &cancelled["jobs"][0]["job_id"],
            &cancelled["jobs"][0]["state"]
        ),
        (&"1001".into(), &"RUNNING".into()),
        "{cancelled}"
    );
    let again = document("cancel", &ok(sandbox.rlctl().args(cancel)));
    assert_eq!(again["jobs"], serde_json::json!([]), "{again}");
}

#[test]
fn a_failed_command_under_json_prints_its_error_as_json() {
    let sandbox = Sandbox::new();
    let output = (sandbox.rlctl())
        .args(["estimate", "no-such-preset", "--json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let doc = document("error", &output);
    assert_eq!(
        (&doc["error"]["code"], &doc["error"]["exit"]),
        (&"unknown-name".into(), &2.into()),
        "{doc}"
    );
    // A status of a run the ledger does not hold: the same shape.
    let output = (sandbox.rlctl())
        .args(["status", "nothing-here", "--json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    document("error", &output);
    // A usage error: the same shape, code `usage`.
    let output = (sandbox.rlctl())
        .args(["status", "--json", "--no-such-flag"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(document("error", &output)["error"]["code"], "usage");
    // Without --json, stdout stays empty.
    let output = (sandbox.rlctl())
        .args(["estimate", "no-such-preset"])
        .output()
        .unwrap();
    assert_eq!(stdout(&output), "");
}

#[test]
fn reports_and_cleanups_validate() {
    let sandbox = Sandbox::new();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    let logs = crate::common::recorded_logs(&sandbox);
    let log = &logs["gsm8k-canary"];
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    std::fs::write(
        log,
        "WANDB_MIRROR kind=train step=1 metrics={\"timing/step\": 10.0, \"reward/avg_raw_reward\": 0.5}\n",
    )
    .unwrap();
    // Its log: where it is, its last lines, its errors (none).
    let logs = |args: &[&str]| {
        let output = ok(sandbox
            .rlctl()
            .args(["logs", "gsm8k-canary", "--json"])
            .args(args));
        document("logs", &output)["logs"][0].clone()
    };
    let path = logs(&["--path"]);
    assert_eq!(path["log"], log.to_str().unwrap(), "{path}");
    let tail = logs(&["--tail", "1"]);
    assert!(
        tail["lines"][0]
            .as_str()
            .unwrap()
            .starts_with("WANDB_MIRROR kind=train step=1")
    );
    assert_eq!(logs(&["--errors"])["errors"], "");
    // The whole log is not read into JSON: the error says what to ask.
    let whole = (sandbox.rlctl())
        .args(["logs", "gsm8k-canary", "--json"])
        .output()
        .unwrap();
    assert_eq!(whole.status.code(), Some(2));
    assert_eq!(document("error", &whole)["error"]["code"], "bad-flag");
    let dir = sandbox.root().join("report");
    let report = ok(sandbox
        .rlctl()
        .args(["report", "gsm8k-canary", "--json", "--out"])
        .arg(&dir));
    let doc = document("report", &report);
    assert_eq!(doc["rows"][0]["run"]["job_id"], "1001", "{doc}");
    assert!(!doc["written"].as_array().unwrap().is_empty(), "{doc}");
    // Its checkpoints cleaned, its export kept: each folder, typed.
    let ckpt = sandbox
        .root()
        .join("work/checkpoints/gsm8k-canary/gsm8k-canary");
    std::fs::create_dir_all(ckpt.join("ckpt/global_step_5")).unwrap();
    std::fs::create_dir_all(ckpt.join("export")).unwrap();
    std::fs::write(ckpt.join("ckpt/global_step_5/model.pt"), vec![0u8; 3000]).unwrap();
    let clean = ["clean", "gsm8k-canary", "--yes", "--json"];
    let cleaned = document("clean", &ok(sandbox.rlctl().args(clean)));
    let removed = &cleaned["removed"][0];
    assert_eq!(removed["run"], "gsm8k-canary", "{cleaned}");
    assert!(removed["bytes"].as_u64().unwrap() >= 3000, "{cleaned}");
    assert!(removed["export"].as_str().unwrap().ends_with("export"));
    // Then retired: where its folder went.
    let retire = ["retire", "gsm8k-canary", "--yes", "--json"];
    let retired = document("retire", &ok(sandbox.rlctl().args(retire)));
    assert_eq!(
        (&retired["runs"][0]["run"], &retired["runs"][0]["jobs"]),
        (&"gsm8k-canary".into(), &serde_json::json!(["1001"])),
        "{retired}"
    );
    assert!(
        (retired["runs"][0]["moved_to"].as_str().unwrap()).ends_with(".retired-1001"),
        "{retired}"
    );
}
