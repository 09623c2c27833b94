//! `check --json`'s findings, for the tests about which check fired: a finding is matched by
//! its stable `code`, its level and the config `keys` it is about, not by its prose (the tests
//! about the wording a user reads keep reading the text).

use super::{Sandbox, stderr, stdout};
use std::process::{Command, Output};

/// One finding of `check --json`.
#[derive(Debug, Clone)]
pub struct Found {
    pub code: String,
    pub level: String,
    pub keys: Vec<String>,
    pub message: String,
}

impl Found {
    /// Whether it is a `level` finding of check `code` about (at least) every key of `keys`.
    pub fn is(&self, level: &str, code: &str, keys: &[&str]) -> bool {
        self.level == level
            && self.code == code
            && keys.iter().all(|k| self.keys.iter().any(|have| have == k))
    }
}

impl Sandbox {
    /// Runs `rlctl check ARGS --json` (`--json` before any `--`), asserts its exit status is
    /// `exit` (0 passed, 1 a problem), and returns its findings.
    pub fn findings(&self, args: &[&str], exit: i32) -> Vec<Found> {
        let mut argv: Vec<&str> = args.to_vec();
        let at = argv.iter().position(|a| *a == "--").unwrap_or(argv.len());
        argv.insert(at, "--json");
        findings_of(self.rlctl().args(&argv), exit)
    }
}

/// Runs `cmd`, a `check ... --json`, asserts its exit status is `exit`, and returns its
/// findings.
pub fn findings_of(cmd: &mut Command, exit: i32) -> Vec<Found> {
    let output = cmd.output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(exit),
        "{cmd:?}\nstdout:\n{}\nstderr:\n{}",
        stdout(&output),
        stderr(&output)
    );
    findings_in(&output)
}

/// The findings of a `check ... --json`'s output.
pub fn findings_in(output: &Output) -> Vec<Found> {
    let text = stdout(output);
    let doc: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    let strings = |v: &serde_json::Value| -> Vec<String> {
        (v.as_array().unwrap().iter())
            .map(|s| s.as_str().unwrap().to_owned())
            .collect()
    };
    (doc["findings"].as_array().unwrap().iter())
        .map(|f| Found {
            code: f["code"].as_str().unwrap().to_owned(),
            level: f["level"].as_str().unwrap().to_owned(),
            keys: strings(&f["keys"]),
            message: f["message"].as_str().unwrap().to_owned(),
        })
        .collect()
}

/// Whether any finding of `found` is of check `code`, at any level.
pub fn fired(found: &[Found], code: &str) -> bool {
    found.iter().any(|f| f.code == code)
}

/// Asserts some finding of `found` is a `level` finding of `code` about `keys`.
#[track_caller]
pub fn assert_found(found: &[Found], level: &str, code: &str, keys: &[&str]) {
    assert!(
        found.iter().any(|f| f.is(level, code, keys)),
        "no {level} of [{code}] about {keys:?} in {found:#?}"
    );
}
