//! Driving `rlctl mcp` as an agent does: the official MCP Python SDK client
//! (tests/mcp_client.py), and a private sshd on 127.0.0.1 for the `--ssh` mode.

use super::BIN;
use serde_json::Value;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// The transcript of the Python client running `steps` against `server` (argv), with the
/// environment `like` sets (a sandbox's or a site's rlctl).
pub fn drive(like: &Command, server: &[String], steps: &Value) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_client.py");
    let envs: Vec<(String, String)> = (like.get_envs())
        .filter_map(|(k, v)| Some((k.to_str()?.to_owned(), v?.to_str()?.to_owned())))
        .collect();
    let mut cmd = Command::new("python3");
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

/// The remote rlctl, written into `dir`: the login node's environment (the one `like` sets: a
/// profile, presets, SLURM programs), as its shell profile would set it, then rlctl.
pub fn remote_rlctl(like: &Command, dir: &Path) -> String {
    let exports: String = (like.get_envs())
        .filter_map(|(k, v)| Some(format!("export {}='{}'\n", k.to_str()?, v?.to_str()?)))
        .collect();
    let path = dir.join("remote-rlctl");
    super::write_exec(&path, &format!("#!/bin/bash\n{exports}exec {BIN} \"$@\"\n"));
    path.display().to_string()
}
