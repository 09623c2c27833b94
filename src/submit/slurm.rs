//! Every call of a SLURM command goes through here; each program is overridable by a flag and
//! an environment variable (`--sbatch`/`RLCTL_SBATCH`, `--squeue`, `--sacct`, `--scancel`).

use crate::error::{Error, Result};
use crate::util::quote::sh_join;
use camino::Utf8Path;
use std::collections::BTreeMap;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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
    /// sacct's `ExitCode`, `status:signal` (`3:0`); `None` when it printed none.
    pub exit_code: Option<String>,
}

/// How long sacct may take: with slurmdbd unreachable it retries for most of a minute, and
/// `status` must still answer from squeue and the logs.
pub const SACCT_TIMEOUT: Duration = Duration::from_secs(10);

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

    /// Final states of finished jobs, in one sacct call bounded by [`SACCT_TIMEOUT`]; the
    /// error says why accounting could not answer (missing, failed, timed out).
    pub fn accounted(&self, ids: &[&str]) -> Result<BTreeMap<String, Accounted>, String> {
        if ids.is_empty() {
            return Ok(BTreeMap::new());
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
            "JobID,State,ExitCode",
        ];
        let stdout = run_bounded(&argv, SACCT_TIMEOUT)?;
        Ok(stdout
            .lines()
            .filter_map(|line| {
                let mut fields = line.trim().split('|');
                let id = fields.next()?;
                // `CANCELLED by 0` -> CANCELLED
                let state = fields.next()?.split_whitespace().next()?.to_owned();
                let exit_code = fields.next().filter(|c| !c.is_empty()).map(str::to_owned);
                Some((id.to_owned(), Accounted { state, exit_code }))
            })
            .collect())
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

/// Runs a SLURM client for at most `limit` and returns its stdout, or why it gave none. Its
/// output is read on a thread of its own, so a large answer never blocks it; a client still
/// running at the limit is killed and left behind.
fn run_bounded(argv: &[&str], limit: Duration) -> std::result::Result<String, String> {
    let command = sh_join(argv);
    let mut child = Command::new(argv[0])
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run `{}`: {e}", argv[0]))?;
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut text);
            }
            String::from_utf8_lossy(&text).into_owned()
        })
    };
    let stdout = reader(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = reader(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() >= limit => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "`{command}` did not answer within {} s",
                    limit.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(format!("`{command}`: {e}")),
        }
    };
    if !status.success() {
        let stderr = stderr.join().unwrap_or_default();
        let first = stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        return Err(format!("`{command}` failed ({status}) {}", first.trim())
            .trim_end()
            .to_owned());
    }
    Ok(stdout.join().unwrap_or_default())
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
