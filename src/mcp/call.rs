//! One tool call carried out: rlctl's command with `--json` where the command has it, its
//! answer as one JSON result; a mutating call runs its dry run first and acts only on a token
//! that matches it.

use super::child::Ran;
use super::runner::Runner;
use super::token::{Refused, Tokens};
use clap::CommandFactory;
use serde_json::{Value, json};
use std::time::Duration;

/// What every call shares: where commands run, how long they may take, the tokens issued.
pub struct Core {
    pub runner: Runner,
    pub tokens: Tokens,
    pub limit: Duration,
}

/// A tool's answer: the JSON said to the agent, and whether it is an error.
pub struct Answer {
    pub value: Value,
    pub error: bool,
}

impl Answer {
    pub fn refused(why: impl Into<String>) -> Answer {
        Answer {
            value: json!({ "done": false, "refused": why.into() }),
            error: true,
        }
    }
}

/// What a mutating tool would do and does: its dry run, and the command that acts.
pub struct Mutation<'a> {
    pub tool: &'a str,
    /// The inputs without `confirm`, canonical: what a token is bound to.
    pub inputs: String,
    pub dry: Vec<String>,
    pub act: Vec<String>,
    pub confirm: Option<String>,
}

impl Core {
    /// Runs a command that changes nothing, and says what it printed.
    pub fn read(&self, words: Vec<String>) -> Answer {
        match self.run(&words) {
            Ok((value, ran)) => Answer {
                error: !matches!(ran.code, Some(0 | 1)),
                value,
            },
            Err(why) => Answer::refused(why),
        }
    }

    /// Runs the dry run, then: without a token, returns it with a token; with one that matches
    /// it exactly (tool, inputs, what the dry run printed), acts once.
    pub fn mutate(&self, m: Mutation) -> Answer {
        let (mut value, ran) = match self.run(&m.dry) {
            Ok(done) => done,
            Err(why) => return Answer::refused(why),
        };
        value["done"] = json!(false);
        if ran.code != Some(0) {
            // A token given for it is refused all the same, and says why (spent, altered, or
            // stale: tokens are only issued on a dry run that passed).
            if let Some(token) = &m.confirm
                && let Err(why) = self.tokens.redeem(token, m.tool, &m.inputs, &ran.stdout)
            {
                value["refused"] = json!(why.to_string());
            }
            value["note"] = json!("the dry run did not pass: nothing was done, and no token given");
            return Answer { value, error: true };
        }
        let Some(token) = &m.confirm else {
            return self.offer(value, &m, &ran.stdout);
        };
        if let Err(why) = self.tokens.redeem(token, m.tool, &m.inputs, &ran.stdout) {
            value["refused"] = json!(why.to_string());
            if why == Refused::Stale {
                value["confirm"] = json!(self.tokens.issue(m.tool, &m.inputs, &ran.stdout));
            }
            value["note"] = json!("nothing was done");
            return Answer { value, error: true };
        }
        let mut answer = self.read(m.act);
        // Exit 1 is a refusal too (preflight problems): done only when it exited 0.
        answer.value["done"] = json!(answer.value["exit_code"] == 0);
        answer.error |= answer.value["exit_code"] != 0;
        answer
    }

    /// The dry run's answer with a new token for it.
    fn offer(&self, mut value: Value, m: &Mutation, seen: &str) -> Answer {
        let token = self.tokens.issue(m.tool, &m.inputs, seen);
        value["note"] = json!(format!(
            "nothing was done: this is what `{}` would do. To do it, call `{}` again with the same \
             inputs and \"confirm\": \"{token}\" (it acts once, and only while this stays what \
             it would do)",
            m.tool, m.tool
        ));
        value["confirm"] = json!(token);
        Answer {
            value,
            error: false,
        }
    }

    /// Runs `rlctl words…` (`--json` added where the command takes it): the answer as JSON.
    fn run(&self, words: &[String]) -> Result<(Value, Ran), String> {
        let words = with_json(words);
        let ran = self.runner.run(&words, self.limit)?;
        let mut value = json!({
            "command": self.runner.shown(&words),
            "exit_code": ran.code,
            "output": parsed(&ran.stdout),
        });
        if !ran.stderr.is_empty() {
            value["stderr"] = json!(ran.stderr);
        }
        if ran.truncated {
            value["truncated"] = json!(true);
        }
        if ran.timed_out {
            value["timed_out"] = json!(format!(
                "killed after {} s (the server's --call-timeout)",
                self.limit.as_secs()
            ));
        }
        Ok((value, ran))
    }
}

/// `words` with `--json` after the subcommand when rlctl's command takes it (read from the
/// command line's own definition), else as they are: such a command's text is its answer. The
/// dry run of a command that asks before acting (`cancel`, `retire`, `clean`) is its question,
/// text that lists what would be done: it takes no `--json`.
fn with_json(words: &[String]) -> Vec<String> {
    let asks = ["cancel", "retire", "clean"].contains(&words[0].as_str());
    let takes_json = !(asks && words.iter().any(|w| w == "--dry-run"))
        && crate::cli::Cli::command()
            .find_subcommand(&words[0])
            .is_some_and(|c| c.get_arguments().any(|a| a.get_long() == Some("json")));
    let mut words = words.to_vec();
    if takes_json {
        words.insert(1, "--json".to_owned());
    }
    words
}

/// A command's stdout: one JSON document, NDJSON as an array, else its text.
fn parsed(stdout: &str) -> Value {
    if let Ok(value) = serde_json::from_str::<Value>(stdout.trim()) {
        return value;
    }
    let lines: Option<Vec<Value>> = (stdout.lines().filter(|l| !l.trim().is_empty()))
        .map(|l| serde_json::from_str(l).ok())
        .collect();
    match lines {
        Some(events) if !events.is_empty() => Value::Array(events),
        _ => Value::String(stdout.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_asked_only_of_commands_that_take_it() {
        let w = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            with_json(&w(&["status", "x"])),
            w(&["status", "--json", "x"])
        );
        assert_eq!(with_json(&w(&["init", "x"])), w(&["init", "x"]));
        // A dry run that asks before acting is its question, text: no `--json` (they conflict).
        assert_eq!(
            with_json(&w(&["cancel", "x", "--dry-run"])),
            w(&["cancel", "x", "--dry-run"])
        );
        assert_eq!(
            with_json(&w(&["cancel", "x", "--yes"])),
            w(&["cancel", "--json", "x", "--yes"])
        );
        assert_eq!(parsed("{\"a\":1}\n{\"b\":2}\n"), json!([{"a":1},{"b":2}]));
        assert_eq!(parsed("plain\n"), json!("plain\n"));
    }
}
