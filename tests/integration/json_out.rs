//! `--json` on `check`, `check --all`, `doctor` and `launch`: one JSON object on stdout, the
//! exit status unchanged.

use crate::common::staged;
use crate::common::{Sandbox, ok, stdout};
use serde_json::Value;

fn json_of(output: &std::process::Output) -> Value {
    serde_json::from_str(&stdout(output)).unwrap_or_else(|e| panic!("{e}: {}", stdout(output)))
}

#[test]
fn check_json_gives_the_verdict_with_its_warnings_and_problems() {
    let sandbox = staged();
    let output = ok(sandbox.rlctl().args(["check", "gsm8k-canary", "--json"]));
    let doc = json_of(&output);
    assert_eq!(doc["target"], "gsm8k-canary");
    assert_eq!(doc["passed"], true);
    assert_eq!(doc["shipped"], false);
    assert_eq!(doc["problems"], serde_json::json!([]));
    // The slots warning launch gives, in the object.
    let warnings = doc["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().starts_with("[slots] ")),
        "{doc}"
    );
    // A problem: exit 1, and the object still says it.
    let output = sandbox
        .rlctl()
        .args(["check", "gsm8k-canary", "--json", "--chain", "3"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let doc = json_of(&output);
    assert_eq!(doc["passed"], false);
    assert!(
        doc["problems"][0]
            .as_str()
            .unwrap()
            .starts_with("[slots] --chain 3"),
        "{doc}"
    );
}

#[test]
fn check_all_json_has_a_row_per_target() {
    let sandbox = staged();
    ok(sandbox.rlctl().args(["grid", "gsm8k-accuracy/lr1e-6"]));
    let output = sandbox
        .rlctl()
        .args(["check", "--all", "gsm8k-accuracy", "--json"])
        .output()
        .unwrap();
    let doc = json_of(&output);
    assert_eq!(doc["grid"], "gsm8k-accuracy");
    let rows = doc["rows"].as_array().unwrap();
    let row = (rows.iter())
        .find(|r| r["target"] == "gsm8k-accuracy/lr1e-6")
        .unwrap();
    assert_eq!(row["verdict"], "recorded", "{doc}");
    assert_eq!(row["job_id"], "1001");
    assert_eq!(doc["recorded"], 1);
    assert_eq!(
        doc["ok"].as_u64().unwrap() + doc["with_problems"].as_u64().unwrap() + 1,
        rows.len() as u64
    );
}

#[test]
fn doctor_json_lists_each_check() {
    let sandbox = Sandbox::new();
    let output = sandbox.rlctl().args(["doctor", "--json"]).output().unwrap();
    let doc = json_of(&output);
    assert_eq!(doc["cluster"], "test");
    let checks = doc["checks"].as_array().unwrap();
    assert!(!checks.is_empty());
    for check in checks {
        assert!(["ok", "problem", "skipped"].contains(&check["status"].as_str().unwrap()));
        assert!(check["check"].is_string() && check["detail"].is_string());
    }
    let problems = checks.iter().filter(|c| c["status"] == "problem").count();
    assert_eq!(doc["problems"], problems);
    assert_eq!(output.status.code(), Some(if problems > 0 { 1 } else { 0 }));
}

#[test]
fn launch_json_gives_the_estimate_and_the_jobs() {
    let sandbox = staged();
    let args = ["launch", "gsm8k-canary", "--json", "--chain", "2"];
    let knobs = ["--", "trainer.ckpt_interval=100"];
    let dry = json_of(&ok(sandbox.rlctl().args(args).arg("--dry-run").args(knobs)));
    assert_eq!(dry["dry_run"], true);
    assert_eq!(dry["chain"], 2);
    assert_eq!(dry["estimate"]["steps"], 233);
    let jobs = dry["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2);
    assert!(jobs.iter().all(|j| j["job_id"].is_null()));
    let real = json_of(&ok(sandbox.rlctl().args(args).args(knobs)));
    assert_eq!(real["dry_run"], false);
    assert_eq!(real["account"], "rlctl_test");
    let ids: Vec<&str> = (real["jobs"].as_array().unwrap().iter())
        .map(|j| j["job_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["1001", "1002"]);
    assert_eq!(real["jobs"][1]["dependency"], "afterany:1001");
}

#[test]
fn watch_once_json_gives_the_state_progress_and_alerts() {
    let sandbox = staged();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    let logs = crate::common::recorded_logs(&sandbox);
    let log = &logs["gsm8k-canary"];
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    let mut text = String::new();
    for step in 1..=3 {
        text.push_str(&format!(
            "WANDB_MIRROR kind=train step={step} metrics={{\"timing/step\": 10.0, \"reward/avg_raw_reward\": 0.5}}\n"
        ));
    }
    std::fs::write(log, text).unwrap();
    std::fs::write(
        sandbox.root().join("sbatch-calls/queue"),
        "1001|gsm8k-canary|RUNNING\n",
    )
    .unwrap();
    let output = (sandbox.rlctl())
        .args(["watch", "gsm8k-canary", "--once", "--json"])
        .output()
        .unwrap();
    let doc = json_of(&output);
    assert_eq!(doc["job_id"], "1001");
    assert_eq!(doc["state"], "RUNNING");
    assert_eq!(doc["step"], 3);
    assert_eq!(doc["total"], 233);
    assert!(doc["eta_s"].as_f64().unwrap() > 0.0, "{doc}");
    assert!(doc["alerts"].is_array(), "{doc}");
    // An alert is still exit 1, as without --json.
    let alerts = doc["alerts"].as_array().unwrap().len();
    assert_eq!(
        output.status.code(),
        Some(if alerts > 0 { 1 } else { 0 }),
        "{doc}"
    );
    // --json is for one look: a live watch refuses it.
    let output = (sandbox.rlctl())
        .args(["watch", "gsm8k-canary", "--json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn tend_json_gives_one_object_for_the_pass() {
    let sandbox = Sandbox::new();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    std::fs::write(
        sandbox.root().join("sbatch-calls/queue"),
        "1001|gsm8k-canary|RUNNING\n",
    )
    .unwrap();
    let text = stdout(&ok(sandbox.rlctl().arg("tend")));
    let output = ok(sandbox.rlctl().args(["tend", "--json"]));
    let doc = json_of(&output);
    assert_eq!(doc["cluster"], "test");
    assert_eq!(doc["look"], 0);
    assert_eq!(doc["problems"], serde_json::json!([]));
    // The pass's own lines, as it says them without --json.
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(doc["lines"], serde_json::json!(lines), "{doc}");
}

/// A finding names the keys it is about, as the plan's trainer spells them: MarinSkyRL's
/// `trainer.max_steps` is upstream skyrl's `trainer.max_training_steps`, in `keys` and in the
/// message alike.
#[test]
fn check_json_findings_name_their_keys_in_the_trainers_names() {
    use crate::common::findings::assert_found;
    let marin = staged();
    let upstream = crate::upstream::upstream_sandbox();
    for (sandbox, key) in [
        (&marin, "trainer.max_steps"),
        (&upstream, "trainer.max_training_steps"),
    ] {
        let found = sandbox.findings(&["check", "gsm8k-canary", "--", "trainer.max_steps=0"], 1);
        assert_found(&found, "problem", "skyrl-rules", &[key]);
        let rule = found.iter().find(|f| f.keys == [key]).unwrap();
        assert!(rule.message.starts_with(&format!("`{key}=0` ")), "{rule:?}");
    }
}
