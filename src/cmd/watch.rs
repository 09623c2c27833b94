//! `rlctl watch`: a run's progress and alerts, live or once; exit 1 on an alert.

use super::Session;
use super::runs::one;
use crate::error::Result;
use crate::runs::alerts::Thresholds;
use crate::runs::watch::{Options, watch};
use std::io::Write;
use std::time::Duration;

pub fn run(
    session: &Session,
    run: &str,
    once: bool,
    interval: u64,
    thresholds: Thresholds,
    out: &mut dyn Write,
) -> Result<()> {
    let options = Options {
        once,
        interval: Duration::from_secs(interval.max(1)),
        thresholds,
    };
    watch(&session.slurm, &one(session, run)?, &options, out)
}
