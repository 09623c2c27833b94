//! `rlctl tend --sync-wandb`: uploads, from the login node, the offline W&B runs of the tended
//! runs that gained data since the last pass. Each `wandb sync` has a time limit (its process
//! group is killed there) and the pass a budget, since login nodes kill long processes; what the
//! budget leaves is synced by a later pass. A failure is one line, and the pass goes on.
//!
//! What was synced is remembered per offline run, outside W&B's own folder: a stamp holding the
//! size and modification time its `.wandb` file had when the last sync that succeeded started.

use crate::error::{Error, Result};
use crate::plan::wandb_dir_in;
use crate::runs::tend::select;
use crate::store::ledger::Ledger;
use crate::util::out::emit_line;
use crate::util::process::kill_group;
use camino::{Utf8Path, Utf8PathBuf};
use std::io::{Read, Seek, Write};
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub struct Options {
    /// The `wandb` program.
    pub program: String,
    /// How long one `wandb sync` may take.
    pub per_call: Duration,
    /// How long all of a pass's syncs may take together.
    pub budget: Duration,
}

/// The default budget of a pass's syncs, in seconds: a login node kills a process after about
/// 100 s (Leonardo), and the pass before the syncs and the summary after them need their time.
pub const BUDGET_S: u64 = 60;

/// The most runs the summary names as left for the next pass; the others are counted.
const NAMED: usize = 10;

/// Below this much budget left, a sync is not started: it would only be killed.
const LEAST_CALL: Duration = Duration::from_secs(1);

/// W&B's folder of the run's offline runs, under `WANDB_DIR`.
const WANDB_OWN: &str = "wandb";

/// The stamps of what was synced, beside W&B's folder in `WANDB_DIR`.
const STAMPS: &str = "rlctl-synced";

/// One offline run: its folder, and the `.wandb` file that grows as the trainer logs.
struct Offline {
    /// The run this offline run belongs to, for messages.
    target: String,
    dir: Utf8PathBuf,
    stamp_file: Utf8PathBuf,
    /// Size and modification time of the `.wandb` file now.
    stamp: String,
}

/// Syncs the offline W&B runs of the runs `names` mean (every recorded run without names) that
/// changed since their last sync. An error (exit 1) when a sync failed.
pub fn sync(
    ledger: &Ledger,
    names: &[String],
    options: &Options,
    out: &mut dyn Write,
) -> Result<()> {
    let start = Instant::now();
    let mut folders: Vec<(String, Utf8PathBuf)> = Vec::new();
    for run in select(ledger, names)? {
        for record in &run.records {
            let dir = wandb_dir_in(&record.checkpoint_dir);
            if !folders.iter().any(|(_, d)| *d == dir) {
                folders.push((run.name.clone(), dir));
            }
        }
    }
    let (mut synced, mut unchanged, mut failed, mut left) = (0, 0, 0, 0);
    // The runs with an offline run the budget left unsynced, each once, in order.
    let mut unsynced: Vec<&str> = Vec::new();
    for (target, wandb_dir) in &folders {
        for offline in offline_runs(target, wandb_dir) {
            if std::fs::read_to_string(&offline.stamp_file).ok().as_deref()
                == Some(offline.stamp.as_str())
            {
                unchanged += 1;
                continue;
            }
            let limit = options
                .per_call
                .min(options.budget.saturating_sub(start.elapsed()));
            let mut leave = || {
                left += 1;
                if !unsynced.contains(&target.as_str()) {
                    unsynced.push(target);
                }
            };
            if limit < LEAST_CALL {
                leave();
                continue;
            }
            match run_sync(&options.program, &offline.dir, limit) {
                // Cut short by the pass's budget, not its own limit: the next pass goes on.
                Err(Ended::Killed(_)) if limit < options.per_call => leave(),
                Ok(()) => {
                    synced += 1;
                    // Not remembering it only costs a sync again next pass.
                    let _ =
                        std::fs::create_dir_all(offline.stamp_file.parent().unwrap_or(wandb_dir))
                            .and_then(|()| std::fs::write(&offline.stamp_file, &offline.stamp));
                }
                Err(Ended::Killed(why) | Ended::Failed(why)) => {
                    failed += 1;
                    emit_line(
                        out,
                        &format!("wandb sync: {}: {}: {why}", offline.target, offline.dir),
                    )?;
                }
            }
        }
    }
    let mut summary =
        format!("wandb sync: {synced} synced, {unchanged} unchanged, {failed} failed");
    if left > 0 {
        let more = unsynced.len().saturating_sub(NAMED);
        summary.push_str(&format!(
            ", {left} left for the next pass (its {} s budget, --wandb-budget, spent): {}{}",
            options.budget.as_secs(),
            unsynced[..unsynced.len() - more].join(", "),
            if more > 0 {
                format!(" and {more} more run{}", if more == 1 { "" } else { "s" })
            } else {
                String::new()
            }
        ));
    }
    emit_line(out, &summary)?;
    match failed {
        0 => Ok(()),
        n => Err(Error::Problems(format!(
            "{n} wandb sync{} failed",
            if n == 1 { "" } else { "s" }
        ))),
    }
}

/// The offline runs in `wandb_dir`, oldest first (their names begin with their start time).
fn offline_runs(target: &str, wandb_dir: &Utf8Path) -> Vec<Offline> {
    let Ok(entries) = wandb_dir.join(WANDB_OWN).read_dir_utf8() else {
        return Vec::new();
    };
    let mut found: Vec<Offline> = entries
        .flatten()
        .filter(|e| e.file_name().starts_with("offline-run-") && e.path().is_dir())
        .filter_map(|e| {
            let stamp = stamp(e.path())?;
            Some(Offline {
                target: target.to_owned(),
                stamp_file: wandb_dir.join(STAMPS).join(e.file_name()),
                dir: e.path().to_owned(),
                stamp,
            })
        })
        .collect();
    found.sort_by(|a, b| a.dir.cmp(&b.dir));
    found
}

/// Size and modification time of the offline run's `.wandb` file; none before it has one.
fn stamp(dir: &Utf8Path) -> Option<String> {
    let file = dir
        .read_dir_utf8()
        .ok()?
        .flatten()
        .find(|e| e.file_name().ends_with(".wandb"))?;
    let meta = file.metadata().ok()?;
    Some(format!(
        "{} {}.{:09}\n",
        meta.len(),
        meta.mtime(),
        meta.mtime_nsec()
    ))
}

/// How a `wandb sync` that did not succeed ended: killed at its time limit, or failed.
enum Ended {
    Killed(String),
    Failed(String),
}

/// `wandb sync --include-synced DIR` (W&B skips a run it synced before without the flag, even
/// one that has grown since), its process group killed at `limit`. Its output goes to a
/// temporary file, so that nothing it leaves running can hold a pipe open.
fn run_sync(program: &str, dir: &Utf8Path, limit: Duration) -> std::result::Result<(), Ended> {
    let failed = Ended::Failed;
    let mut log = tempfile::tempfile().map_err(|e| failed(format!("no temporary file: {e}")))?;
    let mut child = Command::new(program)
        .args(["sync", "--include-synced"])
        .arg(dir)
        .stdin(Stdio::null())
        .stdout(log.try_clone().map_err(|e| failed(e.to_string()))?)
        .stderr(log.try_clone().map_err(|e| failed(e.to_string()))?)
        .process_group(0)
        .spawn()
        .map_err(|e| {
            failed(format!(
                "cannot run `{program}`: {e} (install wandb, or name it with --wandb)"
            ))
        })?;
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() >= limit => {
                kill_group(child.id());
                let _ = child.wait();
                return Err(Ended::Killed(format!(
                    "`{program} sync` was killed after {} s; the next pass tries again",
                    limit.as_secs()
                )));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(failed(format!("waiting for `{program} sync`: {e}"))),
        }
    };
    if status.success() {
        return Ok(());
    }
    let mut text = String::new();
    let _ = log.rewind().and_then(|()| log.read_to_string(&mut text));
    let last = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    Err(failed(
        format!("`{program} sync` failed ({status}) {}", last.trim())
            .trim_end()
            .to_owned(),
    ))
}
