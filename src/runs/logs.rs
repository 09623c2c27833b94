//! What `rlctl logs` prints of a run's log: all of it, its last lines, or its last error, and
//! with `--follow` what it gains while the job runs. A log grows to gigabytes of vLLM and Ray
//! output, so its end is found by reading backwards from the end, never by reading it whole.

use crate::error::{Error, Result};
use crate::runs::log::{is_error_line, without_ansi};
use crate::runs::probe::Queue;
use crate::slurm::Slurm;
use crate::store::ledger::Record;
use camino::Utf8Path;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};

/// Where printing starts.
#[derive(Debug, Clone, Copy)]
pub enum Begin {
    /// The log's first byte.
    Start,
    /// Its last N lines.
    Tail(usize),
}

/// How much of a log is read at a time, forwards or backwards.
const CHUNK: usize = 64 << 10;

/// How much of a log's end `--errors` reads: the error that ended a run is near the end.
pub const ERRORS_WINDOW: u64 = 4 << 20;

/// The most lines an error block shows (its last ones): a traceback of a deep recursion.
const BLOCK_LINES: usize = 400;

/// How many error lines `--errors` shows when the log holds no traceback.
const ERROR_LINES: usize = 10;

/// Prints `record`'s log from `from`; with `follow`, keeps printing what is appended until
/// SLURM no longer holds the job. A log not there is an error unless following a job that may
/// still start writing it.
pub fn print(
    slurm: &Slurm,
    record: &Record,
    from: Begin,
    follow: bool,
    out: &mut dyn Write,
) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let log = &record.log;
    let read_err = |e| Error::io("read", log.clone(), e);
    let mut offset: Option<u64> = None;
    // The file read so far (device, inode): a log replaced or cut shorter is read from its start.
    let mut reading: Option<(u64, u64)> = None;
    let mut first_pass = true;
    let mut chunk = vec![0u8; CHUNK];
    loop {
        // Whether it still runs is asked before reading, so the last bytes are never missed.
        let running = follow && Queue::read(slurm)?.holds(&record.job_id);
        if let Ok(mut file) = File::open(log) {
            let meta = file.metadata().map_err(read_err)?;
            let same = reading.is_none_or(|id| id == (meta.dev(), meta.ino()));
            let at = match offset {
                // A log that appeared after the first look is all new: printed whole.
                None if !first_pass => 0,
                None => match from {
                    Begin::Start => 0,
                    Begin::Tail(n) => tail_start(&mut file, meta.len(), n).map_err(read_err)?,
                },
                Some(at) if !same || meta.len() < at => {
                    crate::say!(
                        "rlctl: {log} was {} since it was last read: printing it again from its start",
                        if same { "cut shorter" } else { "replaced" }
                    );
                    0
                }
                Some(at) => at,
            };
            reading = Some((meta.dev(), meta.ino()));
            offset = Some(copy(&mut file, at, meta.len(), &mut chunk, out).map_err(
                |e| match e {
                    CopyError::Read(e) => read_err(e),
                    CopyError::Write(e) => Error::io("write", "standard output", e),
                },
            )?);
        } else if !follow {
            return Err(no_log(record));
        }
        first_pass = false;
        if !running {
            return Ok(());
        }
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
}

/// A writer that drops the colour codes (`ESC ... letter`, as [`without_ansi`] reads them) of
/// what goes through it: `logs` into a pipe gives plain text. An escape cut between two chunks
/// is still dropped whole, since the state carries over.
pub struct Plain<'a> {
    inner: &'a mut dyn Write,
    in_escape: bool,
}

impl<'a> Plain<'a> {
    pub fn new(inner: &'a mut dyn Write) -> Plain<'a> {
        Plain {
            inner,
            in_escape: false,
        }
    }
}

impl Write for Plain<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let mut kept = Vec::with_capacity(bytes.len());
        for &b in bytes {
            match (self.in_escape, b) {
                (true, b) => self.in_escape = !b.is_ascii_alphabetic(),
                (false, 0x1b) => self.in_escape = true,
                (false, b) => kept.push(b),
            }
        }
        self.inner.write_all(&kept)?;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// A recorded run's log that is not there, said as such (not as an unknown run).
pub fn no_log(record: &Record) -> Error {
    Error::NoLog {
        target: record.target.clone(),
        job_id: record.job_id.clone(),
        log: record.log.clone(),
    }
}

enum CopyError {
    Read(std::io::Error),
    Write(std::io::Error),
}

/// Streams `file` from `from` up to `end` (its size when looked at, so a log cut meanwhile ends
/// the pass there) in chunks: a 2 GB log costs one chunk of memory and `| head` ends at once.
/// Returns where it stopped.
fn copy(
    file: &mut File,
    from: u64,
    end: u64,
    chunk: &mut [u8],
    out: &mut dyn Write,
) -> std::result::Result<u64, CopyError> {
    let mut offset = from;
    file.seek(SeekFrom::Start(offset))
        .map_err(CopyError::Read)?;
    while offset < end {
        let want = chunk.len().min((end - offset) as usize);
        let n = match file.read(&mut chunk[..want]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(CopyError::Read(e)),
        };
        offset += n as u64;
        out.write_all(&chunk[..n]).map_err(CopyError::Write)?;
    }
    out.flush().map_err(CopyError::Write)?;
    Ok(offset)
}

/// Where the last `n` lines of the first `len` bytes of `file` start, found by reading
/// backwards a chunk at a time: memory is one chunk, whatever the log's size. A last line
/// without its newline is a line.
pub fn tail_start(file: &mut File, len: u64, n: usize) -> std::io::Result<u64> {
    if n == 0 {
        return Ok(len);
    }
    let mut chunk = vec![0u8; CHUNK];
    let mut end = len;
    let mut seen = 0;
    while end > 0 {
        let start = end.saturating_sub(CHUNK as u64);
        let bytes = &mut chunk[..(end - start) as usize];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(bytes)?;
        for i in memchr::memrchr_iter(b'\n', bytes) {
            let at = start + i as u64;
            // The newline that ends the last line starts no line.
            if at + 1 == len {
                continue;
            }
            seen += 1;
            if seen == n {
                return Ok(at + 1);
            }
        }
        end = start;
    }
    Ok(0)
}

/// What `rlctl logs --errors` prints: the log's last Python traceback, from its `Traceback`
/// line to the exception it ends with; else its last lines that read like errors (the rule
/// [`is_error_line`] that `tend` and `watch` use); `None` when the end of the log holds neither.
/// Only the last [`ERRORS_WINDOW`] bytes are read.
pub fn last_errors(log: &Utf8Path) -> std::io::Result<Option<String>> {
    let mut file = File::open(log)?;
    let len = file.metadata()?.len();
    let start = len.saturating_sub(ERRORS_WINDOW);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.take(ERRORS_WINDOW).read_to_end(&mut bytes)?;
    let from = match start {
        0 => 0,
        _ => memchr::memchr(b'\n', &bytes).map_or(bytes.len(), |i| i + 1),
    };
    let text = without_ansi(&String::from_utf8_lossy(&bytes[from..]));
    Ok(error_block(&text))
}

/// The error block of `text` (see [`last_errors`]).
fn error_block(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .rposition(|l| l.contains("Traceback (most recent call last):"));
    let Some(start) = start else {
        let mut errors: Vec<&str> = (lines.iter().rev())
            .filter(|l| is_error_line(l))
            .take(ERROR_LINES)
            .copied()
            .collect();
        errors.reverse();
        return (!errors.is_empty()).then(|| lines_of(&errors));
    };
    // Ray prefixes each line of a worker with `(Name pid=N[, ip=…])`: lines of other
    // processes interleaved with the traceback are not part of it.
    let prefix = ray_prefix(lines[start]);
    let mut block = vec![lines[start]];
    for line in &lines[start + 1..] {
        let Some(body) = body(line, prefix) else {
            continue;
        };
        block.push(line);
        // The exception line is the first one back at the left margin.
        if !body.trim().is_empty() && !body.starts_with(char::is_whitespace) {
            break;
        }
    }
    let from = block.len().saturating_sub(BLOCK_LINES);
    Some(lines_of(&block[from..]))
}

/// `line` after the Ray prefix `prefix` (a line of the same process), or the whole line when
/// there is none; `None` for a line of another process.
fn body<'a>(line: &'a str, prefix: Option<&str>) -> Option<&'a str> {
    match prefix {
        None => Some(line),
        Some(p) => line
            .strip_prefix(p)
            .map(|b| b.strip_prefix(' ').unwrap_or(b)),
    }
}

/// The `(Name pid=N…)` Ray puts before a worker's lines, if `line` starts with one.
fn ray_prefix(line: &str) -> Option<&str> {
    let end = line.find(')')?;
    let prefix = &line[..=end];
    (prefix.starts_with('(') && prefix.contains("pid=")).then_some(prefix)
}

fn lines_of(lines: &[&str]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_traceback_of_a_ray_worker_skips_other_processes() {
        let text = "Traceback (most recent call last):\nValueError: old\nstep 3\n\
            (W pid=1) Traceback (most recent call last):\n\
            (W pid=1)   File \"a.py\", line 1, in <module>\n\
            (V pid=2) INFO noise\n\
            (W pid=1)     boom()\n\
            (W pid=1) RuntimeError: CUDA out of memory\n\
            (W pid=1) after\n";
        assert_eq!(
            error_block(text).unwrap(),
            "(W pid=1) Traceback (most recent call last):\n\
             (W pid=1)   File \"a.py\", line 1, in <module>\n\
             (W pid=1)     boom()\n\
             (W pid=1) RuntimeError: CUDA out of memory\n"
        );
    }

    #[test]
    fn the_tail_starts_after_the_nth_last_newline() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        let text: String = (0..20_000).map(|i| format!("line {i}\n")).collect();
        std::fs::write(&path, &text).unwrap();
        let mut file = File::open(&path).unwrap();
        let len = text.len() as u64;
        let at = tail_start(&mut file, len, 3).unwrap() as usize;
        assert_eq!(&text[at..], "line 19997\nline 19998\nline 19999\n");
        assert_eq!(tail_start(&mut file, len, 30_000).unwrap(), 0);
        std::fs::write(&path, "a\nb").unwrap();
        let mut file = File::open(&path).unwrap();
        assert_eq!(tail_start(&mut file, 3, 1).unwrap(), 2);
    }
}
