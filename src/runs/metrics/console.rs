//! Upstream SkyRL's console logger, read back: with `trainer.logger=console`, `skyrl` 0.4.0's
//! `ConsoleLogger.log` writes one loguru record per step,
//!
//! ```text
//! (skyrl_entrypoint pid=7) 2026-07-14 09:00:00.000 | INFO     | skyrl.train.utils.tracking:log:189 - Step 3:
//! (skyrl_entrypoint pid=7) {'policy/policy_entropy': '0.4512',
//! (skyrl_entrypoint pid=7)  'trainer/global_step': 3}
//! ```
//!
//! the payload `pprint`ed over many lines, every float already a string with four decimals, each
//! line under Ray's (coloured) prefix and interleaved with other actors' lines. This is the only
//! per-step record with a step number an upstream job prints without rlctl's progress callback
//! (see `render/rlctl_progress.py`); it is read as a fallback, its values marked rounded, and a
//! full-precision metric line of the same step always wins over it.
//!
//! [`Blocks`] collects a record's lines (the lines of the header's own prefix, in order; others
//! are skipped) until its brackets close, and hands the payload on as one line; [`parse_payload`]
//! reads that Python literal.

use super::strip_ansi;
use memchr::{memchr, memmem, memrchr};
use std::collections::BTreeMap;

/// What every header line holds: loguru's `{name}:{function}` of `Tracking`'s console logger
/// (`skyrl.train.utils.tracking:log`, MarinSkyRL's `skyrl_train.utils.tracking:log`), found
/// before the line is parsed.
pub const NEEDLE: &str = "tracking";

/// Marks a collected payload in the parser's batch, where lines are the metric lines'.
pub const TAG: &[u8] = b"\x00console ";

/// A record's payload past this many bytes is not one: dropped.
const MAX_PAYLOAD: usize = super::MAX_LINE;

/// The step and the prefix (Ray's `(name pid=N) `, or nothing) of a console logger's header line
/// (ANSI codes already removed).
pub fn header(text: &[u8]) -> Option<(u64, Vec<u8>)> {
    let text = text.trim_ascii_end();
    let at = memmem::find(text, b"tracking:log:")?;
    let rest = &text[at + b"tracking:log:".len()..];
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    let rest = rest[digits..].strip_prefix(b" - Step ")?;
    let n = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if n == 0 || &rest[n..] != b":" {
        return None;
    }
    let step = std::str::from_utf8(&rest[..n]).ok()?.parse().ok()?;
    Some((step, prefix(text).to_vec()))
}

/// Ray's prefix of a line: `(name pid=N) ` (or `(name pid=N, ip=A) `) at its start.
fn prefix(text: &[u8]) -> &[u8] {
    if text.first() != Some(&b'(') {
        return b"";
    }
    match memmem::find(text, b") ") {
        Some(end) if memmem::find(&text[..end], b"pid=").is_some() => &text[..end + 2],
        _ => b"",
    }
}

/// A record being collected.
struct Open {
    /// The header line's offset in the log.
    at: u64,
    step: u64,
    prefix: Vec<u8>,
    /// The payload so far, its lines joined by a space.
    payload: Vec<u8>,
    /// Brackets open outside strings.
    depth: usize,
}

enum Fed {
    /// Another actor's line: not this record's.
    Other,
    More,
    Closed,
    /// Not a continuation of this record: it ends unread.
    Broken,
}

impl Open {
    fn feed(&mut self, text: &[u8]) -> Fed {
        let Some(rest) = text.strip_prefix(self.prefix.as_slice()) else {
            return Fed::Other;
        };
        // pprint's first line opens the dict; the others are indented.
        let fits = if self.payload.is_empty() {
            rest.starts_with(b"{")
        } else {
            rest.starts_with(b" ")
        };
        if !fits || self.payload.len() + rest.len() > MAX_PAYLOAD {
            return Fed::Broken;
        }
        let rest = rest.trim_ascii();
        if !self.payload.is_empty() {
            self.payload.push(b' ');
        }
        self.payload.extend_from_slice(rest);
        let mut quote = None;
        let mut escaped = false;
        for &b in rest {
            match quote {
                Some(_) if escaped => escaped = false,
                Some(_) if b == b'\\' => escaped = true,
                Some(q) if b == q => quote = None,
                Some(_) => {}
                None => match b {
                    b'\'' | b'"' => quote = Some(b),
                    b'{' | b'[' | b'(' => self.depth += 1,
                    b'}' | b']' | b')' => match self.depth.checked_sub(1) {
                        Some(d) => self.depth = d,
                        None => return Fed::Broken,
                    },
                    _ => {}
                },
            }
        }
        if self.depth == 0 {
            Fed::Closed
        } else {
            Fed::More
        }
    }
}

/// The console records of a log read in chunks of complete lines: a record cut by the end of a
/// chunk goes on in the next; one still open at the end of the read is read again, from its
/// header, by the next read ([`Blocks::open_at`]).
#[derive(Default)]
pub struct Blocks {
    open: Option<Open>,
    scratch: Vec<u8>,
}

impl Blocks {
    /// Reads `lines` (complete lines at `base` in the log) and hands each closed record to
    /// `found` as `TAG step payload`, at its header's offset.
    pub fn feed(&mut self, lines: &[u8], base: u64, found: &mut impl FnMut(&[u8], u64)) {
        let finder = memmem::Finder::new(NEEDLE);
        let mut pos = 0;
        while pos < lines.len() {
            if self.open.is_none() {
                // Jump to the next line that may be a header.
                let Some(hit) = finder.find(&lines[pos..]).map(|i| pos + i) else {
                    return;
                };
                pos = memrchr(b'\n', &lines[pos..hit]).map_or(pos, |i| pos + i + 1);
            }
            let end = memchr(b'\n', &lines[pos..]).map_or(lines.len(), |i| pos + i);
            let line = &lines[pos..end];
            let at = base + pos as u64;
            pos = end + 1;
            let text = if memchr(0x1b, line).is_some() {
                strip_ansi(line, &mut self.scratch);
                self.scratch.as_slice()
            } else {
                line
            };
            if let Some(open) = &mut self.open {
                match open.feed(text) {
                    Fed::Other | Fed::More => continue,
                    Fed::Closed => {
                        let open = self.open.take().expect("open");
                        let mut record = TAG.to_vec();
                        record.extend_from_slice(format!("{} ", open.step).as_bytes());
                        record.extend_from_slice(&open.payload);
                        found(&record, open.at);
                        continue;
                    }
                    // The line may start the next record.
                    Fed::Broken => self.open = None,
                }
            }
            if let Some((step, prefix)) = header(text) {
                self.open = Some(Open {
                    at,
                    step,
                    prefix,
                    payload: Vec::new(),
                    depth: 0,
                });
            }
        }
    }

    /// The offset of the header of a record still open: the next read starts there.
    pub fn open_at(&self) -> Option<u64> {
        self.open.as_ref().map(|o| o.at)
    }
}

/// The step and the numeric values of a collected record (`TAG` taken off): ints as they are,
/// strings that read as numbers (the logger's `'0.1500'`, `'nan'`, `'inf'`), nothing else.
pub fn parse_record(record: &[u8]) -> Option<(u64, BTreeMap<String, f64>)> {
    let space = memchr(b' ', record)?;
    let step = std::str::from_utf8(&record[..space]).ok()?.parse().ok()?;
    Some((step, parse_payload(&record[space + 1..])?))
}

/// The numeric values of a `pprint`ed dict of `ConsoleLogger.stringify_floats`'s output.
pub fn parse_payload(text: &[u8]) -> Option<BTreeMap<String, f64>> {
    let mut p = Literal { text, at: 0 };
    p.expect(b'{')?;
    let mut out = BTreeMap::new();
    loop {
        p.space();
        if p.eat(b'}') {
            break;
        }
        let key = p.strings()?;
        p.space();
        p.expect(b':')?;
        p.space();
        if let Some(v) = p.value()? {
            out.entry(key).or_insert(v);
        }
        p.space();
        if !p.eat(b',') {
            p.space();
            p.expect(b'}')?;
            break;
        }
    }
    p.space();
    p.done().then_some(out)
}

/// A reader of the Python literals `pprint` writes.
struct Literal<'a> {
    text: &'a [u8],
    at: usize,
}

impl Literal<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn space(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.at += 1;
        }
    }

    fn eat(&mut self, b: u8) -> bool {
        let hit = self.peek() == Some(b);
        self.at += usize::from(hit);
        hit
    }

    fn expect(&mut self, b: u8) -> Option<()> {
        self.eat(b).then_some(())
    }

    fn done(&self) -> bool {
        self.at == self.text.len()
    }

    /// One string literal (`'…'` or `"…"`, with backslash escapes).
    fn string(&mut self) -> Option<String> {
        let quote = self.peek().filter(|q| matches!(q, b'\'' | b'"'))?;
        self.at += 1;
        let mut out = Vec::new();
        loop {
            let b = self.peek()?;
            self.at += 1;
            match b {
                b'\\' => {
                    let e = self.peek()?;
                    self.at += 1;
                    out.push(match e {
                        b'n' => b'\n',
                        b't' => b'\t',
                        other => other,
                    });
                }
                b if b == quote => break,
                b => out.push(b),
            }
        }
        String::from_utf8(out).ok()
    }

    /// Adjacent string literals, as Python joins them (pprint splits a long one so).
    fn strings(&mut self) -> Option<String> {
        let mut out = self.string()?;
        loop {
            let save = self.at;
            self.space();
            match self.string() {
                Some(more) => out.push_str(&more),
                None => {
                    self.at = save;
                    return Some(out);
                }
            }
        }
    }

    /// A value: `Some(Some(v))` for a number, `Some(None)` for anything else read past.
    fn value(&mut self) -> Option<Option<f64>> {
        match self.peek()? {
            b'\'' | b'"' => Some(self.strings()?.trim().parse::<f64>().ok()),
            b'(' => {
                // A long string split in parentheses, or a tuple.
                let save = self.at;
                self.at += 1;
                self.space();
                if let Some(s) = self.strings() {
                    self.space();
                    if self.eat(b')') {
                        return Some(s.trim().parse::<f64>().ok());
                    }
                }
                self.at = save;
                self.skip().then_some(None)
            }
            b'{' | b'[' => self.skip().then_some(None),
            _ => {
                let start = self.at;
                while self.peek().is_some_and(|b| {
                    !matches!(b, b',' | b'}' | b']' | b')') && !b.is_ascii_whitespace()
                }) {
                    self.at += 1;
                }
                let word = std::str::from_utf8(&self.text[start..self.at]).ok()?;
                if word.is_empty() {
                    return None;
                }
                // Ints (the logger turns every float into a string); True, False, None and
                // other names are no numbers.
                let int = word.strip_prefix('-').unwrap_or(word);
                Some(
                    (!int.is_empty() && int.bytes().all(|b| b.is_ascii_digit()))
                        .then(|| word.parse::<f64>().ok())
                        .flatten(),
                )
            }
        }
    }

    /// Past one bracketed value.
    fn skip(&mut self) -> bool {
        let mut depth = 0usize;
        while let Some(b) = self.peek() {
            match b {
                b'\'' | b'"' => {
                    if self.string().is_none() {
                        return false;
                    }
                    continue;
                }
                b'{' | b'[' | b'(' => depth += 1,
                b'}' | b']' | b')' => {
                    depth -= 1;
                    if depth == 0 {
                        self.at += 1;
                        return true;
                    }
                }
                _ => {}
            }
            self.at += 1;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_give_the_step_and_rays_prefix() {
        let line = b"(skyrl_entrypoint pid=77) 2026-12-06 04:34:51.743 | INFO     | skyrl.train.utils.tracking:log:189 - Step 12: ";
        assert_eq!(
            header(line),
            Some((12, b"(skyrl_entrypoint pid=77) ".to_vec()))
        );
        let plain =
            b"2026-12-06 04:34:51.743 | INFO     | skyrl_train.utils.tracking:log:80 - Step 3:";
        assert_eq!(header(plain), Some((3, Vec::new())));
        for no in [
            &b"x | skyrl.train.utils.tracking:log:189 - Step : "[..],
            b"x | skyrl.train.utils.tracking:log:189 - Step 3: more",
            b"x | skyrl.train.utils.tracking:finish:90 - Step 3: ",
        ] {
            assert_eq!(header(no), None, "{}", String::from_utf8_lossy(no));
        }
    }

    #[test]
    fn payloads_keep_numbers_and_skip_the_rest() {
        let text = b"{'a': '0.1500', 'b': 3, 'c': -2, 'd': 'nan', 'e': '-inf', 'f': 'x', \
                     'g': ['1.0000', '2.0000'], 'h': {'x': '1.5000'}, 'i': True, 'j': None, \
                     \"k'q\": ('12.'\n '5000'), 'l' 'm': '1e-3'}";
        let m = parse_payload(text).unwrap();
        assert_eq!(m["a"], 0.15);
        assert_eq!(m["b"], 3.0);
        assert_eq!(m["c"], -2.0);
        assert!(m["d"].is_nan());
        assert_eq!(m["e"], f64::NEG_INFINITY);
        assert_eq!(m["k'q"], 12.5);
        assert_eq!(m["lm"], 0.001);
        for gone in ["f", "g", "h", "i", "j"] {
            assert!(!m.contains_key(gone), "{gone}");
        }
        assert_eq!(parse_payload(b"{'a': '1.0'"), None);
        assert_eq!(parse_payload(b"{'a': '1.0'} x"), None);
    }

    #[test]
    fn a_record_is_collected_across_chunks_and_other_actors() {
        let log = "\x1b[36m(skyrl_entrypoint pid=7)\x1b[0m \x1b[32m2026\x1b[0m | INFO | skyrl.train.utils.tracking:log:189 - \x1b[1mStep 2: \n\
                   \x1b[36m(skyrl_entrypoint pid=7)\x1b[0m {'a': '0.5000',\n\
                   \x1b[33m(RayWorker pid=9)\x1b[0m  'noise': 1,\n\
                   \x1b[36m(skyrl_entrypoint pid=7)\x1b[0m  'b': 2}\x1b[0m\n";
        let bytes = log.as_bytes();
        let cut = log.find("(RayWorker").unwrap();
        let mut blocks = Blocks::default();
        let mut got = Vec::new();
        blocks.feed(&bytes[..cut], 0, &mut |r, at| got.push((r.to_vec(), at)));
        assert!(got.is_empty());
        assert_eq!(blocks.open_at(), Some(0));
        blocks.feed(&bytes[cut..], cut as u64, &mut |r, at| {
            got.push((r.to_vec(), at))
        });
        assert_eq!(blocks.open_at(), None);
        let (record, at) = &got[0];
        assert_eq!(*at, 0);
        let (step, m) = parse_record(record.strip_prefix(TAG).unwrap()).unwrap();
        assert_eq!(step, 2);
        assert_eq!(
            m.into_iter().collect::<Vec<_>>(),
            [("a".into(), 0.5), ("b".into(), 2.0)]
        );
    }

    #[test]
    fn a_broken_record_is_dropped_and_the_next_header_read() {
        let log = "(p pid=1) t | x.tracking:log:1 - Step 1: \n(p pid=1) not a dict\n\
                   (p pid=1) t | x.tracking:log:1 - Step 2: \n(p pid=1) {'a': 1}\n";
        let mut blocks = Blocks::default();
        let mut got = Vec::new();
        blocks.feed(log.as_bytes(), 0, &mut |r, _| got.push(r.to_vec()));
        assert_eq!(got.len(), 1);
        assert!(got[0].starts_with(b"\x00console 2 "));
    }
}
