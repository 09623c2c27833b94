//! Folders a plan must not borrow from a recorded run: a `--wipe` whose checkpoint folder
//! resolves into another run's folder would delete that run's checkpoints; a `--resume latest`
//! onto checkpoints the other SkyRL flavour saved.

use crate::check::{Check, Finding, Report};
use crate::error::Result;
use crate::plan::{Plan, Resume};
use crate::schema::flavour::Flavour;
use crate::store::ledger::{Ledger, run_of};
use crate::util::fs::{Folder, resolve};
use camino::{Utf8Path, Utf8PathBuf};

/// The `resume` problems of wiping `plan`'s checkpoints, judged on the folder they resolve to
/// (links followed) against every recorded run of `ledger`: none unless the plan wipes. A folder
/// another recorded run wrote is refused; so is one a link below the checkpoint root leads to
/// that no record of this run names (another preset's folder no ledger knows, a folder outside
/// the root), since the job would delete whatever is there.
pub fn wipe_problems(plan: &Plan, ledger: &Ledger) -> Result<Report> {
    let mut report = Report::default();
    if !plan.wipe {
        return Ok(report);
    }
    let mine = &plan.paths.checkpoint_dir;
    let wiped = Folder::of(&plan.paths.ckpt_path);
    let mut said = std::collections::BTreeSet::new();
    // Whether a job of this run wrote the very folder the wipe resolves to.
    let mut named = false;
    // Streamed: only the runs already judged are kept.
    ledger.each_record(|_| true, |record| {
        // The run's own earlier jobs wrote this folder, as written.
        if record.checkpoint_dir == *mine {
            named |= (record.ckpt_resolved.as_deref()).is_some_and(|r| Folder::of(r).is(&wiped));
            return;
        }
        if !said.insert(record.run()) {
            return;
        }
        let theirs = Folder::of(&record.checkpoint_dir);
        if wiped.is_within(&theirs) || theirs.is_within(&wiped) {
            report.problems.push(Finding::new(
                Check::Resume,
                format!(
                    "--wipe would delete the checkpoints of {} (job {}): `{}` resolves to `{}`, which is \
                     that run's folder `{}`; remove the link, or launch without --wipe",
                    record.run(),
                    record.job_id,
                    plan.paths.ckpt_path,
                    wiped.path,
                    theirs.path
                ),
            ));
        }
    })?;
    if report.problems.is_empty()
        && !named
        && let Some(message) = redirected(plan, &wiped.path)
    {
        report.problems.push(Finding::new(Check::Resume, message));
    }
    Ok(report)
}

/// What is wrong with wiping `wiped`, where the plan's checkpoint path resolves, when a link
/// below the checkpoint root leads it away from the run's own place (`<root>/<group>/<member>`,
/// the root itself resolved: a site whose `$WORK` is a link is no redirection); `None` when it
/// does not.
fn redirected(plan: &Plan, wiped: &Utf8Path) -> Option<String> {
    let (written, root) = (&plan.paths.ckpt_path, &plan.paths.checkpoint_root);
    let below = written.strip_prefix(root).ok()?;
    let real_root = resolve(root);
    if real_root.join(below) == wiped {
        return None;
    }
    let link = first_link(root, below).unwrap_or_else(|| written.clone());
    let whose = match wiped.strip_prefix(&real_root) {
        Ok(place) => format!(
            "it is `{place}` under the checkpoint root, the folder of another preset, grid or run"
        ),
        Err(_) => format!("it is outside the checkpoint root `{real_root}`"),
    };
    Some(format!(
        "--wipe would delete the checkpoints in `{wiped}`, which `{written}` reaches through the \
         link `{link}`: no job of {} wrote there ({whose}); point the link at this run's own \
         folder or remove it (`rm {link}`), or launch without --wipe",
        run_of(plan)
    ))
}

/// The first part of `below` under `root` that is a symbolic link, if one is.
fn first_link(root: &Utf8Path, below: &Utf8Path) -> Option<Utf8PathBuf> {
    let mut path = root.to_path_buf();
    for part in below.components() {
        path.push(part);
        if path.symlink_metadata().ok()?.file_type().is_symlink() {
            return Some(path);
        }
    }
    None
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
        report.problems.push(Finding::new(
            Check::ResumeFlavour,
            flavour_message(plan, theirs, &run, &job),
        ));
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
