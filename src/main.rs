//! The rlctl binary: parse the command line, run it, report any error on stderr, and exit with
//! the status `rlctl::exit` documents.

use clap::CommandFactory;
use rlctl::exit::Exit;
use std::process::ExitCode;

fn main() -> ExitCode {
    // With COMPLETE=<shell> set (as clap_complete reads it), the shell is asking for
    // completions: nothing may reach its prompt but the candidates.
    if std::env::var_os("COMPLETE").is_some_and(|v| !v.is_empty() && v != "0") {
        rlctl::util::out::quiet();
    }
    clap_complete::CompleteEnv::with_factory(rlctl::cli::Cli::command).complete();
    let cli = rlctl::cli::Cli::parse_or_exit();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match rlctl::cmd::run(cli, &mut out) {
        Ok(()) => Exit::Success.into(),
        Err(e) => {
            let exit = Exit::of(&e);
            if !e.is_broken_pipe() {
                rlctl::say!("rlctl: error: {e}");
            }
            exit.into()
        }
    }
}
