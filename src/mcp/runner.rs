//! Where a tool call's rlctl command runs: this rlctl as a child process, or the remote one as
//! one `ssh -o BatchMode=yes HOST rlctl …` whose words are each quoted for the remote shell.

use super::child::{self, Ran};
use crate::util::quote::{sh, sh_join};
use std::time::Duration;

/// How each command is carried out.
pub enum Runner {
    /// This very executable, with the global flags the server was given.
    Local { exe: String, globals: Vec<String> },
    /// `ssh [-o OPTION…] -o BatchMode=yes HOST -- REMOTE_RLCTL …`.
    Ssh {
        program: String,
        options: Vec<String>,
        host: String,
        rlctl: String,
    },
}

impl Runner {
    /// The argv that runs `rlctl words…`.
    pub fn argv(&self, words: &[String]) -> Vec<String> {
        match self {
            Runner::Local { exe, globals } => (std::iter::once(exe).chain(globals).chain(words))
                .cloned()
                .collect(),
            Runner::Ssh {
                program,
                options,
                host,
                rlctl,
            } => {
                let mut argv = vec![program.clone()];
                for option in options {
                    argv.extend(["-o".to_owned(), option.clone()]);
                }
                // No password or host-key prompt can ever wait on a terminal nobody watches.
                argv.extend(["-o", "BatchMode=yes", "-T", "--", host].map(str::to_owned));
                // ssh joins its words into one command line for the remote shell: each word is
                // quoted there to arrive as exactly one word.
                argv.push(remote_line(rlctl, words));
                argv
            }
        }
    }

    /// The command as a person would type it (for the result and messages).
    pub fn shown(&self, words: &[String]) -> String {
        match self {
            Runner::Local { .. } => format!("rlctl {}", sh_join(words)),
            Runner::Ssh { host, rlctl, .. } => {
                format!("ssh {} {}", sh(host), sh(&remote_line(rlctl, words)))
            }
        }
    }

    /// Runs `rlctl words…` for at most `limit`.
    pub fn run(&self, words: &[String], limit: Duration) -> Result<Ran, String> {
        let ran = child::run(&self.argv(words), limit)?;
        match (self, ran.code) {
            // ssh's own failure (no connection, a refused key) is 255, never rlctl's.
            (Runner::Ssh { host, .. }, Some(255)) => Err(format!(
                "ssh to {host} failed (exit 255): {}",
                ran.stderr.trim()
            )),
            _ => Ok(ran),
        }
    }
}

/// `rlctl words…` as one line for a POSIX remote shell.
fn remote_line(rlctl: &str, words: &[String]) -> String {
    let mut line = sh(rlctl);
    for word in words {
        line.push(' ');
        line.push_str(&sh(word));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remote_word_arrives_as_one_word() {
        let runner = Runner::Ssh {
            program: "ssh".into(),
            options: vec!["Port=2222".into()],
            host: "login".into(),
            rlctl: "rlctl".into(),
        };
        let words = ["status".to_owned(), "a b; rm -rf ~ $(x) 'q'".to_owned()];
        let argv = runner.argv(&words);
        assert_eq!(
            argv[..8],
            [
                "ssh",
                "-o",
                "Port=2222",
                "-o",
                "BatchMode=yes",
                "-T",
                "--",
                "login"
            ]
        );
        let out = std::process::Command::new("sh")
            .args([
                "-c",
                &format!("printf '%s\\n' {}", &argv[8]["rlctl ".len()..]),
            ])
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8(out.stdout).unwrap(),
            "status\na b; rm -rf ~ $(x) 'q'\n"
        );
    }
}
