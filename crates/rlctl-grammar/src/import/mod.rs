//! SkyRL's config read into a key list (one `key=default` line per leaf, the format rlctl's
//! `Schema::parse` reads), from either flavour's own files, without running Python:
//! MarinSkyRL's hydra YAML (this file and `defaults.rs`) and upstream SkyRL's dataclasses
//! (`dataclass.rs`, over a Python reader: `pysrc.rs`, `pyclass.rs`, `pymodules.rs`).
//!
//! The YAML is composed as hydra's `compose(config_name="ppo_base_config")` composes it, with no
//! overrides: read as OmegaConf reads it (PyYAML's YAML 1.1 rules plus OmegaConf's floats:
//! `1e-2` is a float, `yes` a boolean, `010` the octal 8), the `defaults:` list followed
//! (`group: option`, `group@package: option`, `_self_` and its place, `# @package` headers,
//! `optional`, nested defaults inside group files), and each config merged where its package
//! puts it. The result is flattened as tests/schema_oracle.py flattens hydra's own
//! `OmegaConf.to_container(cfg, resolve=False)`: one `key=default` line per leaf, an empty dict
//! being a leaf, values as Python's `json.dumps` prints them, interpolations bare.
//!
//! Not followed, and refused with a message: `override` entries (except of hydra's own
//! `hydra/...` groups, which only touch the `hydra` node hydra removes) and option names that
//! are interpolations. MarinSkyRL's YAML is untyped, so no structured config is read for it.

use crate::yaml::{Map, Y, find, json, load_yaml};
use camino::{Utf8Path, Utf8PathBuf};
use std::fmt::Write as _;

mod dataclass;
mod defaults;

pub use defaults::Choice;
mod pyclass;
mod pymodules;
mod pysrc;

/// The file that makes a checkout upstream SkyRL's (typed dataclasses, no YAML).
pub const UPSTREAM_MARKER: &str = "skyrl/train/config/config.py";
/// The file that makes a checkout MarinSkyRL's (hydra YAML).
pub const MARIN_MARKER: &str = "skyrl-train/skyrl_train/config/ppo_base_config.yaml";

/// Why a hydra config folder gives no key list; each message names the file and the fix.
#[derive(Debug)]
pub enum Error {
    /// The folder, or a file a defaults list names, is not there: what to give instead.
    Missing(String),
    /// A file hydra cannot read either (its YAML, its `# @package` header).
    Syntax { file: Utf8PathBuf, message: String },
    /// A file that reads but is no config hydra composes (not a mapping, a defaults loop).
    Invalid { file: Utf8PathBuf, message: String },
    /// A file that is there and cannot be read.
    Io {
        path: Utf8PathBuf,
        source: std::io::Error,
    },
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Missing(message) => f.write_str(message),
            Error::Syntax { file, message } | Error::Invalid { file, message } => {
                write!(f, "{file}: {message}")
            }
            Error::Io { path, source } => write!(f, "cannot read `{path}`: {source}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The key list of an upstream SkyRL checkout (or an installed `skyrl`'s site-packages), read
/// from its dataclasses, with the entry module's additions when one is given; and every
/// source file it was read from.
pub fn import_upstream(
    checkout: &Utf8Path,
    entry: Option<&str>,
) -> Result<(String, Vec<Utf8PathBuf>), String> {
    dataclass::read(checkout, entry)
}

const PRIMARY: &str = "ppo_base_config";

/// The key list of `config_dir`'s `ppo_base_config.yaml`, following its `defaults:` list, in
/// the format `Schema::parse` reads.
pub fn import(config_dir: &Utf8Path) -> Result<String> {
    import_with(config_dir, &[])
}

/// [`import`] with config group choices of the command line (`algorithm_recipe=opd`,
/// `+algorithm_recipe=opd`) composed in, as hydra's `compose(overrides=[...])` composes them;
/// a group or option that has no file is refused with the ones that have.
pub fn import_with(config_dir: &Utf8Path, choices: &[Choice]) -> Result<String> {
    let meta = std::fs::metadata(config_dir).map_err(|e| {
        Error::Missing(format!(
            "cannot read the SkyRL config folder `{config_dir}`: {e}; give the folder that holds ppo_base_config.yaml (`skyrl_train/config` in a SkyRL checkout or an installed skyrl-train)"
        ))
    })?;
    if !meta.is_dir() {
        return Err(Error::Missing(format!(
            "`{config_dir}` is not a folder; give the folder that holds ppo_base_config.yaml (`skyrl_train/config` in a SkyRL checkout or an installed skyrl-train)"
        )));
    }
    let primary = config_dir.join(format!("{PRIMARY}.yaml"));
    if !primary.is_file() {
        let found = [
            "skyrl_train/config",
            "skyrl-train/skyrl_train/config",
            "config",
        ]
        .iter()
        .map(|sub| config_dir.join(sub))
        .find(|dir| dir.join(format!("{PRIMARY}.yaml")).is_file());
        let hint = match found {
            Some(dir) => format!("it is in `{dir}`: run `rlctl schema import {dir}`"),
            None => "give the folder that holds it (`skyrl_train/config` in a SkyRL checkout or an installed skyrl-train)".to_owned(),
        };
        return Err(Error::Missing(format!(
            "`{primary}` does not exist: `rlctl schema import` reads SkyRL's ppo_base_config.yaml; {hint}"
        )));
    }
    let groups = groups(config_dir)?;
    for c in choices {
        check_choice(&groups, c)?;
    }
    let config = defaults::compose(config_dir, choices)?;
    let mut out = String::new();
    flatten(&config, "", &mut out);
    Ok(out)
}

/// The config groups of a config folder: each folder below it that holds `.yaml` files (nested
/// ones as `a/b`), with its options (the files' names without `.yaml`), sorted; hydra's own
/// `hydra/` groups left out.
pub fn groups(config_dir: &Utf8Path) -> Result<Vec<(String, Vec<String>)>> {
    let mut out = Vec::new();
    let mut folders = vec![String::new()];
    while let Some(rel) = folders.pop() {
        let dir = config_dir.join(&rel);
        let entries = std::fs::read_dir(&dir).map_err(|source| Error::Io {
            path: dir.clone(),
            source,
        })?;
        let mut options = Vec::new();
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            match entry.file_type() {
                Ok(t) if t.is_dir() && path != "hydra" => folders.push(path),
                Ok(t) if t.is_file() => {
                    if let Some(option) = name.strip_suffix(".yaml") {
                        options.push(option.to_owned());
                    }
                }
                _ => {}
            }
        }
        if !rel.is_empty() && !options.is_empty() {
            options.sort();
            out.push((rel, options));
        }
    }
    out.sort();
    Ok(out)
}

/// A choice names a group of the folder and one of its options, or is refused with the list.
fn check_choice(groups: &[(String, Vec<String>)], c: &Choice) -> Result<()> {
    let plus = if c.append { "+" } else { "" };
    let Some((_, options)) = groups.iter().find(|(g, _)| *g == c.group) else {
        let names: Vec<&str> = groups.iter().map(|(g, _)| g.as_str()).collect();
        return Err(Error::Missing(format!(
            "`{plus}{}={}`: the config has no group `{}` (no folder of that name next to {PRIMARY}.yaml); its groups: {}",
            c.group,
            c.option,
            c.group,
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            }
        )));
    };
    if !options.contains(&c.option) {
        return Err(Error::Missing(format!(
            "`{plus}{}={}`: group `{}` has no option `{}`; its options: {}",
            c.group,
            c.option,
            c.group,
            c.option,
            options.join(", ")
        )));
    }
    Ok(())
}

/// OmegaConf's merge of `src` into `dest`: sections merge key by key, anything else replaces
/// the value in place, new keys go last, and `???` never replaces a value.
fn merge_into(dest: &mut Map, src: Map) {
    for (key, value) in src {
        match find(dest, &key) {
            Some((_, Y::Map(d))) if matches!(value, Y::Map(_)) => {
                let Y::Map(s) = value else { unreachable!() };
                merge_into(d, s);
            }
            Some(_) if value.is_missing() => {}
            Some((_, d)) => *d = value,
            None => dest.push((key, value)),
        }
    }
}

/// One `key=default` line per leaf, an empty dict being a leaf: the key list.
fn flatten(map: &Map, prefix: &str, out: &mut String) {
    for (key, value) in map {
        let key = format!("{prefix}{}", key.key_text());
        match value {
            Y::Map(inner) if !inner.is_empty() => flatten(inner, &format!("{key}."), out),
            Y::Str(s) if s.contains("${") => {
                let _ = writeln!(out, "{key}={s}");
            }
            other => {
                let _ = writeln!(out, "{key}={}", json(other));
            }
        }
    }
}
