//! The `resume-pointer` check of `--resume latest`: SkyRL resumes from the step
//! `latest_ckpt_global_step.txt` names, and refuses a folder whose newest `global_step_*` is more
//! than `trainer.ckpt_interval` steps past it ("Inconsistent checkpoint folder",
//! `validate_consistency_for_latest_checkpoint`), both flavours alike, after the queue wait.

use crate::check::resume::numbered_steps;
use crate::check::{Check, Raw};
use crate::plan::{Plan, Resume};
use camino::Utf8Path;

/// The file SkyRL writes last when it saves a step, and reads first when it resumes.
pub const POINTER_FILE: &str = "latest_ckpt_global_step.txt";

/// What the pointer file says.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Pointer {
    /// No file: SkyRL starts from step 0 and loads nothing.
    Absent,
    Step(i64),
    /// Text Python's `int()` would not read, as found (trimmed, cut short).
    Unreadable(String),
}

/// The pointer file of a checkpoint folder, read as SkyRL reads it: `int(f.read().strip())`.
pub(super) fn pointer(ckpt_path: &Utf8Path) -> Pointer {
    let path = ckpt_path.join(POINTER_FILE);
    if !path.exists() {
        return Pointer::Absent;
    }
    let Ok(bytes) = std::fs::read(&path) else {
        return Pointer::Unreadable("an unreadable file".to_owned());
    };
    let text = String::from_utf8_lossy(&bytes);
    let text = text.trim();
    match text.parse::<i64>() {
        Ok(step) => Pointer::Step(step),
        Err(_) => Pointer::Unreadable(text.chars().take(40).collect()),
    }
}

/// A pointer that does not read, names no folder of the checkpoint folder, or lags its newest
/// step by more than `trainer.ckpt_interval`: each fails after the queue wait.
pub(super) fn check(plan: &Plan, found: &mut Vec<Raw>) {
    if plan.resume != Resume::Latest {
        return;
    }
    let ckpt = &plan.paths.ckpt_path;
    let mut problem = |message: String| found.push((Check::ResumePointer, None, message));
    let step = match pointer(ckpt) {
        Pointer::Absent => return,
        Pointer::Step(step) => step,
        Pointer::Unreadable(text) => {
            problem(format!(
                "`{ckpt}/{POINTER_FILE}` holds `{text}`, not a step number: SkyRL fails reading it \
                 after the queue wait; write the number of the newest complete `global_step_N` into it, \
                 or pass --wipe to start over"
            ));
            return;
        }
    };
    // SkyRL counts folders only.
    let steps: Vec<(u64, String)> = numbered_steps(ckpt)
        .into_iter()
        .filter(|(_, name)| ckpt.join(name).is_dir())
        .collect();
    let listing = |steps: &[(u64, String)]| {
        steps
            .iter()
            .map(|(_, name)| name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if let Some((newest, newest_name)) = steps.last()
        && let Some(interval) = plan.schedule.ckpt_interval
        && *newest as i128 - step as i128 > interval as i128
    {
        let ahead: Vec<(u64, String)> = (steps.iter())
            .filter(|(n, _)| *n as i128 > step as i128)
            .cloned()
            .collect();
        problem(format!(
            "`{ckpt}` holds {newest_name}, {} steps past step {step} that {POINTER_FILE} names, more than \
             trainer.ckpt_interval={interval} allows: SkyRL refuses the folder (\"Inconsistent checkpoint \
             folder\") after the queue wait; move {} out of it (another run or an unfinished save wrote \
             them), or pass --wipe to start over",
            *newest as i128 - step as i128,
            listing(&ahead)
        ));
    }
    // SkyRL asks only that the path exist.
    if !ckpt.join(format!("global_step_{step}")).exists() {
        let there = match steps.is_empty() {
            true => "it holds no step".to_owned(),
            false => format!("it holds {}", listing(&steps)),
        };
        problem(format!(
            "`{ckpt}/{POINTER_FILE}` names step {step}, but there is no `global_step_{step}` ({there}): \
             SkyRL fails (\"Checkpoint path not found\") after the queue wait; write the number of a \
             complete step there into it, or pass --wipe to start over"
        ));
    }
}
