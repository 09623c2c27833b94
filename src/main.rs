//! The rlctl binary: parse the command line, run it, report any error on stderr, and exit with
//! the status `rlctl::exit` documents.

use clap::Parser;
use rlctl::exit::Exit;
use std::process::ExitCode;

fn main() -> ExitCode {
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
