//! `rlctl wait RUN...`: blocks until the runs reach what is asked (see [`crate::runs::wait`]);
//! its exit says how the wait ended.

use super::Session;
use super::runs::{reconciled, warn};
use crate::cli::wait::WaitArgs;
use crate::error::Result;
use crate::runs::wait::{self, Options, Until};
use crate::store::ledger::Run;
use std::io::Write;

pub fn run(session: &Session, args: &WaitArgs, out: &mut dyn Write) -> Result<()> {
    let cluster = session.cluster()?;
    // An sbatch left without its record is recorded first, as `status` does; the queue read
    // for that is the first round's.
    let first = reconciled(session, &cluster.storage.run_root)?;
    let runs = selected(session, &args.runs)?;
    let until = args.until();
    if let Until::Step(n) = until {
        wait::check_step(&runs, n)?;
    }
    let options = Options {
        until,
        timeout: args.timeout,
        interval: args.interval,
        json: args.json,
        stall_floor_s: cluster.watch.stall_floor_s,
        gpus_per_node: cluster.node.gpus,
    };
    wait::wait(&session.slurm, &runs, first, &options, &warn, out)?.result()
}

/// Every run the names mean, as `status` resolves a name, each run once, in the order named.
fn selected(session: &Session, names: &[String]) -> Result<Vec<Run>> {
    let ledger = session.ledger()?;
    let mut runs: Vec<Run> = Vec::new();
    for name in names {
        for run in crate::runs::select_runs(&ledger, Some(name))? {
            if !runs.iter().any(|r| r.name == run.name) {
                runs.push(run);
            }
        }
    }
    Ok(runs)
}
