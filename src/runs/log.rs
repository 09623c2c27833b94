//! What a job's log says: how the job ended, read from the lines the wrapper and SLURM write at
//! its end (the verdict accounting gives when it cannot answer), and its metric lines.

use crate::error::{Error, Result};
use crate::render::{finished_status, last_slot};
use crate::runs::metrics::pulse::Pulse;
use crate::runs::metrics::{self, Series};
use camino::Utf8Path;

/// What the job's own log says about how it ended: the wrapper's last line, or SLURM's own
/// `*** JOB N ON node CANCELLED AT time ***`, which for a job out of time ends `DUE TO TIME
/// LIMIT` (TIMEOUT), for a failed node `DUE TO NODE FAILURE` (NODE_FAIL) and for a preempted
/// job `DUE TO PREEMPTION` (PREEMPTED), all three of which `tend` resumes. Only the job's last slot counts: an earlier slot that requeued the job (or that a
/// node failure ended) did not end the run. Anything else is `unknown`: a log cut short, or a
/// slot that requeued the job and was not started again, says nothing of how the job ended.
pub(crate) fn log_state(log: &Utf8Path, job_id: &str) -> (String, &'static str) {
    let Ok(text) = log_end(log) else {
        return ("unknown".into(), "none");
    };
    if let Some(rc) = finished_status(&text, job_id) {
        let state = if rc == "0" { "COMPLETED" } else { "FAILED" };
        return (state.into(), "log");
    }
    let last = last_slot(&text, job_id);
    if let Some(line) = last.lines().rev().find(|l| l.contains("CANCELLED AT")) {
        // slurmstepd's own words: `… DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***`.
        let state = if line.contains("DUE TO TIME LIMIT") {
            "TIMEOUT"
        } else if line.contains("DUE TO NODE FAILURE") {
            "NODE_FAIL"
        } else if line.contains("DUE TO PREEMPTION") {
            "PREEMPTED"
        } else {
            "CANCELLED"
        };
        return (state.into(), "log");
    }
    ("unknown".into(), "log")
}

/// How much of a log's end [`log_state`] reads: the wrapper's last line and SLURM's are near the
/// end, and a log of gigabytes is not read for them.
const LOG_END: u64 = 1024 * 1024;

/// The whole lines of the last [`LOG_END`] bytes of `log`.
pub(crate) fn log_end(log: &Utf8Path) -> std::io::Result<String> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(log)?;
    let start = file.metadata()?.len().saturating_sub(LOG_END);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    // A line cut by the start is not a line.
    let from = match start {
        0 => 0,
        _ => memchr::memchr(b'\n', &bytes).map_or(bytes.len(), |i| i + 1),
    };
    Ok(String::from_utf8_lossy(&bytes[from..]).into_owned())
}

/// Whether a log line reports an error: the one rule `tend`'s report, `watch` and `rlctl logs
/// --errors` read logs by. The last resort is the run script's own `... exited with status N`.
pub(crate) fn is_error_line(line: &str) -> bool {
    let line = line.to_ascii_lowercase();
    [
        "error",
        "exception",
        "traceback",
        "check failed",
        "killed",
        "exited with status",
    ]
    .iter()
    .any(|w| line.contains(w))
}

/// The log's last line that reads like an error, for a one-line report: read from the end of
/// the log alone, however large it is, without its colour codes.
pub fn last_error(log: &Utf8Path) -> Option<String> {
    let tail = log_end(log).ok()?;
    // The run script's own exit line says least: the trainer's last error before it says why.
    let errors = || tail.lines().rev().filter(|l| is_error_line(l));
    let line =
        (errors().find(|l| !l.contains("exited with status"))).or_else(|| errors().next())?;
    Some(without_ansi(line.trim()).chars().take(300).collect())
}

/// The trainer's exit status as the run script's last `rlctl: ENTRY exited with status N` line
/// in the log's end gives it (`None`: no such line, the trainer never ended in this log).
pub fn trainer_status(log: &Utf8Path) -> Option<i32> {
    let tail = log_end(log).ok()?;
    let line = (tail.lines().rev())
        .find(|l| l.starts_with("rlctl: ") && l.contains(" exited with status "))?;
    line.rsplit(' ').next()?.trim().parse().ok()
}

/// `text` without its ANSI colour codes (`ESC [ ... letter`), which vLLM and Ray log with.
pub(crate) fn without_ansi(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The run's metric lines; a log not written yet is an empty series.
pub fn read_series(log: &Utf8Path) -> Result<Series> {
    read_log(log).map(|(series, _)| series)
}

/// [`read_series`], and the log's pulse (for [`stall`](crate::runs::stall)).
pub fn read_log(log: &Utf8Path) -> Result<(Series, Pulse)> {
    match std::fs::File::open(log) {
        // Only what the log gained since the last reader, by the cache next to it.
        Ok(file) => {
            metrics::cache::read_with_pulse(log, file).map_err(|e| Error::io("read", log, e))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Ok((Series::default(), Pulse::default()))
        }
        Err(e) => Err(Error::io("read", log, e)),
    }
}

/// The summary `make` draws from the log's steps, and its pulse, through the row cache next to
/// it (see [`metrics::cache::read_summary`]); a log not written yet is an empty series.
pub fn read_row<T>(log: &Utf8Path, make: impl FnOnce(&Series) -> T) -> Result<(T, Pulse)>
where
    T: serde::Serialize + serde::de::DeserializeOwned,
{
    match std::fs::File::open(log) {
        Ok(file) => {
            metrics::cache::read_summary(log, file, make).map_err(|e| Error::io("read", log, e))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Ok((make(&Series::default()), Pulse::default()))
        }
        Err(e) => Err(Error::io("read", log, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(text: &str) -> (tempfile::TempDir, camino::Utf8PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = camino::Utf8PathBuf::from_path_buf(dir.path().join("x.out")).unwrap();
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    #[test]
    fn the_trainers_error_outranks_the_run_scripts_exit_line() {
        let (_dir, path) = log("Traceback (most recent call last):\n\
             OSError: [Errno 28] No space left on device: '/w/ckpt/global_step_4/policy/x.pt'\n\
             rlctl: skyrl_train.entrypoints.main_base exited with status 1\n\
             rlctl: job 7 finished with status 1\n");
        assert!(
            last_error(&path)
                .unwrap()
                .contains("No space left on device")
        );
        assert_eq!(trainer_status(&path), Some(1));
        let (_dir, path) = log("rlctl: skyrl_train.entrypoints.main_base exited with status 137\n");
        assert_eq!(
            last_error(&path).as_deref(),
            Some("rlctl: skyrl_train.entrypoints.main_base exited with status 137")
        );
        assert_eq!(trainer_status(&path), Some(137));
        let (_dir, path) = log("rlctl: slot 1 of job 7 started\n");
        assert_eq!(trainer_status(&path), None);
    }
}
