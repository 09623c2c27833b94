//! What commands print, and the questions they ask on the terminal. Every diagnostic goes
//! through [`diag`] (the [`say!`](crate::say) macro): stderr closed, full or a closed pipe ends
//! nothing, and during TAB completion nothing at all is written into the user's prompt.

use crate::error::{Error, Result};
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set while the shell asks for completions: diagnostics would land in the user's prompt.
static QUIET: AtomicBool = AtomicBool::new(false);

/// Silences every diagnostic from now on (TAB completion).
pub fn quiet() {
    QUIET.store(true, Ordering::Relaxed);
}

/// Writes a diagnostic to stderr as given (no newline added). A write that fails (stderr
/// closed, full, or a pipe nobody reads) is dropped: a message nobody can read changes no
/// command's outcome, and `eprint!` would panic (exit 101) instead.
pub fn diag(args: std::fmt::Arguments) {
    if QUIET.load(Ordering::Relaxed) {
        return;
    }
    let mut err = std::io::stderr().lock();
    let _ = err.write_fmt(args).and_then(|()| err.flush());
}

/// `eprintln!` that never panics and is silent during completion: see [`diag`].
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::util::out::diag(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// Writes to standard output; a closed pipe comes back as an error main() ends quietly on.
pub fn emit(out: &mut dyn Write, text: &str) -> Result<()> {
    out.write_all(text.as_bytes())
        .map_err(|e| Error::io("write", "standard output", e))
}

/// Writes `line` and a newline to standard output as one line, whatever it holds: a control
/// character (a newline or carriage return in a folder's name, a terminal escape in a log line)
/// is shown as its Rust escape (`\n`, `\r`, `\u{1b}`), so that a reader of the output (a cron
/// mail, a script reading a line per run) never meets a line the program did not write.
pub fn emit_line(out: &mut dyn Write, line: &str) -> Result<()> {
    emit(out, &format!("{}\n", one_line(line)))
}

/// `text` with its control characters shown as Rust escapes (see [`emit_line`]).
pub fn one_line(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains(char::is_control) {
        return text.into();
    }
    (text.chars())
        .map(|c| match c.is_control() {
            true => c.escape_debug().to_string(),
            false => c.to_string(),
        })
        .collect::<String>()
        .into()
}

/// A warning on stderr, `rlctl: warning: ` first; a stderr that cannot be written to is no
/// reason to stop.
pub fn warn(text: &str) {
    diag(format_args!("rlctl: warning: {text}\n"));
}

/// Set by `--dry-run` of the commands that ask before acting (`cancel`, `retire`, `clean`).
static PREVIEW: AtomicBool = AtomicBool::new(false);

/// From now on [`confirm`] prints its question on standard output and answers no: the command
/// shows what it would do and does nothing (`--dry-run`).
pub fn preview() {
    PREVIEW.store(true, Ordering::Relaxed);
}

/// Whether this command only shows what it would do: a question it skips for one run is asked
/// then, so that the dry run lists what would be done.
pub fn previewing() -> bool {
    PREVIEW.load(Ordering::Relaxed)
}

/// Asks on the terminal; without one, only `--yes` says yes. In a dry run ([`preview`]) the
/// question is printed on standard output, answered no.
pub fn confirm(question: &str, yes: bool) -> Result<bool> {
    if previewing() {
        // The same stdout as the command's own `out` (its lock is reentrant): the order holds.
        let mut stdout = std::io::stdout().lock();
        emit(&mut stdout, &format!("dry run, nothing done: {question}"))?;
        return Ok(false);
    }
    if yes {
        return Ok(true);
    }
    if !std::io::stdin().is_terminal() {
        return Err(Error::Unsupported(format!(
            "{question}\nno terminal to confirm on: pass --yes"
        )));
    }
    diag(format_args!("{question}[y/N] "));
    let mut answer = String::new();
    std::io::stdin()
        .read_line(&mut answer)
        .map_err(|e| Error::io("read", "standard input", e))?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
}
