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

/// A private sshd on 127.0.0.1 (its own host key, authorized key, known_hosts and free port),
/// killed when dropped; the login node `rlctl mcp --ssh` reaches in the tests.
pub struct Sshd {
    child: std::process::Child,
    pub options: Vec<String>,
}

impl Sshd {
    pub fn start(dir: &Path) -> Sshd {
        let keygen = |file: &str| {
            let status = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                .arg(dir.join(file))
                .status()
                .unwrap();
            assert!(status.success(), "ssh-keygen failed");
            std::fs::read_to_string(dir.join(format!("{file}.pub"))).unwrap()
        };
        let host = keygen("host_key");
        std::fs::write(dir.join("authorized_keys"), keygen("id")).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        std::fs::write(
            dir.join("known_hosts"),
            format!("[127.0.0.1]:{port} {host}"),
        )
        .unwrap();
        let d = dir.display();
        std::fs::write(
            dir.join("sshd_config"),
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_key\nPidFile {d}/sshd.pid\n\
                 AuthorizedKeysFile {d}/authorized_keys\nPasswordAuthentication no\n\
                 KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n\
                 PermitRootLogin prohibit-password\n"
            ),
        )
        .unwrap();
        // sshd insists on its privilege separation folder (Debian's package makes it at boot).
        let _ = std::fs::create_dir_all("/run/sshd");
        let child = Command::new("/usr/sbin/sshd")
            .args(["-D", "-e", "-f"])
            .arg(dir.join("sshd_config"))
            .stderr(std::fs::File::create(dir.join("sshd.log")).unwrap())
            .spawn()
            .expect("openssh-server (tests/setup.sh installs it)");
        let up = std::time::Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(up.elapsed().as_secs() < 20, "sshd did not listen");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let options = [
            format!("Port={port}"),
            format!("IdentityFile={d}/id"),
            "IdentitiesOnly=yes".to_owned(),
            format!("UserKnownHostsFile={d}/known_hosts"),
            "StrictHostKeyChecking=yes".to_owned(),
        ];
        Sshd {
            child,
            options: options
                .into_iter()
                .flat_map(|o| ["--ssh-option".to_owned(), o])
                .collect(),
        }
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The remote rlctl: the login node's environment (the sandbox's profile, presets and fake
/// SLURM programs), as its shell profile would set it, then rlctl.
pub fn remote_rlctl(sandbox: &Sandbox) -> String {
    let cmd = sandbox.rlctl();
    let exports: String = (cmd.get_envs())
        .filter_map(|(k, v)| Some(format!("export {}='{}'\n", k.to_str()?, v?.to_str()?)))
        .collect();
    let path = sandbox.root().join("remote-rlctl");
    crate::common::write_exec(&path, &format!("#!/bin/bash\n{exports}exec {BIN} \"$@\"\n"));
    path.display().to_string()
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
    server.extend(["--remote-rlctl".to_owned(), remote_rlctl(&sandbox)]);
    server.extend(sshd.options.iter().cloned());
    let canary =
        json!({"preset": "gsm8k-canary", "overrides": ["trainer.run_name=\"it's $(x); a b\""]});
    let steps = json!([
        {"call": "plan", "args": canary, "save": "plan"},
        {"call": "status", "args": {}},
        {"call": "launch", "args": {"preset": "gsm8k-canary", "overrides": ["trainer.run_name=\"it's $(x); a b\""], "confirm": "$plan"}},
        {"call": "launch", "args": {"preset": "gsm8k-canary", "overrides": ["trainer.run_name=\"it's $(x); a b\""], "confirm": "$plan"}},
    ]);
    let t = drive(&sandbox, &server, &steps);
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
