//! `sacct`: what accounting says of jobs: their states and attempts, the jobs of given names,
//! and why a job ended.

use super::QueuedJob;
use std::collections::BTreeMap;

/// A job as accounting saw it: its state, and every attempt it ran (a requeued job runs again
/// under the same id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accounted {
    /// The state of its last attempt.
    pub state: String,
    /// sacct's `ExitCode`, `status:signal` (`3:0`); `None` when it printed none.
    pub exit_code: Option<String>,
    pub attempts: Vec<Attempt>,
}

/// One run of a job: how long it held its allocation and what the allocation was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    /// sacct's `ElapsedRaw`: seconds, so far for a running job.
    pub elapsed_s: u64,
    /// `gres/gpu=N` of sacct's `AllocTRES`, where the site accounts GPUs.
    pub gpus: Option<u64>,
    /// `node=N` of `AllocTRES`.
    pub nodes: Option<u64>,
}

/// sacct's `-P` lines of `JobID,JobName,State,SubmitLine` as jobs whose `command` is the
/// submit line's last word (empty when sacct printed no submit line).
pub(super) fn parse_by_name(stdout: &str) -> Vec<QueuedJob> {
    (stdout.lines())
        .filter_map(|line| {
            let mut fields = line.trim().splitn(4, '|');
            let (id, name, state) = (fields.next()?, fields.next()?, fields.next()?);
            let script = fields.next().unwrap_or_default().split_whitespace().last();
            Some(QueuedJob {
                id: id.to_owned(),
                name: name.to_owned(),
                // `CANCELLED by 0` -> CANCELLED
                state: state.split_whitespace().next()?.to_owned(),
                qos: String::new(),
                reason: String::new(),
                command: script.unwrap_or_default().to_owned(),
            })
        })
        .collect()
}

/// sacct's `-P` lines of `JobID,State,ExitCode,ElapsedRaw,AllocTRES`, by job id; a later line of
/// an id (a later attempt) gives the state and adds its attempt. Lines without the last two
/// fields (an older answer, a test's stand-in) have no attempt.
pub fn parse_accounted(stdout: &str) -> BTreeMap<String, Accounted> {
    let mut jobs = BTreeMap::<String, Accounted>::new();
    for line in stdout.lines() {
        let mut fields = line.trim().split('|');
        let (Some(id), Some(state)) = (fields.next(), fields.next()) else {
            continue;
        };
        // `CANCELLED by 0` -> CANCELLED
        let Some(state) = state.split_whitespace().next() else {
            continue;
        };
        let exit_code = fields.next().filter(|c| !c.is_empty()).map(str::to_owned);
        let attempt = fields.next().and_then(|e| e.parse().ok()).map(|elapsed_s| {
            let tres = fields.next().unwrap_or_default();
            Attempt {
                elapsed_s,
                gpus: tres_count(tres, "gres/gpu"),
                nodes: tres_count(tres, "node"),
            }
        });
        let job = jobs.entry(id.to_owned()).or_insert_with(|| Accounted {
            state: String::new(),
            exit_code: None,
            attempts: Vec::new(),
        });
        job.state = state.to_owned();
        job.exit_code = exit_code;
        job.attempts.extend(attempt);
    }
    jobs
}

/// Why a job ended, as accounting says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    pub state: String,
    /// `status:signal` of the batch script (`1:0`, `0:53`).
    pub exit_code: Option<String>,
    /// The highest exit code of the job's steps (`srun`s), where they failed but the script
    /// did not.
    pub derived_exit_code: Option<String>,
    /// SLURM's reason, when it gives one other than `None`.
    pub reason: Option<String>,
}

impl std::fmt::Display for Ended {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SLURM says {}", self.state)?;
        if let Some(code) = &self.exit_code {
            write!(f, ", exit code {code} (status:signal)")?;
        }
        if let Some(code) = (self.derived_exit_code.as_ref())
            .filter(|c| *c != "0:0" && Some(*c) != self.exit_code.as_ref())
        {
            write!(f, ", derived exit code {code} (its steps')")?;
        }
        if let Some(reason) = &self.reason {
            write!(f, ", reason: {reason}")?;
        }
        Ok(())
    }
}

/// The last line of `JobID,State,ExitCode,DerivedExitCode,Reason` for job `id` (a requeued
/// job's last attempt); fields sacct left empty are `None`.
pub fn parse_ended(stdout: &str, id: &str) -> Option<Ended> {
    let line = (stdout.lines()).rfind(|l| l.trim().split('|').next() == Some(id))?;
    let mut fields = line.trim().split('|').skip(1);
    let mut next = || (fields.next().map(str::trim)).filter(|f| !f.is_empty() && *f != "None");
    Some(Ended {
        // `CANCELLED by 0` -> CANCELLED
        state: next()?.split_whitespace().next()?.to_owned(),
        exit_code: next().map(str::to_owned),
        derived_exit_code: next().map(str::to_owned),
        reason: next().map(str::to_owned),
    })
}

/// `N` of `name=N` in a TRES list (`billing=8,cpu=8,gres/gpu=4,mem=64G,node=1`).
/// The count `name` holds in a SLURM TRES list (`cpu=8,gres/gpu=4,node=1`), as sacct and
/// sacctmgr print one.
pub fn tres_count<N: std::str::FromStr>(tres: &str, name: &str) -> Option<N> {
    (tres.split(','))
        .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
        .and_then(|n| n.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accounting_by_name_gives_each_job_the_script_its_sbatch_was_given() {
        let out = "7|c|COMPLETED|sbatch --parsable /w/runs/c/001/sbatch.sh\n\
                   8|c|CANCELLED by 0|sbatch --parsable --dependency=afterany:7 /w/runs/c/002/sbatch.sh\n\
                   9|c|FAILED|\n";
        let jobs = parse_by_name(out);
        let seen: Vec<(&str, &str, &str)> = (jobs.iter())
            .map(|j| (j.id.as_str(), j.state.as_str(), j.command.as_str()))
            .collect();
        assert_eq!(
            seen,
            [
                ("7", "COMPLETED", "/w/runs/c/001/sbatch.sh"),
                ("8", "CANCELLED", "/w/runs/c/002/sbatch.sh"),
                ("9", "FAILED", ""),
            ]
        );
    }

    #[test]
    fn why_a_job_ended_as_sacct_says_it() {
        let out = "7|NODE_FAIL|0:0|0:0|None\n7|FAILED|0:53|0:0|None\n8|FAILED|1:0||\n";
        let ended = parse_ended(out, "7").unwrap();
        assert_eq!(ended.state, "FAILED");
        assert_eq!(ended.exit_code.as_deref(), Some("0:53"));
        assert_eq!(ended.reason, None);
        assert_eq!(
            ended.to_string(),
            "SLURM says FAILED, exit code 0:53 (status:signal)"
        );
        let steps = parse_ended("9|FAILED|0:0|1:0|NonZeroExitCode", "9").unwrap();
        assert_eq!(
            steps.to_string(),
            "SLURM says FAILED, exit code 0:0 (status:signal), derived exit code 1:0 (its steps'), reason: NonZeroExitCode"
        );
        assert_eq!(parse_ended(out, "10"), None);
        // An older stand-in's three fields.
        assert_eq!(parse_ended("8|FAILED|1:0", "8").unwrap().reason, None);
    }

    #[test]
    fn accounting_sums_every_attempt_of_a_requeued_job() {
        let out = "7|REQUEUED|0:0|600|billing=8,cpu=8,gres/gpu=4,mem=64G,node=1\n\
                   7|COMPLETED|0:0|1200|billing=16,cpu=16,gres/gpu=8,mem=128G,node=2\n\
                   8|CANCELLED by 0|0:15|0|\n\
                   9|FAILED|3:0\n";
        let jobs = parse_accounted(out);
        let seven = &jobs["7"];
        assert_eq!(seven.state, "COMPLETED");
        assert_eq!(
            seven.attempts,
            [
                Attempt {
                    elapsed_s: 600,
                    gpus: Some(4),
                    nodes: Some(1)
                },
                Attempt {
                    elapsed_s: 1200,
                    gpus: Some(8),
                    nodes: Some(2)
                },
            ]
        );
        assert_eq!(jobs["8"].state, "CANCELLED");
        assert_eq!(
            jobs["8"].attempts,
            [Attempt {
                elapsed_s: 0,
                gpus: None,
                nodes: None
            }]
        );
        assert_eq!(jobs["9"].exit_code.as_deref(), Some("3:0"));
        assert!(jobs["9"].attempts.is_empty());
    }
}
