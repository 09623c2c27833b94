//! One tool call's command as a child process bounded in time and in what it may print: its
//! own process group, killed whole at the limit, its output read up to a cap and the rest
//! drained unread.

use crate::util::process::kill_group;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The most of a command's stdout kept (a grid's status, a long run's metrics fit).
pub const STDOUT_CAP: usize = 4 << 20;
/// The most of its stderr kept: its messages, not a log.
pub const STDERR_CAP: usize = 64 << 10;

/// What a command printed and how it ended.
pub struct Ran {
    /// The exit code; `None` when killed at the time limit (or by a signal).
    pub code: Option<i32>,
    pub timed_out: bool,
    pub stdout: String,
    pub stderr: String,
    /// Whether stdout or stderr was cut at its cap.
    pub truncated: bool,
}

/// Runs `argv` with no stdin for at most `limit`, keeping at most the caps of its output.
pub fn run(argv: &[String], limit: Duration) -> Result<Ran, String> {
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot run `{}`: {e}", argv[0]))?;
    let stdout = reader(child.stdout.take().map(boxed), STDOUT_CAP);
    let stderr = reader(child.stderr.take().map(boxed), STDERR_CAP);
    let start = Instant::now();
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if start.elapsed() >= limit => {
                // The whole group: an ssh or a SLURM client it started goes too.
                kill_group(child.id());
                let _ = child.wait();
                timed_out = true;
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(format!("`{}`: {e}", argv[0])),
        }
    };
    let (stdout, cut_out) = stdout.join().unwrap_or_default();
    let (stderr, cut_err) = stderr.join().unwrap_or_default();
    Ok(Ran {
        code: status.and_then(|s| s.code()),
        timed_out,
        stdout,
        stderr,
        truncated: cut_out || cut_err,
    })
}

fn boxed(pipe: impl Read + Send + 'static) -> Box<dyn Read + Send> {
    Box::new(pipe)
}

/// Reads `pipe` to its end on a thread of its own, keeping the first `cap` bytes: a command
/// that prints more is never blocked on a full pipe, and memory stays bounded.
fn reader(pipe: Option<Box<dyn Read + Send>>, cap: usize) -> JoinHandle<(String, bool)> {
    std::thread::spawn(move || {
        let Some(mut pipe) = pipe else {
            return (String::new(), false);
        };
        let mut kept = Vec::new();
        let mut chunk = [0u8; 8192];
        let mut cut = false;
        while let Ok(n) = pipe.read(&mut chunk) {
            if n == 0 {
                break;
            }
            let room = cap.saturating_sub(kept.len());
            kept.extend_from_slice(&chunk[..n.min(room)]);
            cut |= n > room;
        }
        (String::from_utf8_lossy(&kept).into_owned(), cut)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn a_command_past_its_limit_is_killed_with_what_it_started() {
        let start = Instant::now();
        let ran = run(
            &argv(&["sh", "-c", "sleep 30 & sleep 30"]),
            Duration::from_millis(300),
        )
        .unwrap();
        assert!(ran.timed_out && ran.code.is_none());
        // The grandchild held the pipes open: had it lived, the readers would not have ended.
        assert!(start.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn output_past_its_cap_is_cut_and_said() {
        let ran = run(
            &argv(&[
                "sh",
                "-c",
                "head -c 5000000 /dev/zero; echo err >&2; exit 3",
            ]),
            Duration::from_secs(20),
        )
        .unwrap();
        assert_eq!(ran.stdout.len(), STDOUT_CAP);
        assert!(ran.truncated);
        assert_eq!((ran.code, ran.stderr.as_str()), (Some(3), "err\n"));
    }
}
