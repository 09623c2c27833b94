//! Shell completion candidates, computed when the shell calls rlctl back (clap_complete's dynamic
//! mode): presets, cells, grids, clusters and QOS from the presets in use, run names from its
//! ledger. A failure completes nothing rather than printing into the user's prompt.

use super::DEFAULT_CLUSTER;
use crate::preset::Library;
use crate::preset::user_dir::PresetsDir;
use crate::store::ledger::Ledger;
use camino::Utf8PathBuf;
use clap_complete::engine::CompletionCandidate;
use std::collections::BTreeMap;
use std::ffi::OsStr;

/// The presets and cluster of the command line being completed.
struct Context {
    library: Library,
    cluster: String,
}

/// The words being completed: the shell runs `rlctl -- rlctl grid tb`, so `--presets` and
/// `--cluster` already typed on that line count, as they would when the command runs.
fn context() -> Option<Context> {
    let args: Vec<String> = std::env::args().collect();
    let words = match args.iter().position(|a| a == "--") {
        Some(i) => &args[i + 1..],
        None => &args[..0],
    };
    let flag = |name: &str, variable: &str| {
        let long = format!("--{name}");
        let mut found = None;
        for (i, word) in words.iter().enumerate() {
            if let Some(value) = word.strip_prefix(&format!("{long}=")) {
                found = Some(value.to_owned());
            } else if *word == long {
                found = words.get(i + 1).cloned();
            }
        }
        found.or_else(|| std::env::var(variable).ok())
    };
    let presets = PresetsDir::choose(flag("presets", "RLCTL_PRESETS").map(Utf8PathBuf::from));
    Some(Context {
        library: Library::load(presets.in_use()).ok()?,
        cluster: flag("cluster", "RLCTL_CLUSTER").unwrap_or_else(|| DEFAULT_CLUSTER.to_owned()),
    })
}

fn candidate(name: &str, help: Option<&str>) -> CompletionCandidate {
    CompletionCandidate::new(name).help(help.map(|h| h.to_owned().into()))
}

/// Run presets, with their descriptions.
pub fn presets() -> Vec<CompletionCandidate> {
    let Some(cx) = context() else { return vec![] };
    preset_candidates(&cx.library)
}

fn preset_candidates(library: &Library) -> Vec<CompletionCandidate> {
    library
        .preset_names()
        .map(|name| {
            let description = library.run_preset(name).ok().map(|p| p.description);
            candidate(name, description.as_deref())
        })
        .collect()
}

/// Grid cells as `rlctl grid` takes them: bare when one grid has the name, `grid/cell` else;
/// `grid/cell` also for a word that starts the grid's name (`gsm8k-acc<TAB>`) or an ambiguous
/// cell's bare name (`n1<TAB>`).
pub fn cells(current: &OsStr) -> Vec<CompletionCandidate> {
    let Some(cx) = context() else { return vec![] };
    cell_candidates(&cx.library, &current.to_string_lossy())
}

fn cell_candidates(library: &Library, current: &str) -> Vec<CompletionCandidate> {
    let grids: Vec<(&str, _)> = library
        .grid_names()
        .filter_map(|g| Some((g, library.grid(g).ok()?)))
        .collect();
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, grid) in &grids {
        for cell in &grid.cells {
            *count.entry(cell.name.as_str()).or_default() += 1;
        }
    }
    let mut out = Vec::new();
    for (grid_name, grid) in &grids {
        for cell in &grid.cells {
            let qualified = format!("{grid_name}/{}", cell.name);
            let short = match count[cell.name.as_str()] {
                1 => cell.name.as_str(),
                _ => qualified.as_str(),
            };
            let value = if short.starts_with(current) {
                short
            } else if cell.name.starts_with(current) || qualified.starts_with(current) {
                qualified.as_str()
            } else {
                continue;
            };
            out.push(candidate(value, Some(&cell.description)));
        }
    }
    out
}

/// Run presets and grid cells: what `check`, `show`, `render` and `stage` take.
pub fn targets(current: &OsStr) -> Vec<CompletionCandidate> {
    let Some(cx) = context() else { return vec![] };
    let current = current.to_string_lossy();
    let mut out: Vec<CompletionCandidate> = preset_candidates(&cx.library)
        .into_iter()
        .filter(|c| {
            c.get_value()
                .to_string_lossy()
                .starts_with(current.as_ref())
        })
        .collect();
    out.extend(cell_candidates(&cx.library, &current));
    out
}

/// Grids, with their descriptions.
pub fn grids() -> Vec<CompletionCandidate> {
    let Some(cx) = context() else { return vec![] };
    let library = &cx.library;
    library
        .grid_names()
        .map(|name| {
            let description = library.grid(name).ok().map(|g| g.description.clone());
            candidate(name, description.as_deref())
        })
        .collect()
}

/// Cluster profiles.
pub fn clusters() -> Vec<CompletionCandidate> {
    let Some(cx) = context() else { return vec![] };
    cx.library
        .cluster_names()
        .map(|name| candidate(name, None))
        .collect()
}

/// The QOS of the cluster in use, with their limits.
pub fn qos() -> Vec<CompletionCandidate> {
    let Some(cx) = context() else { return vec![] };
    let Ok(cluster) = cx.library.cluster(&cx.cluster) else {
        return vec![];
    };
    cluster
        .qos
        .iter()
        .map(|q| {
            let help = format!("up to {}, {} nodes", q.max_wall, q.max_nodes);
            candidate(&q.name, Some(&help))
        })
        .collect()
}

/// Recorded runs and their presets or grids, from the ledger of the cluster in use.
pub fn runs() -> Vec<CompletionCandidate> {
    let Some(cx) = context() else { return vec![] };
    let Ok(cluster) = cx.library.cluster(&cx.cluster) else {
        return vec![];
    };
    let Ok(records) = Ledger::at(&cluster.storage.run_root).latest() else {
        return vec![];
    };
    let mut names: Vec<String> = Vec::new();
    for record in records {
        for name in [record.run(), record.group] {
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names.iter().map(|n| candidate(n, None)).collect()
}

/// Recorded runs, then presets and cells: what `diff` compares.
pub fn runs_and_targets(current: &OsStr) -> Vec<CompletionCandidate> {
    let prefix = current.to_string_lossy();
    let mut out: Vec<CompletionCandidate> = (runs().into_iter())
        .filter(|c| c.get_value().to_string_lossy().starts_with(prefix.as_ref()))
        .collect();
    for c in targets(current) {
        if !out.iter().any(|r| r.get_value() == c.get_value()) {
            out.push(c);
        }
    }
    out
}

/// SkyRL's config keys after `--`, from the key list of the cluster in use, a level at a time:
/// `trainer.` offers `trainer.policy.` and `trainer.epochs=`. A `+` or `~` before the key is
/// kept; a word with `=` already is a value, and completes nothing.
pub fn hydra_keys(current: &OsStr) -> Vec<CompletionCandidate> {
    let current = current.to_string_lossy();
    if current.contains('=') {
        return vec![];
    }
    let Some(cx) = context() else { return vec![] };
    let Ok(cluster) = cx.library.cluster(&cx.cluster) else {
        return vec![];
    };
    let Ok(schema) = cx.library.trainer_schema(&cluster) else {
        return vec![];
    };
    let (sign, typed) = match current.strip_prefix(['+', '~']) {
        Some(rest) => (&current[..1], rest),
        None => ("", current.as_ref()),
    };
    let mut out: Vec<String> = Vec::new();
    for (key, _) in schema.keys() {
        let Some(rest) = key.strip_prefix(typed) else {
            continue;
        };
        let word = match rest.find('.') {
            Some(dot) => format!("{sign}{typed}{}", &rest[..=dot]),
            None => format!("{sign}{key}="),
        };
        if !out.contains(&word) {
            out.push(word);
        }
    }
    out.iter().map(|w| candidate(w, None)).collect()
}
