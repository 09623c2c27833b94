//! Which command lines asked for JSON: their errors are JSON too (see `main`), usage errors
//! included.

use super::{Cli, Command};
use crate::util::versioned::{ErrorBody, ErrorDoc, document};
use std::io::Write;

/// Ends the process on clap's error `e` (help and version included), as clap does; a usage
/// error of a command line that holds `--json` is said on stdout as JSON too (code `usage`,
/// exit 2).
pub(super) fn usage_exit(e: clap::Error) -> ! {
    let asked = std::env::args_os().any(|a| a == "--json");
    if asked && e.use_stderr() {
        let doc = ErrorDoc {
            error: ErrorBody {
                code: "usage".to_owned(),
                message: e.render().to_string().trim_end().to_owned(),
                exit: 2,
            },
        };
        let mut out = std::io::stdout().lock();
        let _ = out
            .write_all(document(&doc).as_bytes())
            .and_then(|()| out.flush());
    }
    e.exit()
}

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
            | Command::Mcp(_)
            | Command::Schema(_) => false,
        }
    }
}
