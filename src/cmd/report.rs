//! `rlctl report GRID` or `rlctl report RUN...`: the table on stdout, the table and plots written
//! to a folder.

use super::Session;
use crate::cli::ReportArgs;
use crate::error::{Error, Result};
use crate::preset::run::{CellFile, GridFile};
use crate::runs;
use crate::runs::report::{CellReport, Options};
use crate::runs::state::RunState;
use crate::schema::knob::KnobValue;
use crate::store::ledger::Run;
use camino::{Utf8Path, Utf8PathBuf};
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Write;

pub fn run(session: &Session, args: &ReportArgs, out: &mut dyn Write) -> Result<()> {
    let cluster = session.cluster()?;
    let options = Options {
        wide: args.wide,
        smooth: args.smooth.unwrap_or(0),
    };
    // --json: the table is not shown; the JSON is said from the rows.
    let shown: &mut dyn Write = if args.json {
        &mut std::io::sink()
    } else {
        &mut *out
    };
    let report = match args.names.as_slice() {
        [grid] if is_grid(session, grid)? => {
            let dir = (args.out.clone())
                .unwrap_or_else(|| cluster.storage.run_root.join(grid).join("report"));
            write_grid(session, grid, options, &dir, shown)?
        }
        names => {
            let dir = (args.out.clone()).unwrap_or_else(|| cluster.storage.run_root.join("report"));
            write_runs(session, names, options, &dir, shown)?
        }
    };
    for path in &report.written {
        crate::say!("rlctl: wrote {path}");
    }
    match args.json {
        true => crate::util::out::emit(out, &crate::util::versioned::document(&report)),
        false => Ok(()),
    }
}

/// `report --json`: the files written, the run each value is compared with, and a row per
/// run (as `status --json` gives it) with the knobs its cell sets unlike the base.
#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct Reported {
    #[schemars(with = "Vec<String>")]
    pub written: Vec<Utf8PathBuf>,
    /// A grid's base run; none for runs compared with each other.
    pub base: Option<String>,
    pub rows: Vec<ReportedRow>,
}

/// One run of the report.
#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct ReportedRow {
    /// `key=value` of each knob the cell sets unlike the base (none for runs).
    pub knobs: Vec<String>,
    pub run: RunState,
}

/// Whether a name is a grid (`report GRID` compares its cells with its base): one with a
/// recorded cell, or one of the presets with none (whose report says how to launch it).
fn is_grid(session: &Session, name: &str) -> Result<bool> {
    let records = runs::select::select(&session.ledger()?, Some(name)).unwrap_or_default();
    Ok(records.iter().any(|r| r.grid.as_deref() == Some(name))
        || (records.is_empty() && session.library.grid(name).is_ok()))
}

/// Recorded runs' table on `out` (each row named by its full run name), and the table and plots
/// written into `dir`, named after the one name given or `runs`: the paths written.
fn write_runs(
    session: &Session,
    names: &[String],
    options: Options,
    dir: &Utf8Path,
    out: &mut dyn Write,
) -> Result<Reported> {
    let cluster = session.cluster()?;
    let ledger = session.ledger()?;
    let mut chosen: Vec<Run> = Vec::new();
    for name in names {
        for run in runs::select::select_runs(&ledger, Some(name))? {
            if !chosen.iter().any(|c| c.name == run.name) {
                chosen.push(run);
            }
        }
    }
    let (states, warnings) = runs::status::newest_rows(
        &session.slurm,
        &cluster.storage.run_root,
        &chosen,
        cluster.node.gpus,
    )?;
    super::runs::warn(&warnings);
    let cells: Vec<CellReport> = (states.iter())
        .map(|s| CellReport {
            name: &s.target,
            ..s.cell(None)
        })
        .collect();
    let title = match names {
        [one] => one.as_str(),
        _ => "runs",
    };
    let written = runs::report::write(title, &cells, options, dir, out)?;
    let rows = (states.iter())
        .map(|s| ReportedRow {
            knobs: Vec::new(),
            run: s.clone(),
        })
        .collect();
    Ok(Reported {
        written,
        base: None,
        rows,
    })
}

/// The grid's table on `out`, and the table and plots written into `dir`: the paths written.
pub fn write(
    session: &Session,
    grid: &str,
    dir: &Utf8Path,
    out: &mut dyn Write,
) -> Result<Vec<Utf8PathBuf>> {
    Ok(write_grid(session, grid, Options::default(), dir, out)?.written)
}

fn write_grid(
    session: &Session,
    grid: &str,
    options: Options,
    dir: &Utf8Path,
    out: &mut dyn Write,
) -> Result<Reported> {
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
    let catalog = session.library.grid(grid).ok();
    let base = catalog.and_then(|file| base_run(grid, file, &cells, &all));
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
    let changed: BTreeMap<&str, Vec<String>> = (cells.iter())
        .filter_map(|run| {
            let file = catalog?;
            let knobs_of = |target: &str| {
                let name = target.strip_prefix(grid)?.strip_prefix('/')?;
                file.cells.iter().find(|c| c.name == name).map(own_knobs)
            };
            let base = base.as_deref()?;
            let of_base = knobs_of(base).unwrap_or_default();
            let ran = &run.latest().knobs;
            let knobs = match run.name == base {
                true => changes(&of_base, &BTreeMap::new(), ran),
                false => changes(&knobs_of(&run.name)?, &of_base, ran),
            };
            Some((run.name.as_str(), knobs))
        })
        .collect();
    let cells: Vec<_> = (states.iter())
        .map(|s| CellReport {
            knobs: changed.get(s.target.as_str()).map(Vec::as_slice),
            ..s.cell(base.as_deref())
        })
        .collect();
    let written = runs::report::write(grid, &cells, options, dir, out)?;
    let rows = (states.iter())
        .map(|s| ReportedRow {
            knobs: changed.get(s.target.as_str()).cloned().unwrap_or_default(),
            run: s.clone(),
        })
        .collect();
    Ok(Reported {
        written,
        base,
        rows,
    })
}

/// The run each number is compared with: the grid's first recorded cell with no knobs or step
/// budget of its own (it runs the grid's base configuration), else, for a grid that adds no
/// knobs to its base preset, a recorded run of that preset itself, else the grid's first
/// recorded cell. `None` when no cell is recorded.
fn base_run(grid: &str, file: &GridFile, cells: &[Run], all: &[Run]) -> Option<String> {
    let recorded = |name: &str| cells.iter().chain(all).any(|r| r.name == name);
    let target = |c: &CellFile| format!("{grid}/{}", c.name);
    let plain = (file.cells.iter())
        .filter(|c| c.knobs.0.is_empty() && c.max_steps.is_none())
        .map(target)
        .find(|name| recorded(name));
    let preset = || {
        (file.knobs.0.is_empty()
            && (all.iter()).any(|r| r.name == file.base && r.latest().grid.is_none()))
        .then(|| file.base.clone())
    };
    let first = || file.cells.iter().map(target).find(|name| recorded(name));
    plain.or_else(preset).or_else(first)
}

/// The knobs a grid's cell entry sets (its own, and its step budget), as hydra writes them.
fn own_knobs(cell: &CellFile) -> BTreeMap<String, String> {
    let mut knobs: BTreeMap<String, String> = (cell.knobs.0.iter())
        .map(|(k, v)| (k.clone(), KnobValue::Typed(v.clone()).hydra_text()))
        .collect();
    if let Some(steps) = cell.max_steps {
        knobs.insert("trainer.max_steps".to_owned(), steps.to_string());
    }
    knobs
}

/// `key=value` of each knob `cell` sets unlike `base`, in key order; a knob only the base sets
/// reads as the value the cell's run was given (`ran`), or `(unset)`.
fn changes(
    cell: &BTreeMap<String, String>,
    base: &BTreeMap<String, String>,
    ran: &BTreeMap<String, String>,
) -> Vec<String> {
    let keys: std::collections::BTreeSet<&String> = cell.keys().chain(base.keys()).collect();
    (keys.into_iter())
        .filter_map(|k| {
            let value = (cell.get(k).or_else(|| ran.get(k)))
                .cloned()
                .unwrap_or_else(|| "(unset)".to_owned());
            (base.get(k) != Some(&value)).then(|| format!("{k}={value}"))
        })
        .collect()
}
