//! Files: atomic writes, paths judged where they really are, sizes of folders.

use crate::error::{Error, Result};
use camino::{Utf8Path, Utf8PathBuf};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;

/// Written to a temporary file in the same folder, then renamed: readers see all or nothing.
pub fn write_atomic(path: &Utf8Path, text: &str, mode: u32) -> Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_str().is_empty() => dir,
        _ => Utf8Path::new("."),
    };
    let mut tmp =
        tempfile::NamedTempFile::new_in(dir).map_err(|e| Error::io("write into", dir, e))?;
    tmp.write_all(text.as_bytes())
        .and_then(|()| {
            tmp.as_file()
                .set_permissions(std::fs::Permissions::from_mode(mode))
        })
        .map_err(|e| Error::io("write", path, e))?;
    tmp.persist(path)
        .map_err(|e| Error::io("write", path, e.error))?;
    Ok(())
}

/// The path with every existing prefix's symlinks resolved, and a dangling link followed to
/// where it points (a link to an unmounted scratch is judged as scratch, not as the link); the
/// rest appended as written. This resolved path is what identifies a run's checkpoint folder.
pub fn resolve(path: &Utf8Path) -> Utf8PathBuf {
    resolve_within(path, 0)
}

/// Links followed before giving up, as the kernel's own limit (`ELOOP`).
const MAX_LINKS: u32 = 40;

fn resolve_within(path: &Utf8Path, links: u32) -> Utf8PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize_utf8() {
            return follow_rest(real, rest, links);
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                existing = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// `rest` (reversed) under the canonical `real`: a dangling link among the parts is followed
/// through `read_link`; past the first part that does not exist, nothing can be a link.
fn follow_rest(mut real: Utf8PathBuf, mut rest: Vec<String>, links: u32) -> Utf8PathBuf {
    while let Some(part) = rest.pop() {
        let next = real.join(&part);
        let is_link = std::fs::symlink_metadata(&next).is_ok_and(|m| m.file_type().is_symlink());
        match next.read_link_utf8() {
            Ok(target) if is_link && links < MAX_LINKS => {
                let mut out = real.join(target);
                for part in rest.iter().rev() {
                    out.push(part);
                }
                return resolve_within(&out, links + 1);
            }
            _ => real = next,
        }
    }
    real
}

/// A folder as the file system knows it: its resolved path (links followed, dangling ones too)
/// and, where it exists, its device and inode. Two paths name one folder when either agrees: a
/// link makes two spellings one path, a bind mount makes two paths one inode.
#[derive(Debug, Clone)]
pub struct Folder {
    pub path: Utf8PathBuf,
    inode: Option<(u64, u64)>,
}

impl Folder {
    pub fn of(path: &Utf8Path) -> Folder {
        use std::os::unix::fs::MetadataExt;
        let path = resolve(path);
        let inode = std::fs::metadata(&path).ok().map(|m| (m.dev(), m.ino()));
        Folder { path, inode }
    }

    /// Whether `self` and `other` are one folder.
    pub fn is(&self, other: &Folder) -> bool {
        self.path == other.path || (self.inode.is_some() && self.inode == other.inode)
    }

    /// Whether `self` is `other` or lies inside it (judged by resolved path, and by inode for
    /// `self` and each of its existing parents).
    pub fn is_within(&self, other: &Folder) -> bool {
        if self.path.starts_with(&other.path) {
            return true;
        }
        let Some(theirs) = other.inode else {
            return false;
        };
        use std::os::unix::fs::MetadataExt;
        (self.path.ancestors())
            .filter_map(|a| std::fs::metadata(a).ok())
            .any(|m| (m.dev(), m.ino()) == theirs)
    }
}

/// Bytes under a folder, symlinks not followed.
pub fn size(path: &std::path::Path) -> u64 {
    size_by(path, None).bytes
}

/// Bytes counted under a path, and whether all of it was counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size {
    pub bytes: u64,
    /// False when the deadline came first: `bytes` is then a lower bound.
    pub whole: bool,
}

impl Size {
    /// Nothing, wholly counted: where sums start.
    pub const NOTHING: Size = Size {
        bytes: 0,
        whole: true,
    };
}

impl std::ops::Add for Size {
    type Output = Size;

    fn add(self, other: Size) -> Size {
        Size {
            bytes: self.bytes + other.bytes,
            whole: self.whole && other.whole,
        }
    }
}

impl std::fmt::Display for Size {
    /// `12.0 GiB`, or `≥ 12.0 GiB` for a count the deadline cut short.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at_least = if self.whole { "" } else { "≥ " };
        write!(f, "{at_least}{}", crate::util::fmt::human(self.bytes))
    }
}

/// Bytes under `path`, counted until `deadline` (a folder of millions of files on a parallel
/// file system takes minutes). Symlinks are not followed: a link counts as itself, never as
/// what it points to, so nothing outside the folder is counted.
pub fn size_by(path: &std::path::Path, deadline: Option<std::time::Instant>) -> Size {
    let mut bytes = 0;
    let mut todo = vec![path.to_path_buf()];
    let mut seen = 0u32;
    while let Some(path) = todo.pop() {
        seen = seen.wrapping_add(1);
        if seen.is_multiple_of(256) && deadline.is_some_and(|d| std::time::Instant::now() >= d) {
            return Size {
                bytes,
                whole: false,
            };
        }
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if !meta.is_dir() {
            bytes += meta.len();
            continue;
        }
        if let Ok(entries) = std::fs::read_dir(&path) {
            todo.extend(entries.flatten().map(|e| e.path()));
        }
    }
    Size { bytes, whole: true }
}

/// The filesystem a path is (or would be) written to: its nearest existing folder, links
/// resolved, and the bytes an unprivileged writer may still use there (`statvfs`'s `f_bavail`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Room {
    /// The nearest existing ancestor of the path, links resolved: what was measured.
    pub at: Utf8PathBuf,
    pub free: u64,
    /// The filesystem's id (`st_dev`): two paths with one id share their free space.
    pub device: u64,
}

/// The [`Room`] of the filesystem `path` is written to; `None` when not even `/` answers.
pub fn room(path: &Utf8Path) -> Option<Room> {
    use std::os::unix::fs::MetadataExt;
    let real = resolve(path);
    let at = real.ancestors().find(|a| a.is_dir())?.to_path_buf();
    let vfs = rustix::fs::statvfs(at.as_std_path()).ok()?;
    let device = std::fs::metadata(&at).ok()?.dev();
    Some(Room {
        free: vfs.f_bavail.saturating_mul(vfs.f_frsize),
        at,
        device,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_size_cut_by_its_deadline_says_it_is_a_lower_bound() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..600 {
            std::fs::write(dir.path().join(format!("f{i}")), [0u8; 10]).unwrap();
        }
        let whole = size_by(dir.path(), None);
        assert_eq!((whole.bytes, whole.whole), (6000, true));
        let cut = size_by(dir.path(), Some(std::time::Instant::now()));
        assert!(!cut.whole && cut.bytes < 6000, "{cut:?}");
        assert!(cut.to_string().starts_with("≥ "), "{cut}");
    }

    #[test]
    fn resolve_follows_symlinks_of_the_existing_prefix() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8PathBuf::try_from(dir.path().canonicalize().unwrap()).unwrap();
        std::fs::create_dir(root.join("scratch")).unwrap();
        std::os::unix::fs::symlink(root.join("scratch"), root.join("work")).unwrap();
        assert_eq!(resolve(&root.join("work/a/b")), root.join("scratch/a/b"));
        assert_eq!(
            resolve(&root.join("elsewhere/x/../y")),
            root.join("elsewhere/x/../y")
        );
    }

    #[test]
    fn resolve_follows_a_dangling_link_to_where_it_points() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8PathBuf::try_from(dir.path().canonicalize().unwrap()).unwrap();
        std::fs::create_dir(root.join("work")).unwrap();
        std::os::unix::fs::symlink(root.join("scratch/gone"), root.join("work/ckpt")).unwrap();
        assert_eq!(
            resolve(&root.join("work/ckpt/x")),
            root.join("scratch/gone/x")
        );
        // A relative link, dangling, through another link.
        std::os::unix::fs::symlink("../work/ckpt", root.join("work/rel")).unwrap();
        assert_eq!(resolve(&root.join("work/rel")), root.join("scratch/gone"));
        // A loop ends instead of spinning.
        std::os::unix::fs::symlink(root.join("work/loop"), root.join("work/loop")).unwrap();
        assert!(resolve(&root.join("work/loop")).starts_with(&root));
    }
}
