//! The rlctl binary: parse the command line, run it, report any error on stderr (and, under
//! `--json`, as a JSON object on stdout), and exit with the status `rlctl::exit` documents.

use clap::CommandFactory;
use rlctl::exit::Exit;
use std::io::Write;
use std::process::ExitCode;

/// Standard output, remembering whether the command wrote anything to it.
struct Counted<W> {
    inner: W,
    written: bool,
}

impl<W: Write> Write for Counted<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.written |= !buf.is_empty();
        self.inner.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

fn main() -> ExitCode {
    // With COMPLETE=<shell> set (as clap_complete reads it), the shell is asking for
    // completions: nothing may reach its prompt but the candidates.
    if std::env::var_os("COMPLETE").is_some_and(|v| !v.is_empty() && v != "0") {
        rlctl::util::out::quiet();
    }
    clap_complete::CompleteEnv::with_factory(rlctl::cli::Cli::command).complete();
    let cli = rlctl::cli::Cli::parse_or_exit();
    let json = cli.json();
    let stdout = std::io::stdout();
    let mut out = Counted {
        inner: stdout.lock(),
        written: false,
    };
    match rlctl::cmd::run(cli, &mut out) {
        Ok(()) => Exit::Success.into(),
        Err(e) => {
            let exit = Exit::of(&e);
            if e.is_broken_pipe() {
                return exit.into();
            }
            rlctl::say!("rlctl: error: {e}");
            // A command that printed its document (a `check --json` that found problems) has
            // said it there; one that printed nothing says its error as JSON on stdout.
            if json && !out.written {
                let doc = rlctl::util::versioned::ErrorDoc {
                    error: rlctl::util::versioned::ErrorBody {
                        code: e.code().to_owned(),
                        message: e.to_string(),
                        exit: exit as u8,
                    },
                };
                let _ = out
                    .write_all(rlctl::util::versioned::document(&doc).as_bytes())
                    .and_then(|()| out.flush());
            }
            exit.into()
        }
    }
}
