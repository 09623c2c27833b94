//! The `visible` check: every folder and file a job touches must be on a file system the
//! compute nodes mount (`storage.compute_visible`). JUPITER's nodes do not mount `/p`: a job
//! whose working folder or log is there dies within seconds (ExitCode 0:53) and leaves no log.

use crate::check::skyrl_rules::Values;
use crate::check::{DATA_KEYS, MODEL_KEYS, list_items};
use crate::plan::Plan;
use crate::preset::cluster::Cluster;
use crate::schema::knob::Scalar;
use crate::util::fs::resolve;
use camino::{Utf8Path, Utf8PathBuf};

/// Each path the job touches that lies, links followed (dangling ones too), under none of the
/// profile's visible folders. Nothing when the profile lists none: its nodes see every folder.
pub fn check(cluster: &Cluster, plan: &Plan, values: &Values) -> Vec<String> {
    let visible = &cluster.storage.compute_visible;
    if visible.is_empty() {
        return Vec::new();
    }
    let roots: Vec<Utf8PathBuf> = visible.iter().map(|r| resolve(r)).collect();
    let listed = (visible.iter())
        .map(|r| format!("`{r}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let mut problems = Vec::new();
    for (what, path) in touched(cluster, plan, values) {
        let real = resolve(&path);
        if roots.iter().any(|root| real.starts_with(root)) {
            continue;
        }
        let via = match real == path {
            true => String::new(),
            false => format!(" (a link to `{real}`)"),
        };
        problems.push(format!(
            "{what} `{path}`{via} is on no file system the compute nodes mount (storage.compute_visible: {listed}): \
             the job would fail on the node before it writes a log; move it under one of those folders \
             (or make the link on its way point there)"
        ));
    }
    problems
}

/// What the job reads or writes on shared storage, each named as the user would fix it.
fn touched(cluster: &Cluster, plan: &Plan, values: &Values) -> Vec<(String, Utf8PathBuf)> {
    let named = |what: &str, path: &Utf8Path| (what.to_owned(), path.to_owned());
    let mut paths = vec![
        named(
            "the run folder (the job's working folder and its --output log)",
            &plan.paths.run_dir,
        ),
        named("the checkpoint folder", &plan.paths.checkpoint_dir),
        named("software.venv", &cluster.software.venv),
        named("software.skyrl", &cluster.software.skyrl),
        named("storage.hf_home", &cluster.storage.hf_home),
        named("storage.data_root", &cluster.storage.data_root),
        named("storage.home", &cluster.storage.home),
        named("storage.cache_root", &cluster.storage.cache_root),
    ];
    if plan.container.runtime.in_container() {
        paths.push(named("container.image", &plan.container.image));
        for overlay in &plan.container.overlays {
            paths.push(named("container.overlays", overlay));
        }
    }
    for key in MODEL_KEYS {
        if let Some(Scalar::Str(model)) = values.get(key)
            && model.starts_with('/')
        {
            paths.push((format!("`{key}`"), Utf8PathBuf::from(model)));
        }
    }
    for key in DATA_KEYS {
        for file in values.text(key).map(|t| list_items(&t)).unwrap_or_default() {
            if file.starts_with('/') {
                paths.push((format!("`{key}`"), Utf8PathBuf::from(file)));
            }
        }
    }
    paths
}
