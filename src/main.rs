//! The rlctl binary: parse the command line, run it, report any error on stderr.

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = rlctl::cli::Cli::parse();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match rlctl::commands::run(cli, &mut out) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rlctl: error: {e}");
            ExitCode::FAILURE
        }
    }
}
