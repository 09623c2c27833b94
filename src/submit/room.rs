//! Room in the QOSes that limit how many jobs a user may have submitted (pending or running):
//! counted from one `squeue --me`, taken one job at a time as a command submits.

use crate::error::{Error, Result};
use crate::plan::Plan;
use crate::slurm::QueuedJob;
use std::collections::BTreeMap;

/// What the user may still submit to each QOS that limits submissions, from one `squeue --me`.
pub struct Room {
    /// QOS -> (limit, jobs the user has there now, counting this command's own).
    qos: BTreeMap<String, (u32, u32)>,
}

impl Room {
    pub fn new(limits: &BTreeMap<String, u32>, queued: &[QueuedJob]) -> Room {
        let qos = (limits.iter())
            .map(|(name, limit)| {
                let used = queued.iter().filter(|j| j.qos == *name).count();
                (
                    name.clone(),
                    (*limit, u32::try_from(used).unwrap_or(u32::MAX)),
                )
            })
            .collect();
        Room { qos }
    }

    /// Counts one more job in `qos`, if it fits.
    pub fn take(&mut self, qos: &str) -> bool {
        match self.qos.get_mut(qos) {
            Some((limit, used)) if *used >= *limit => false,
            Some((_, used)) => {
                *used += 1;
                true
            }
            None => true,
        }
    }

    /// Refuses, before anything is written, plans that do not all fit.
    pub fn fits_all<'a>(&self, plans: impl Iterator<Item = &'a Plan>) -> Result<()> {
        let mut wanted: BTreeMap<&str, u32> = Default::default();
        for plan in plans {
            *wanted.entry(plan.job.qos.as_str()).or_default() += 1;
        }
        for (qos, n) in wanted {
            let Some(&(limit, used)) = self.qos.get(qos) else {
                continue;
            };
            if n > limit {
                return Err(Error::QosTooSmall {
                    qos: qos.to_owned(),
                    limit,
                    wanted: n,
                });
            }
            if used + n > limit {
                return Err(Error::QosFull {
                    qos: qos.to_owned(),
                    limit,
                    used,
                    wanted: n,
                });
            }
        }
        Ok(())
    }

    /// What to tell the user about the plans that did not fit; `tended` when they wait in the
    /// grid's intent for `tend` to submit.
    pub fn how_to_submit_the_rest(
        &self,
        plans: &[Plan],
        deferred: &[&Plan],
        tended: bool,
    ) -> String {
        let mut full: Vec<String> = Vec::new();
        for plan in deferred {
            let (limit, _) = self.qos.get(&plan.job.qos).copied().unwrap_or_default();
            let text = format!("{} ({limit} jobs per user)", plan.job.qos);
            if !full.contains(&text) {
                full.push(text);
            }
        }
        let mut grids: Vec<&str> = Vec::new();
        for plan in plans {
            let grid = plan.target.split('/').next().unwrap_or_default();
            if !grids.contains(&grid) {
                grids.push(grid);
            }
        }
        if tended {
            return format!(
                "{} of {} cells wait for room in QOS {}: SLURM lets a user have only so many jobs submitted (pending \
                 or running) there. They are rendered and recorded as waiting; `rlctl tend` submits them in order as \
                 jobs end (run it from cron: see `rlctl tend --help`), or run `rlctl tend {}` yourself later.\n",
                deferred.len(),
                plans.len(),
                full.join(", "),
                grids.join(" ")
            );
        }
        format!(
            "{} of {} cells were not submitted: SLURM lets a user have only so many jobs submitted (pending or \
             running) in QOS {}. Once some have ended, run `rlctl grid --all {}` again with the same flags and \
             overrides: the cells already submitted are in the ledger and are skipped, and the next ones go in.\n",
            deferred.len(),
            plans.len(),
            full.join(", "),
            grids.join(" / ")
        )
    }
}
