//! Every call of a SLURM command goes through here; each program is overridable by a flag and
//! an environment variable (`--sbatch`/`RLCTL_SBATCH`, `--squeue`, `--sacct`, `--scancel`).

use crate::error::{Error, Result};
use crate::util::quote::sh_join;
use camino::Utf8Path;
use std::collections::BTreeMap;
use std::process::{Command, Stdio};

#[derive(Debug, Clone)]
pub struct Slurm {
    pub sbatch: String,
    pub squeue: String,
    pub sacct: String,
    pub scancel: String,
}

/// One of the user's jobs that SLURM still holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueuedJob {
    pub id: String,
    pub name: String,
    /// PENDING, RUNNING, CONFIGURING, COMPLETING, ...
    pub state: String,
    /// The job's QOS; empty when squeue did not say.
    pub qos: String,
}

/// A dependency on an earlier job, as sbatch's `--dependency` spells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dependency {
    /// After the job ends, whatever its state.
    AfterAny(String),
}

/// A finished job as accounting saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accounted {
    pub state: String,
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
        let stdout = run(argv, "--sbatch", "RLCTL_SBATCH")?;
        job_id(&stdout).ok_or_else(|| Error::SbatchNoJobId {
            command: sh_join(argv),
            stdout,
        })
    }

    /// The user's jobs that are pending or running, in one squeue call.
    pub fn queued(&self) -> Result<Vec<QueuedJob>> {
        let argv = [
            self.squeue.as_str(),
            "--me",
            "--noheader",
            "--states=PENDING,RUNNING,CONFIGURING,COMPLETING,SUSPENDED,REQUEUED",
            "--format=%i|%j|%T|%q",
        ];
        let stdout = run(&argv, "--squeue", "RLCTL_SQUEUE")?;
        Ok(stdout
            .lines()
            .filter_map(|line| {
                let mut fields = line.trim().splitn(4, '|');
                Some(QueuedJob {
                    id: fields.next()?.to_owned(),
                    name: fields.next()?.to_owned(),
                    state: fields.next()?.to_owned(),
                    qos: fields.next().unwrap_or_default().to_owned(),
                })
            })
            .collect())
    }

    /// Final states of finished jobs, in one sacct call; `None` where accounting is off.
    pub fn accounted(&self, ids: &[&str]) -> Option<BTreeMap<String, Accounted>> {
        if ids.is_empty() {
            return Some(BTreeMap::new());
        }
        let jobs = ids.join(",");
        let argv = [
            self.sacct.as_str(),
            "-X",
            "-n",
            "-P",
            "-j",
            &jobs,
            "-o",
            "JobID,State",
        ];
        let stdout = run(&argv, "--sacct", "RLCTL_SACCT").ok()?;
        Some(
            stdout
                .lines()
                .filter_map(|line| {
                    let (id, state) = line.trim().split_once('|')?;
                    // `CANCELLED by 0` -> CANCELLED
                    let state = state.split_whitespace().next()?.to_owned();
                    Some((id.to_owned(), Accounted { state }))
                })
                .collect(),
        )
    }

    /// Cancels jobs, in one scancel call.
    pub fn cancel(&self, ids: &[&str]) -> Result<()> {
        let mut argv = vec![self.scancel.as_str()];
        argv.extend(ids);
        run(&argv, "--scancel", "RLCTL_SCANCEL").map(drop)
    }
}

/// The job id in what `sbatch --parsable` printed: `JOBID` or `JOBID;CLUSTER` on a line of its
/// own, the last such line, since a site may print notices before or after it; or sbatch's
/// plain `Submitted batch job JOBID` where a wrapper drops `--parsable`.
pub fn job_id(stdout: &str) -> Option<String> {
    let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    stdout.lines().rev().find_map(|line| {
        let line = line.trim();
        let id = match line.strip_prefix("Submitted batch job ") {
            Some(rest) => rest.split_whitespace().next()?,
            None => line.split(';').next()?,
        };
        digits(id).then(|| id.to_owned())
    })
}

/// Runs a SLURM client and returns its stdout; a missing program or a failure is an error that
/// carries the command line and the program's stderr.
fn run<S: AsRef<str>>(argv: &[S], flag: &'static str, variable: &'static str) -> Result<String> {
    let program = argv[0].as_ref();
    let output = Command::new(program)
        .args(argv[1..].iter().map(AsRef::as_ref))
        .stdin(Stdio::null())
        .output()
        .map_err(|e| Error::SlurmMissing {
            program: program.to_owned(),
            flag,
            variable,
            reason: e.to_string(),
        })?;
    if !output.status.success() {
        return Err(Error::SlurmFailed {
            command: sh_join(argv),
            status: output.status.to_string(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        });
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}
