//! The parsed steps of a log, kept next to it (`.<log name>.steps`) with the byte offset
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
use camino::{Utf8Path, Utf8PathBuf};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::MetadataExt;

/// Bytes before the offset that must be unchanged for the cache to count.
const CHECK: u64 = 64;

/// The cache's first line (JSON); the steps follow it in binary (see [`encode`]).
#[derive(Serialize, Deserialize)]
struct Header {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_s: i64,
    mtime_ns: i64,
    offset: u64,
    /// Hex of the `CHECK` bytes before `offset`.
    check: String,
    /// Every metric name, once: the steps refer to them by index.
    keys: Vec<String>,
}

/// The steps in binary: per step its kind (0 train, 1 eval), number, count of metrics, and for
/// each metric the index of its name and the f64's bits (NaN and infinities kept exactly).
/// A 300 MB log's cache is a few MB, read at memory speed: JSON was 10x larger and slower.
fn encode(series: &Series, keys: &mut Vec<String>) -> Vec<u8> {
    let mut index: std::collections::HashMap<&str, u32> = std::collections::HashMap::new();
    let mut out = Vec::new();
    for s in series.train.iter().chain(&series.eval) {
        out.push(match s.kind {
            Kind::Train => 0,
            Kind::Eval => 1,
        });
        out.extend_from_slice(&s.step.to_le_bytes());
        out.extend_from_slice(&(s.metrics.len() as u32).to_le_bytes());
        for (k, v) in &s.metrics {
            let i = *index.entry(k.as_str()).or_insert_with(|| {
                keys.push(k.clone());
                keys.len() as u32 - 1
            });
            out.extend_from_slice(&i.to_le_bytes());
            out.extend_from_slice(&v.to_bits().to_le_bytes());
        }
    }
    out
}

/// The steps [`encode`] wrote; `None` for a cache cut short or otherwise wrong.
fn decode(mut bytes: &[u8], keys: &[String]) -> Option<Series> {
    fn take<const N: usize>(bytes: &mut &[u8]) -> Option<[u8; N]> {
        let (head, rest) = bytes.split_first_chunk::<N>()?;
        *bytes = rest;
        Some(*head)
    }
    let mut series = Series::default();
    while !bytes.is_empty() {
        let kind = match take::<1>(&mut bytes)?[0] {
            0 => Kind::Train,
            1 => Kind::Eval,
            _ => return None,
        };
        let step = u64::from_le_bytes(take(&mut bytes)?);
        let n = u32::from_le_bytes(take(&mut bytes)?);
        // Written in the map's order: collected in one bulk build, not n inserts.
        let mut pairs = Vec::with_capacity(n as usize);
        for _ in 0..n {
            let key = keys.get(u32::from_le_bytes(take(&mut bytes)?) as usize)?;
            let value = f64::from_bits(u64::from_le_bytes(take(&mut bytes)?));
            pairs.push((key.clone(), value));
        }
        let metrics: std::collections::BTreeMap<String, f64> = pairs.into_iter().collect();
        let step = Step {
            kind,
            step,
            metrics,
        };
        match kind {
            Kind::Train => series.train.push(step),
            Kind::Eval => series.eval.push(step),
        }
    }
    Some(series)
}

/// The header and steps of a cache file, if it is one.
fn load(path: &Utf8Path) -> Option<(Header, Series)> {
    let bytes = std::fs::read(path).ok()?;
    let end = memchr::memchr(b'\n', &bytes)?;
    let header: Header = serde_json::from_slice(&bytes[..end]).ok()?;
    let series = decode(&bytes[end + 1..], &header.keys)?;
    Some((header, series))
}

/// Written to a temporary file in the same folder, then renamed: readers see all or nothing.
fn store(path: &Utf8Path, mut header: Header, series: &Series) -> io::Result<()> {
    let body = encode(series, &mut header.keys);
    let mut bytes = serde_json::to_vec(&header).map_err(io::Error::other)?;
    bytes.push(b'\n');
    bytes.extend_from_slice(&body);
    let dir = path.parent().unwrap_or(Utf8Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(&bytes)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Where the cache of `log` lives.
pub fn path_for(log: &Utf8Path) -> Utf8PathBuf {
    let name = log.file_name().unwrap_or("log");
    log.with_file_name(format!(".{name}.steps"))
}

/// The log's steps (`file` is `log`, opened), from the cache plus what was appended since.
pub fn read(log: &Utf8Path, mut file: File) -> io::Result<Series> {
    let meta = file.metadata()?;
    let cache = path_for(log);
    let cached = load(&cache)
        .filter(|(c, _)| c.dev == meta.dev() && c.ino == meta.ino() && c.offset <= meta.len());
    let hit = cached.as_ref().is_some_and(|(c, _)| {
        c.size == meta.len() && (c.mtime_s, c.mtime_ns) == (meta.mtime(), meta.mtime_nsec())
    });
    let (mut series, start) = match cached {
        Some((_, series)) if hit => return Ok(series),
        Some((c, series)) if check_bytes(&mut file, c.offset)? == c.check => (series, c.offset),
        _ => (Series::default(), 0),
    };
    file.seek(SeekFrom::Start(start))?;
    let (newer, offset) = scan_reader_from(&mut file, start)?;
    series.merge(newer);
    let header = Header {
        dev: meta.dev(),
        ino: meta.ino(),
        size: meta.len(),
        mtime_s: meta.mtime(),
        mtime_ns: meta.mtime_nsec(),
        offset,
        check: check_bytes(&mut file, offset)?,
        keys: Vec::new(),
    };
    // The size and time were read before the bytes: a log that grew meanwhile does not match
    // them next time and is read on from `offset`, which is all that counts. A cache that
    // cannot be written is only a slower next read.
    let _ = store(&cache, header, &series);
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
