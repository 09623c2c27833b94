//! The `resume` check: a fresh start over existing checkpoints is refused, a `--wipe` over them
//! is said before it happens.

use crate::check::{Check, Finding, Raw};
use crate::plan::{Plan, Resume};
use crate::util::fs::resolve;
use camino::Utf8Path;

/// A fresh start over existing checkpoints mixes two runs; only --resume latest or --wipe
/// say what the user wants.
pub fn check(plan: &Plan, found: &mut Vec<Raw>, notes: &mut Vec<Finding>) {
    let steps = global_steps(&plan.paths.ckpt_path);
    if steps.is_empty() {
        return;
    }
    let listing = steps.join(", ");
    if plan.wipe {
        notes.push(Finding::new(
            Check::Resume,
            format!(
                "--wipe: the job will delete {listing} (and latest_ckpt_global_step.txt) in `{}`{} before it starts",
                resolve(&plan.paths.ckpt_path),
                via_link(&plan.paths.ckpt_path)
            ),
        ));
    } else if plan.resume == Resume::Fresh {
        found.push((
            Check::Resume,
            None,
            format!(
                "`{}` already holds {listing}: a fresh start would train from step 0 beside them; pass \
                 --resume latest to continue from {}, or --wipe to delete them first",
                plan.paths.ckpt_path,
                steps.last().unwrap()
            ),
        ));
    }
}

/// ` (reached through `PATH`)` when symlinks lead `path` elsewhere: what the user wrote is
/// named after where it really is, so a link into another run's folder cannot hide.
fn via_link(path: &Utf8Path) -> String {
    match resolve(path) {
        real if real == path => String::new(),
        _ => format!(" (reached through `{path}`)"),
    }
}

/// `global_step_N` folders, in step order.
pub fn global_steps(ckpt_path: &Utf8Path) -> Vec<String> {
    numbered_steps(ckpt_path)
        .into_iter()
        .map(|(_, name)| name)
        .collect()
}

/// `global_step_N` entries with their N, in step order: the one reading of the folder names
/// every checkpoint check shares.
pub(super) fn numbered_steps(ckpt_path: &Utf8Path) -> Vec<(u64, String)> {
    let Ok(entries) = ckpt_path.read_dir_utf8() else {
        return vec![];
    };
    let mut steps: Vec<(u64, String)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_owned();
            let n = name.strip_prefix("global_step_")?.parse().ok()?;
            Some((n, name))
        })
        .collect();
    steps.sort();
    steps
}
