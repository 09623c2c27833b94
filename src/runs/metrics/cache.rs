//! The parsed steps of a log, kept next to it (`.<log name>.steps.json`) with the byte offset
//! they were read to, so that `status`, `report`, `metrics` and `tend` read only what a log
//! gained since the last reader, not gigabytes every time.
//!
//! The cache belongs to one file: its device and inode, and the bytes just before the offset
//! (a replaced or rewritten log no longer has them). A log that is the same file with the same
//! size and modification time is not opened for reading at all; one shorter than the offset was
//! truncated and is read again from its start. Readers may run at once (cron and a person): the
//! cache is replaced atomically, and a cache that cannot be read or written is only a slower
//! read, never an error.

use super::{Kind, Series, Step, scan_reader_from};
use crate::util::fs::write_atomic;
use camino::{Utf8Path, Utf8PathBuf};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;

/// Bytes before the offset that must be unchanged for the cache to count.
const CHECK: u64 = 64;

#[derive(Serialize, Deserialize)]
struct Cached {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_s: i64,
    mtime_ns: i64,
    offset: u64,
    /// Hex of the `CHECK` bytes before `offset`.
    check: String,
    steps: Vec<CachedStep>,
}

/// A step as JSON can hold it: JSON has no NaN or infinities, which metrics may be.
#[derive(Serialize, Deserialize)]
struct CachedStep(Kind, u64, Vec<(String, Value)>);

#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Value {
    Finite(f64),
    /// `NaN`, `inf` or `-inf`.
    Other(String),
}

fn to_cached(series: &Series) -> Vec<CachedStep> {
    let value = |v: f64| match v.is_finite() {
        true => Value::Finite(v),
        false => Value::Other(v.to_string()),
    };
    (series.train.iter().chain(&series.eval))
        .map(|s| {
            let metrics = s.metrics.iter().map(|(k, v)| (k.clone(), value(*v)));
            CachedStep(s.kind, s.step, metrics.collect())
        })
        .collect()
}

fn from_cached(steps: Vec<CachedStep>) -> Series {
    let mut series = Series::default();
    for CachedStep(kind, step, metrics) in steps {
        let metrics = metrics.into_iter().map(|(k, v)| match v {
            Value::Finite(x) => (k, x),
            Value::Other(text) => (k, text.parse().unwrap_or(f64::NAN)),
        });
        let step = Step {
            kind,
            step,
            metrics: metrics.collect(),
        };
        match kind {
            Kind::Train => series.train.push(step),
            Kind::Eval => series.eval.push(step),
        }
    }
    series
}

/// Where the cache of `log` lives.
pub fn path_for(log: &Utf8Path) -> Utf8PathBuf {
    let name = log.file_name().unwrap_or("log");
    log.with_file_name(format!(".{name}.steps.json"))
}

/// The log's steps (`file` is `log`, opened), from the cache plus what was appended since.
pub fn read(log: &Utf8Path, mut file: File) -> io::Result<Series> {
    let meta = file.metadata()?;
    let cache = path_for(log);
    let cached = std::fs::read_to_string(&cache)
        .ok()
        .and_then(|text| serde_json::from_str::<Cached>(&text).ok())
        .filter(|c| c.dev == meta.dev() && c.ino == meta.ino() && c.offset <= meta.len());
    let hit = cached.as_ref().is_some_and(|c| {
        c.size == meta.len() && (c.mtime_s, c.mtime_ns) == (meta.mtime(), meta.mtime_nsec())
    });
    let (mut series, start) = match cached {
        Some(c) if hit => return Ok(from_cached(c.steps)),
        Some(c) if check_bytes(&mut file, c.offset)? == c.check => (from_cached(c.steps), c.offset),
        _ => (Series::default(), 0),
    };
    file.seek(SeekFrom::Start(start))?;
    let (newer, offset) = scan_reader_from(&mut file, start)?;
    series.merge(newer);
    let fresh = Cached {
        dev: meta.dev(),
        ino: meta.ino(),
        size: meta.len(),
        mtime_s: meta.mtime(),
        mtime_ns: meta.mtime_nsec(),
        offset,
        check: check_bytes(&mut file, offset)?,
        steps: to_cached(&series),
    };
    // The size and time were read before the bytes: a log that grew meanwhile does not match
    // them next time and is read on from `offset`, which is all that counts.
    if let Ok(text) = serde_json::to_string(&fresh) {
        let _ = write_atomic(&cache, &text, 0o644);
    }
    Ok(series)
}

/// Hex of the bytes just before `offset` (fewer at the start of the file).
fn check_bytes(file: &mut File, offset: u64) -> io::Result<String> {
    let from = offset.saturating_sub(CHECK);
    file.seek(SeekFrom::Start(from))?;
    let mut buf = Vec::with_capacity(CHECK as usize);
    file.take(offset - from).read_to_end(&mut buf)?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}
