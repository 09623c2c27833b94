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

/// The path with every existing prefix's symlinks resolved; the rest appended as written.
pub fn resolve(path: &Utf8Path) -> Utf8PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize_utf8() {
            let mut out = real;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
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

/// Bytes under a folder, symlinks not followed.
pub fn size(path: &std::path::Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    if !meta.is_dir() {
        return meta.len();
    }
    std::fs::read_dir(path)
        .map(|entries| entries.flatten().map(|e| size(&e.path())).sum())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
