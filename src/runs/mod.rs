//! Following runs after submission: which recorded jobs a name means, what state SLURM says they
//! are in, and the `status`, `cancel`, `logs`, `metrics` and `report` commands.

pub mod alerts;
pub mod clean;
pub mod metrics;
pub mod report;
pub mod tend;
pub mod watch;

use crate::error::{Error, Result, closest};
use crate::render::finished_status;
use crate::runs::alerts::Thresholds;
use crate::runs::metrics::Series;
use crate::runs::metrics::keys::{ENTROPY, REWARD};
use crate::runs::report::CellReport;
use crate::submit::ledger::{Ledger, Record};
use crate::submit::slurm::Slurm;
use crate::util::fmt::{Digits, cell};
use crate::util::out::{confirm, emit as write};
use crate::util::table::{Table, left, right};
use camino::{Utf8Path, Utf8PathBuf};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Write;

/// The newest record of every run a name means: a target (`preset`, `grid/cell`), a preset or
/// grid (all its runs), a bare cell name, or a job id (that exact submission).
pub fn select(ledger: &Ledger, name: Option<&str>) -> Result<Vec<Record>> {
    let latest = ledger.latest()?;
    let Some(name) = name else { return Ok(latest) };
    if let Some(record) = ledger
        .records()?
        .into_iter()
        .rev()
        .find(|r| r.job_id == name)
    {
        return Ok(vec![record]);
    }
    let chosen: Vec<Record> = latest
        .iter()
        .filter(|r| r.target == name || r.group == name || (r.grid.is_some() && r.member == name))
        .cloned()
        .collect();
    if chosen.is_empty() {
        let mut known: Vec<&str> = latest.iter().map(|r| r.target.as_str()).collect();
        known.extend(latest.iter().map(|r| r.group.as_str()));
        known.dedup();
        return Err(Error::UnknownName {
            kind: "recorded run",
            name: name.to_owned(),
            suggestion: closest(name, known.iter().copied()),
            known: Vec::new(),
        });
    }
    Ok(chosen)
}

/// One record's state: squeue's while SLURM holds the job, then sacct's, then the log's.
#[derive(Debug, Clone, Serialize)]
pub struct RunState {
    pub target: String,
    pub job_id: String,
    pub state: String,
    /// `squeue`, `sacct`, `log` or `none`.
    pub source: &'static str,
    pub step: u64,
    pub total: Option<u64>,
    pub secs_per_step: Option<f64>,
    pub reward: Option<f64>,
    pub entropy: Option<f64>,
    /// Whether the entropy collapsed, by `watch`'s rule with its default thresholds (`None`
    /// without a verdict): for scripts reading `status --json`.
    pub collapse: Option<bool>,
    #[serde(skip)]
    pub series: Series,
}

/// States of many records with one squeue call and at most one sacct call.
pub fn states(slurm: &Slurm, records: &[Record]) -> Result<Vec<RunState>> {
    // SLURM is asked before the logs are read: a job seen ended has written all its lines.
    let jobs = job_states(slurm, records)?;
    let mut out = Vec::new();
    for (record, (state, source)) in records.iter().zip(jobs) {
        let series = read_series(&record.log)?;
        let progress = alerts::progress(&series, record.max_steps);
        let last = |key: &str| series.values(metrics::Kind::Train, key).last().map(|v| v.1);
        out.push(RunState {
            target: record.target.clone(),
            job_id: record.job_id.clone(),
            state,
            source,
            step: progress.step,
            total: progress.total,
            secs_per_step: progress.secs_per_step,
            reward: last(REWARD),
            entropy: last(ENTROPY),
            collapse: alerts::collapsed(&series, &Thresholds::default()),
            series,
        });
    }
    Ok(out)
}

/// Each record's job state and where it came from (see [`RunState::source`]): squeue's while
/// SLURM holds the job, then sacct's, then the log's; one squeue and at most one sacct call.
pub fn job_states(slurm: &Slurm, records: &[Record]) -> Result<Vec<(String, &'static str)>> {
    let queued: BTreeMap<String, String> = slurm
        .queued()?
        .into_iter()
        .map(|j| (j.id, j.state))
        .collect();
    let ended: Vec<&str> = records
        .iter()
        .filter(|r| !queued.contains_key(&r.job_id))
        .map(|r| r.job_id.as_str())
        .collect();
    let accounted = slurm.accounted(&ended).unwrap_or_default();
    let mut out = Vec::new();
    for record in records {
        out.push(if let Some(state) = queued.get(&record.job_id) {
            (state.clone(), "squeue")
        } else if let Some(acct) = accounted.get(&record.job_id) {
            (acct.state.clone(), "sacct")
        } else {
            log_state(&record.log, &record.job_id)
        });
    }
    Ok(out)
}

/// What the job's own log says about how it ended (the wrapper's last line).
fn log_state(log: &Utf8Path, job_id: &str) -> (String, &'static str) {
    let Ok(text) = std::fs::read_to_string(log) else {
        return ("unknown".into(), "none");
    };
    if let Some(rc) = finished_status(&text, job_id) {
        let state = if rc == "0" { "COMPLETED" } else { "FAILED" };
        return (state.into(), "log");
    }
    if text.contains("CANCELLED AT") {
        return ("CANCELLED".into(), "log");
    }
    ("unknown".into(), "log")
}

/// The run's metric lines; a log not written yet is an empty series.
pub fn read_series(log: &Utf8Path) -> Result<Series> {
    match std::fs::File::open(log) {
        // Only what the log gained since the last reader, by the cache next to it.
        Ok(file) => metrics::cache::read(log, file).map_err(|e| Error::io("read", log, e)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Series::default()),
        Err(e) => Err(Error::io("read", log, e)),
    }
}

/// The `status` table: a row per run.
pub fn status_table(states: &[RunState]) -> String {
    let num = |v: Option<f64>| cell(v, Digits::Sig(3));
    // Wide enough for the usual values, so that the layout holds from PENDING to COMPLETED.
    let mut table = Table::new([
        left().min(6),
        right().min(8),
        left().min(11),
        right().min(9),
        right().min(7),
        right().min(7),
        right().min(7),
    ]);
    table.row(["run", "job", "state", "step", "s/step", "reward", "entropy"]);
    for s in states {
        let step = match s.total {
            Some(total) => format!("{}/{total}", s.step),
            None => s.step.to_string(),
        };
        table.row([
            s.target.clone(),
            s.job_id.clone(),
            s.state.clone(),
            step,
            num(s.secs_per_step),
            num(s.reward),
            num(s.entropy),
        ]);
    }
    table.render()
}

/// Pending and running jobs of the selection, cancelled in one scancel call.
pub fn cancel(slurm: &Slurm, records: &[Record], yes: bool, out: &mut dyn Write) -> Result<()> {
    let queued: BTreeMap<String, String> = slurm
        .queued()?
        .into_iter()
        .map(|j| (j.id, j.state))
        .collect();
    let live: Vec<&Record> = records
        .iter()
        .filter(|r| queued.contains_key(&r.job_id))
        .collect();
    if live.is_empty() {
        return write(
            out,
            "nothing to cancel: no job of these runs is pending or running\n",
        );
    }
    let mut listing = Table::new([left(), left(), left()]).indent(2).gap(1);
    for r in &live {
        let state = &queued[&r.job_id];
        listing.row([
            r.target.clone(),
            format!("job {}", r.job_id),
            format!("({state})"),
        ]);
    }
    let listing = listing.render();
    if live.len() > 1
        && !confirm(
            &format!("cancel these {} jobs?\n{listing}", live.len()),
            yes,
        )?
    {
        return write(out, "cancelled nothing\n");
    }
    let ids: Vec<&str> = live.iter().map(|r| r.job_id.as_str()).collect();
    slurm.cancel(&ids)?;
    write(out, &format!("cancelled:\n{listing}"))
}

/// `rlctl report GRID`: the grid's table on stdout, and the table and plots in `dir`.
pub fn report(
    grid: &str,
    states: &[RunState],
    dir: &Utf8Path,
    out: &mut dyn Write,
) -> Result<Vec<Utf8PathBuf>> {
    let cells: Vec<CellReport> = states
        .iter()
        .map(|s| CellReport {
            name: s.target.rsplit('/').next().unwrap_or(&s.target),
            state: &s.state,
            series: &s.series,
        })
        .collect();
    let text = report::markdown(grid, &cells);
    write(out, &text)?;
    let mut written =
        report::plots(grid, &cells, dir).map_err(|e| Error::io("write plots into", dir, e))?;
    let md = dir.join(format!("{grid}.md"));
    crate::util::fs::write_atomic(&md, &text, 0o644)?;
    written.insert(0, md);
    Ok(written)
}
