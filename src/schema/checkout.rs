//! The schema of a SkyRL checkout, read from its source and cached.
//!
//! A checkout is upstream SkyRL's when it has `skyrl/train/config/config.py` (read by the
//! dataclass reader, with an entry module's additions), MarinSkyRL's when it has
//! `skyrl-train/skyrl_train/config/ppo_base_config.yaml` (composed as `rlctl schema import`
//! composes it). The key list is kept in `cache_dir` with the (path, size, mtime, content hash)
//! of every file it was read from: a warm call costs one stat per file; a file whose stats
//! changed is hashed, and only a changed hash reads the source again. A cache file that is
//! unreadable, truncated or from another format is rebuilt.
//!
//! Not noticed: a module that did not exist when the list was read and now does (an import
//! that pointed outside the checkout and now resolves inside it).

use super::Schema;
use crate::util::fs::write_atomic;
use camino::{Utf8Path, Utf8PathBuf};
use rlctl_grammar::import::{
    Choice, MARIN_MARKER, UPSTREAM_MARKER, groups, import_upstream, import_with,
};
use std::fmt::Write as _;
use std::time::UNIX_EPOCH;

// 2: a MarinSkyRL list carries its config groups (`# group NAME: OPTIONS`).
const FORMAT: &str = "rlctl-schema-cache 2";

/// What a cached key list was read from: one source file's identity.
#[derive(Debug, Clone, PartialEq)]
struct Stamp {
    path: Utf8PathBuf,
    size: u64,
    mtime_ns: u128,
    hash: u64,
}

impl Schema {
    /// The schema of `checkout` (either flavour), with `entry`'s additions for an upstream
    /// checkout, through the cache in `cache_dir`.
    pub fn from_checkout(
        checkout: &Utf8Path,
        entry: Option<&str>,
        cache_dir: &Utf8Path,
    ) -> Result<Schema, String> {
        let name = format!("checkout:{checkout}");
        let cache = cache_dir.join(format!(
            "schema-{:016x}.keys-cache",
            fnv1a(format!("{checkout}\0{}", entry.unwrap_or("")).as_bytes())
        ));
        if let Some((text, restamp)) = read_cache(&cache, checkout, entry)
            && let Ok(schema) = Schema::parse(&name, &text)
        {
            if let Some(stamps) = restamp {
                // Same content under new stats (a touch, a fresh clone): keep it cheap.
                let _ = write_cache(&cache, checkout, entry, &stamps, &text);
            }
            return Ok(schema);
        }
        let (text, files) = read_source(checkout, entry)?;
        let schema = Schema::parse(&name, &text)
            .map_err(|e| format!("the key list read from `{checkout}` does not parse: {e}"))?;
        let stamps: Vec<Stamp> = files.iter().filter_map(|f| stamp(f)).collect();
        if let Err(e) = std::fs::create_dir_all(cache_dir)
            .map_err(|e| e.to_string())
            .and_then(|()| {
                write_cache(&cache, checkout, entry, &stamps, &text).map_err(|e| e.to_string())
            })
        {
            // The schema is right without its cache; the next call reads the source again.
            eprintln!("warning: cannot write the schema cache `{cache}`: {e}");
        }
        Ok(schema)
    }
}

/// The key list of a checkout and the files it came from.
fn read_source(
    checkout: &Utf8Path,
    entry: Option<&str>,
) -> Result<(String, Vec<Utf8PathBuf>), String> {
    if checkout.join(UPSTREAM_MARKER).is_file() {
        return import_upstream(checkout, entry);
    }
    if checkout.join(MARIN_MARKER).is_file() {
        let config = checkout.join(MARIN_MARKER);
        let dir = config.parent().expect("the marker is in a folder");
        let text = marin_list(dir, &[])?;
        let mut files = Vec::new();
        yaml_files(dir, &mut files);
        files.sort();
        return Ok((text, files));
    }
    Err(format!(
        "`{checkout}` is no SkyRL checkout: it has neither `{UPSTREAM_MARKER}` (upstream SkyRL) nor `{MARIN_MARKER}` (MarinSkyRL); give the repository's top folder"
    ))
}

/// A MarinSkyRL config folder's key list, composed with the group `choices`, headed by its
/// config groups (`# group NAME: OPTION...`), which `Schema::check` judges a choice by.
fn marin_list(dir: &Utf8Path, choices: &[Choice]) -> Result<String, String> {
    let text = import_with(dir, choices).map_err(|e| e.to_string())?;
    let mut out = String::from("# flavour: marin\n");
    for (group, options) in groups(dir).map_err(|e| e.to_string())? {
        let _ = writeln!(out, "# group {group}: {}", options.join(" "));
    }
    out.push_str(&text);
    Ok(out)
}

impl Schema {
    /// The schema of a MarinSkyRL `checkout` with config group choices of the command line
    /// composed in (`algorithm_recipe=opd`): what those choices change is what the plan's
    /// other knobs are checked against. Not cached: composing takes milliseconds.
    pub fn with_choices(checkout: &Utf8Path, choices: &[Choice]) -> Result<Schema, String> {
        let config = checkout.join(MARIN_MARKER);
        let dir = config.parent().expect("the marker is in a folder");
        let text = marin_list(dir, choices)?;
        Schema::parse(&format!("checkout:{checkout}"), &text)
    }
}

fn yaml_files(dir: &Utf8Path, out: &mut Vec<Utf8PathBuf>) {
    let Ok(entries) = dir.read_dir_utf8() else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            yaml_files(path, out);
        } else if path.extension() == Some("yaml") {
            out.push(path.to_owned());
        }
    }
}

fn stamp(path: &Utf8Path) -> Option<Stamp> {
    let meta = std::fs::metadata(path).ok()?;
    let bytes = std::fs::read(path).ok()?;
    Some(Stamp {
        path: path.to_owned(),
        size: meta.len(),
        mtime_ns: mtime_ns(&meta),
        hash: fnv1a(&bytes),
    })
}

fn mtime_ns(meta: &std::fs::Metadata) -> u128 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos())
}

/// FNV-1a, 64 bits: enough to tell a changed source file from a touched one.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn write_cache(
    cache: &Utf8Path,
    checkout: &Utf8Path,
    entry: Option<&str>,
    stamps: &[Stamp],
    text: &str,
) -> crate::error::Result<()> {
    let mut out = format!(
        "{FORMAT}\ncheckout {checkout}\nentry {}\n",
        entry.unwrap_or("-")
    );
    for s in stamps {
        let _ = writeln!(
            out,
            "file {} {} {:016x} {}",
            s.size, s.mtime_ns, s.hash, s.path
        );
    }
    let _ = writeln!(out, "keys {}", text.len());
    out.push_str(text);
    write_atomic(cache, &out, 0o644)
}

/// The cached key list if every file it was read from is unchanged; with new stamps when
/// some file's stats changed but not its content.
fn read_cache(
    cache: &Utf8Path,
    checkout: &Utf8Path,
    entry: Option<&str>,
) -> Option<(String, Option<Vec<Stamp>>)> {
    let raw = std::fs::read_to_string(cache).ok()?;
    let mut rest = raw.as_str();
    let mut line = || -> Option<&str> {
        let (l, r) = rest.split_once('\n')?;
        rest = r;
        Some(l)
    };
    if line()? != FORMAT
        || line()?.strip_prefix("checkout ")? != checkout.as_str()
        || line()?.strip_prefix("entry ")? != entry.unwrap_or("-")
    {
        return None;
    }
    let mut stamps = Vec::new();
    let mut changed = false;
    let keys_len = loop {
        let l = line()?;
        if let Some(n) = l.strip_prefix("keys ") {
            break n.parse::<usize>().ok()?;
        }
        let mut parts = l.strip_prefix("file ")?.splitn(4, ' ');
        let size: u64 = parts.next()?.parse().ok()?;
        let mtime: u128 = parts.next()?.parse().ok()?;
        let hash = u64::from_str_radix(parts.next()?, 16).ok()?;
        let path = Utf8PathBuf::from(parts.next()?);
        let meta = std::fs::metadata(&path).ok()?;
        let now = mtime_ns(&meta);
        if meta.len() != size || now != mtime {
            let fresh = stamp(&path)?;
            if fresh.hash != hash || fresh.size != size {
                return None;
            }
            changed = true;
            stamps.push(fresh);
        } else {
            stamps.push(Stamp {
                path,
                size,
                mtime_ns: mtime,
                hash,
            });
        }
    };
    let text = rest.get(..keys_len)?;
    if text.len() != rest.len() {
        return None;
    }
    Some((text.to_owned(), changed.then_some(stamps)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn upstream(dir: &Utf8Path, default: &str) {
        let file = dir.join(UPSTREAM_MARKER);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(
            file,
            format!(
                "@dataclass\nclass T:\n    epochs: int = {default}\n\n@dataclass\nclass SkyRLTrainConfig:\n    trainer: T = field(default_factory=T)\n"
            ),
        )
        .unwrap();
    }

    #[test]
    fn warm_calls_use_the_cache_and_changes_rebuild_it() {
        let tmp = tempfile::tempdir().unwrap();
        let root = Utf8Path::from_path(tmp.path()).unwrap();
        let (checkout, cache) = (root.join("repo"), root.join("cache"));
        upstream(&checkout, "1");
        let s = Schema::from_checkout(&checkout, None, &cache).unwrap();
        assert_eq!(s.default_text("trainer.epochs"), Some("1"));
        assert_eq!(s.flavour_header(), Some(crate::schema::Flavour::Upstream));
        let cached = std::fs::read_dir(&cache)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let written = std::fs::read_to_string(&cached).unwrap();
        // A poisoned cached list with the same stamps is what a warm call reads.
        std::fs::write(&cached, written.replace("epochs=1", "epochs=7")).unwrap();
        let s = Schema::from_checkout(&checkout, None, &cache).unwrap();
        assert_eq!(s.default_text("trainer.epochs"), Some("7"));
        // The source changes (same size): the list is read again.
        upstream(&checkout, "2");
        let s = Schema::from_checkout(&checkout, None, &cache).unwrap();
        assert_eq!(s.default_text("trainer.epochs"), Some("2"));
        // A truncated or garbage cache is rebuilt, never trusted.
        for bad in [&written[..written.len() - 3], "garbage", ""] {
            std::fs::write(&cached, bad).unwrap();
            let s = Schema::from_checkout(&checkout, None, &cache).unwrap();
            assert_eq!(s.default_text("trainer.epochs"), Some("2"));
        }
    }

    #[test]
    fn a_folder_of_neither_flavour_is_named() {
        let tmp = tempfile::tempdir().unwrap();
        let root = Utf8Path::from_path(tmp.path()).unwrap();
        let err = Schema::from_checkout(root, None, &root.join("c"))
            .err()
            .unwrap();
        assert!(err.contains("is no SkyRL checkout"), "{err}");
    }
}
