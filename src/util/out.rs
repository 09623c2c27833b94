//! What commands print, and the questions they ask on the terminal.

use crate::error::{Error, Result};
use std::io::{IsTerminal, Write};

/// Writes to standard output; a closed pipe comes back as an error main() ends quietly on.
pub fn emit(out: &mut dyn Write, text: &str) -> Result<()> {
    out.write_all(text.as_bytes())
        .map_err(|e| Error::io("write", "standard output", e))
}

/// A warning on stderr, `rlctl: warning: ` first; a stderr that cannot be written to is no
/// reason to stop.
pub fn warn(text: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "rlctl: warning: {text}");
}

/// Asks on the terminal; without one, only `--yes` says yes.
pub fn confirm(question: &str, yes: bool) -> Result<bool> {
    if yes {
        return Ok(true);
    }
    if !std::io::stdin().is_terminal() {
        return Err(Error::Unsupported(format!(
            "{question}\nno terminal to confirm on: pass --yes"
        )));
    }
    eprint!("{question}[y/N] ");
    let mut answer = String::new();
    std::io::stdin()
        .read_line(&mut answer)
        .map_err(|e| Error::io("read", "standard input", e))?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
}
