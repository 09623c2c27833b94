//! A target's names: the two folder levels its run lives under, its job name, and its target
//! and description as commands show them.

use super::{PlanOptions, check_name};
use crate::error::{Error, Result};
use crate::preset::Selection;
use crate::preset::walltime::Walltime;

/// Where a target's run lives: its preset, its folder names and what its grid sets.
pub(super) struct Naming {
    /// The preset or grid: the first folder level.
    pub(super) group: String,
    /// The job name or cell: the second folder level.
    pub(super) member: String,
    pub(super) job_name: String,
    pub(super) grid_qos: Option<String>,
    pub(super) grid_time: Option<Walltime>,
}

impl Naming {
    /// The names `selection` runs under, as `options` (`--job-name`, `--as`) change them.
    pub(super) fn of(selection: &Selection, options: &PlanOptions) -> Result<Naming> {
        let Some(cell) = &selection.cell else {
            let name = &selection.preset.name;
            let job = options.job_name.clone().unwrap_or_else(|| name.clone());
            return Ok(Naming {
                group: name.clone(),
                member: job.clone(),
                job_name: job,
                grid_qos: None,
                grid_time: None,
            });
        };
        let grid = cell.grid;
        // `--as NEW`: the cell's knobs as a new cell of the grid, with its own folders.
        let member = match &options.cell_as {
            Some(new) => {
                check_name("--as", new)?;
                if cell.file.cells.iter().any(|c| c.name == *new) {
                    return Err(Error::BadFlag {
                        flag: "--as",
                        value: new.clone(),
                        reason: format!("{grid} already has a cell `{new}`; pick a new name"),
                    });
                }
                new.clone()
            }
            None => cell.cell.name.clone(),
        };
        Ok(Naming {
            group: grid.to_owned(),
            job_name: (options.job_name.clone()).unwrap_or_else(|| format!("{grid}.{member}")),
            member,
            grid_qos: cell.file.qos.clone(),
            grid_time: cell.file.time,
        })
    }

    /// `preset`, `preset/job-name` when `--job-name` names another run of the preset (so two
    /// job names are two runs, each addressable), or `grid/cell` (the new name with `--as`).
    pub(super) fn target(&self, selection: &Selection) -> String {
        match &selection.cell {
            None if self.member == selection.preset.name => self.member.clone(),
            None => format!("{}/{}", selection.preset.name, self.member),
            Some(_) => format!("{}/{}", self.group, self.member),
        }
    }

    /// The preset's description, or the cell's (and the name it runs as, with `--as`).
    pub(super) fn description(&self, selection: &Selection) -> String {
        match &selection.cell {
            None => selection.preset.description.clone(),
            Some(c) if c.cell.name != self.member => format!(
                "{} (cell {}, run as {})",
                c.cell.description, c.cell.name, self.member
            ),
            Some(c) => c.cell.description.clone(),
        }
    }
}
