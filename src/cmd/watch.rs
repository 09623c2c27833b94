//! `rlctl watch`: a run's progress and alerts, or a table of several runs, live or once; exit 1
//! on an alert.

use super::Session;
use super::runs::{board_options, one_run, snapshot};
use crate::cli::WatchArgs;
use crate::error::{Error, Result};
use crate::runs::alerts::Thresholds;
use crate::runs::watch::{Options, watch};
use std::io::Write;
use std::time::Duration;

pub fn run(session: &Session, args: &WatchArgs, out: &mut dyn Write) -> Result<()> {
    let thresholds = args.thresholds();
    check_thresholds(&thresholds)?;
    let options = Options {
        once: args.once,
        json: args.json,
        interval: Duration::from_secs(args.interval.max(1)),
        thresholds,
        stall_floor_s: session.cluster()?.watch.stall_floor_s,
    };
    // Several runs (a grid, a preset's runs) are a table of them.
    if crate::runs::select_runs(&session.ledger()?, Some(&args.run))?.len() > 1 {
        let mut board = board_options(
            &args.run,
            args.interval,
            args.color.said(),
            options.thresholds,
        );
        board.once = args.once;
        board.json = args.json;
        return crate::runs::board::board(&board, &mut || snapshot(session, Some(&args.run)), out);
    }
    let (run, record) = one_run(session, &args.run)?;
    watch(
        &session.slurm,
        &run,
        &record,
        &options,
        &super::runs::warn,
        out,
    )
}

/// Thresholds no run could meet or always meets are refused, naming the flag and its range.
fn check_thresholds(t: &Thresholds) -> Result<()> {
    let refuse = |flag: &'static str, value: String, reason: &str| {
        Err(Error::BadFlag {
            flag,
            value,
            reason: reason.to_owned(),
        })
    };
    if !(t.entropy_floor.is_finite() && t.entropy_floor >= 0.0) {
        return refuse(
            "--entropy-floor",
            t.entropy_floor.to_string(),
            "an entropy is a finite number of nats, 0 or more: give e.g. 0.1",
        );
    }
    if !(t.entropy_min_ratio > 0.0 && t.entropy_min_ratio <= 1.0) {
        return refuse(
            "--entropy-ratio",
            t.entropy_min_ratio.to_string(),
            "a fraction of the starting entropy, above 0 and at most 1: give e.g. 0.2",
        );
    }
    if !(t.grad_spike_factor.is_finite() && t.grad_spike_factor > 1.0) {
        return refuse(
            "--grad-spike",
            t.grad_spike_factor.to_string(),
            "a spike is so many times the recent median, a finite factor above 1: give e.g. 5",
        );
    }
    if t.reward_stall_steps == 0 {
        return refuse(
            "--reward-stall-steps",
            "0".to_owned(),
            "a stall lasts at least 1 step: give e.g. 30",
        );
    }
    Ok(())
}
