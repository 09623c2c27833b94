//! `rlctl mcp` driven by the official MCP Python SDK client (tests/mcp_client.py), as an agent
//! drives it: the tools it lists, a plan, a launch that submits nothing without its token, and
//! tokens replayed, altered or stale acting on nothing; and `--dry-run` of the commands that ask.

use crate::common::mcp::{Sshd, TOOLS, drive, remote_rlctl, result};
use crate::common::{BIN, Sandbox, ok, stdout};
use serde_json::json;

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
    let t = drive(&sandbox.rlctl(), &server, &steps);
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

#[test]
fn over_ssh_each_tool_call_is_one_bounded_remote_rlctl() {
    let sandbox = Sandbox::new();
    let keys = tempfile::tempdir().unwrap();
    let sshd = Sshd::start(keys.path());
    let mut server = vec![
        BIN.to_owned(),
        "mcp".to_owned(),
        "--ssh".to_owned(),
        "127.0.0.1".to_owned(),
    ];
    server.extend([
        "--remote-rlctl".to_owned(),
        remote_rlctl(&sandbox.rlctl(), sandbox.root()),
    ]);
    server.extend(sshd.options.iter().cloned());
    let canary =
        json!({"preset": "gsm8k-canary", "overrides": ["trainer.run_name=\"it's $(x); a b\""]});
    let steps = json!([
        {"call": "plan", "args": canary, "save": "plan"},
        {"call": "status", "args": {}},
        {"call": "launch", "args": {"preset": "gsm8k-canary", "overrides": ["trainer.run_name=\"it's $(x); a b\""], "confirm": "$plan"}},
        {"call": "launch", "args": {"preset": "gsm8k-canary", "overrides": ["trainer.run_name=\"it's $(x); a b\""], "confirm": "$plan"}},
    ]);
    let t = drive(&sandbox.rlctl(), &server, &steps);
    let plan = result(&t, 0);
    assert!(
        plan["command"]
            .as_str()
            .unwrap()
            .starts_with("ssh 127.0.0.1 "),
        "{plan}"
    );
    assert_eq!(plan["exit_code"], 0, "{plan}");
    assert!(plan["confirm"].is_string(), "{plan}");
    assert!(!result(&t, 1)["output"].to_string().contains("1001"));
    assert_eq!(result(&t, 2)["done"], true, "{}", result(&t, 2));
    assert!(
        result(&t, 3)["refused"]
            .as_str()
            .unwrap()
            .contains("used already")
    );
    assert_eq!(sandbox.sbatch_calls(), 1);
    // The override reached the remote rlctl as one word, quotes and all.
    let run_sh = std::fs::read_to_string(sandbox.last_script().with_file_name("run.sh")).unwrap();
    assert!(run_sh.contains("it'\\''s $(x); a b"), "{run_sh}");
}
