//! The run root's turn: every command that submits or deletes (`launch`, `grid`, `tend`,
//! `clean`, `stage`, `render --out`) holds it from reading the queue and the ledger to its last
//! record or removal, so that what it read is still true when it acts.

use crate::error::{Error, Result};
use camino::{Utf8Path, Utf8PathBuf};

/// Held while it lives: an exclusive `flock` of the run root folder itself (no file of its
/// own, so nothing is left behind and nothing can be deleted from under it).
#[derive(Debug)]
pub struct Turn {
    _lock: std::fs::File,
    root: Utf8PathBuf,
}

impl Turn {
    /// Waits for the run root's turn; the folder is made first if it is missing.
    pub fn take(run_root: &Utf8Path) -> Result<Turn> {
        std::fs::create_dir_all(run_root).map_err(|e| Error::io("create", run_root, e))?;
        let file = std::fs::File::open(run_root).map_err(|e| Error::io("open", run_root, e))?;
        file.lock().map_err(|e| Error::io("lock", run_root, e))?;
        Ok(Turn {
            _lock: file,
            root: run_root.to_owned(),
        })
    }

    /// The run root's turn where the run root exists; none where it does not, since then no
    /// run is recorded there and nothing to take turns over (and a command that only writes
    /// elsewhere, `render --out`, must not make the profile's folders).
    pub fn if_exists(run_root: &Utf8Path) -> Result<Option<Turn>> {
        match run_root.is_dir() {
            true => Turn::take(run_root).map(Some),
            false => Ok(None),
        }
    }

    /// The run root this turn is of.
    pub fn root(&self) -> &Utf8Path {
        &self.root
    }
}
