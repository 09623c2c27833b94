//! Child processes that must not outlive their time: each runs as the leader of its own
//! process group, and the whole group is killed at once.

use std::process::{Command, Stdio};

/// Kills process group `pid` (a child started with `process_group(0)`) and all it started.
pub fn kill_group(pid: u32) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{pid}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}
