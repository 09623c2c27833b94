//! The steps most tests repeat, as one builder: run rlctl, then pin its exit status, stdout and
//! stderr, each exactly or by what it must and must not contain (just's `tests/test.rs`). A
//! failure prints the command and both streams whole.
//!
//! ```ignore
//! sandbox.expect(["status", "never-launched"]).status(2).stderr_has("did you mean").run();
//! ```

use super::{Sandbox, rlctl};
use std::ffi::OsStr;
use std::process::{Command, Output};

/// What one stream must be.
enum Check {
    Is(String),
    Has(String),
    Lacks(String),
}

/// A command and what its run must show; see [`Expect::run`].
#[must_use = "an expectation is checked only by `run`"]
pub struct Expect {
    cmd: Command,
    status: i32,
    stdout: Vec<Check>,
    stderr: Vec<Check>,
}

impl Sandbox {
    /// rlctl in this sandbox with `args`, expected to exit 0 unless [`Expect::status`] says.
    pub fn expect<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(&self, args: I) -> Expect {
        Expect::of(self.rlctl(), args)
    }
}

/// rlctl outside any sandbox (the embedded presets and profile) with `args`.
pub fn expect<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(args: I) -> Expect {
    Expect::of(rlctl(), args)
}

impl Expect {
    fn of<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(mut cmd: Command, args: I) -> Expect {
        cmd.args(args);
        Expect {
            cmd,
            status: 0,
            stdout: Vec::new(),
            stderr: Vec::new(),
        }
    }

    pub fn env(mut self, key: &str, value: impl AsRef<OsStr>) -> Expect {
        self.cmd.env(key, value);
        self
    }

    /// The exit status the run must end with (0 unless said).
    pub fn status(mut self, code: i32) -> Expect {
        self.status = code;
        self
    }

    /// stdout, exactly.
    pub fn stdout(mut self, text: &str) -> Expect {
        self.stdout.push(Check::Is(text.to_owned()));
        self
    }

    pub fn stdout_has(mut self, text: &str) -> Expect {
        self.stdout.push(Check::Has(text.to_owned()));
        self
    }

    pub fn stdout_lacks(mut self, text: &str) -> Expect {
        self.stdout.push(Check::Lacks(text.to_owned()));
        self
    }

    /// stderr, exactly.
    pub fn stderr(mut self, text: &str) -> Expect {
        self.stderr.push(Check::Is(text.to_owned()));
        self
    }

    pub fn stderr_has(mut self, text: &str) -> Expect {
        self.stderr.push(Check::Has(text.to_owned()));
        self
    }

    pub fn stderr_lacks(mut self, text: &str) -> Expect {
        self.stderr.push(Check::Lacks(text.to_owned()));
        self
    }

    /// Runs the command and checks everything asked; its output, for what a test checks further.
    pub fn run(mut self) -> Output {
        let output = self.cmd.output().expect("rlctl runs");
        let (out, err) = (
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr),
        );
        let mut wrong = Vec::new();
        if output.status.code() != Some(self.status) {
            wrong.push(format!(
                "exit status {:?}, expected {}",
                output.status.code(),
                self.status
            ));
        }
        for (name, text, checks) in [
            ("stdout", &out, &self.stdout),
            ("stderr", &err, &self.stderr),
        ] {
            for check in checks {
                match check {
                    Check::Is(want) if text != want => {
                        wrong.push(format!("{name} is not exactly:\n{want}"))
                    }
                    Check::Has(want) if !text.contains(want.as_str()) => {
                        wrong.push(format!("{name} lacks {want:?}"))
                    }
                    Check::Lacks(not) if text.contains(not.as_str()) => {
                        wrong.push(format!("{name} has {not:?}"))
                    }
                    _ => {}
                }
            }
        }
        assert!(
            wrong.is_empty(),
            "{:?}\n{}\n--- stdout:\n{out}--- stderr:\n{err}",
            self.cmd,
            wrong.join("\n")
        );
        output
    }
}
