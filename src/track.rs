//! The commands that follow recorded runs: status, cancel, logs, metrics, watch, clean, report.

use crate::cli::Command;
use crate::cluster::Cluster;
use crate::error::{Error, Result};
use crate::follow::{self, write as emit};
use crate::ledger::{Ledger, Record};
use crate::slurm::Slurm;
use camino::Utf8Path;
use std::io::Write;

/// The commands that follow recorded runs.
pub fn track(
    command: Command,
    cluster: &Cluster,
    slurm: &Slurm,
    out: &mut dyn Write,
) -> Result<()> {
    let ledger = Ledger::at(&cluster.storage.run_root);
    let one = |name: &str| -> Result<Record> {
        let mut records = follow::select(&ledger, Some(name))?;
        match records.len() {
            1 => Ok(records.remove(0)),
            _ => Err(Error::Ambiguous {
                name: name.to_owned(),
                candidates: records.into_iter().map(|r| r.target).collect(),
            }),
        }
    };
    match command {
        Command::Status { run, json } => {
            let records = follow::select(&ledger, run.as_deref())?;
            let states = follow::states(slurm, &records)?;
            if json {
                let text = serde_json::to_string_pretty(&states).expect("states serialize");
                return emit(out, &format!("{text}\n"));
            }
            emit(out, &follow::status_table(&states))
        }
        Command::Cancel { run, yes } => {
            follow::cancel(slurm, &follow::select(&ledger, Some(&run))?, yes, out)
        }
        Command::Logs { run, follow: keep } => logs(slurm, &one(&run)?, keep, out),
        Command::Metrics { run, json, csv } => {
            let path = Utf8Path::new(&run);
            let log = if path.is_file() {
                path.to_path_buf()
            } else {
                one(&run)?.log
            };
            let series = follow::read_series(&log)?;
            let text = match (json, csv) {
                (true, _) => crate::metrics::to_json(&series),
                (_, true) => crate::metrics::to_csv(&series),
                _ => crate::metrics::table(&series),
            };
            emit(out, &text)
        }
        Command::Watch {
            run,
            once,
            interval,
            entropy_floor,
            entropy_ratio,
            grad_spike,
            reward_stall_steps,
        } => {
            let mut thresholds = crate::alerts::Thresholds::default();
            if let Some(x) = entropy_floor {
                thresholds.entropy_floor = x;
            }
            if let Some(x) = entropy_ratio {
                thresholds.entropy_min_ratio = x;
            }
            if let Some(x) = grad_spike {
                thresholds.grad_spike_factor = x;
            }
            if let Some(n) = reward_stall_steps {
                thresholds.reward_stall_steps = n;
            }
            let options = crate::watch::Options {
                once,
                interval: std::time::Duration::from_secs(interval.max(1)),
                thresholds,
            };
            crate::watch::watch(slurm, &one(&run)?, &options, out)
        }
        Command::Clean { run, yes } => crate::clean::clean(
            slurm,
            &follow::select(&ledger, Some(&run))?,
            &cluster.storage.checkpoint_root,
            yes,
            out,
        ),
        Command::Report { grid, out: dir } => {
            let records: Vec<Record> = ledger
                .latest()?
                .into_iter()
                .filter(|r| r.grid.as_deref() == Some(grid.as_str()))
                .collect();
            if records.is_empty() {
                return Err(Error::Unsupported(format!(
                    "no cell of grid `{grid}` is recorded: launch it with `rlctl grid --all {grid}`"
                )));
            }
            let states = follow::states(slurm, &records)?;
            let dir = dir.unwrap_or_else(|| cluster.storage.run_root.join(&grid).join("report"));
            let written = follow::report(&grid, &states, &dir, out)?;
            for path in written {
                eprintln!("rlctl: wrote {path}");
            }
            Ok(())
        }
        _ => unreachable!("only the follow-up commands reach here"),
    }
}

/// Prints a run's log; with `follow`, keeps printing what is appended until the job ends.
fn logs(slurm: &Slurm, record: &Record, keep: bool, out: &mut dyn Write) -> Result<()> {
    use std::io::{Read, Seek};
    let mut offset = 0u64;
    loop {
        // Whether it still runs is asked before reading, so the last bytes are never missed.
        let running = keep && slurm.queued()?.iter().any(|j| j.id == record.job_id);
        if let Ok(mut file) = std::fs::File::open(&record.log) {
            file.seek(std::io::SeekFrom::Start(offset))
                .map_err(|e| Error::io("read", record.log.clone(), e))?;
            let mut chunk = Vec::new();
            file.read_to_end(&mut chunk)
                .map_err(|e| Error::io("read", record.log.clone(), e))?;
            offset += chunk.len() as u64;
            out.write_all(&chunk)
                .map_err(|e| Error::io("write", "standard output", e))?;
            out.flush()
                .map_err(|e| Error::io("write", "standard output", e))?;
        } else if !keep {
            return Err(Error::Unsupported(format!(
                "{} (job {}) has no log yet at `{}`: it has not started",
                record.target, record.job_id, record.log
            )));
        }
        if !running {
            return Ok(());
        }
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
}
