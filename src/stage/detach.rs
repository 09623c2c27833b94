//! Staging commands run detached (`setsid nohup sh -c ...`): the login node ends long processes
//! and SSH sessions, so each item runs on its own, with `<id>.log`, `<id>.pid` and, when it
//! ends, `<id>.rc` (its exit status) in `<run_root>/stage/`. Starting them holds the run root's turn
//! ([`crate::util::turn::Turn`]) from the look at the disk and the pid files to the new pid
//! files, so two `stage` commands at once start one download.

use crate::error::{Error, Result};
use crate::stage::StageCommand;
use camino::{Utf8Path, Utf8PathBuf};
use std::process::{Command, Stdio};

/// An item's files under `<run_root>/stage/`.
#[derive(Debug, Clone)]
pub struct Files {
    pub log: Utf8PathBuf,
    pub pid: Utf8PathBuf,
    pub rc: Utf8PathBuf,
}

impl Files {
    pub fn of(run_root: &Utf8Path, id: &str) -> Files {
        let dir = run_root.join("stage");
        Files {
            log: dir.join(format!("{id}.log")),
            pid: dir.join(format!("{id}.pid")),
            rc: dir.join(format!("{id}.rc")),
        }
    }
}

/// What the last detached attempt of an item is doing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attempt {
    /// Never started here (or its files were removed).
    None,
    Running(u32),
    /// Ended with this status (`None`: killed before it could record one).
    Ended(Option<i32>),
}

pub fn attempt(files: &Files) -> Attempt {
    let Some(pid) = read_trimmed(&files.pid).and_then(|p| p.parse::<u32>().ok()) else {
        return Attempt::None;
    };
    if alive(pid, &files.rc) {
        return Attempt::Running(pid);
    }
    Attempt::Ended(read_trimmed(&files.rc).and_then(|rc| rc.parse().ok()))
}

fn read_trimmed(path: &Utf8Path) -> Option<String> {
    Some(std::fs::read_to_string(path).ok()?.trim().to_owned())
}

/// The process is ours and not finished: its command line names this item's status file (a
/// recycled pid does not), and it is not a zombie waiting to be reaped.
fn alive(pid: u32, rc: &Utf8Path) -> bool {
    let proc = Utf8PathBuf::from(format!("/proc/{pid}"));
    // A process between two `exec`s (setsid → nohup → sh) shows an empty command line for a
    // moment: asked again, not taken for another program.
    let mut tries = 0;
    let cmdline = loop {
        let Ok(cmdline) = std::fs::read(proc.join("cmdline")) else {
            return false;
        };
        if !cmdline.is_empty() || tries == 50 {
            break cmdline;
        }
        tries += 1;
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    let ours = String::from_utf8_lossy(&cmdline).contains(rc.as_str());
    let state = std::fs::read_to_string(proc.join("stat")).unwrap_or_default();
    // `pid (comm) S ...`: the state follows the last `)`, as comm may hold anything.
    let zombie = state
        .rsplit_once(')')
        .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X']));
    ours && !zombie
}

/// Starts `command` detached; returns its pid. The log starts with the command line.
pub fn start(command: &StageCommand, files: &Files) -> Result<u32> {
    let dir = files.log.parent().expect("stage files are in a folder");
    std::fs::create_dir_all(dir).map_err(|e| Error::io("create", dir, e))?;
    match std::fs::remove_file(&files.rc) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(Error::io("remove", &files.rc, e));
        }
        _ => {}
    }
    let line = command.line();
    let header = format!("# rlctl stage, started at unix time {}\n# {line}\n", now());
    std::fs::write(&files.log, header).map_err(|e| Error::io("write", &files.log, e))?;
    let log = std::fs::OpenOptions::new()
        .append(true)
        .open(&files.log)
        .map_err(|e| Error::io("open", &files.log, e))?;
    let log_err = log
        .try_clone()
        .map_err(|e| Error::io("open", &files.log, e))?;
    let script = format!(
        "{line}; echo \"$?\" > {}",
        crate::util::quote::sh(files.rc.as_str())
    );
    // rlctl is not a process group leader, so setsid makes the new session in place and the pid
    // stays the shell's; nohup keeps a hangup from the closing SSH session away.
    let child = Command::new("setsid")
        .args(["nohup", "sh", "-c", &script])
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log_err)
        .spawn()
        .map_err(|e| {
            Error::Unsupported(format!(
                "cannot start `setsid nohup sh -c …` for `{line}`: {e}"
            ))
        })?;
    let pid = child.id();
    crate::util::fs::write_atomic(&files.pid, &format!("{pid}\n"), 0o644)?;
    Ok(pid)
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Where a program named in a command is: a path as it is, a bare name looked up on PATH.
pub fn find_program(program: &str) -> Option<Utf8PathBuf> {
    let found = which::which(program).ok()?;
    Utf8PathBuf::from_path_buf(found).ok()
}
