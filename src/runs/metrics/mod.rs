//! SkyRL's per-step metric lines (`WANDB_MIRROR kind=train step=N metrics={...}`), read from
//! job logs.
//!
//! MarinSkyRL prints one such line per step whatever the logger, in the middle of gigabytes of
//! vLLM and Ray output. A line may carry ANSI colour codes and a prefix before the marker (Ray's
//! `(skyrl_entrypoint pid=N)`, loguru's `2026-07-14 09:00:00.000 | INFO | ... - `); both are
//! ignored. [`scan`] reads a log in fixed-size chunks with bounded memory, looks for the marker
//! with `memchr::memmem` and parses only the lines that contain it; [`Tail`] follows a growing
//! log for `watch`, reading only what was appended since its last look.
//!
//! What counts as a metric line (anything else is noise and skipped): the marker `WANDB_MIRROR`
//! (not preceded by a letter, digit or `_`), then `kind=train` or `kind=eval`, `step=<digits>`
//! and `metrics=<JSON object>`, separated by spaces, with nothing but white space (or Ray's
//! ` [repeated Nx across cluster]`) after the object. Only numeric values are kept; `NaN`,
//! `Infinity` and `-Infinity`, which Python's `json.dumps` writes for non-finite floats, are
//! read as such. The last valid line of each (kind, step) wins, in the place of the first: a slot
//! that resumes from a checkpoint (after a requeue) trains the steps after it again, and its
//! values are the ones the run continued from. A last line without its
//! newline (a running job's log) is not parsed: [`scan_reader_from`] returns the offset of its
//! start, where [`Tail`] reads again next time.

pub mod cache;
mod console;
mod format;
pub mod keys;
pub mod pulse;
mod values;

use crate::render::{SLOT_STARTED, slot_started_date};
use memchr::{memchr, memmem, memrchr};
use serde::Serialize;
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::sync::mpsc;

pub use crate::runs::metrics::format::{table, to_csv};
use crate::runs::metrics::values::NameLists;
pub use crate::runs::metrics::values::{Lookup, Metrics};

/// The marker every metric line carries.
pub const MARKER: &str = "WANDB_MIRROR";

/// Bytes asked of the reader at a time.
const CHUNK: usize = 256 * 1024;

/// Lines longer than this (bytes) are skipped without being parsed: no metric line is this long,
/// and it bounds the scanner's read buffer to 1.25 MiB.
pub const MAX_LINE: usize = 1024 * 1024;

#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Train,
    Eval,
}

impl Kind {
    /// `train` or `eval`, as in the log line.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Train => "train",
            Kind::Eval => "eval",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One step's metrics: only the numeric values of the JSON object.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Step {
    pub kind: Kind,
    pub step: u64,
    /// Each metric's value by name (`null` for a non-finite one).
    #[schemars(with = "BTreeMap<String, Option<f64>>")]
    pub metrics: Metrics,
    /// Read from upstream's console logger, whose values are rounded to four decimals (see
    /// `console`): a full-precision line of the same step replaces it, never the reverse.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rounded: bool,
}

impl Step {
    /// The value of `key`, if the step has it.
    pub fn get(&self, key: &str) -> Option<f64> {
        self.metrics.get(key)
    }
}

/// A run's steps in log order of their first line, each with the values of its last line.
#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Series {
    pub train: Vec<Step>,
    pub eval: Vec<Step>,
}

impl Series {
    /// No step of either kind.
    pub fn is_empty(&self) -> bool {
        self.train.is_empty() && self.eval.is_empty()
    }

    /// Number of steps, train and eval.
    pub fn len(&self) -> usize {
        self.train.len() + self.eval.len()
    }

    /// Adds the steps of `newer` (a later part of the same log): a step this series has already
    /// takes the newer values in its place, others are appended in their order; returns how many
    /// were appended.
    fn merge(&mut self, newer: Series) -> usize {
        let mut added = 0;
        for (mine, theirs) in [(&mut self.train, newer.train), (&mut self.eval, newer.eval)] {
            let mut at: HashMap<u64, usize> =
                mine.iter().enumerate().map(|(i, s)| (s.step, i)).collect();
            for step in theirs {
                match at.get(&step.step) {
                    Some(&i) => {
                        if !step.rounded || mine[i].rounded {
                            mine[i] = step;
                        }
                    }
                    None => {
                        at.insert(step.step, mine.len());
                        mine.push(step);
                        added += 1;
                    }
                }
            }
        }
        added
    }

    /// Train and eval steps together, ordered by step number, a train step before the eval step
    /// of the same number, log order otherwise.
    pub fn rows(&self) -> Vec<&Step> {
        let mut rows: Vec<&Step> = self.train.iter().chain(&self.eval).collect();
        rows.sort_by_key(|s| (s.step, s.kind));
        rows
    }

    /// The steps of one kind.
    pub fn steps(&self, kind: Kind) -> &[Step] {
        match kind {
            Kind::Train => &self.train,
            Kind::Eval => &self.eval,
        }
    }

    /// (step, value) of the steps of `kind` that have `key`, in log order (non-finite values
    /// included).
    pub fn values<'s>(
        &'s self,
        kind: Kind,
        key: &'s str,
    ) -> impl DoubleEndedIterator<Item = (u64, f64)> + 's {
        let mut lookup = Lookup::new(key);
        (self.steps(kind).iter()).filter_map(move |s| Some((s.step, lookup.get(&s.metrics)?)))
    }

    /// Every metric name of every step, sorted.
    pub fn keys(&self) -> BTreeSet<&str> {
        (self.train.iter().chain(&self.eval))
            .flat_map(|s| s.metrics.keys())
            .collect()
    }

    /// The highest train step number.
    pub fn last_train_step(&self) -> Option<u64> {
        self.train.iter().map(|s| s.step).max()
    }
}

// ---------------------------------------------------------------------------------------------
// Scanning

/// Reads a whole log and returns its metric lines. Memory stays bounded (a fixed buffer plus the
/// parsed steps), whatever the log's size; a last line without its newline is not parsed.
pub fn scan<R: Read>(reader: R) -> io::Result<Series> {
    scan_reader_from(reader, 0).map(|(series, _)| series)
}

/// Scans `reader`, positioned at byte `offset` of its log (0, or an offset a previous call
/// returned), to its end. Returns the steps found and the offset just after the last complete
/// line, where the next call should start: a line still being written is read again, whole,
/// next time, so no step is lost.
///
/// The calling thread reads and finds the metric lines; a second thread parses them, fed
/// through a bounded queue of batches, so parsing overlaps reading.
pub fn scan_reader_from<R: Read>(reader: R, offset: u64) -> io::Result<(Series, u64)> {
    scan_from(reader, offset).map(|s| (s.series, s.complete))
}

/// What [`scan_from`] read: the steps, where to read on, and the offsets of the latest train
/// step line and of the latest slot-start line (with its date, when it reads as one).
pub(crate) struct Scanned {
    pub series: Series,
    pub complete: u64,
    pub step_line: Option<u64>,
    pub slot_line: Option<(u64, Option<f64>)>,
}

/// [`scan_reader_from`], with where the latest train step and slot start are (the log's pulse).
pub(crate) fn scan_from<R: Read>(reader: R, offset: u64) -> io::Result<Scanned> {
    std::thread::scope(|scope| {
        // A batch is the candidate lines, newline-separated, and each one's offset in the log.
        let (to_parser, batches) = mpsc::sync_channel::<(Vec<u8>, Vec<u64>)>(QUEUED_BATCHES);
        let (to_reader, spares) = mpsc::channel::<(Vec<u8>, Vec<u64>)>();
        let parser = scope.spawn(move || {
            let mut acc = Acc::default();
            let mut step_line = None;
            for (mut batch, mut offsets) in batches {
                for (line, &at) in batch.split(|&b| b == b'\n').zip(&offsets) {
                    // Console records reach the parser after the chunk's metric lines.
                    if acc.line(line) == Some(Kind::Train) {
                        step_line = step_line.max(Some(at));
                    }
                }
                batch.clear();
                offsets.clear();
                // The reader may be gone (an error): then the batch is just dropped.
                let _ = to_reader.send((batch, offsets));
            }
            (acc.series, step_line)
        });
        let mut batch = (Vec::with_capacity(BATCH), Vec::new());
        let mut slot_line = None;
        let found = |line: &[u8], at: u64| {
            if !batch.0.is_empty() {
                batch.0.push(b'\n');
            }
            batch.0.extend_from_slice(line);
            batch.1.push(at);
            if batch.0.len() >= BATCH {
                let next = spares
                    .try_recv()
                    .unwrap_or_else(|_| (Vec::with_capacity(BATCH), Vec::new()));
                // Fails only if the parser panicked; its join below reports that.
                let _ = to_parser.send(std::mem::replace(&mut batch, next));
            }
        };
        let slot = |line: &[u8], at: u64| {
            let date = std::str::from_utf8(line).ok().and_then(slot_started_date);
            // Only a line that reads as the wrapper's counts; an unreadable date is timed by
            // the read.
            if let Some(date) = date {
                slot_line = Some((at, pulse::parse_utc(date)));
            }
        };
        let read = find_lines(reader, offset, found, slot);
        if !batch.0.is_empty() {
            let _ = to_parser.send(batch);
        }
        drop(to_parser);
        let (series, step_line) = parser
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        read.map(|complete| Scanned {
            series,
            complete,
            step_line,
            slot_line,
        })
    })
}

/// Metric-line candidates go to the parser in batches of about this many bytes...
const BATCH: usize = 256 * 1024;
/// ...at most this many waiting at a time.
const QUEUED_BATCHES: usize = 2;

/// Reads `reader` (at byte `offset` of its log) to its end and calls `found` with every complete
/// line that contains the marker (without its newline) and its offset, and `slot` with the rest
/// of every complete line from a [`SLOT_STARTED`] on and the offset of that text. Returns the
/// offset just after the last complete line.
fn find_lines<R: Read>(
    mut reader: R,
    offset: u64,
    mut found: impl FnMut(&[u8], u64),
    mut slot: impl FnMut(&[u8], u64),
) -> io::Result<u64> {
    let finder = memmem::Finder::new(MARKER);
    let slot_finder = memmem::Finder::new(SLOT_STARTED);
    let mut console = console::Blocks::default();
    let mut buf = vec![0u8; MAX_LINE + CHUNK];
    // buf[..filled] is the start of a line not complete yet, at file offset `base`.
    let mut filled = 0usize;
    let mut base = offset;
    // The end of the last complete line: what is returned.
    let mut complete = offset;
    // Inside an overlong line: drop bytes up to the next newline.
    let mut skipping = false;
    loop {
        let n = match reader.read(&mut buf[filled..filled + CHUNK]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let end = filled + n;
        let mut start = 0;
        if skipping {
            match memchr(b'\n', &buf[..end]) {
                Some(i) => {
                    start = i + 1;
                    skipping = false;
                }
                None => {
                    base += end as u64;
                    continue;
                }
            }
        }
        let data = &buf[..end];
        let lines_from = start;
        let (start, open) = marker_lines(&finder, data, start, base, &mut found);
        // The start of the incomplete last line, kept for the next read.
        let tail =
            open.unwrap_or_else(|| memrchr(b'\n', &data[start..]).map_or(start, |i| start + i + 1));
        if tail > 0 {
            complete = base + tail as u64;
        }
        // Slot-start lines are a few per log and never metric lines: a second look at the
        // complete lines. Found anywhere in a line: a slot killed mid-line leaves its last line
        // without a newline, and the next slot's first line is appended to it.
        let complete_lines = &data[lines_from..tail.max(lines_from)];
        for hit in slot_finder.find_iter(complete_lines) {
            let rest = &complete_lines[hit..];
            let line_end = memchr(b'\n', rest).unwrap_or(rest.len());
            slot(&rest[..line_end], base + (lines_from + hit) as u64);
        }
        // Upstream's console records span lines: a third look, which follows a record's lines
        // once its header is found.
        console.feed(complete_lines, base + lines_from as u64, &mut found);
        buf.copy_within(tail..end, 0);
        base += tail as u64;
        filled = end - tail;
        if filled > MAX_LINE {
            base += filled as u64;
            filled = 0;
            skipping = true;
        }
    }
    // A console record not closed yet is read again, whole, from its header.
    Ok(console.open_at().map_or(complete, |at| at.min(complete)))
}

/// Every line in `data[start..]` that contains the marker, handed to `found` with its file
/// offset (`base` is `data`'s) when it is complete and not overlong. Returns where the scan
/// stopped, always at a line start, and the start of the line a last marker is on when that
/// line is not complete yet.
fn marker_lines(
    finder: &memmem::Finder,
    data: &[u8],
    mut start: usize,
    base: u64,
    found: &mut impl FnMut(&[u8], u64),
) -> (usize, Option<usize>) {
    while let Some(hit) = finder.find(&data[start..]).map(|i| start + i) {
        let line_start = memrchr(b'\n', &data[start..hit]).map_or(start, |i| start + i + 1);
        match memchr(b'\n', &data[hit..]) {
            Some(i) => {
                if hit + i - line_start <= MAX_LINE {
                    found(&data[line_start..hit + i], base + line_start as u64);
                }
                start = hit + i + 1;
            }
            None => return (start, Some(line_start)),
        }
    }
    (start, None)
}

/// A log followed as it grows (for `watch`): each [`Tail::poll`] reads only what was appended
/// since the last one and adds its new steps, so a refresh costs the new bytes, not the log.
#[derive(Debug, Clone)]
pub struct Tail {
    path: PathBuf,
    /// Where the next poll starts reading: just after the last complete line read.
    offset: u64,
    series: Series,
}

impl Tail {
    /// Follows the log at `path` from its start; nothing is read until [`Tail::poll`].
    pub fn new(path: impl Into<PathBuf>) -> Tail {
        Tail {
            path: path.into(),
            offset: 0,
            series: Series::default(),
        }
    }

    /// Reads the complete lines appended since the last poll; returns how many new steps they
    /// added. A log not written yet has no steps. A log shorter than what was read of it was
    /// truncated or replaced: it is read again from its start, its old steps forgotten.
    pub fn poll(&mut self) -> io::Result<usize> {
        let mut file = match File::open(&self.path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                self.restart();
                return Ok(0);
            }
            Err(e) => return Err(e),
        };
        if file.metadata()?.len() < self.offset {
            self.restart();
        }
        file.seek(SeekFrom::Start(self.offset))?;
        let (newer, offset) = scan_reader_from(file, self.offset)?;
        self.offset = offset;
        Ok(self.series.merge(newer))
    }

    /// Every step read so far.
    pub fn series(&self) -> &Series {
        &self.series
    }

    fn restart(&mut self) {
        self.offset = 0;
        self.series = Series::default();
    }
}

/// The steps parsed so far, and where each (kind, step) is in its list.
#[derive(Default)]
struct Acc {
    series: Series,
    at: HashMap<(Kind, u64), usize>,
    scratch: Vec<u8>,
    names: NameLists,
}

impl Acc {
    /// Takes one candidate line; the kind of the step it is, if it is one.
    fn line(&mut self, line: &[u8]) -> Option<Kind> {
        if let Some(record) = line.strip_prefix(console::TAG) {
            let (step, metrics) = console::parse_record(record)?;
            return self.payload(step, metrics);
        }
        let (kind, step, json) = header(line, &mut self.scratch)?;
        // A malformed copy does not count: the valid one before it stays.
        let metrics = parse_metrics(json)?;
        self.add(kind, step, metrics, false);
        Some(kind)
    }

    /// A console record's payload, split as the progress callback splits it: eval metrics alone
    /// are an eval step (the evaluation before training); a train step's eval metrics are also
    /// its eval step.
    fn payload(&mut self, step: u64, metrics: BTreeMap<String, f64>) -> Option<Kind> {
        let (eval, _): (BTreeMap<_, _>, BTreeMap<_, _>) =
            (metrics.iter()).partition(|(k, _)| k.starts_with("eval/"));
        let eval: BTreeMap<String, f64> = eval.into_iter().map(|(k, v)| (k.clone(), *v)).collect();
        if eval.len() == metrics.len() {
            self.add(Kind::Eval, step, metrics, true);
            return Some(Kind::Eval);
        }
        if !eval.is_empty() {
            self.add(Kind::Eval, step, eval, true);
        }
        self.add(Kind::Train, step, metrics, true);
        Some(Kind::Train)
    }

    fn add(&mut self, kind: Kind, step: u64, metrics: BTreeMap<String, f64>, rounded: bool) {
        let list = match kind {
            Kind::Train => &mut self.series.train,
            Kind::Eval => &mut self.series.eval,
        };
        let parsed = Step {
            kind,
            step,
            metrics: self.names.metrics(metrics),
            rounded,
        };
        // A step trained again (by a resumed slot): its later values replace the earlier ones;
        // a rounded copy never replaces a full-precision one.
        match self.at.get(&(kind, step)) {
            Some(&i) => {
                if !rounded || list[i].rounded {
                    list[i] = parsed;
                }
            }
            None => {
                self.at.insert((kind, step), list.len());
                list.push(parsed);
            }
        }
    }
}

/// Kind, step and the JSON text (to the end of the line) of a metric line. ANSI escapes are
/// removed first (into `scratch`) when the line has any.
fn header<'a>(line: &'a [u8], scratch: &'a mut Vec<u8>) -> Option<(Kind, u64, &'a [u8])> {
    let text: &'a [u8] = if memchr(0x1b, line).is_some() {
        strip_ansi(line, scratch);
        scratch
    } else {
        line
    };
    let text = text.trim_ascii_end();
    memmem::find_iter(text, MARKER).find_map(|at| {
        let after_word = at > 0 && is_word(text[at - 1]);
        (!after_word).then(|| fields(&text[at + MARKER.len()..]))?
    })
}

/// ` kind=K step=N metrics={...`, after the marker.
fn fields(rest: &[u8]) -> Option<(Kind, u64, &[u8])> {
    let rest = spaced(rest)?.strip_prefix(b"kind=")?;
    let (kind, rest) = if let Some(r) = rest.strip_prefix(b"train") {
        (Kind::Train, r)
    } else {
        (Kind::Eval, rest.strip_prefix(b"eval")?)
    };
    let rest = spaced(rest)?.strip_prefix(b"step=")?;
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    let step = std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()?;
    let json = spaced(&rest[digits..])?.strip_prefix(b"metrics=")?;
    json.starts_with(b"{").then_some((kind, step, json))
}

/// `rest` after at least one space or tab.
fn spaced(rest: &[u8]) -> Option<&[u8]> {
    let n = rest
        .iter()
        .take_while(|b| matches!(b, b' ' | b'\t'))
        .count();
    (n > 0).then_some(&rest[n..])
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// `line` without its ANSI escape sequences (CSI `ESC [ ... final`, OSC `ESC ] ... BEL|ESC \`,
/// and two-byte `ESC x`), into `out`.
fn strip_ansi(line: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let mut i = 0;
    while let Some(esc) = memchr(0x1b, &line[i..]).map(|e| i + e) {
        out.extend_from_slice(&line[i..esc]);
        i = esc + 1;
        match line.get(i) {
            Some(b'[') => {
                i += 1;
                // parameter and intermediate bytes, then one final byte in 0x40..=0x7e
                while i < line.len() && (0x20..=0x3f).contains(&line[i]) {
                    i += 1;
                }
                if i < line.len() && (0x40..=0x7e).contains(&line[i]) {
                    i += 1;
                }
            }
            Some(b']') => {
                i += 1;
                while i < line.len() {
                    if line[i] == 0x07 {
                        i += 1;
                        break;
                    }
                    if line[i] == 0x1b && line.get(i + 1) == Some(&b'\\') {
                        i += 2;
                        break;
                    }
                    i += 1;
                }
            }
            Some(_) => i += 1,
            None => {}
        }
    }
    out.extend_from_slice(&line[i..]);
}

/// The numeric values of a JSON object that ends the line.
fn parse_metrics(json: &[u8]) -> Option<BTreeMap<String, f64>> {
    // Python's json.dumps writes NaN / Infinity / -Infinity, which are not JSON.
    parse_object(&crate::util::json::quote_non_finite(json))
}

fn parse_object(json: &[u8]) -> Option<BTreeMap<String, f64>> {
    let mut stream = serde_json::Deserializer::from_slice(json).into_iter::<Numbers>();
    let Numbers(metrics) = stream.next()?.ok()?;
    let after = json[stream.byte_offset()..].trim_ascii();
    trailer_ok(after).then_some(metrics)
}

/// What may follow the object: nothing, or Ray's deduplication note.
fn trailer_ok(after: &[u8]) -> bool {
    if after.is_empty() {
        return true;
    }
    let Some(inner) =
        (after.strip_prefix(b"[repeated ")).and_then(|r| r.strip_suffix(b"x across cluster]"))
    else {
        return false;
    };
    !inner.is_empty() && inner.iter().all(u8::is_ascii_digit)
}

/// A JSON object's numeric values (the first of a repeated key); other values are skipped.
struct Numbers(BTreeMap<String, f64>);

impl<'de> Deserialize<'de> for Numbers {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Numbers;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Numbers, A::Error> {
                let mut metrics = BTreeMap::new();
                while let Some(key) = map.next_key::<String>()? {
                    if let Number(Some(v)) = map.next_value()? {
                        metrics.entry(key).or_insert(v);
                    }
                }
                Ok(Numbers(metrics))
            }
        }
        d.deserialize_map(V)
    }
}

/// A JSON value: `Some` for a number (or a non-finite sentinel), `None` for anything else.
struct Number(Option<f64>);

impl<'de> Deserialize<'de> for Number {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Number;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Number, E> {
                Ok(Number(Some(v)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Number, E> {
                Ok(Number(Some(v as f64)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Number, E> {
                Ok(Number(Some(v as f64)))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Number, E> {
                Ok(Number(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Number, E> {
                Ok(Number(None))
            }
            fn visit_none<E: de::Error>(self) -> Result<Number, E> {
                Ok(Number(None))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Number, E> {
                Ok(Number(crate::util::json::non_finite(v)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Number, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Number(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Number, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Number(None))
            }
        }
        d.deserialize_any(V)
    }
}
