//! The `purge` check: a run's checkpoint folder must not be on a file system that deletes files
//! before the run is done (`[[storage.purge]]`: Leonardo's `$SCRATCH` deletes them after 40
//! days), or the resume finds its early checkpoints gone. It reads the plan's estimate.

use crate::check::{Check, Finding, Report};
use crate::plan::Plan;
use crate::plan::estimate::Estimate;
use crate::util::fmt::duration;
use crate::util::fs::resolve;

/// A problem when the estimated wall of the run outlasts the purge window over its checkpoint
/// folder (links followed); nothing when the estimate cannot tell.
pub fn check(e: &Estimate, plan: &Plan) -> Report {
    let mut report = Report::default();
    let Some(wall) = e.wall_s else {
        return report;
    };
    let real = resolve(&plan.paths.checkpoint_dir);
    for purge in &plan.purge {
        if !real.starts_with(resolve(&purge.path)) || wall <= purge.seconds() {
            continue;
        }
        report.problems.push(Finding::new(
            Check::Purge,
            format!(
                "the checkpoint folder `{}` is under `{}`, which deletes files older than {} days, and the run's \
                 estimated wall is {} ({}): its first checkpoints would be gone before it ends; put \
                 storage.checkpoint_root on a file system that is not purged",
                plan.paths.checkpoint_dir,
                purge.path,
                purge.days,
                duration(wall),
                e.s_per_step_from,
            ),
        ));
    }
    report
}
