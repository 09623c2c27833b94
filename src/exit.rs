//! The exit status of every command, one contract: 0 all good; 1 the command ran and found
//! something wrong; 2 it could not do its job. A closed pipe ends quietly with 0.

use crate::error::Error;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Everything the command looked at is fine.
    Success = 0,
    /// The command ran and found something wrong: preflight problems, an alert, a doctor problem.
    Problems = 1,
    /// The command could not do its job: usage, unreadable input, a SLURM command that failed.
    Failure = 2,
}

impl Exit {
    /// The status an error ends the process with.
    pub fn of(error: &Error) -> Exit {
        if error.is_broken_pipe() {
            return Exit::Success;
        }
        match error {
            Error::Preflight { .. } | Error::Alerts { .. } | Error::Problems(_) => Exit::Problems,
            _ => Exit::Failure,
        }
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(exit: Exit) -> Self {
        std::process::ExitCode::from(exit as u8)
    }
}
