//! Which command lines asked for JSON: their errors are JSON too (see `main`).

use super::{Cli, Command};

impl Cli {
    /// Whether the command prints JSON (`--json`), so that an error it ends with is printed as
    /// JSON on stdout as well.
    pub fn json(&self) -> bool {
        match &self.command {
            Command::Launch(a) => a.json,
            Command::Grid(a) => a.json,
            Command::Estimate(a) => a.json,
            Command::Check(a) => a.json,
            Command::Show(a) => a.json,
            Command::Diff(a) => a.json,
            Command::List(a) => a.json,
            Command::Doctor(a) => a.json,
            Command::Status(a) => a.json,
            Command::Cancel(a) => a.json,
            Command::Retire(a) => a.json,
            Command::Clean(a) => a.json,
            Command::Report(a) => a.json,
            Command::Logs(a) => a.json,
            Command::Metrics(a) => a.json,
            Command::Watch(a) => a.json,
            Command::Wait(a) => a.json,
            Command::Tend(a) => a.json,
            Command::Render(_)
            | Command::Init(_)
            | Command::Stage(_)
            | Command::Completions(_)
            | Command::Man
            | Command::Schema(_) => false,
        }
    }
}
