//! Every call of a SLURM command goes through here; each program is overridable by a flag and
//! an environment variable (`--sbatch`/`RLCTL_SBATCH`, `--squeue`, `--sacct`, `--scancel`).
//! A leaf any stage may use: one parser per program (`squeue`, `sacct`, `sbatch`), every call
//! bounded in time.

pub mod sacct;
pub mod sbatch;
pub mod squeue;

pub use sacct::{Accounted, Attempt, Ended, parse_accounted, parse_ended};
pub use sbatch::job_id;

use crate::error::{Error, Result};
use crate::util::quote::sh_join;
use camino::Utf8Path;
use std::collections::BTreeMap;
use std::process::ExitStatus;
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
    /// Why a pending job waits (squeue's `%r`: `Priority`, `Resources`, `Dependency`,
    /// `QOSMaxJobsPerUserLimit`, ...); `None` (as squeue says of a running job) or an older
    /// four-field line is empty.
    pub reason: String,
    /// The job's command (squeue's `%o`): the batch script rlctl submitted,
    /// `<run folder>/sbatch.sh`; empty when squeue did not say.
    pub command: String,
}

/// A dependency on an earlier job, as sbatch's `--dependency` spells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dependency {
    /// After the job ends, whatever its state.
    AfterAny(String),
}

/// How long sacct may take: with slurmdbd unreachable it retries for most of a minute, and
/// `status` must still answer from squeue and the logs.
pub const SACCT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long squeue may take: it holds the run root's turn while it answers, so a hung
/// slurmctld must not hold every other command of the run root with it.
pub const SQUEUE_TIMEOUT: Duration = Duration::from_secs(30);

/// How long sbatch may take: a busy slurmctld answers in seconds; past this the job may or may
/// not be queued, which the error says.
pub const SBATCH_TIMEOUT: Duration = Duration::from_secs(60);

/// How long scancel may take.
pub const SCANCEL_TIMEOUT: Duration = Duration::from_secs(30);

/// The longest `-j` list one sacct call gets: well under the kernel's 128 KiB for one argument
/// (`MAX_ARG_STRLEN`), about 7,000 ids of SLURM's usual length, so that even a ledger of 100,000
/// jobs costs a handful of calls.
pub const JOBS_ARG: usize = 64 * 1024;

/// `ids` joined with commas, in lists of at most `limit` bytes each (an id longer than that is
/// a list of its own).
fn id_lists(ids: &[&str], limit: usize) -> Vec<String> {
    let mut lists: Vec<String> = Vec::new();
    for id in ids {
        match lists.last_mut() {
            Some(list) if list.len() + 1 + id.len() <= limit => {
                list.push(',');
                list.push_str(id);
            }
            _ => lists.push((*id).to_owned()),
        }
    }
    lists
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
        let stdout = run(argv, "--sbatch", "RLCTL_SBATCH", SBATCH_TIMEOUT)?;
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
            "--format=%i|%j|%T|%q|%r|%o",
        ];
        let stdout = run(&argv, "--squeue", "RLCTL_SQUEUE", SQUEUE_TIMEOUT)?;
        Ok(squeue::parse_queued(&stdout))
    }

    /// States and attempts of jobs, in as few sacct calls as keep each `-j` list under
    /// [`JOBS_ARG`] bytes (the kernel refuses one argument over 128 KiB), each bounded by
    /// [`SACCT_TIMEOUT`] and all by three times that; the first that fails ends the pass, and the error says why accounting
    /// could not answer (missing, failed, timed out). `-D` lists every attempt of a requeued
    /// job, oldest first: the last one's state is the job's.
    pub fn accounted(&self, ids: &[&str]) -> Result<BTreeMap<String, Accounted>, String> {
        let mut jobs = BTreeMap::new();
        let start = Instant::now();
        for list in id_lists(ids, JOBS_ARG) {
            // The whole pass within a few calls' time, whatever the number of calls.
            let left = (SACCT_TIMEOUT * 3).saturating_sub(start.elapsed());
            if left.is_zero() {
                return Err(format!(
                    "sacct did not answer {} jobs within {} s",
                    ids.len(),
                    (SACCT_TIMEOUT * 3).as_secs()
                ));
            }
            let argv = [
                self.sacct.as_str(),
                "-X",
                "-D",
                "-n",
                "-P",
                "-j",
                &list,
                "-o",
                "JobID,State,ExitCode,ElapsedRaw,AllocTRES",
            ];
            let limit = left.min(SACCT_TIMEOUT);
            jobs.append(&mut parse_accounted(&run_bounded(&argv, limit)?));
        }
        Ok(jobs)
    }

    /// The user's jobs of the given names that accounting saw within the last `since_s`
    /// seconds, ended or not: each with its state and, as `command`, the batch script its
    /// sbatch was given (the last word of sacct's `SubmitLine`, which rlctl's argv ends with),
    /// as squeue's `%o` names a queued job's. One sacct call per [`JOBS_ARG`] bytes of names
    /// (one for any usual count), each bounded by [`SACCT_TIMEOUT`]; the error says why
    /// accounting could not answer (missing, failed, timed out).
    pub fn accounted_by_name(
        &self,
        names: &[&str],
        since_s: i64,
    ) -> std::result::Result<Vec<QueuedJob>, String> {
        let since = format!("now-{}", since_s.max(60));
        let mut jobs = Vec::new();
        for list in id_lists(names, JOBS_ARG) {
            let argv = [
                self.sacct.as_str(),
                "-X",
                "-n",
                "-P",
                "-S",
                &since,
                "--name",
                &list,
                "-o",
                "JobID,JobName,State,SubmitLine",
            ];
            jobs.extend(sacct::parse_by_name(&run_bounded(&argv, SACCT_TIMEOUT)?));
        }
        Ok(jobs)
    }

    /// What accounting says of why job `id` ended ([`Ended`]), in one sacct call bounded by
    /// [`SACCT_TIMEOUT`]; asked only of a job whose log does not say, so the columns the
    /// states of every job need ([`Slurm::accounted`]) stay as few as any SLURM knows.
    pub fn ended(&self, id: &str) -> Result<Ended, String> {
        let argv = [
            self.sacct.as_str(),
            "-X",
            "-n",
            "-P",
            "-j",
            id,
            "-o",
            "JobID,State,ExitCode,DerivedExitCode,Reason",
        ];
        let stdout = run_bounded(&argv, SACCT_TIMEOUT)?;
        parse_ended(&stdout, id).ok_or_else(|| format!("sacct knows no job {id}"))
    }

    /// Cancels jobs, in one scancel call.
    pub fn cancel(&self, ids: &[&str]) -> Result<()> {
        let mut argv = vec![self.scancel.as_str()];
        argv.extend(ids);
        run(&argv, "--scancel", "RLCTL_SCANCEL", SCANCEL_TIMEOUT).map(drop)
    }
}

/// Runs a SLURM client for at most `limit` and returns its stdout, or why it gave none
/// ([`crate::util::process::run_within`]).
fn run_bounded(argv: &[&str], limit: Duration) -> std::result::Result<String, String> {
    let done = crate::util::process::run_within(argv, &summary(argv), limit)?;
    if !done.status.success() {
        // Its last line alone: the reason goes inside a one-line warning.
        let last = (done.stderr.lines())
            .rfind(|l| !l.trim().is_empty())
            .unwrap_or("");
        return Err(failed(argv, &done.status, last.to_owned()).to_string());
    }
    Ok(done.stdout)
}

/// Runs a SLURM client for at most `limit` and returns its stdout; a missing program, a
/// failure or a program still running at the limit (killed) is an error that carries the
/// command line, and the program's stderr or the time it was given.
fn run<S: AsRef<str>>(
    argv: &[S],
    flag: &'static str,
    variable: &'static str,
    limit: Duration,
) -> Result<String> {
    use crate::util::process::{Unanswered, run_within};
    let words: Vec<&str> = argv.iter().map(AsRef::as_ref).collect();
    let program = words[0];
    let done = run_within(&words, &summary(argv), limit).map_err(|why| match why {
        Unanswered::NotStarted(_, e) => Error::SlurmMissing {
            program: program.to_owned(),
            flag,
            variable,
            reason: e.to_string(),
        },
        Unanswered::TimedOut(command, limit) => Error::SlurmTimedOut {
            program: short_name(program),
            command,
            seconds: limit.as_secs(),
        },
        Unanswered::Lost(command, e) => Error::SlurmFailed {
            program: short_name(program),
            command,
            status: "lost".to_owned(),
            stderr: e.to_string(),
        },
        too_long @ Unanswered::TooLong(..) => Error::SlurmFailed {
            program: short_name(program),
            command: summary(argv),
            status: "stopped".to_owned(),
            stderr: too_long.to_string(),
        },
    })?;
    if !done.status.success() {
        return Err(failed(argv, &done.status, done.stderr));
    }
    Ok(done.stdout)
}

/// A program's own name (`scancel`), whatever path it was run from.
fn short_name(program: &str) -> String {
    Utf8Path::new(program)
        .file_name()
        .unwrap_or(program)
        .to_owned()
}

/// The error of a SLURM client that ran and failed: its name, its command line in short, its
/// exit status and what it said on stderr.
fn failed<S: AsRef<str>>(argv: &[S], status: &ExitStatus, stderr: String) -> Error {
    let program = argv[0].as_ref();
    Error::SlurmFailed {
        program: short_name(program),
        command: summary(argv),
        status: status.to_string(),
        stderr,
    }
}

/// How many characters of a command line an error shows: a scancel of a grid's jobs or a
/// sacct of a 64 KiB `-j` list is not a message.
const COMMAND_CHARS: usize = 240;

/// `argv` as one shell line of about [`COMMAND_CHARS`] characters at most: the words that fit
/// (a word too long alone, such as a `-j` list, cut short), then how many were left out.
fn summary<S: AsRef<str>>(argv: &[S]) -> String {
    let mut line = String::new();
    for (i, word) in argv.iter().enumerate() {
        let mut word = crate::util::quote::sh(word.as_ref());
        if word.chars().count() > COMMAND_CHARS / 2 {
            word = word.chars().take(COMMAND_CHARS / 4).chain(['…']).collect();
        }
        if i > 0 && line.len() + word.len() > COMMAND_CHARS {
            let left = argv.len() - i;
            let plural = if left == 1 { "" } else { "s" };
            return format!("{line}… ({left} more argument{plural})");
        }
        line.push_str(&word);
        line.push(' ');
    }
    line.pop();
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hung_slurm_client_is_stopped_and_named_with_its_time() {
        let dir = tempfile::tempdir().unwrap();
        let sbatch = dir.path().join("sbatch");
        std::fs::write(&sbatch, "#!/bin/sh\nsleep 30\n").unwrap();
        std::fs::set_permissions(&sbatch, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let argv = [sbatch.to_str().unwrap(), "--parsable", "job.sh"];
        let start = Instant::now();
        let err = run(&argv, "--sbatch", "RLCTL_SBATCH", Duration::from_secs(1)).unwrap_err();
        assert!(start.elapsed() < Duration::from_secs(10));
        let text = err.to_string();
        assert!(
            text.starts_with("sbatch did not answer within 1 s ("),
            "{text}"
        );
        assert!(text.contains("may have been queued"), "{text}");
        let missing = run(
            &["/nonexistent/squeue"],
            "--squeue",
            "RLCTL_SQUEUE",
            SQUEUE_TIMEOUT,
        );
        assert!(matches!(missing, Err(Error::SlurmMissing { .. })));
    }

    #[test]
    fn job_lists_keep_under_their_limit_and_every_id_in_order() {
        let ids: Vec<String> = (0..30_000).map(|i| (10_000_000 + i).to_string()).collect();
        let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
        let lists = id_lists(&ids, JOBS_ARG);
        assert!(lists.iter().all(|l| l.len() <= JOBS_ARG));
        assert_eq!(lists.len(), 30_000 * 9 / JOBS_ARG + 1);
        assert_eq!(lists.join(","), ids.join(","));
        assert!(id_lists(&[], JOBS_ARG).is_empty());
    }

    #[test]
    fn a_long_command_line_is_cut_with_what_was_left_out() {
        assert_eq!(summary(&["scancel", "1", "2"]), "scancel 1 2");
        let ids: Vec<String> = (0..1000).map(|i| (10_000_000 + i).to_string()).collect();
        let argv: Vec<&str> = std::iter::once("scancel")
            .chain(ids.iter().map(String::as_str))
            .collect();
        let line = summary(&argv);
        assert!(line.starts_with("scancel 10000000 10000001 "), "{line}");
        assert!(line.ends_with(" more arguments)"), "{line}");
        assert!(line.chars().count() < COMMAND_CHARS + 30, "{line}");
        let list = ids.join(",");
        let line = summary(&["sacct", "-j", &list, "-o", "JobID"]);
        assert!(line.starts_with("sacct -j 10000000,"), "{line}");
        assert!(line.ends_with("… -o JobID"), "{line}");
    }
}
