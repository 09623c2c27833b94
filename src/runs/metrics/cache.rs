//! The parsed steps of a log, kept next to it (`.<log name>.steps`) with the byte offset
//! they were read to, so that `status`, `report`, `metrics` and `tend` read only what a log
//! gained since the last reader, not gigabytes every time.
//!
//! With the steps it keeps the log's [`Pulse`]: when the newest step was first seen, and the
//! latest slot start, for the hang watchdog (`runs::stall`).
//!
//! The cache belongs to one file, as a [`Mark`] says: a log not written since is not read at
//! all, a truncated or replaced one is read again from its start, and one that grew gets a part
//! appended with the steps it gained (the steps before are neither encoded nor written again).
//! Readers may run at once (cron and a person): a cache written whole is replaced atomically, a
//! part is appended in one write and applies only once, and a cache that cannot be read or
//! written is only a slower read, never an error.

use super::pulse::{Pulse, unix_s};
use super::values::{Names, ordered};
use super::{Kind, Metrics, Series, Step, scan_from};
use crate::util::mark::{Mark, Since, checksum, load_kept, store_kept};
use camino::{Utf8Path, Utf8PathBuf};
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Seek, SeekFrom, Write};

/// What the cache's layout is; a cache of another is read as none. 3: the mark samples the
/// whole log and the cache carries its checksum. 4: the first line is an object, the lists of
/// names and the log's pulse. 5: upstream's console records are steps too (a cache of 4 may
/// have read past them), marked rounded. 6: appended to, a part per read that found something
/// new (see [`Part`]), so that a log that gained a step costs what it gained.
const FORMAT: u32 = 6;

/// A cache written in more parts than this is written again whole, in one: a log read every
/// minute for a week does not leave a cache of ten thousand headers.
const MOST_PARTS: usize = 256;

/// The header line of one part of the cache, followed by `len` bytes of steps (see
/// [`encode`]). Each part holds the steps one read of the log found, from log offset `from` up
/// to its mark's offset, merged over the parts before it in order (a step a later part has
/// again takes its values, as when the log was read). A part applies only after the part that
/// read up to its `from`, with the lists of names before it numbering `lists_at`: a part two
/// readers at once both appended applies once. A part cut short or corrupted ends the cache
/// there, and the next reader writes it again whole.
#[derive(serde::Serialize, serde::Deserialize)]
struct Part {
    format: u32,
    #[serde(flatten)]
    mark: Mark,
    from: u64,
    lists_at: usize,
    /// The lists of names this part's steps add, numbered from `lists_at`.
    lists: Vec<Vec<String>>,
    pulse: Pulse,
    len: u64,
    sum: String,
}

impl Part {
    /// The checksum of the part's fields but `sum`, and of its steps.
    fn checksum(&self, steps: &[u8]) -> Option<String> {
        let head = serde_json::to_vec(&(
            self.format,
            &self.mark,
            self.from,
            self.lists_at,
            &self.lists,
            &self.pulse,
            self.len,
        ))
        .ok()?;
        Some(checksum(&[&head, steps]))
    }

    /// The part as bytes: its header line, then its steps.
    fn bytes(mut self, steps: &[u8]) -> io::Result<Vec<u8>> {
        self.len = steps.len() as u64;
        self.sum = self
            .checksum(steps)
            .ok_or_else(|| io::Error::other("sum"))?;
        let mut bytes = serde_json::to_vec(&self).map_err(io::Error::other)?;
        bytes.push(b'\n');
        bytes.extend_from_slice(steps);
        Ok(bytes)
    }
}

/// The bit of a step's kind byte that says its values are rounded (see `Step::rounded`).
const ROUNDED: u8 = 2;

/// The steps in binary: per step its kind (0 train, 1 eval, plus [`ROUNDED`]), number, the index
/// of its list of names, and the f64 bits of its values in that list's order (NaN and infinities
/// kept exactly). A 300 MB log's cache is a few MB, read back at memory speed. A list not in
/// `lists` yet is added to it.
fn encode(series: &Series, lists: &mut Vec<Vec<String>>) -> Vec<u8> {
    // Steps share their lists of names: most are found by that copy's address, unhashed.
    let mut by_address: HashMap<*const Box<str>, u32> = HashMap::new();
    let mut by_names: HashMap<Vec<String>, u32> = (lists.iter().cloned()).zip(0u32..).collect();
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
            let key: Vec<String> = names.iter().map(|k| k.to_string()).collect();
            *by_names.entry(key.clone()).or_insert_with(|| {
                lists.push(key);
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

/// The steps [`encode`] wrote; `None` for steps cut short or otherwise wrong.
fn decode(mut bytes: &[u8], lists: &[Names]) -> Option<Series> {
    fn take<const N: usize>(bytes: &mut &[u8]) -> Option<[u8; N]> {
        let (head, rest) = bytes.split_first_chunk::<N>()?;
        *bytes = rest;
        Some(*head)
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

/// A cache as read: where its parts read the log to, their steps merged, the log's pulse, and
/// what a reader needs to append a part to it.
struct Loaded {
    mark: Mark,
    series: Series,
    pulse: Pulse,
    /// Every list of names its parts hold, in order.
    lists: Vec<Vec<String>>,
    /// Whether a part may be appended: every byte of the file is a whole part, and there are
    /// not too many.
    appendable: bool,
    /// The file's length as read: a part is appended only to the file as it was read.
    len: u64,
}

/// The cache at `path` if it is one: its parts in order (see [`Part`]).
fn load(path: &Utf8Path) -> Option<Loaded> {
    let bytes = std::fs::read(path).ok()?;
    let (mut at, mut parts, mut whole) = (0usize, 0usize, false);
    let mut lists: Vec<Vec<String>> = Vec::new();
    let mut names: Vec<Names> = Vec::new();
    let mut kept: Option<(Mark, Series, Pulse)> = None;
    while at < bytes.len() {
        let Some(part) = next_part(&bytes[at..]) else {
            whole = false;
            break;
        };
        let (head, steps, used) = part;
        at += used;
        parts += 1;
        whole = true;
        let read_to = kept.as_ref().map_or(0, |(mark, _, _)| mark.offset);
        if head.from != read_to || head.lists_at != lists.len() {
            continue;
        }
        for list in &head.lists {
            let list: Names = list.iter().map(|k| Box::from(k.as_str())).collect();
            // A list out of order is not this program's cache.
            if !ordered(&list) {
                return None;
            }
            names.push(list);
        }
        lists.extend(head.lists);
        let Some(found) = decode(steps, &names) else {
            whole = false;
            break;
        };
        kept = Some(match kept {
            None => (head.mark, found, head.pulse),
            Some((_, mut series, _)) => {
                series.merge(found);
                (head.mark, series, head.pulse)
            }
        });
    }
    let (mark, series, pulse) = kept?;
    Some(Loaded {
        mark,
        series,
        pulse,
        lists,
        appendable: whole && parts < MOST_PARTS,
        len: bytes.len() as u64,
    })
}

/// The part at the start of `bytes`, its steps and how many bytes it takes; `None` for one cut
/// short, corrupted or of another layout.
fn next_part(bytes: &[u8]) -> Option<(Part, &[u8], usize)> {
    let end = memchr::memchr(b'\n', bytes)?;
    let head: Part = serde_json::from_slice(&bytes[..end]).ok()?;
    let steps = bytes
        .get(end + 1..)?
        .get(..usize::try_from(head.len).ok()?)?;
    (head.format == FORMAT && head.checksum(steps)? == head.sum).then_some((
        head,
        steps,
        end + 1 + steps.len(),
    ))
}

/// Writes the whole cache as one part: to a temporary file in the same folder, renamed over
/// `path`, so that readers at once (cron and a person) see all or nothing.
fn store(path: &Utf8Path, mark: Mark, series: &Series, pulse: Pulse) -> io::Result<()> {
    let mut lists = Vec::new();
    let steps = encode(series, &mut lists);
    let part = Part {
        format: FORMAT,
        mark,
        from: 0,
        lists_at: 0,
        lists,
        pulse,
        len: 0,
        sum: String::new(),
    };
    let bytes = part.bytes(&steps)?;
    let dir = path.parent().unwrap_or(Utf8Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(&bytes)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Appends a part to the cache `loaded` was read from: the steps `found` read from log offset
/// `from` on, up to `mark`. One write, to the end of the file as it was read (a reader that
/// wrote meanwhile wins, and this part waits for the next read).
fn append(
    path: &Utf8Path,
    loaded: Loaded,
    mark: Mark,
    from: u64,
    found: &Series,
    pulse: Pulse,
) -> io::Result<()> {
    let mut lists = loaded.lists;
    let lists_at = lists.len();
    let steps = encode(found, &mut lists);
    let part = Part {
        format: FORMAT,
        mark,
        from,
        lists_at,
        lists: lists.split_off(lists_at),
        pulse,
        len: 0,
        sum: String::new(),
    };
    let bytes = part.bytes(&steps)?;
    let mut file = std::fs::OpenOptions::new().append(true).open(path)?;
    if file.metadata()?.len() != loaded.len {
        return Ok(());
    }
    file.write_all(&bytes)
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
    let (kept, start) = match load(&cache) {
        Some(loaded) => match loaded.mark.since(&mut file, &meta)? {
            Since::Unchanged => {
                let offset = loaded.mark.offset;
                return Ok((loaded.series, loaded.pulse, offset));
            }
            Since::Appended(offset) => (Some(loaded), offset),
            Since::Anew => (None, 0),
        },
        None => (None, 0),
    };
    file.seek(SeekFrom::Start(start))?;
    let scanned = scan_from(&mut file, start)?;
    // Taken after the bytes were read: the log was last written no earlier than its newest
    // step, so this time is never before that step.
    let read_at = unix_s(file.metadata()?.modified()?);
    let pulse = (kept.as_ref().map_or_else(Pulse::default, |k| k.pulse)).merged(
        scanned.step_line,
        scanned.slot_line,
        read_at,
    );
    let mark = Mark::new(&mut file, &meta, scanned.complete)?;
    // The size and time were read before the bytes: a log that grew meanwhile does not match
    // them next time and is read on from `offset`, which is all that counts. A cache that
    // cannot be written is only a slower next read.
    let series = match kept {
        Some(mut loaded) if loaded.appendable => {
            let series = std::mem::take(&mut loaded.series);
            let _ = append(&cache, loaded, mark, start, &scanned.series, pulse);
            let mut series = series;
            series.merge(scanned.series);
            series
        }
        kept => {
            let mut series = kept.map(|k| k.series).unwrap_or_default();
            series.merge(scanned.series);
            let _ = store(&cache, mark, &series, pulse);
            series
        }
    };
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

#[cfg(test)]
mod tests {
    use super::*;

    fn line(step: u64) -> String {
        format!("WANDB_MIRROR kind=train step={step} metrics={{\"timing/step\": {step}.5}}\n")
    }

    fn steps(log: &Utf8Path) -> Vec<u64> {
        let series = read(log, File::open(log).unwrap()).unwrap();
        series.train.iter().map(|s| s.step).collect()
    }

    #[test]
    fn a_log_that_gained_a_step_gets_a_part_appended_and_the_rest_is_not_written_again() {
        let dir = tempfile::tempdir().unwrap();
        let log = Utf8PathBuf::from_path_buf(dir.path().join("job_1.out")).unwrap();
        std::fs::write(&log, (1..=50).map(line).collect::<String>()).unwrap();
        assert_eq!(steps(&log), (1..=50).collect::<Vec<_>>());
        let first = std::fs::read(path_for(&log)).unwrap();
        let mut file = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
        file.write_all(line(51).as_bytes()).unwrap();
        assert_eq!(steps(&log), (1..=51).collect::<Vec<_>>());
        let second = std::fs::read(path_for(&log)).unwrap();
        // The first part as it was, one small part after it.
        assert_eq!(&second[..first.len()], &first[..]);
        assert!(second.len() - first.len() < 1024, "{}", second.len());

        // A part two readers at once both appended applies once; one cut short ends the cache
        // there, and the next read writes it whole again.
        let part = second[first.len()..].to_vec();
        let mut doubled = second.clone();
        doubled.extend_from_slice(&part);
        std::fs::write(path_for(&log), &doubled).unwrap();
        assert_eq!(steps(&log), (1..=51).collect::<Vec<_>>());
        std::fs::write(path_for(&log), &second[..second.len() - 3]).unwrap();
        file.write_all(line(52).as_bytes()).unwrap();
        assert_eq!(steps(&log), (1..=52).collect::<Vec<_>>());
        let rewritten = std::fs::read(path_for(&log)).unwrap();
        let (head, _, used) = next_part(&rewritten).unwrap();
        assert_eq!((head.from, used), (0, rewritten.len()), "one part, whole");
        // Read cold, the same steps.
        std::fs::remove_file(path_for(&log)).unwrap();
        assert_eq!(steps(&log), (1..=52).collect::<Vec<_>>());
    }
}
