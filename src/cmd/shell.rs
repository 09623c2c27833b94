//! `rlctl completions SHELL`: the shell's completion script, which calls rlctl back
//! (clap_complete's dynamic mode) so candidates come from the presets and ledger in use.

use crate::cli::CompletionsArgs;
use crate::error::{Error, Result};
use crate::util::out::emit;
use clap_complete::env::Shells;
use std::io::Write;

/// The variable the script sets when it calls rlctl back; `main` answers it.
const VAR: &str = "COMPLETE";

pub fn completions(args: &CompletionsArgs, out: &mut dyn Write) -> Result<()> {
    let shell = args.shell.as_str();
    let shells = Shells::builtins();
    let completer = shells
        .completer(shell)
        .ok_or_else(|| Error::Unsupported(format!("no completion for the shell `{shell}`")))?;
    let mut script = Vec::new();
    completer
        .write_registration(VAR, "rlctl", "rlctl", &program(), &mut script)
        .map_err(|e| Error::io("write", "standard output", e))?;
    emit(out, &String::from_utf8_lossy(&script))
}

/// How the script calls rlctl: as it was called here, a relative path made absolute (as
/// `COMPLETE=bash rlctl` does), a bare name left to PATH.
fn program() -> String {
    let called = std::env::args()
        .next()
        .unwrap_or_else(|| "rlctl".to_owned());
    let path = std::path::Path::new(&called);
    if path.components().count() > 1
        && path.is_relative()
        && let Ok(cwd) = std::env::current_dir()
    {
        return cwd.join(path).to_string_lossy().into_owned();
    }
    called
}
