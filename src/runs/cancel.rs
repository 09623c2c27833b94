//! `rlctl cancel`: every pending or running job of the selected runs, in one scancel call.

use crate::error::Result;
use crate::runs::probe::Queue;
use crate::slurm::Slurm;
use crate::store::ledger::{Record, Run};
use crate::util::out::{confirm, previewing};
use crate::util::table::{Table, left};
use schemars::JsonSchema;
use serde::Serialize;
use std::io::Write;

/// What a cancel did: the jobs it cancelled (none when none was queued, or when the question
/// was answered no).
#[derive(Debug, Serialize, JsonSchema)]
pub struct Cancelled {
    /// False when several runs were asked about and the answer was no: nothing was cancelled.
    pub confirmed: bool,
    pub jobs: Vec<CancelledJob>,
}

/// One job cancelled: its run, its id and its state in the queue before.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CancelledJob {
    pub run: String,
    pub job_id: String,
    pub state: String,
}

impl Cancelled {
    /// What the text says of it.
    pub fn text(&self) -> String {
        match (self.confirmed, self.jobs.is_empty()) {
            (false, _) => "cancelled nothing\n".to_owned(),
            (true, true) => {
                "nothing to cancel: no job of these runs is pending or running\n".to_owned()
            }
            (true, false) => format!("cancelled:\n{}", listing(&self.jobs)),
        }
    }
}

/// The jobs, a line each: run, job, state.
fn listing(jobs: &[CancelledJob]) -> String {
    let mut listing = Table::new([left(), left(), left()]).indent(2).gap(1);
    for job in jobs {
        listing.row([
            job.run.clone(),
            format!("job {}", job.job_id),
            format!("({})", job.state),
        ]);
    }
    listing.render()
}

/// Every pending or running job of the selected runs (all links of a chain, every submission),
/// cancelled in one scancel call: a run stopped halfway would start its next link. Several
/// runs are confirmed first.
pub fn cancel(slurm: &Slurm, runs: &[Run], yes: bool) -> Result<Cancelled> {
    let queued = Queue::read(slurm)?;
    let live: Vec<&Record> = (runs.iter().flat_map(|r| &r.records))
        .filter(|r| queued.holds(&r.job_id))
        .collect();
    let jobs: Vec<CancelledJob> = (live.iter())
        .map(|r| CancelledJob {
            run: r.run(),
            job_id: r.job_id.clone(),
            state: queued.state(&r.job_id).unwrap_or_default().to_string(),
        })
        .collect();
    let mut names: Vec<&str> = jobs.iter().map(|j| j.run.as_str()).collect();
    names.dedup();
    if (names.len() > 1 || previewing())
        && !confirm(
            &format!(
                "cancel these {} jobs of {} runs?\n{}",
                jobs.len(),
                names.len(),
                listing(&jobs)
            ),
            yes,
        )?
    {
        return Ok(Cancelled {
            confirmed: false,
            jobs: Vec::new(),
        });
    }
    if !jobs.is_empty() {
        let ids: Vec<&str> = jobs.iter().map(|j| j.job_id.as_str()).collect();
        slurm.cancel(&ids)?;
        // Best effort: without the mark, `watch` reports the end as any other cancellation.
        for record in &live {
            let mark = record.run_dir.join(super::sealed::CANCEL_MARK);
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(mark);
            let _ = file.and_then(|mut f| writeln!(f, "{}", record.job_id));
        }
    }
    Ok(Cancelled {
        confirmed: true,
        jobs,
    })
}
