//! Every call of a SLURM command goes through here; the programs are overridable.

use crate::error::{Error, Result};
use crate::quote::sh_join;
use camino::Utf8Path;
use std::process::{Command, Stdio};

/// The SLURM programs rlctl calls (`--sbatch PATH` / `RLCTL_SBATCH`, `--squeue PATH` /
/// `RLCTL_SQUEUE`).
#[derive(Debug, Clone)]
pub struct Slurm {
    pub sbatch: String,
    pub squeue: String,
}

/// One of the user's jobs that SLURM still holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueuedJob {
    pub id: String,
    pub name: String,
    /// PENDING, RUNNING, CONFIGURING, COMPLETING, ...
    pub state: String,
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

    /// The user's jobs that are pending or running, in one squeue call.
    pub fn queued(&self) -> Result<Vec<QueuedJob>> {
        let argv = [
            self.squeue.as_str(),
            "--me",
            "--noheader",
            "--states=PENDING,RUNNING,CONFIGURING,COMPLETING,SUSPENDED,REQUEUED",
            "--format=%i|%j|%T",
        ];
        let command = sh_join(&argv);
        let output = Command::new(argv[0])
            .args(&argv[1..])
            .stdin(Stdio::null())
            .output()
            .map_err(|e| Error::SlurmMissing {
                program: argv[0].to_owned(),
                flag: "--squeue",
                variable: "RLCTL_SQUEUE",
                reason: e.to_string(),
            })?;
        if !output.status.success() {
            return Err(Error::SlurmFailed {
                command,
                status: output.status.to_string(),
                stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            });
        }
        Ok(String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter_map(|line| {
                let mut fields = line.trim().splitn(3, '|');
                Some(QueuedJob {
                    id: fields.next()?.to_owned(),
                    name: fields.next()?.to_owned(),
                    state: fields.next()?.to_owned(),
                })
            })
            .collect())
    }

    /// Runs sbatch and returns the job id it printed.
    pub fn submit(&self, argv: &[String]) -> Result<String> {
        let command = sh_join(argv);
        let output = Command::new(&argv[0])
            .args(&argv[1..])
            .stdin(Stdio::null())
            .output()
            .map_err(|e| Error::SlurmMissing {
                program: argv[0].clone(),
                flag: "--sbatch",
                variable: "RLCTL_SBATCH",
                reason: e.to_string(),
            })?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        if !output.status.success() {
            return Err(Error::SlurmFailed {
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
