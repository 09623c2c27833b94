//! `rlctl report GRID`: the grid's table on stdout, the table and plots written to a folder.

use super::Session;
use crate::cli::ReportArgs;
use crate::error::{Error, Result};
use crate::runs;
use crate::submit::ledger::Run;
use camino::Utf8PathBuf;
use std::io::Write;

pub fn run(session: &Session, args: &ReportArgs, out: &mut dyn Write) -> Result<()> {
    let grid = args.grid.as_str();
    let cluster = session.cluster()?;
    let dir =
        (args.out.clone()).unwrap_or_else(|| cluster.storage.run_root.join(grid).join("report"));
    for path in write(session, grid, &dir, out)? {
        crate::say!("rlctl: wrote {path}");
    }
    Ok(())
}

/// The grid's table on `out`, and the table and plots written into `dir`: the paths written.
pub fn write(
    session: &Session,
    grid: &str,
    dir: &camino::Utf8Path,
    out: &mut dyn Write,
) -> Result<Vec<Utf8PathBuf>> {
    let cluster = session.cluster()?;
    let all = session.ledger()?.runs()?;
    let mut cells: Vec<Run> = (all.iter())
        .filter(|r| r.latest().grid.as_deref() == Some(grid))
        .cloned()
        .collect();
    if cells.is_empty() {
        return Err(Error::Unsupported(format!(
            "no cell of grid `{grid}` is recorded: launch it with `rlctl grid --all {grid}`"
        )));
    }
    let base = base_run(session, grid, &cells, &all);
    if let Some(base) = &base
        && !cells.iter().any(|c| &c.name == base)
    {
        // The base preset's own run, as the first row.
        cells.extend(all.iter().find(|r| &r.name == base).cloned());
        cells.rotate_right(1);
    }
    let (states, warnings) = runs::status::newest_rows(
        &session.slurm,
        &cluster.storage.run_root,
        &cells,
        cluster.node.gpus,
    )?;
    super::runs::warn(&warnings);
    let cells: Vec<_> = states.iter().map(|s| s.cell(base.as_deref())).collect();
    runs::report::write(grid, &cells, dir, out)
}

/// The run the `vs base` columns compare with: the grid's first recorded cell with no knobs or
/// step budget of its own (it runs the grid's base configuration), else, for a grid that adds no
/// knobs to its base preset, a recorded run of that preset itself. `None` when neither is
/// recorded or the grid is no longer in the presets.
fn base_run(session: &Session, grid: &str, cells: &[Run], all: &[Run]) -> Option<String> {
    let file = session.library.grid(grid).ok()?;
    let recorded = |name: &str| cells.iter().chain(all).any(|r| r.name == name);
    (file.cells.iter())
        .filter(|c| c.knobs.0.is_empty() && c.max_steps.is_none())
        .map(|c| format!("{grid}/{}", c.name))
        .find(|name| recorded(name))
        .or_else(|| {
            let preset = file.base.clone();
            (file.knobs.0.is_empty()
                && all
                    .iter()
                    .any(|r| r.name == preset && r.latest().grid.is_none()))
            .then_some(preset)
        })
}
