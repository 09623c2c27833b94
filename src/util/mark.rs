//! Where a reader of an append-only file (a job's log, the ledger) left off, so that the next
//! reader reads only what was appended since, and the file a reader keeps of what it read.
//!
//! A cache is only a faster read: a mark belongs to one file (its device and inode) and to the
//! bytes before its offset, proven unchanged by a checksum of blocks sampled over all of them
//! (the first, the last and evenly between: a rewrite of a 2 GB log is caught by reading 64 KiB).
//! A file that is the same file with the same size, modification and change times is not read
//! at all: the change time cannot be set back (`touch -r` sets the modification time, and moves
//! the change time), so an edit that keeps the size and the modification time still reads as
//! written. A file written since that did not grow was rewritten, not appended to; one shorter
//! than the offset was truncated; both are read again from their start. What a reader keeps
//! carries a checksum of itself: a kept file cut short, corrupted or of another layout is none.

use camino::Utf8Path;
use serde::{Deserialize, Serialize};
use std::fs::{File, Metadata};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::MetadataExt;

/// How many blocks of the bytes before an offset are sampled, and how long each is.
const BLOCKS: u64 = 16;
const BLOCK: u64 = 4096;

/// A file as a reader left it: read up to `offset`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mark {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_s: i64,
    mtime_ns: i64,
    ctime_s: i64,
    ctime_ns: i64,
    pub offset: u64,
    /// Hex of the checksum of the blocks sampled over `[0, offset)` (see [`sample`]).
    sample: String,
}

/// What a file is since a mark was made on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Since {
    /// Not written since: what was read of it is all there is.
    Unchanged,
    /// The same bytes up to the mark's offset: read on from there.
    Appended(u64),
    /// Truncated, replaced or rewritten: read it again from its start.
    Anew,
}

impl Mark {
    /// `file` (whose metadata is `meta`, taken before anything was read) read up to `offset`.
    pub fn new(file: &mut File, meta: &Metadata, offset: u64) -> io::Result<Mark> {
        Ok(Mark {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.len(),
            mtime_s: meta.mtime(),
            mtime_ns: meta.mtime_nsec(),
            ctime_s: meta.ctime(),
            ctime_ns: meta.ctime_nsec(),
            offset,
            sample: sample(file, offset)?,
        })
    }

    /// What `file` (with metadata `meta`) is since this mark.
    pub fn since(&self, file: &mut File, meta: &Metadata) -> io::Result<Since> {
        if (self.dev, self.ino) != (meta.dev(), meta.ino()) || self.offset > meta.len() {
            return Ok(Since::Anew);
        }
        let times = (self.mtime_s, self.mtime_ns, self.ctime_s, self.ctime_ns)
            == (
                meta.mtime(),
                meta.mtime_nsec(),
                meta.ctime(),
                meta.ctime_nsec(),
            );
        if self.size == meta.len() && times {
            return Ok(Since::Unchanged);
        }
        // Written without growing: rewritten in place (an append always grows a file).
        let rewritten = meta.len() <= self.size
            && (self.mtime_s, self.mtime_ns) != (meta.mtime(), meta.mtime_nsec());
        Ok(match rewritten {
            false if sample(file, self.offset)? == self.sample => Since::Appended(self.offset),
            _ => Since::Anew,
        })
    }
}

/// A kept file's first line (JSON): the layout of what follows it, the mark of the file it was
/// read from, and the checksum of the mark and what follows.
#[derive(Serialize, Deserialize)]
struct KeptHeader {
    format: u32,
    #[serde(flatten)]
    mark: Mark,
    sum: String,
}

/// What a reader kept at `path` of a file it read up to `mark`, if it is there, whole and of
/// layout `format`: the mark and the body. A file that cannot be read is none, never an error.
pub fn load_kept(path: &Utf8Path, format: u32) -> Option<(Mark, Vec<u8>)> {
    let mut bytes = std::fs::read(path).ok()?;
    let end = memchr::memchr(b'\n', &bytes)?;
    let header: KeptHeader = serde_json::from_slice(&bytes[..end]).ok()?;
    let body = bytes.split_off(end + 1);
    (header.format == format && header.sum == kept_sum(format, &header.mark, &body)?)
        .then_some((header.mark, body))
}

/// Keeps `body` (of layout `format`) at `path` with `mark`: written to a temporary file in the
/// same folder, then renamed, so that readers at once (cron and a person) see all or nothing.
pub fn store_kept(path: &Utf8Path, format: u32, mark: Mark, body: &[u8]) -> io::Result<()> {
    let sum = kept_sum(format, &mark, body).ok_or_else(|| io::Error::other("mark"))?;
    let header = KeptHeader { format, mark, sum };
    write_headed(path, &header, body)
}

/// Writes `header` as a JSON line, then `body`, to a temporary file in `path`'s folder, renamed
/// over `path`: readers at once see all or nothing.
fn write_headed(path: &Utf8Path, header: &impl Serialize, body: &[u8]) -> io::Result<()> {
    let mut bytes = serde_json::to_vec(header).map_err(io::Error::other)?;
    bytes.push(b'\n');
    bytes.extend_from_slice(body);
    let dir = path.parent().unwrap_or(Utf8Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(&bytes)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// A whole file of layout `format` with a checksum of itself (an index that belongs to no one
/// file, unlike [`load_kept`]'s), if it is there, whole and of that layout: its body.
pub fn load_summed(path: &Utf8Path, format: u32) -> Option<Vec<u8>> {
    let mut bytes = std::fs::read(path).ok()?;
    let end = memchr::memchr(b'\n', &bytes)?;
    let header: SummedHeader = serde_json::from_slice(&bytes[..end]).ok()?;
    let body = bytes.split_off(end + 1);
    (header.format == format && header.sum == summed(format, &body)).then_some(body)
}

/// Keeps `body` at `path` as [`load_summed`] reads it, atomically as [`store_kept`] does.
pub fn store_summed(path: &Utf8Path, format: u32, body: &[u8]) -> io::Result<()> {
    let header = SummedHeader {
        format,
        sum: summed(format, body),
    };
    write_headed(path, &header, body)
}

#[derive(Serialize, Deserialize)]
struct SummedHeader {
    format: u32,
    sum: String,
}

fn summed(format: u32, body: &[u8]) -> String {
    let mut sum = Sum::new();
    sum.add(&format.to_le_bytes());
    sum.add(body);
    sum.hex()
}

/// The checksum of `parts`, each summed in turn: for a kept file that writes its own layout.
pub fn checksum(parts: &[&[u8]]) -> String {
    let mut sum = Sum::new();
    for part in parts {
        sum.add(part);
    }
    sum.hex()
}

/// The checksum of a kept file's layout, mark and body.
fn kept_sum(format: u32, mark: &Mark, body: &[u8]) -> Option<String> {
    let mut sum = Sum::new();
    sum.add(&format.to_le_bytes());
    sum.add(&serde_json::to_vec(mark).ok()?);
    sum.add(body);
    Some(sum.hex())
}

/// The checksum of blocks of `file` sampled over `[0, offset)`: all of it when it is short, else
/// [`BLOCKS`] blocks of [`BLOCK`] bytes, the first at 0, the last ending at `offset`, the others
/// evenly between; with the offset itself.
fn sample(file: &mut File, offset: u64) -> io::Result<String> {
    let mut sum = Sum::new();
    sum.add(&offset.to_le_bytes());
    let mut buf = vec![0u8; BLOCK as usize];
    let mut read = |file: &mut File, from: u64, len: u64, sum: &mut Sum| -> io::Result<()> {
        file.seek(SeekFrom::Start(from))?;
        let mut left = len;
        while left > 0 {
            let n = left.min(BLOCK) as usize;
            file.read_exact(&mut buf[..n])?;
            sum.add(&buf[..n]);
            left -= n as u64;
        }
        Ok(())
    };
    if offset <= BLOCKS * BLOCK {
        read(file, 0, offset, &mut sum)?;
    } else {
        for i in 0..BLOCKS {
            read(file, i * (offset - BLOCK) / (BLOCKS - 1), BLOCK, &mut sum)?;
        }
    }
    Ok(sum.hex())
}

/// A 64-bit checksum of bytes, eight at a time: not cryptographic, but any change of the bytes
/// it covers changes it but by the rarest chance, and it is the same on every build.
struct Sum {
    h: u64,
    len: u64,
}

impl Sum {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;

    fn new() -> Sum {
        Sum {
            h: 0xcbf2_9ce4_8422_2325,
            len: 0,
        }
    }

    fn word(&mut self, w: u64) {
        self.h = (self.h ^ w).wrapping_mul(Self::K).rotate_left(29);
    }

    fn add(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.word(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        let mut last = [0u8; 8];
        last[..rest.len()].copy_from_slice(rest);
        self.word(u64::from_le_bytes(last) ^ ((rest.len() as u64) << 59));
        self.len += bytes.len() as u64;
    }

    fn hex(mut self) -> String {
        self.word(self.len);
        let h = self.h ^ (self.h >> 31);
        format!("{:016x}", h.wrapping_mul(Self::K) ^ (h >> 17))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn since(path: &std::path::Path, mark: &Mark) -> Since {
        let mut file = File::open(path).unwrap();
        let meta = file.metadata().unwrap();
        mark.since(&mut file, &meta).unwrap()
    }

    #[test]
    fn a_file_is_unchanged_appended_or_new_since_its_mark() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        std::fs::write(&path, "one\ntwo\n").unwrap();
        let mut file = File::open(&path).unwrap();
        let meta = file.metadata().unwrap();
        let mark = Mark::new(&mut file, &meta, 8).unwrap();
        assert_eq!(since(&path, &mark), Since::Unchanged);

        let mut append = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        append.write_all(b"three\n").unwrap();
        assert_eq!(since(&path, &mark), Since::Appended(8));

        // Rewritten in place, as long as before and longer: the bytes before the mark differ.
        std::fs::write(&path, "ONE\ntwo\nthree\n").unwrap();
        assert_eq!(since(&path, &mark), Since::Anew);
        // Truncated below the mark.
        std::fs::write(&path, "one\n").unwrap();
        assert_eq!(since(&path, &mark), Since::Anew);
        // Replaced by another file of the same bytes: another inode.
        let mut file = File::open(&path).unwrap();
        let meta = file.metadata().unwrap();
        let mark = Mark::new(&mut file, &meta, 4).unwrap();
        std::fs::write(dir.path().join("other"), "one\ntwo\nthree\n").unwrap();
        std::fs::rename(dir.path().join("other"), &path).unwrap();
        assert_eq!(since(&path, &mark), Since::Anew);
    }

    #[test]
    fn a_rewrite_that_keeps_the_size_the_tail_or_the_times_reads_anew() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        let text = |x: &str| format!("{x}{}tail\n", "-".repeat(200_000));
        std::fs::write(&path, text("one")).unwrap();
        let mut file = File::open(&path).unwrap();
        let meta = file.metadata().unwrap();
        let len = meta.len();
        let mark = Mark::new(&mut file, &meta, len).unwrap();
        // The same size and the same last bytes, another start.
        std::fs::write(&path, text("two")).unwrap();
        assert_eq!(since(&path, &mark), Since::Anew);
        // ... and longer, with the same bytes at the old end: the first block differs.
        std::fs::write(&path, text("two") + "more\n").unwrap();
        assert_eq!(since(&path, &mark), Since::Anew);
        // The modification time set back after an edit of the same size (`touch -r`).
        std::fs::write(&path, text("one")).unwrap();
        let file = File::open(&path).unwrap();
        let meta = file.metadata().unwrap();
        let mark = Mark::new(&mut File::open(&path).unwrap(), &meta, len).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&path, text("two")).unwrap();
        let edited = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        edited.set_modified(meta.modified().unwrap()).unwrap();
        assert_eq!(since(&path, &mark), Since::Anew);
    }
}
