//! What a profile says of its file systems beyond its folders: which of them compute nodes can
//! see at all, and which delete files after some days.

use serde::{Deserialize, Serialize};

/// A file system (by path prefix) that deletes files older than `days` (Leonardo's
/// `$SCRATCH`: 40 days).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PurgeFile {
    pub path: String,
    pub days: u32,
}

#[derive(Debug, Clone, Serialize)]
pub struct Purge {
    pub path: camino::Utf8PathBuf,
    pub days: u32,
}

impl Purge {
    /// The window in seconds.
    pub fn seconds(&self) -> f64 {
        f64::from(self.days) * 86_400.0
    }
}
