//! `rlctl watch`: a run's progress and its alerts, live or once. All state comes from the log
//! the ledger names, read again on every refresh: a restarted watch picks up where things are.

use crate::error::{Error, Result};
use crate::runs;
use crate::runs::alerts::{self, ENTROPY, GRAD_NORM, REWARD, TOKEN_KL, Thresholds};
use crate::runs::metrics::Kind;
use crate::submit::ledger::Record;
use crate::submit::slurm::Slurm;
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
    loop {
        let state = runs::states(slurm, std::slice::from_ref(record))?.remove(0);
        let progress = alerts::progress(&state.series, record.max_steps);
        let mut frame = format!(
            "{} job {} {}  {}  {}\n",
            record.target,
            record.job_id,
            state.state,
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
            let v = state.series.values(Kind::Train, key).last()?.1;
            Some(format!("{name} {}", alerts::sig(v, 3)))
        })
        .collect();
        if !latest.is_empty() {
            frame.push_str(&format!("  {}\n", latest.join("  ")));
        }
        let raised = alerts::alerts(&state.series, &options.thresholds);
        for alert in &raised {
            let line = format!("  ALERT {alert}\n");
            if said.insert(line.clone()) {
                frame.push_str(&line);
            }
        }
        write(out, &frame)?;
        out.flush()
            .map_err(|e| Error::io("write", "standard output", e))?;
        let running = state.source == "squeue";
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
