//! `rlctl mcp` driven by the official MCP Python SDK client (tests/mcp_client.py), as an agent
//! drives it: the tools it lists, a plan, a launch that submits nothing without its token, and
//! tokens replayed, altered or stale acting on nothing; and `--dry-run` of the commands that ask.

use crate::common::{BIN, Sandbox, ok, stdout};
use serde_json::{Value, json};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// The transcript of the Python client running `steps` against `server` (argv), with the
/// sandbox's environment.
pub fn drive(sandbox: &Sandbox, server: &[String], steps: &Value) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_client.py");
    let mut cmd = sandbox.rlctl();
    let envs: Vec<(String, String)> = (cmd.get_envs())
        .filter_map(|(k, v)| Some((k.to_str()?.to_owned(), v?.to_str()?.to_owned())))
        .collect();
    cmd = Command::new("python3");
    cmd.envs(envs)
        .arg(script)
        .arg(serde_json::to_string(server).unwrap())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    (child.stdin.take().unwrap())
        .write_all(steps.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the MCP client failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The i-th call's result.
pub fn result(transcript: &Value, i: usize) -> &Value {
    &transcript["calls"][i]["result"]
}

pub const TOOLS: [&str; 16] = [
    "list", "show", "check", "estimate", "plan", "launch", "grid", "status", "wait", "metrics",
    "logs", "report", "diff", "cancel", "retire", "clean",
];

#[test]
fn an_agent_plans_and_launches_once_on_its_token_and_nothing_else_submits() {
    let sandbox = Sandbox::new();
    let canary = json!({"preset": "gsm8k-canary"});
    let steps = json!([
        {"call": "plan", "args": canary, "save": "plan"},
        {"call": "launch", "args": canary, "save": "unconfirmed"},
        {"call": "launch", "args": {"preset": "gsm8k-canary", "nodes": 2, "confirm": "$plan"}},
        {"call": "status", "args": {}},
        {"call": "launch", "args": {"preset": "gsm8k-canary", "confirm": "$plan"}},
        {"call": "launch", "args": {"preset": "gsm8k-canary", "confirm": "$plan"}},
        {"call": "launch", "args": {"preset": "gsm8k-canary", "confirm": "$unconfirmed"}},
        {"call": "launch", "args": {"preset": "--help"}},
        {"call": "status", "args": {"run": "gsm8k-canary"}},
    ]);
    let server = [BIN.to_owned(), "mcp".to_owned()];
    let t = drive(&sandbox, &server, &steps);
    println!("{}", serde_json::to_string_pretty(&t).unwrap());

    let names: Vec<&str> = (t["tools"].as_array().unwrap().iter())
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    for tool in TOOLS {
        assert!(names.contains(&tool), "{tool} missing from {names:?}");
    }
    let launch = (t["tools"].as_array().unwrap().iter())
        .find(|tool| tool["name"] == "launch")
        .unwrap();
    assert_eq!(launch["input"]["required"], json!(["preset"]), "{launch}");

    // The plan: the dry run's own JSON, and a token.
    let plan = result(&t, 0);
    assert_eq!(plan["done"], false, "{plan}");
    assert_eq!(plan["exit_code"], 0, "{plan}");
    assert!(
        plan["command"].as_str().unwrap().contains("--dry-run"),
        "{plan}"
    );
    assert!(plan["output"].is_object(), "the dry run's JSON: {plan}");
    assert!(plan["confirm"].is_string(), "{plan}");
    // Unconfirmed, a launch is its plan: nothing submitted.
    assert_eq!(result(&t, 1)["done"], false);
    assert!(result(&t, 1)["confirm"].is_string());
    // The plan's token for other inputs (2 nodes): altered.
    assert!(
        result(&t, 2)["refused"]
            .as_str()
            .unwrap()
            .contains("other inputs")
    );
    assert_eq!(t["calls"][2]["is_error"], true);
    // Three calls in, the ledger holds nothing.
    let status = &result(&t, 3)["output"];
    assert!(!status.to_string().contains("1001"), "{status}");
    // The token acts once.
    let launched = result(&t, 4);
    assert_eq!(launched["done"], true, "{launched}");
    assert!(!launched["command"].as_str().unwrap().contains("--dry-run"));
    assert!(
        launched["output"].to_string().contains("1001"),
        "{launched}"
    );
    assert!(
        result(&t, 5)["refused"]
            .as_str()
            .unwrap()
            .contains("used already")
    );
    // Issued before the launch, the other token's state is gone: stale.
    let stale = result(&t, 6);
    assert!(
        stale["refused"].as_str().unwrap().contains("changed since"),
        "{stale}"
    );
    assert_eq!(stale["done"], false);
    // A flag where a name goes is refused before anything runs.
    assert!(
        result(&t, 7)["refused"]
            .as_str()
            .unwrap()
            .contains("start with `-`")
    );
    assert!(result(&t, 8)["output"].to_string().contains("1001"));
    assert_eq!(
        sandbox.sbatch_calls(),
        1,
        "one confirmed launch, one submission"
    );
}

#[test]
fn cancel_retire_and_clean_dry_runs_show_what_they_would_do_and_do_nothing() {
    let sandbox = Sandbox::new();
    sandbox.scancel();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    sandbox.queue("1001|gsm8k-canary|RUNNING\n");
    let ledger = || std::fs::read_to_string(sandbox.root().join("work/runs/ledger.jsonl"));
    let before = ledger().ok();
    let cancel = stdout(&ok(sandbox.rlctl().args([
        "cancel",
        "gsm8k-canary",
        "--dry-run",
    ])));
    assert!(cancel.contains("job 1001"), "{cancel}");
    assert!(cancel.ends_with("cancelled nothing\n"), "{cancel}");
    let retire = stdout(&ok(sandbox.rlctl().args([
        "retire",
        "gsm8k-canary",
        "--dry-run",
    ])));
    assert!(
        retire.contains("gsm8k-canary: cancels job 1001"),
        "{retire}"
    );
    assert!(retire.ends_with("retired nothing\n"), "{retire}");
    assert!(
        !sandbox.root().join("sbatch-calls/scancel").exists(),
        "nothing cancelled"
    );
    assert_eq!(ledger().ok(), before, "nothing retired");

    sandbox.queue("");
    let ckpt = sandbox
        .root()
        .join("work/checkpoints/gsm8k-canary/gsm8k-canary");
    std::fs::create_dir_all(ckpt.join("ckpt/global_step_5")).unwrap();
    let clean = stdout(&ok(sandbox.rlctl().args([
        "clean",
        "gsm8k-canary",
        "--dry-run",
    ])));
    assert!(clean.contains(&ckpt.display().to_string()), "{clean}");
    assert!(clean.ends_with("removed nothing\n"), "{clean}");
    assert!(ckpt.join("ckpt/global_step_5").is_dir());
}
