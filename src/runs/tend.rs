//! `rlctl tend`: one pass over recorded runs, for cron. A run that SLURM ended before it was
//! done (time limit, node failure, preemption, boot failure) is submitted again as the run's
//! next attempt, which resumes from its checkpoints; a crash is reported with its last error
//! line and left alone; a live run's alerts are reported (and with `--cancel-on-alert` the run
//! cancelled). Passes are serialised by a lock in the run root and are idempotent: a run whose
//! next attempt is queued is not submitted again.

use crate::error::{Error, Result};
use crate::runs::{self, alerts};
use crate::submit::ledger::{Ledger, Record};
use crate::submit::slurm::Slurm;
use crate::util::fs::write_atomic;
use crate::util::out::emit;
use camino::{Utf8Path, Utf8PathBuf};
use std::io::Write;

/// SLURM's end states that say nothing about the trainer: the run resumes in a new attempt.
const RESUMABLE: &[&str] = &["TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL"];

pub struct Options {
    /// Resubmissions allowed per run (attempts after the first).
    pub max_attempts: u32,
    pub cancel_on_alert: bool,
    pub thresholds: alerts::Thresholds,
}

/// One pass; an error (exit 1) when a person should look.
pub fn tend(
    slurm: &Slurm,
    ledger: &Ledger,
    run_root: &Utf8Path,
    records: &[Record],
    options: &Options,
    out: &mut dyn Write,
) -> Result<()> {
    std::fs::create_dir_all(run_root).map_err(|e| Error::io("create", run_root, e))?;
    let lock_path = run_root.join(".tend.lock");
    let lock = std::fs::File::create(&lock_path).map_err(|e| Error::io("create", &lock_path, e))?;
    // Two passes at once would both resubmit the same run.
    lock.lock().map_err(|e| Error::io("lock", &lock_path, e))?;
    let all = ledger.records()?;
    let states = runs::states(slurm, records)?;
    let (mut resumed, mut look) = (0, 0);
    for (record, state) in records.iter().zip(&states) {
        let done = saved_step(&record.checkpoint_dir)
            .zip(record.max_steps)
            .is_some_and(|(saved, max)| saved >= max);
        let line = match state.state.as_str() {
            "PENDING" | "RUNNING" | "REQUEUED" | "CONFIGURING" | "COMPLETING" => {
                let raised = alerts::alerts(&state.series, &options.thresholds);
                if raised.is_empty() {
                    continue;
                }
                look += 1;
                let mut line = format!(
                    "{} job {}: ALERT {}",
                    record.target, record.job_id, raised[0]
                );
                if options.cancel_on_alert {
                    slurm.cancel(&[record.job_id.as_str()])?;
                    line.push_str(" (cancelled)");
                }
                line
            }
            s if RESUMABLE.contains(&s) && !done => {
                let attempts = all.iter().filter(|r| r.target == record.target).count() as u32;
                if attempts > options.max_attempts {
                    look += 1;
                    format!(
                        "{} job {}: {s} after {} attempts; not resubmitted (--max-attempts {})",
                        record.target, record.job_id, attempts, options.max_attempts
                    )
                } else {
                    let next = resubmit(slurm, ledger, record)?;
                    resumed += 1;
                    format!(
                        "{} job {}: {s}; resumed as job {} (attempt {})",
                        record.target,
                        record.job_id,
                        next.job_id,
                        attempts + 1
                    )
                }
            }
            "FAILED" | "OUT_OF_MEMORY" => {
                look += 1;
                format!(
                    "{} job {}: {} ({}), not resubmitted: {}",
                    record.target,
                    record.job_id,
                    state.state,
                    record.log,
                    last_error(&record.log).unwrap_or_else(|| "no error line in the log".into())
                )
            }
            _ => continue,
        };
        emit(out, &format!("{line}\n"))?;
    }
    emit(
        out,
        &format!(
            "tend: {} runs, {resumed} resumed, {look} need a look\n",
            records.len()
        ),
    )?;
    match look {
        0 => Ok(()),
        n => Err(Error::Problems(format!(
            "{n} run{} need{} a look",
            if n == 1 { "" } else { "s" },
            if n == 1 { "s" } else { "" }
        ))),
    }
}

/// The step SkyRL last saved in a checkpoint folder (`latest_ckpt_global_step.txt`).
fn saved_step(ckpt: &Utf8Path) -> Option<u64> {
    let text = std::fs::read_to_string(ckpt.join("latest_ckpt_global_step.txt")).ok()?;
    text.trim().parse().ok()
}

/// The log's last line that reads like an error, for the one-line report.
fn last_error(log: &Utf8Path) -> Option<String> {
    let text = std::fs::read(log).ok()?;
    // The end of the log is enough, and logs are large.
    let tail = &text[text.len().saturating_sub(1 << 20)..];
    String::from_utf8_lossy(tail)
        .lines()
        .rev()
        .find(|l| {
            let l = l.to_ascii_lowercase();
            // The last resort: the run script's own `... exited with status N`.
            [
                "error",
                "exception",
                "check failed",
                "killed",
                "exited with status",
            ]
            .iter()
            .any(|w| l.contains(w))
        })
        .map(|l| l.trim().chars().take(300).collect())
}

/// The run's next attempt: the last attempt's scripts in a new numbered folder, exactly as
/// rendered (same knobs), but for the folder and for `first_slot=false`, so the job resumes
/// from the checkpoints and never wipes.
fn resubmit(slurm: &Slurm, ledger: &Ledger, last: &Record) -> Result<Record> {
    let base = last.run_dir.parent().expect("run folders are absolute");
    let mut n: u32 = last
        .run_dir
        .file_name()
        .and_then(|a| a.parse().ok())
        .unwrap_or(1);
    let run_dir: Utf8PathBuf = loop {
        n += 1;
        let dir = base.join(format!("{n:03}"));
        match std::fs::create_dir(&dir) {
            Ok(()) => break dir,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(Error::io("create", &dir, e)),
        }
    };
    let (old, new) = (last.run_dir.as_str(), run_dir.as_str());
    for (name, resume) in [("sbatch.sh", true), ("run.sh", false)] {
        let from = last.run_dir.join(name);
        let text = std::fs::read_to_string(&from).map_err(|e| Error::io("read", &from, e))?;
        let mut text = text.replace(old, new);
        if resume {
            text = text.replace("\nfirst_slot=true\n", "\nfirst_slot=false\n");
        }
        write_atomic(&run_dir.join(name), &text, 0o755)?;
    }
    let script = run_dir.join("sbatch.sh");
    let argv = slurm.sbatch_argv(&script, None);
    let job_id = match slurm.submit(&argv) {
        Ok(id) => id,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&run_dir);
            return Err(e);
        }
    };
    let log_name = last.log.file_name().unwrap_or_default();
    let mut record = last.clone();
    record.log = run_dir.join(log_name.replace(&last.job_id, &job_id));
    record.run_dir = run_dir.clone();
    record.job_id = job_id;
    record.sbatch = argv;
    record.dependency = None;
    record.submitted_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let text = toml::to_string(&record).map_err(|e| Error::Unsupported(e.to_string()))?;
    write_atomic(&run_dir.join("submission.toml"), &text, 0o644)?;
    ledger.append(&record)?;
    Ok(record)
}
