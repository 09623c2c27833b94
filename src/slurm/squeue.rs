//! `squeue`: the user's jobs that SLURM still holds.

use super::QueuedJob;

/// squeue's `%i|%j|%T|%q|%r|%o` lines as jobs; an older four-field line has no reason or
/// command.
pub fn parse_queued(stdout: &str) -> Vec<QueuedJob> {
    stdout
        .lines()
        .filter_map(|line| {
            let mut fields = line.trim().splitn(6, '|');
            let mut next = || fields.next().map(str::to_owned);
            Some(QueuedJob {
                id: next()?,
                name: next()?,
                state: next()?,
                qos: next().unwrap_or_default(),
                reason: next().filter(|r| r != "None").unwrap_or_default(),
                command: next().unwrap_or_default(),
            })
        })
        .collect()
}
