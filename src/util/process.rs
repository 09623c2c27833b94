//! Child processes that must not outlive their time: each runs as the leader of its own
//! process group, and the whole group is killed at once.

use std::io::Read;
use std::process::{Command, Stdio};
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
}

impl std::fmt::Display for Unanswered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unanswered::NotStarted(program, e) => write!(f, "cannot run `{program}`: {e}"),
            Unanswered::TimedOut(shown, limit) => {
                write!(f, "`{shown}` did not answer within {} s", limit.as_secs())
            }
            Unanswered::Lost(shown, e) => write!(f, "`{shown}`: {e}"),
        }
    }
}

impl From<Unanswered> for String {
    fn from(why: Unanswered) -> String {
        why.to_string()
    }
}

/// Runs `argv` for at most `limit`: its output is read on threads of their own, so a large
/// answer never blocks it; a program still running at the limit is killed and left behind.
/// The error says why it gave no answer (could not start, did not answer in time), naming the
/// command as `shown`.
pub fn run_within(argv: &[&str], shown: &str, limit: Duration) -> Result<Finished, Unanswered> {
    let mut child = Command::new(argv[0])
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| Unanswered::NotStarted(argv[0].to_owned(), e))?;
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut text);
            }
            String::from_utf8_lossy(&text).into_owned()
        })
    };
    let boxed = |p: Box<dyn Read + Send>| p;
    let stdout = reader(child.stdout.take().map(|p| boxed(Box::new(p))));
    let stderr = reader(child.stderr.take().map(|p| boxed(Box::new(p))));
    let start = Instant::now();
    // Polled from 1 ms, doubling to 20 ms: a program that answers in 2 ms costs about that,
    // not a whole 20 ms poll.
    let mut pause = Duration::from_millis(1);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() >= limit => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(Unanswered::TimedOut(shown.to_owned(), limit));
            }
            Ok(None) => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(20));
            }
            Err(e) => return Err(Unanswered::Lost(shown.to_owned(), e)),
        }
    };
    Ok(Finished {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
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
}
