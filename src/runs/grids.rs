//! Grids that finish themselves: each `tend` pass submits the cells a `grid --all` left waiting
//! for room (in order, through the occupancy rule), says where every grid stands in one line,
//! and tells which grids are over, so their report is written once.

use crate::error::Result;
use crate::runs::probe::{Probe, Queue, Warning};
use crate::runs::sealed::Sealed;
use crate::runs::select::mentions;
use crate::slurm::Slurm;
use crate::store::intent::{CellIntent, CellStatus, GridIntent};
use crate::store::ledger::{Ledger, Record, Run};
use crate::submit::GRID_WIDTH;
use crate::submit::occupancy::Occupancy;
use crate::submit::room::Room;
use crate::submit::waiting;
use crate::util::fmt::{Digits, number};
use crate::util::turn::Turn;
use camino::Utf8Path;
use std::collections::BTreeMap;

/// What a pass did with one grid.
pub struct GridPass {
    pub grid: String,
    /// One line per cell submitted or held back.
    pub lines: Vec<String>,
    pub summary: String,
    /// Every cell has run and none is queued: the key the grid's report is written for (the
    /// newest job of each cell), `None` while the grid goes on.
    pub over: Option<String>,
    /// What SLURM could not tell, for the command to say.
    pub warnings: Vec<Warning>,
}

/// The grid's cells' runs by target, read from the lines that mention the grid.
fn cell_runs(ledger: &Ledger, grid: &str) -> Result<BTreeMap<String, Run>> {
    let runs = ledger.runs_where(|line| mentions(line, grid))?;
    Ok((runs.into_iter())
        .filter(|r| r.latest().grid.as_deref() == Some(grid))
        .map(|r| (r.name.clone(), r))
        .collect())
}

/// The grids a pass over `names` advances: every grid with an intent without names; else those
/// named, or with a cell named (`grid/cell`).
pub fn tended(run_root: &Utf8Path, names: &[String]) -> Result<Vec<String>> {
    let grids = GridIntent::grids(run_root)?;
    if names.is_empty() {
        return Ok(grids);
    }
    Ok((grids.into_iter())
        .filter(|g| {
            (names.iter()).any(|n| n == g || n.split_once('/').is_some_and(|(ng, _)| ng == g))
        })
        .collect())
}

/// Submits what waits in `grid`'s intent and fits now, under the turn; then says where the grid
/// stands.
pub fn advance(
    turn: &Turn,
    slurm: &Slurm,
    ledger: &Ledger,
    run_root: &Utf8Path,
    grid: &str,
    submit_limits: &BTreeMap<String, u32>,
    gpus_per_node: u32,
) -> Result<GridPass> {
    let Some(mut intent) = GridIntent::load(run_root, grid)? else {
        return Ok(GridPass {
            grid: grid.to_owned(),
            lines: Vec::new(),
            summary: format!("grid {grid}: no `grid --all` recorded"),
            over: None,
            warnings: Vec::new(),
        });
    };
    let mut lines = Vec::new();
    if intent.waiting() > 0 {
        let occupancy = Occupancy::read(turn, slurm, ledger)?;
        let mut room = Room::new(submit_limits, &occupancy.queued);
        let latest: BTreeMap<String, Record> = (cell_runs(ledger, grid)?.into_iter())
            .map(|(name, run)| (name, run.latest().clone()))
            .collect();
        lines = waiting::advance(
            &mut intent,
            run_root,
            slurm,
            ledger,
            &occupancy,
            &mut room,
            &latest,
        )?;
    }
    let (summary, over, warnings) = standing(slurm, ledger, run_root, &intent, gpus_per_node)?;
    Ok(GridPass {
        grid: grid.to_owned(),
        lines,
        summary,
        over,
        warnings,
    })
}

/// Where a grid stands, in one line, from one squeue and one sacct: its cells running, queued,
/// waiting on a lane (for the cell 8 before them), waiting for room in the QOS, ended; the
/// GPU-hours its jobs used so far and the estimate of all its cells. With the key its report is
/// written for once every cell has ended; and what SLURM could not tell. A cell sealed with its
/// GPU-hours (in `run_root`'s index) is not asked of accounting again, and a cell seen ended for
/// good is sealed with them.
fn standing(
    slurm: &Slurm,
    ledger: &Ledger,
    run_root: &Utf8Path,
    intent: &GridIntent,
    gpus_per_node: u32,
) -> Result<(String, Option<String>, Vec<Warning>)> {
    let grid = &intent.grid;
    let runs = cell_runs(ledger, grid)?;
    let recorded: Vec<Run> = (intent.cells.iter())
        .filter(|c| !c.is_waiting())
        .filter_map(|c| runs.get(&c.target).cloned())
        .collect();
    let latest: Vec<&Record> = recorded.iter().map(|r| r.latest()).collect();
    let queue = Queue::read(slurm)?;
    let mut index = Sealed::load(run_root);
    let sealed: Vec<Option<f64>> = (recorded.iter())
        .map(|r| index.get(r, &queue).and_then(|s| s.gpu_hours()))
        .collect();
    let asked: Vec<&Run> = (recorded.iter().zip(&sealed))
        .filter(|(_, hours)| hours.is_none())
        .map(|(r, _)| r)
        .collect();
    let probe = Probe::read(slurm, Some(queue), &[], &asked)?;
    for run in &asked {
        if let Some(job) = probe.known(run.latest()) {
            index.seal_end(run, &probe.queue, &job, probe.gpu_hours(run, gpus_per_node));
        }
    }
    index.store();
    let queue = &probe.queue;
    let (mut running, mut queued, mut lane, mut ended) = (0, 0, 0, 0);
    for run in &recorded {
        let live: Vec<&Record> = (run.records.iter())
            .filter(|r| queue.holds(&r.job_id))
            .collect();
        let behind = |r: &Record| {
            (r.dependency.as_deref())
                .and_then(|d| d.strip_prefix("afterany:"))
                .is_some_and(|id| queue.holds(id))
        };
        if live.is_empty() {
            ended += 1;
        } else if live.iter().any(|r| queue.runs(&r.job_id)) {
            running += 1;
        } else if live.iter().all(|r| behind(r)) {
            lane += 1;
        } else {
            queued += 1;
        }
    }
    let waiting = intent.waiting();
    // A cell the intent holds as submitted but the ledger does not (a lost record) counts as
    // neither: it is said.
    let unknown = intent.cells.len() - waiting - recorded.len();
    let used: f64 = (recorded.iter().zip(&sealed))
        .filter_map(|(r, hours)| hours.or_else(|| probe.gpu_hours(r, gpus_per_node)))
        .sum();
    let estimated: f64 = (intent.cells.iter())
        .filter_map(|c| c.estimate_gpu_hours)
        .sum();
    let mut parts = vec![
        format!("{running} running"),
        format!("{queued} queued"),
        format!("{lane} waiting on a lane"),
        format!("{waiting} waiting for the QOS"),
        format!("{ended} ended"),
    ];
    if !intent.skipped.is_empty() {
        parts.push(format!("{} skipped", intent.skipped.len()));
    }
    if unknown > 0 {
        parts.push(format!("{unknown} not in the ledger"));
    }
    let estimate = match estimated {
        e if e > 0.0 => format!(" of about {} estimated", number(e, Digits::Sig(3))),
        _ => String::new(),
    };
    let summary = format!(
        "grid {grid}: {} cells: {}; {} GPU-hours so far{estimate}",
        intent.cells.len(),
        parts.join(", "),
        number(used, Digits::Sig(3)),
    );
    let over = (waiting == 0 && unknown == 0 && ended == recorded.len()).then(|| {
        (latest.iter())
            .map(|r| format!("{} {}\n", r.target, r.job_id))
            .collect::<String>()
    });
    Ok((summary, over, probe.warnings))
}

/// What `grid --all` just did, in one line, from the intent it wrote alone (no squeue, no
/// sacct): cells submitted (and how many of them wait behind the cell eight before them), already
/// recorded, waiting for the QOS, skipped; the estimate of the cells it planned.
pub fn asked(run_root: &Utf8Path, grid: &str) -> Result<String> {
    let Some(intent) = GridIntent::load(run_root, grid)? else {
        return Ok(format!("grid {grid}: nothing recorded"));
    };
    let cells = &intent.cells;
    let submitted = |c: &CellIntent| matches!(c.status, CellStatus::Submitted { .. });
    let (mut new, mut lane, mut recorded) = (0, 0, 0);
    for (i, cell) in cells.iter().enumerate() {
        match &cell.status {
            CellStatus::Submitted { .. } => {
                new += 1;
                if i.checked_sub(GRID_WIDTH)
                    .is_some_and(|j| submitted(&cells[j]))
                {
                    lane += 1;
                }
            }
            CellStatus::Recorded { .. } => recorded += 1,
            CellStatus::Waiting { .. } => {}
        }
    }
    let mut parts = vec![format!(
        "{new} submitted ({lane} of them waiting on a lane)"
    )];
    if recorded > 0 {
        parts.push(format!("{recorded} already recorded"));
    }
    parts.push(format!("{} waiting for the QOS", intent.waiting()));
    if !intent.skipped.is_empty() {
        parts.push(format!("{} skipped", intent.skipped.len()));
    }
    let estimated: f64 = cells.iter().filter_map(|c| c.estimate_gpu_hours).sum();
    let estimate = match estimated {
        e if e > 0.0 => format!("; about {} GPU-hours estimated", number(e, Digits::Sig(3))),
        _ => String::new(),
    };
    Ok(format!(
        "grid {grid}: {} cells: {}{estimate}",
        cells.len(),
        parts.join(", ")
    ))
}

/// Whether the grid's report was already written for this `key` (see [`GridPass::over`]).
pub fn reported(report_dir: &Utf8Path, key: &str) -> bool {
    std::fs::read_to_string(report_dir.join(".written-for")).is_ok_and(|k| k == key)
}

/// Notes that the report in `report_dir` was written for `key`.
pub fn mark_reported(report_dir: &Utf8Path, key: &str) -> Result<()> {
    crate::util::fs::write_atomic(&report_dir.join(".written-for"), key, 0o644)
}
