//! Folders a plan must not borrow from a recorded run: a `--wipe` whose checkpoint folder
//! resolves into another run's folder would delete that run's checkpoints; a `--resume latest`
//! onto checkpoints the other SkyRL flavour saved.

use crate::check::{Check, Finding, Report};
use crate::error::Result;
use crate::plan::{Plan, Resume};
use crate::schema::flavour::Flavour;
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

/// The `resume-flavour` problem of resuming `plan` from a checkpoint folder the other SkyRL
/// flavour saved: the newest record of a job on that folder (resolved, as `--wipe` judges it)
/// that says its flavour. MarinSkyRL and upstream save under their own classes and config
/// (`trainer_state.pt` holds the whole config), and neither is tested loading the other's.
/// Records of an older rlctl say no flavour and are passed over.
pub fn flavour_problems(plan: &Plan, ledger: &Ledger) -> Result<Report> {
    let mut report = Report::default();
    let folder = crate::checkpoint::Folder::read(&plan.paths.ckpt_path, plan.saves);
    if plan.resume != Resume::Latest || plan.wipe || folder.steps.is_empty() {
        return Ok(report);
    }
    let mine = Folder::of(&plan.paths.ckpt_path);
    let mut saver: Option<(Flavour, String, String)> = None;
    // Each recorded folder resolved once: a ledger holds many jobs of few folders.
    let mut same = std::collections::BTreeMap::new();
    ledger.each_record(
        |_| true,
        |record| {
            let Some(flavour) = record.flavour else {
                return;
            };
            let ours = *(same.entry(record.checkpoint_dir.clone()))
                .or_insert_with(|| Folder::of(&record.ckpt_path()).is(&mine));
            if ours {
                saver = Some((flavour, record.run(), record.job_id));
            }
        },
    )?;
    if let Some((theirs, run, job)) = saver.filter(|(f, ..)| *f != plan.flavour) {
        report.problems.push(Finding {
            check: Check::ResumeFlavour,
            message: flavour_message(plan, theirs, &run, &job),
        });
    }
    Ok(report)
}

fn flavour_message(plan: &Plan, theirs: Flavour, run: &str, job: &str) -> String {
    format!(
        "`{}` was saved by {} (run {run}, job {job}), but this plan runs {}: a checkpoint is resumed \
         only by the SkyRL that saved it; resume on a cluster profile whose checkout is {}, or start \
         in a fresh checkpoint folder (another --job-name, or --wipe this one)",
        plan.paths.ckpt_path,
        theirs.as_str(),
        plan.flavour.as_str(),
        theirs.as_str(),
    )
}
