//! The run root's turn: every command that submits or deletes (`launch`, `grid`, `tend`,
//! `clean`, `stage`, `render --out`) holds it from reading the queue and the ledger to its last
//! record or removal, so that what it read is still true when it acts.

use crate::error::{Error, Result};
use camino::{Utf8Path, Utf8PathBuf};
use std::fs::TryLockError;
use std::time::{Duration, Instant};

/// Where the holder of the turn writes its pid and command, for a command that waits on it.
pub const HOLDER: &str = ".turn-holder";

/// How long a command waits for the turn before it says whose turn it waits on.
const SAY_AFTER: Duration = Duration::from_secs(2);

/// How long a command waits for the turn at most (`RLCTL_LOCK_WAIT_S` overrides it).
const WAIT_S: u64 = 600;

/// Held while it lives: an exclusive `flock` of the run root folder itself (nothing can be
/// deleted from under it), with the holder's pid and command in [`HOLDER`] while it is held.
#[derive(Debug)]
pub struct Turn {
    _lock: std::fs::File,
    root: Utf8PathBuf,
}

impl Turn {
    /// Waits for the run root's turn; the folder is made first if it is missing. After
    /// [`SAY_AFTER`] it says on stderr whose turn it waits on; after `RLCTL_LOCK_WAIT_S` seconds
    /// (600 unless set) it gives up with an error naming the holder.
    pub fn take(run_root: &Utf8Path) -> Result<Turn> {
        Turn::take_within(run_root, wait_bound())
    }

    /// [`Turn::take`], giving up after `bound`.
    fn take_within(run_root: &Utf8Path, bound: Duration) -> Result<Turn> {
        std::fs::create_dir_all(run_root).map_err(|e| Error::io("create", run_root, e))?;
        let file = std::fs::File::open(run_root).map_err(|e| Error::io("open", run_root, e))?;
        let (start, mut said) = (Instant::now(), false);
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(TryLockError::WouldBlock) => {}
                Err(TryLockError::Error(e)) => return Err(Error::io("lock", run_root, e)),
            }
            let waited = start.elapsed();
            if waited >= bound {
                return Err(Error::TurnNotFree {
                    lock: run_root.to_owned(),
                    holder: holder(run_root),
                    waited_s: waited.as_secs(),
                });
            }
            if !said && waited >= SAY_AFTER {
                said = true;
                crate::say!(
                    "rlctl: waiting for the run root's lock held by {} ({run_root}); giving up after {} s",
                    holder(run_root).unwrap_or_else(|| "another process".to_owned()),
                    bound.as_secs()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        // Only a hint for a waiter: a turn whose holder cannot be written is still the turn.
        let _ = std::fs::write(run_root.join(HOLDER), holder_line());
        Ok(Turn {
            _lock: file,
            root: run_root.to_owned(),
        })
    }

    /// The run root's turn where the run root exists; none where it does not, since then no
    /// run is recorded there and nothing to take turns over (and a command that only writes
    /// elsewhere, `render --out`, must not make the profile's folders).
    pub fn if_exists(run_root: &Utf8Path) -> Result<Option<Turn>> {
        match run_root.is_dir() {
            true => Turn::take(run_root).map(Some),
            false => Ok(None),
        }
    }

    /// The run root this turn is of.
    pub fn root(&self) -> &Utf8Path {
        &self.root
    }
}

impl Drop for Turn {
    /// The holder's note goes before the lock does: the next holder writes its own.
    fn drop(&mut self) {
        let _ = std::fs::remove_file(self.root.join(HOLDER));
    }
}

/// How long [`Turn::take`] waits: `RLCTL_LOCK_WAIT_S` seconds, else [`WAIT_S`].
fn wait_bound() -> Duration {
    let s = std::env::var("RLCTL_LOCK_WAIT_S").ok();
    Duration::from_secs(s.and_then(|s| s.trim().parse().ok()).unwrap_or(WAIT_S))
}

/// This process's pid and command, as [`HOLDER`] keeps them.
fn holder_line() -> String {
    let command: Vec<String> = std::env::args().collect();
    let mut command = command.join(" ");
    if command.len() > 200 {
        let cut = (0..=200)
            .rev()
            .find(|&i| command.is_char_boundary(i))
            .unwrap_or(0);
        command.truncate(cut);
        command.push('…');
    }
    format!("{} {command}\n", std::process::id())
}

/// `pid N (COMMAND)` of the turn's holder, when its note names a live process.
pub fn holder(run_root: &Utf8Path) -> Option<String> {
    let text = std::fs::read_to_string(run_root.join(HOLDER)).ok()?;
    let (pid, command) = text.trim_end().split_once(' ')?;
    let pid: u32 = pid.parse().ok()?;
    // A holder killed outright leaves its note: a dead pid is no holder.
    std::path::Path::new(&format!("/proc/{pid}"))
        .exists()
        .then(|| format!("pid {pid} ({command})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_turn_waits_for_the_first_and_gives_up_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8Path::from_path(dir.path()).unwrap().join("runs");
        let first = Turn::take(&root).unwrap();
        assert!(
            holder(&root)
                .unwrap()
                .starts_with(&format!("pid {} (", std::process::id()))
        );
        let err = Turn::take_within(&root, Duration::ZERO)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!("pid {}", std::process::id())),
            "{err}"
        );
        drop(first);
        assert!(!root.join(HOLDER).exists());
        assert!(Turn::take(&root).is_ok());
    }
}
