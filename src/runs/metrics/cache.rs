//! The parsed steps of a log, kept next to it (`.<log name>.steps`) with the byte offset
//! they were read to, so that `status`, `report`, `metrics` and `tend` read only what a log
//! gained since the last reader, not gigabytes every time.
//!
//! With the steps it keeps the log's [`Pulse`]: when the newest step was first seen, and the
//! latest slot start, for the hang watchdog (`runs::stall`).
//!
//! The cache belongs to one file, as a [`Mark`] says: a log not written since is not read at
//! all, a truncated or replaced one is read again from its start. Readers may run at once (cron
//! and a person): the cache is replaced atomically, and a cache that cannot be read or written
//! is only a slower read, never an error.

use super::pulse::{Pulse, unix_s};
use super::values::{Names, ordered};
use super::{Kind, Metrics, Series, Step, scan_from};
use crate::util::mark::{Mark, Since, load_kept, store_kept};
use camino::{Utf8Path, Utf8PathBuf};
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Seek, SeekFrom};

/// What the cache's layout is; a cache of another is read as none. 3: the mark samples the
/// whole log and the cache carries its checksum. 4: the first line is an object, the lists of
/// names and the log's pulse. 5: upstream's console records are steps too (a cache of 4 may
/// have read past them), marked rounded.
const FORMAT: u32 = 5;

/// The cache's first line.
#[derive(serde::Serialize, serde::Deserialize)]
struct Head {
    lists: Vec<Vec<String>>,
    pulse: Pulse,
}

/// The bit of a step's kind byte that says its values are rounded (see `Step::rounded`).
const ROUNDED: u8 = 2;

/// The steps in binary: per step its kind (0 train, 1 eval, plus [`ROUNDED`]), number, the index of its list of
/// names, and the f64 bits of its values in that list's order (NaN and infinities kept
/// exactly). A 300 MB log's cache is a few MB, read back at memory speed.
fn encode(series: &Series, lists: &mut Vec<Vec<String>>) -> Vec<u8> {
    // Steps share their lists of names: most are found by that copy's address, unhashed.
    let mut by_address: HashMap<*const Box<str>, u32> = HashMap::new();
    let mut by_names: HashMap<&[Box<str>], u32> = HashMap::new();
    let mut out = Vec::new();
    for s in series.train.iter().chain(&series.eval) {
        out.push(
            match s.kind {
                Kind::Train => 0,
                Kind::Eval => 1,
            } | if s.rounded { ROUNDED } else { 0 },
        );
        out.extend_from_slice(&s.step.to_le_bytes());
        let names = s.metrics.names();
        let i = *by_address.entry(names.as_ptr()).or_insert_with(|| {
            *by_names.entry(names).or_insert_with(|| {
                lists.push(names.iter().map(|k| k.to_string()).collect());
                lists.len() as u32 - 1
            })
        });
        out.extend_from_slice(&i.to_le_bytes());
        for v in s.metrics.values() {
            out.extend_from_slice(&v.to_bits().to_le_bytes());
        }
    }
    out
}

/// The steps [`encode`] wrote; `None` for a cache cut short or otherwise wrong.
fn decode(mut bytes: &[u8], lists: &[Vec<String>]) -> Option<Series> {
    fn take<const N: usize>(bytes: &mut &[u8]) -> Option<[u8; N]> {
        let (head, rest) = bytes.split_first_chunk::<N>()?;
        *bytes = rest;
        Some(*head)
    }
    let lists: Vec<Names> = (lists.iter())
        .map(|l| l.iter().map(|k| Box::from(k.as_str())).collect())
        .collect();
    // A list out of order is not this program's cache.
    if !lists.iter().all(|l| ordered(l)) {
        return None;
    }
    let mut series = Series::default();
    while !bytes.is_empty() {
        let byte = take::<1>(&mut bytes)?[0];
        let kind = match byte & !ROUNDED {
            0 => Kind::Train,
            1 => Kind::Eval,
            _ => return None,
        };
        let rounded = byte & ROUNDED != 0;
        let step = u64::from_le_bytes(take(&mut bytes)?);
        let names = lists.get(u32::from_le_bytes(take(&mut bytes)?) as usize)?;
        let (values, rest) = bytes.split_at_checked(names.len() * 8)?;
        bytes = rest;
        let values = (values.chunks_exact(8))
            .map(|b| f64::from_bits(u64::from_le_bytes(b.try_into().expect("8 bytes"))))
            .collect();
        let metrics = Metrics::new(names.clone(), values)?;
        let step = Step {
            kind,
            step,
            metrics,
            rounded,
        };
        match kind {
            Kind::Train => series.train.push(step),
            Kind::Eval => series.eval.push(step),
        }
    }
    Some(series)
}

/// The mark, steps and pulse of a cache file, if it is one: a JSON line of the lists of names
/// and the pulse, then the steps in binary (see [`encode`]).
fn load(path: &Utf8Path) -> Option<(Mark, Series, Pulse)> {
    let (mark, body) = load_kept(path, FORMAT)?;
    let end = memchr::memchr(b'\n', &body)?;
    let head: Head = serde_json::from_slice(&body[..end]).ok()?;
    Some((mark, decode(&body[end + 1..], &head.lists)?, head.pulse))
}

fn store(path: &Utf8Path, mark: Mark, series: &Series, pulse: Pulse) -> io::Result<()> {
    let mut lists = Vec::new();
    let steps = encode(series, &mut lists);
    let mut body = serde_json::to_vec(&Head { lists, pulse }).map_err(io::Error::other)?;
    body.push(b'\n');
    body.extend_from_slice(&steps);
    store_kept(path, FORMAT, mark, &body)
}

/// Where the cache of `log` lives.
pub fn path_for(log: &Utf8Path) -> Utf8PathBuf {
    let name = log.file_name().unwrap_or("log");
    log.with_file_name(format!(".{name}.steps"))
}

/// The log's steps (`file` is `log`, opened), from the cache plus what was appended since.
pub fn read(log: &Utf8Path, file: File) -> io::Result<Series> {
    read_with_pulse(log, file).map(|(series, _)| series)
}

/// [`read`], and the log's pulse. A step is timed by the read that first saw it; a cache that
/// cannot be written times it again at the next read, later: a stall is then seen late, never
/// early.
pub fn read_with_pulse(log: &Utf8Path, file: File) -> io::Result<(Series, Pulse)> {
    read_to(log, file).map(|(series, pulse, _)| (series, pulse))
}

/// [`read_with_pulse`], and the offset of the log its steps were read to (whole lines only).
fn read_to(log: &Utf8Path, mut file: File) -> io::Result<(Series, Pulse, u64)> {
    let meta = file.metadata()?;
    let cache = path_for(log);
    let cached = match load(&cache) {
        Some((mark, series, pulse)) => {
            Some((mark.since(&mut file, &meta)?, mark.offset, series, pulse))
        }
        None => None,
    };
    let (mut series, pulse, start) = match cached {
        Some((Since::Unchanged, offset, series, pulse)) => return Ok((series, pulse, offset)),
        Some((Since::Appended(offset), _, series, pulse)) => (series, pulse, offset),
        _ => (Series::default(), Pulse::default(), 0),
    };
    file.seek(SeekFrom::Start(start))?;
    let scanned = scan_from(&mut file, start)?;
    series.merge(scanned.series);
    // Taken after the bytes were read: the log was last written no earlier than its newest
    // step, so this time is never before that step.
    let read_at = unix_s(file.metadata()?.modified()?);
    let pulse = pulse.merged(scanned.step_line, scanned.slot_line, read_at);
    let mark = Mark::new(&mut file, &meta, scanned.complete)?;
    // The size and time were read before the bytes: a log that grew meanwhile does not match
    // them next time and is read on from `offset`, which is all that counts. A cache that
    // cannot be written is only a slower next read.
    let _ = store(&cache, mark, &series, pulse);
    Ok((series, pulse, scanned.complete))
}

/// What the row cache of a log keeps: a summary of its steps, and its pulse.
#[derive(serde::Serialize, serde::Deserialize)]
struct Row<T> {
    summary: T,
    pulse: Pulse,
}

/// What the row cache's layout is; a row cache of another is read as none. 2: marked to where
/// its steps were read, so that a log that gained only noise is read only for what it gained.
/// 3: upstream's console records count as steps.
const ROW_FORMAT: u32 = 3;

/// Where the row cache of `log` lives.
pub fn row_path_for(log: &Utf8Path) -> Utf8PathBuf {
    let name = log.file_name().unwrap_or("log");
    log.with_file_name(format!(".{name}.row"))
}

/// The summary `make` draws from the log's steps (`file` is `log`, opened), and its pulse: for
/// a log not written since the last reader, from a small file next to it (`.<log name>.row`)
/// without loading its steps; else [`read_with_pulse`]'s, kept for the next reader. A command
/// that shows one row per run (`status`) reads kilobytes, not the megabytes of every log's steps.
pub fn read_summary<T>(
    log: &Utf8Path,
    mut file: File,
    make: impl FnOnce(&Series) -> T,
) -> io::Result<(T, Pulse)>
where
    T: serde::Serialize + serde::de::DeserializeOwned,
{
    let meta = file.metadata()?;
    let path = row_path_for(log);
    if let Some((mark, body)) = load_kept(&path, ROW_FORMAT)
        && let Ok(row) = serde_json::from_slice::<Row<T>>(&body)
    {
        match mark.since(&mut file, &meta)? {
            Since::Unchanged => return Ok((row.summary, row.pulse)),
            // Only what the log gained is read: lines with no step and no slot start (vLLM's
            // and Ray's, most of a log) leave the row and the pulse as they were.
            Since::Appended(offset) => {
                file.seek(SeekFrom::Start(offset))?;
                let gained = scan_from(&mut file, offset)?;
                if gained.series.is_empty()
                    && gained.step_line.is_none()
                    && gained.slot_line.is_none()
                {
                    let mark = Mark::new(&mut file, &meta, gained.complete)?;
                    let _ = store_kept(&path, ROW_FORMAT, mark, &body);
                    return Ok((row.summary, row.pulse));
                }
            }
            Since::Anew => {}
        }
    }
    let (series, pulse, read_to_offset) = read_to(log, file.try_clone()?)?;
    let summary = make(&series);
    // Marked with the size and times taken before the steps were read: a log that grew
    // meanwhile does not match them next time, and is read on from where its steps were read to.
    let mark = Mark::new(&mut file, &meta, read_to_offset)?;
    if let Ok(body) = serde_json::to_vec(&Row {
        summary: &summary,
        pulse,
    }) {
        let _ = store_kept(&path, ROW_FORMAT, mark, &body);
    }
    Ok((summary, pulse))
}
