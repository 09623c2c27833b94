//! `rlctl cancel`: every pending or running job of the selected runs, in one scancel call.

use crate::error::Result;
use crate::runs::probe::Queue;
use crate::slurm::Slurm;
use crate::store::ledger::{Record, Run};
use crate::util::out::{confirm, emit as write};
use crate::util::table::{Table, left};
use std::io::Write;

/// Every pending or running job of the selected runs (all links of a chain, every submission),
/// cancelled in one scancel call: a run stopped halfway would start its next link. Several
/// runs are confirmed first.
pub fn cancel(slurm: &Slurm, runs: &[Run], yes: bool, out: &mut dyn Write) -> Result<()> {
    let queued = Queue::read(slurm)?;
    let live: Vec<&Record> = (runs.iter().flat_map(|r| &r.records))
        .filter(|r| queued.holds(&r.job_id))
        .collect();
    if live.is_empty() {
        return write(
            out,
            "nothing to cancel: no job of these runs is pending or running\n",
        );
    }
    let mut listing = Table::new([left(), left(), left()]).indent(2).gap(1);
    for r in &live {
        let state = queued.state(&r.job_id).unwrap_or_default();
        listing.row([r.run(), format!("job {}", r.job_id), format!("({state})")]);
    }
    let listing = listing.render();
    let mut names: Vec<String> = live.iter().map(|r| r.run()).collect();
    names.dedup();
    if names.len() > 1
        && !confirm(
            &format!(
                "cancel these {} jobs of {} runs?\n{listing}",
                live.len(),
                names.len()
            ),
            yes,
        )?
    {
        return write(out, "cancelled nothing\n");
    }
    let ids: Vec<&str> = live.iter().map(|r| r.job_id.as_str()).collect();
    slurm.cancel(&ids)?;
    write(out, &format!("cancelled:\n{listing}"))
}
