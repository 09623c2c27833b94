//! Every call of a SLURM command goes through here; the programs are overridable.

use crate::error::{Error, Result};
use crate::quote::sh_join;
use camino::Utf8Path;
use std::process::{Command, Stdio};

/// The SLURM programs rlctl calls (`--sbatch PATH` / `RLCTL_SBATCH`).
#[derive(Debug, Clone)]
pub struct Slurm {
    pub sbatch: String,
}

/// A dependency on an earlier job, as sbatch's `--dependency` spells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dependency {
    /// After the job ends, whatever its state.
    AfterAny(String),
}

impl Slurm {
    /// The exact argv rlctl runs; also what `--dry-run` prints.
    pub fn sbatch_argv(&self, script: &Utf8Path, dependency: Option<&Dependency>) -> Vec<String> {
        let mut argv = vec![self.sbatch.clone(), "--parsable".to_owned()];
        if let Some(Dependency::AfterAny(job)) = dependency {
            argv.push(format!("--dependency=afterany:{job}"));
        }
        argv.push(script.to_string());
        argv
    }

    /// Runs sbatch and returns the job id it printed.
    pub fn submit(&self, argv: &[String]) -> Result<String> {
        let command = sh_join(argv);
        let output = Command::new(&argv[0])
            .args(&argv[1..])
            .stdin(Stdio::null())
            .output()
            .map_err(|e| Error::SbatchMissing {
                program: argv[0].clone(),
                reason: e.to_string(),
            })?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        if !output.status.success() {
            return Err(Error::SbatchFailed {
                command,
                status: output.status.to_string(),
                stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            });
        }
        // `--parsable` prints `JOBID` or `JOBID;CLUSTER`.
        let first = stdout.lines().next().unwrap_or("").trim();
        let id = first.split(';').next().unwrap_or("");
        if id.is_empty() || !id.chars().all(|c| c.is_ascii_digit()) {
            return Err(Error::SbatchNoJobId {
                command,
                stdout: stdout.into_owned(),
            });
        }
        Ok(id.to_owned())
    }
}
