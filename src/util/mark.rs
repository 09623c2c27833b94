//! Where a reader of an append-only file (a job's log, the ledger) left off, so that the next
//! reader reads only what was appended since, and the file a reader keeps of what it read.
//!
//! A mark belongs to one file: its device and inode, and the bytes just before the offset (a
//! replaced or rewritten file no longer has them). A file that is the same file with the same
//! size and modification time is not read at all; one shorter than the offset was truncated and
//! is read again from its start.

use camino::Utf8Path;
use serde::{Deserialize, Serialize};
use std::fs::{File, Metadata};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::MetadataExt;

/// Bytes before the offset that must be unchanged for a mark to hold.
const CHECK: u64 = 64;

/// A file as a reader left it: read up to `offset`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mark {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_s: i64,
    mtime_ns: i64,
    pub offset: u64,
    /// Hex of the `CHECK` bytes before `offset`.
    check: String,
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
            offset,
            check: check_bytes(file, offset)?,
        })
    }

    /// What `file` (with metadata `meta`) is since this mark.
    pub fn since(&self, file: &mut File, meta: &Metadata) -> io::Result<Since> {
        if (self.dev, self.ino) != (meta.dev(), meta.ino()) || self.offset > meta.len() {
            return Ok(Since::Anew);
        }
        let untouched = self.size == meta.len()
            && (self.mtime_s, self.mtime_ns) == (meta.mtime(), meta.mtime_nsec());
        Ok(match untouched {
            true => Since::Unchanged,
            false if check_bytes(file, self.offset)? == self.check => Since::Appended(self.offset),
            false => Since::Anew,
        })
    }
}

/// A kept file's first line (JSON): the layout of what follows it, and the mark of the file it
/// was read from.
#[derive(Serialize, Deserialize)]
struct KeptHeader {
    format: u32,
    #[serde(flatten)]
    mark: Mark,
}

/// What a reader kept at `path` of a file it read up to `mark`, if it is there and of layout
/// `format`: the mark and the body. A file that cannot be read is none, never an error.
pub fn load_kept(path: &Utf8Path, format: u32) -> Option<(Mark, Vec<u8>)> {
    let mut bytes = std::fs::read(path).ok()?;
    let end = memchr::memchr(b'\n', &bytes)?;
    let header: KeptHeader = serde_json::from_slice(&bytes[..end]).ok()?;
    (header.format == format).then(|| (header.mark, bytes.split_off(end + 1)))
}

/// Keeps `body` (of layout `format`) at `path` with `mark`: written to a temporary file in the
/// same folder, then renamed, so that readers at once (cron and a person) see all or nothing.
pub fn store_kept(path: &Utf8Path, format: u32, mark: Mark, body: &[u8]) -> io::Result<()> {
    let mut bytes = serde_json::to_vec(&KeptHeader { format, mark }).map_err(io::Error::other)?;
    bytes.push(b'\n');
    bytes.extend_from_slice(body);
    let dir = path.parent().unwrap_or(Utf8Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(&bytes)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Hex of the bytes just before `offset` (fewer at the start of the file).
fn check_bytes(file: &mut File, offset: u64) -> io::Result<String> {
    let from = offset.saturating_sub(CHECK);
    file.seek(SeekFrom::Start(from))?;
    let mut buf = Vec::with_capacity(CHECK as usize);
    file.take(offset - from).read_to_end(&mut buf)?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
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
}
