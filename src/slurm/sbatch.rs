//! `sbatch`: the job id it printed.

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
