//! What `grid --all` was asked for, kept as `<run_root>/<grid>/grid.toml`: every cell in its
//! order, and for each whether it was submitted, was already recorded, was skipped, or waits
//! (rendered into its run folder) for room in its QOS. `tend` submits the waiting cells as room
//! frees, in order, until every cell has run; the grid is then over and its report written.
//!
//! The file is state, not a cache: written atomically under the run root's turn, and a file
//! that does not read is an error naming it, never guessed at.

use crate::error::{Error, Result};
use crate::util::fs::write_atomic;
use camino::{Utf8Path, Utf8PathBuf};
use serde::{Deserialize, Serialize};

/// Bumped when the file's meaning changes; a file of another version is refused by name.
const VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GridIntent {
    pub version: u32,
    pub grid: String,
    /// When `grid --all` was run (Unix seconds).
    pub asked_unix: i64,
    /// The command as the user gave it, for the record.
    pub command: String,
    /// Cells left out with `--skip`.
    #[serde(default)]
    pub skipped: Vec<String>,
    /// Every other cell, in the grid's order (cell i waits for cell i-8: its lane).
    pub cells: Vec<CellIntent>,
}

// No `deny_unknown_fields` here: serde cannot have it beside a flattened enum.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellIntent {
    /// `grid/cell`.
    pub target: String,
    #[serde(flatten)]
    pub status: CellStatus,
    /// The estimated GPU-hours of the cell's run, when `estimate` knew them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimate_gpu_hours: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum CellStatus {
    /// Already in the ledger when `grid --all` ran, as this job: left alone.
    Recorded { job_id: String },
    /// Submitted as this job (by `grid --all`, or by `tend` later).
    Submitted { job_id: String },
    /// Rendered into `run_dir` (scripts and a `waiting.toml` record), not yet submitted: its
    /// QOS had no room.
    Waiting { run_dir: Utf8PathBuf, qos: String },
}

impl CellIntent {
    pub fn cell(&self) -> &str {
        self.target.rsplit('/').next().unwrap_or(&self.target)
    }

    pub fn is_waiting(&self) -> bool {
        matches!(self.status, CellStatus::Waiting { .. })
    }
}

/// What `grid --all` was asked, as the submission records it.
#[derive(Debug, Clone)]
pub struct GridAsk {
    pub grid: String,
    pub command: String,
    pub skipped: Vec<String>,
    /// Estimated GPU-hours by target, where known.
    pub estimates: std::collections::BTreeMap<String, f64>,
}

/// Where the intent of `grid` lives.
pub fn path_of(run_root: &Utf8Path, grid: &str) -> Utf8PathBuf {
    run_root.join(grid).join("grid.toml")
}

impl GridIntent {
    pub fn new(grid: &str, command: String, skipped: Vec<String>) -> GridIntent {
        GridIntent {
            version: VERSION,
            grid: grid.to_owned(),
            asked_unix: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs() as i64),
            command,
            skipped,
            cells: Vec::new(),
        }
    }

    /// The grid's intent, if `grid --all` recorded one.
    pub fn load(run_root: &Utf8Path, grid: &str) -> Result<Option<GridIntent>> {
        let path = path_of(run_root, grid);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io("read", &path, e)),
        };
        let intent: GridIntent = toml::from_str(&text).map_err(|e| Error::BadIntent {
            path: path.clone(),
            grid: grid.to_owned(),
            reason: crate::util::toml_error::bounded(e.message()),
        })?;
        if intent.version != VERSION || intent.grid != grid {
            return Err(Error::IntentMismatch {
                path,
                found_version: intent.version,
                found_grid: intent.grid,
                version: VERSION,
                grid: grid.to_owned(),
            });
        }
        Ok(Some(intent))
    }

    /// Every grid with an intent under `run_root`, by name (one folder listing).
    pub fn grids(run_root: &Utf8Path) -> Result<Vec<String>> {
        let entries = match run_root.read_dir_utf8() {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(Error::io("list", run_root, e)),
        };
        let mut grids: Vec<String> = entries
            .filter_map(|e| e.ok())
            .filter(|e| e.path().join("grid.toml").is_file())
            .map(|e| e.file_name().to_owned())
            .collect();
        grids.sort();
        Ok(grids)
    }

    pub fn store(&self, run_root: &Utf8Path) -> Result<()> {
        let path = path_of(run_root, &self.grid);
        let dir = path.parent().expect("a grid folder");
        std::fs::create_dir_all(dir).map_err(|e| Error::io("create", dir, e))?;
        let text = toml::to_string(self).map_err(Error::Serialize)?;
        write_atomic(&path, &text, 0o644)
    }

    pub fn waiting(&self) -> usize {
        self.cells.iter().filter(|c| c.is_waiting()).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_toml() {
        let mut intent = GridIntent::new("g", "rlctl grid --all g".into(), vec!["c".into()]);
        intent.cells = vec![
            CellIntent {
                target: "g/a".into(),
                status: CellStatus::Submitted { job_id: "7".into() },
                estimate_gpu_hours: Some(1.5),
            },
            CellIntent {
                target: "g/b".into(),
                status: CellStatus::Waiting {
                    run_dir: "/w/g/b/001".into(),
                    qos: "debug".into(),
                },
                estimate_gpu_hours: None,
            },
        ];
        let text = toml::to_string(&intent).unwrap();
        assert_eq!(toml::from_str::<GridIntent>(&text).unwrap(), intent);
        assert_eq!(intent.waiting(), 1);
        assert_eq!(intent.cells[1].cell(), "b");
    }
}
