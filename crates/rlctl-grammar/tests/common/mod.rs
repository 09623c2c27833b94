//! What the oracle tests share: running a python oracle (the real hydra, OmegaConf or skyrl
//! wheel, which the workspace's tests/setup.sh installs) and reading key lists. A missing
//! python3 or library fails the test with the fix; no test skips.

#![allow(dead_code)] // each test binary uses its own part

use std::io::Write as _;
use std::process::{Command, Stdio};

/// An oracle script next to this crate's tests.
pub fn script(name: &str) -> String {
    format!("{}/tests/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// Runs `python3 SCRIPT ARGS` with `input` on stdin and returns its stdout; a failure panics
/// with its stderr and `setup`, the fix.
pub fn python(script: &str, args: &[&str], input: &[u8], setup: &str) -> String {
    let mut child = Command::new("python3")
        .arg(script)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run python3 ({e}): {setup}"));
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    // Written from its own thread: a large input must not wait on an output nobody reads.
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(
        output.status.success(),
        "the oracle {script} failed ({}): {setup}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// The `key=default` lines of a key list, comments and blank lines left out, both sides
/// trimmed (as rlctl's `Schema::parse` reads them).
pub fn key_list(text: &str) -> Vec<(String, String)> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (key, default) = l.split_once('=').expect("a key list line is key=default");
            (key.trim().to_owned(), default.trim().to_owned())
        })
        .collect()
}

/// A key list as the grammars take it.
pub fn borrowed(keys: &[(String, String)]) -> Vec<(&str, &str)> {
    keys.iter().map(|(k, d)| (k.as_str(), d.as_str())).collect()
}
