//! An agent's session on the real cluster through `rlctl mcp`, driven by the official MCP Python
//! SDK client: the canary planned, launched on its token, waited for, read (status, metrics) to
//! COMPLETED in six tool calls and one confirmation; the unconfirmed, replayed and stale calls
//! submit nothing. The same through the `--ssh` mode, against a private sshd on 127.0.0.1.

use super::common::BIN;
use super::common::mcp::{Sshd, drive, remote_rlctl, result};
use super::{Cluster, Site};
use serde_json::{Value, json};

/// The session: plan (token A), launch unconfirmed (token B, nothing submitted), launch on A,
/// wait, status, metrics; then A again (replayed) and B (stale: the ledger changed).
fn session() -> Value {
    let canary = json!({"preset": "gsm8k-canary"});
    json!([
        {"call": "plan", "args": canary, "save": "a"},
        {"call": "launch", "args": canary, "save": "b"},
        {"call": "launch", "args": {"preset": "gsm8k-canary", "confirm": "$a"}},
        {"call": "wait", "args": {"runs": ["gsm8k-canary"], "timeout_s": 300}},
        {"call": "status", "args": {"run": "gsm8k-canary"}},
        {"call": "metrics", "args": {"run": "gsm8k-canary"}},
        {"call": "launch", "args": {"preset": "gsm8k-canary", "confirm": "$a"}},
        {"call": "launch", "args": {"preset": "gsm8k-canary", "confirm": "$b"}},
    ])
}

/// What the session must show, whichever way the calls were carried out.
fn judge(site: &Site, t: &Value) {
    let calls = t["calls"].as_array().unwrap();
    let text = serde_json::to_string_pretty(t).unwrap();
    assert_eq!(result(t, 0)["exit_code"], 0, "{text}");
    assert_eq!(result(t, 1)["done"], false, "{text}");
    assert_eq!(result(t, 2)["done"], true, "{text}");
    assert_eq!(
        result(t, 3)["exit_code"],
        0,
        "wait reached COMPLETED: {text}"
    );
    assert!(
        result(t, 4)["output"].to_string().contains("COMPLETED"),
        "{text}"
    );
    assert!(
        result(t, 5)["output"].to_string().contains("\"step\""),
        "{text}"
    );
    assert!(
        result(t, 6)["refused"]
            .as_str()
            .unwrap()
            .contains("used already"),
        "{text}"
    );
    assert!(
        result(t, 7)["refused"]
            .as_str()
            .unwrap()
            .contains("changed since"),
        "{text}"
    );
    // Six calls to COMPLETED and its metrics, one of them the confirmation.
    let confirmed = calls[..6]
        .iter()
        .filter(|c| c["args"].get("confirm").is_some());
    assert_eq!(confirmed.count(), 1);
    // One job: the unconfirmed, replayed and stale calls submitted nothing.
    assert!(site.run_dir("gsm8k-canary", "gsm8k-canary", "001").is_dir());
    assert!(
        !site.run_dir("gsm8k-canary", "gsm8k-canary", "002").exists(),
        "{text}"
    );
}

pub fn an_agent_runs_the_canary_to_completed_through_mcp(cluster: &Cluster) {
    let site = Site::new(cluster);
    let server = [BIN, "mcp", "--call-timeout", "600"].map(str::to_owned);
    let t = drive(&site.rlctl(), &server, &session());
    judge(&site, &t);
    println!("{}", serde_json::to_string_pretty(&t).unwrap());

    let site = Site::new(cluster);
    let keys = tempfile::tempdir().unwrap();
    let sshd = Sshd::start(keys.path());
    let mut server = [BIN, "mcp", "--call-timeout", "600", "--ssh", "127.0.0.1"]
        .map(str::to_owned)
        .to_vec();
    server.extend([
        "--remote-rlctl".to_owned(),
        remote_rlctl(&site.rlctl(), keys.path()),
    ]);
    server.extend(sshd.options.iter().cloned());
    let t = drive(&site.rlctl(), &server, &session());
    judge(&site, &t);
}
