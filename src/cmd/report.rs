//! `rlctl report GRID`: the grid's table on stdout, the table and plots written to a folder.

use super::Session;
use crate::error::{Error, Result};
use crate::runs;
use crate::submit::ledger::Record;
use camino::Utf8PathBuf;
use std::io::Write;

pub fn run(
    session: &Session,
    grid: &str,
    dir: Option<Utf8PathBuf>,
    out: &mut dyn Write,
) -> Result<()> {
    let cluster = session.cluster()?;
    let records: Vec<Record> = (session.ledger()?.latest()?.into_iter())
        .filter(|r| r.grid.as_deref() == Some(grid))
        .collect();
    if records.is_empty() {
        return Err(Error::Unsupported(format!(
            "no cell of grid `{grid}` is recorded: launch it with `rlctl grid --all {grid}`"
        )));
    }
    let states = runs::states(&session.slurm, &records)?;
    let dir = dir.unwrap_or_else(|| cluster.storage.run_root.join(grid).join("report"));
    let written = runs::report(grid, &states, &dir, out)?;
    for path in written {
        eprintln!("rlctl: wrote {path}");
    }
    Ok(())
}
