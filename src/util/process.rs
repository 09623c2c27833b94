//! Child processes that must not outlive their time: each runs as the leader of its own
//! process group, and the whole group is killed at once.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Kills process group `pid` (a child started with `process_group(0)`) and all it started.
pub fn kill_group(pid: u32) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{pid}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// What a program that ran to its end within its time printed.
pub struct Finished {
    pub status: std::process::ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

/// Why a program gave no answer: it could not start, or did not answer in time.
#[derive(Debug)]
pub enum Unanswered {
    /// It could not be started (not found, not executable): the program and the reason.
    NotStarted(String, std::io::Error),
    /// Still running at the limit, and killed: the command as shown, the limit.
    TimedOut(String, Duration),
    /// Its end could not be waited for.
    Lost(String, std::io::Error),
    /// It printed more than its share of bytes on stdout or stderr, and was killed: the
    /// command as shown, the share.
    TooLong(String, usize),
}

impl std::fmt::Display for Unanswered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unanswered::NotStarted(program, e) => write!(f, "cannot run `{program}`: {e}"),
            Unanswered::TimedOut(shown, limit) => {
                write!(f, "`{shown}` did not answer within {} s", limit.as_secs())
            }
            Unanswered::Lost(shown, e) => write!(f, "`{shown}`: {e}"),
            Unanswered::TooLong(shown, bytes) => write!(
                f,
                "`{shown}` printed more than {} and was stopped",
                crate::util::fmt::human(*bytes as u64)
            ),
        }
    }
}

impl From<Unanswered> for String {
    fn from(why: Unanswered) -> String {
        why.to_string()
    }
}

/// Runs `argv` for at most `limit`: its output is read on threads of their own, so a large
/// answer never blocks it; a program still running at the limit is killed with all it started.
/// The error says why it gave no answer (could not start, did not answer in time), naming the
/// command as `shown`.
pub fn run_within(argv: &[&str], shown: &str, limit: Duration) -> Result<Finished, Unanswered> {
    run_capped(argv, shown, limit, usize::MAX)
}

/// [`run_within`], and a program that prints more than `max_bytes` on stdout or on stderr is
/// killed too: what it printed is never read past that, so memory stays bounded whatever it
/// prints.
pub fn run_capped(
    argv: &[&str],
    shown: &str,
    limit: Duration,
    max_bytes: usize,
) -> Result<Finished, Unanswered> {
    let mut child = Command::new(argv[0])
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group: a shell wrapper's children are killed with it.
        .process_group(0)
        .spawn()
        .map_err(|e| Unanswered::NotStarted(argv[0].to_owned(), e))?;
    let flooded = Arc::new(AtomicBool::new(false));
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        let flooded = Arc::clone(&flooded);
        std::thread::spawn(move || {
            let mut text = Vec::new();
            if let Some(pipe) = pipe {
                let cap = u64::try_from(max_bytes)
                    .unwrap_or(u64::MAX)
                    .saturating_add(1);
                let _ = pipe.take(cap).read_to_end(&mut text);
            }
            if text.len() > max_bytes {
                flooded.store(true, Ordering::SeqCst);
                text.clear();
            }
            String::from_utf8_lossy(&text).into_owned()
        })
    };
    let boxed = |p: Box<dyn Read + Send>| p;
    let stdout = reader(child.stdout.take().map(|p| boxed(Box::new(p))));
    let stderr = reader(child.stderr.take().map(|p| boxed(Box::new(p))));
    let start = Instant::now();
    let stop = |child: &mut std::process::Child| {
        kill_group(child.id());
        let _ = child.kill();
        let _ = child.wait();
    };
    // Polled from 1 ms, doubling to 20 ms: a program that answers in 2 ms costs about that,
    // not a whole 20 ms poll.
    let mut pause = Duration::from_millis(1);
    let status = loop {
        if flooded.load(Ordering::SeqCst) {
            stop(&mut child);
            return Err(Unanswered::TooLong(shown.to_owned(), max_bytes));
        }
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() >= limit => {
                stop(&mut child);
                return Err(Unanswered::TimedOut(shown.to_owned(), limit));
            }
            Ok(None) => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(20));
            }
            Err(e) => return Err(Unanswered::Lost(shown.to_owned(), e)),
        }
    };
    let (stdout, stderr) = (
        stdout.join().unwrap_or_default(),
        stderr.join().unwrap_or_default(),
    );
    // It ended as its last bytes went past the share.
    if flooded.load(Ordering::SeqCst) {
        return Err(Unanswered::TooLong(shown.to_owned(), max_bytes));
    }
    Ok(Finished {
        status,
        stdout,
        stderr,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_past_its_limit_is_killed_and_said_so() {
        let start = Instant::now();
        let err = run_within(&["sleep", "30"], "sleep 30", Duration::from_millis(200))
            .err()
            .expect("killed");
        assert!(start.elapsed() < Duration::from_secs(5));
        assert_eq!(err.to_string(), "`sleep 30` did not answer within 0 s");
        let done = run_within(
            &["sh", "-c", "echo out; echo err >&2; exit 3"],
            "sh",
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(
            (done.stdout.as_str(), done.stderr.as_str()),
            ("out\n", "err\n")
        );
        assert_eq!(done.status.code(), Some(3));
        assert!(run_within(&["/nonexistent/x"], "x", Duration::from_secs(1)).is_err());
    }

    #[test]
    fn a_program_that_prints_past_its_share_is_stopped() {
        let start = Instant::now();
        // `yes` prints forever, through a shell whose child it is: both are stopped.
        let err = run_capped(
            &["sh", "-c", "yes flood; echo never"],
            "yes",
            Duration::from_secs(30),
            1 << 20,
        )
        .err()
        .expect("stopped");
        assert!(start.elapsed() < Duration::from_secs(10));
        assert_eq!(
            err.to_string(),
            "`yes` printed more than 1.0 MiB and was stopped"
        );
        let done =
            run_capped(&["sh", "-c", "echo fits"], "sh", Duration::from_secs(10), 5).unwrap();
        assert_eq!(done.stdout, "fits\n");
    }
}
