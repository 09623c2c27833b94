//! The `resume-pointer` check of `--resume latest`: the job resumes from the newest whole
//! checkpoint, whatever `latest_ckpt_global_step.txt` says ([`crate::checkpoint::decide`], the
//! rule `tend` and the job's own wrapper apply at each start). A folder where no step is safe to
//! resume from is refused here, before the queue wait; a pointer the job will repair first
//! (empty, not a number, naming a missing or incomplete step, behind the newest whole one, or
//! absent over whole steps) is said, with the step the run resumes from.

use crate::check::{Check, Finding, Raw};
use crate::checkpoint::{Decision, Folder, POINTER_FILE, decide};
use crate::plan::{Plan, Resume};

/// The step `--resume latest` resumes from, or why none is safe.
pub(super) fn decision(plan: &Plan) -> Decision {
    let interval = (plan.schedule.ckpt_interval).and_then(|n| u64::try_from(n).ok());
    decide(&Folder::read(&plan.paths.ckpt_path, plan.saves), interval)
}

pub(super) fn check(plan: &Plan, found: &mut Vec<Raw>, notes: &mut Vec<Finding>) {
    if plan.resume != Resume::Latest {
        return;
    }
    let ckpt = &plan.paths.ckpt_path;
    match decision(plan) {
        Decision::Refuse(why) => found.push((
            Check::ResumePointer,
            None,
            format!("{why} (the job would stop at its start, after the queue wait)"),
        )),
        Decision::Resume {
            step,
            repair: Some(why),
        } => notes.push(Finding::new(
            Check::ResumePointer,
            format!(
                "resumes from step {step}, the newest whole checkpoint in `{ckpt}`: {why}; the job makes \
                 {POINTER_FILE} name step {step} before the trainer starts"
            ),
        )),
        Decision::Resume { repair: None, .. } | Decision::Fresh => {}
    }
}
