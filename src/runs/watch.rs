//! `rlctl watch`: a run's progress and its alerts, live or once. All state comes from SLURM and
//! the log the ledger names, so a restarted watch picks up where things are; each refresh reads
//! only the bytes appended to the log since the last one.

use crate::error::{Error, Result};
use crate::runs;
use crate::runs::alerts::{self, Thresholds};
use crate::runs::metrics::keys::{ENTROPY, GRAD_NORM, REWARD, TOKEN_KL};
use crate::runs::metrics::{Kind, Tail};
use crate::submit::ledger::Record;
use crate::submit::slurm::Slurm;
use crate::util::fmt::{Digits, number};
use crate::util::out::emit as write;
use std::collections::BTreeSet;
use std::io::Write;
use std::time::Duration;

pub struct Options {
    pub once: bool,
    pub interval: Duration,
    pub thresholds: Thresholds,
}

/// Watches until the job ends (or once); an alert makes the result an error.
pub fn watch(slurm: &Slurm, record: &Record, options: &Options, out: &mut dyn Write) -> Result<()> {
    let mut said: BTreeSet<String> = BTreeSet::new();
    let mut tail = Tail::new(record.log.as_std_path());
    loop {
        // SLURM is asked before the log is read: a job seen ended has written all its lines.
        let (state, source) = runs::job_states(slurm, std::slice::from_ref(record))?.remove(0);
        tail.poll()
            .map_err(|e| Error::io("read", record.log.clone(), e))?;
        let series = tail.series();
        let progress = alerts::progress(series, record.max_steps);
        let mut frame = format!(
            "{} job {} {state}  {}  {}\n",
            record.target,
            record.job_id,
            bar(progress.fraction()),
            progress.summary()
        );
        let latest: Vec<String> = [
            ("reward", REWARD),
            ("entropy", ENTROPY),
            ("grad norm", GRAD_NORM),
            ("token KL", TOKEN_KL),
        ]
        .iter()
        .filter_map(|(name, key)| {
            let v = series.values(Kind::Train, key).last()?.1;
            Some(format!("{name} {}", number(v, Digits::Sig(3))))
        })
        .collect();
        if !latest.is_empty() {
            frame.push_str(&format!("  {}\n", latest.join("  ")));
        }
        let raised = alerts::alerts(series, &options.thresholds);
        for alert in &raised {
            let line = format!("  ALERT {alert}\n");
            if said.insert(line.clone()) {
                frame.push_str(&line);
            }
        }
        write(out, &frame)?;
        out.flush()
            .map_err(|e| Error::io("write", "standard output", e))?;
        let running = source == "squeue";
        if options.once || !running {
            return match said.len() {
                0 => Ok(()),
                n => Err(Error::Alerts { count: n }),
            };
        }
        std::thread::sleep(options.interval);
    }
}

/// `[#####---------------]` for a known fraction, nothing otherwise.
fn bar(fraction: Option<f64>) -> String {
    let Some(f) = fraction else {
        return String::new();
    };
    let done = (f * 20.0).round() as usize;
    format!("[{}{}]", "#".repeat(done), "-".repeat(20 - done.min(20)))
}
