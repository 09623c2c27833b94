//! Folders a plan must not borrow from a recorded run: a `--wipe` whose checkpoint folder
//! resolves into another run's folder would delete that run's checkpoints.

use crate::check::{Check, Finding, Report};
use crate::error::Result;
use crate::plan::Plan;
use crate::submit::ledger::Ledger;
use crate::util::fs::Folder;

/// The `resume` problems of wiping `plan`'s checkpoints, judged against every recorded run of
/// `ledger`: none unless the plan wipes.
pub fn wipe_problems(plan: &Plan, ledger: &Ledger) -> Result<Report> {
    let mut report = Report::default();
    if !plan.wipe {
        return Ok(report);
    }
    let mine = &plan.paths.checkpoint_dir;
    let wiped = Folder::of(&plan.paths.ckpt_path);
    let mut said = std::collections::BTreeSet::new();
    // Streamed: only the runs already judged are kept.
    ledger.each_record(|_| true, |record| {
        // The run's own earlier jobs wrote this very folder, as written.
        if record.checkpoint_dir == *mine || !said.insert(record.run()) {
            return;
        }
        let theirs = Folder::of(&record.checkpoint_dir);
        if wiped.is_within(&theirs) || theirs.is_within(&wiped) {
            report.problems.push(Finding {
                check: Check::Resume,
                message: format!(
                    "--wipe would delete the checkpoints of {} (job {}): `{}` resolves to `{}`, which is \
                     that run's folder `{}`; remove the link, or launch without --wipe",
                    record.run(),
                    record.job_id,
                    plan.paths.ckpt_path,
                    wiped.path,
                    theirs.path
                ),
            });
        }
    })?;
    Ok(report)
}
