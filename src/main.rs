//! The rlctl binary: parse the command line, run it, report any error on stderr, and exit with
//! the status `rlctl::exit` documents.

use clap::{CommandFactory, Parser};
use rlctl::exit::Exit;
use std::process::ExitCode;

fn main() -> ExitCode {
    // With COMPLETE=<shell> set, the shell is asking for completions: answer and exit.
    clap_complete::CompleteEnv::with_factory(rlctl::cli::Cli::command).complete();
    let cli = rlctl::cli::Cli::parse();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match rlctl::cmd::run(cli, &mut out) {
        Ok(()) => Exit::Success.into(),
        Err(e) => {
            let exit = Exit::of(&e);
            if !e.is_broken_pipe() {
                eprintln!("rlctl: error: {e}");
            }
            exit.into()
        }
    }
}
