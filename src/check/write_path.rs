//! The `write-path` check: checkpoints, exports and the run folder on the volume the profile
//! names for checkpoints, symlinks followed.

use crate::plan::Plan;
use crate::preset::cluster::Storage;
use crate::util::fs::resolve;

/// Checkpoints, exports and the run folder must resolve, symlinks followed, onto the root
/// the profile names, never onto scratch: a quota-full scratch kills runs mid-write.
pub fn check(storage: &Storage, plan: &Plan) -> Vec<String> {
    let (root, forbidden) = storage.checkpoint_volume();
    let root = resolve(root);
    let forbidden = forbidden.map(resolve);
    let mut problems = Vec::new();
    for (what, path) in [
        ("trainer.ckpt_path", &plan.paths.ckpt_path),
        ("trainer.export_path", &plan.paths.export_path),
        ("the run folder", &plan.paths.run_dir),
    ] {
        let real = resolve(path);
        let on_forbidden = forbidden.as_ref().is_some_and(|f| real.starts_with(f));
        if on_forbidden || !real.starts_with(&root) {
            let via = if real == *path {
                String::new()
            } else {
                format!(" resolves to `{real}`, which")
            };
            problems.push(format!(
                "{what} `{path}`{via} is {} `{root}`: checkpoints written there fail mid-run when the quota fills; \
                 make the folder (or the symlink on its way) point under `{root}`",
                if on_forbidden { "on scratch, not under" } else { "not under" }
            ));
        }
    }
    problems
}
