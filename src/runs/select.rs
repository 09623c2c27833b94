//! Which recorded runs a name means: a run, a preset or grid, a bare job name or cell, or a job
//! id, found by parsing only the ledger lines that mention it.

use crate::error::{Error, Result, closest};
use crate::store::ledger::{Ledger, Record, Run};

/// Every run a name means, with all its records (every submission and chain link): a run
/// (`preset`, `preset/job-name`, `grid/cell`), a preset or grid (all its runs), a job name or
/// cell written bare, or a job id (that exact submission).
///
/// The ledger is read a line at a time, and only the lines that mention the name are parsed and
/// kept: a run's records all carry its group and member (and the name is one of them, both
/// joined, or a job id), so those lines hold every record of every run the name means.
pub fn select_runs(ledger: &Ledger, name: Option<&str>) -> Result<Vec<Run>> {
    let Some(name) = name else {
        return ledger.runs();
    };
    let runs = ledger.runs_where(|line| mentions(line, name))?;
    if let Some(record) = (runs.iter().flat_map(|r| &r.records))
        .rev()
        .find(|r| r.job_id == name)
    {
        return Ok(vec![Run {
            name: record.run(),
            records: vec![record.clone()],
        }]);
    }
    let chosen: Vec<Run> = (runs.into_iter())
        .filter(|run| {
            let r = run.latest();
            run.name == name || r.group == name || r.member == name
        })
        .collect();
    if chosen.is_empty() {
        let names = ledger.names()?;
        let mut known: Vec<&str> = (names.iter())
            .flat_map(|(run, group)| [run.as_str(), group.as_str()])
            .collect();
        known.sort_unstable();
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

/// Whether a ledger line may be a record of a run `name` means: it holds the name as JSON writes
/// it, or, for `group/member`, both sides of one of its slashes. A name JSON would escape is
/// looked for in every line.
pub(crate) fn mentions(line: &[u8], name: &str) -> bool {
    use memchr::memmem::find;
    if name
        .chars()
        .any(|c| c == '"' || c == '\\' || c.is_control())
    {
        return true;
    }
    let name = name.as_bytes();
    find(line, name).is_some()
        || (memchr::memchr_iter(b'/', name))
            .any(|i| find(line, &name[..i]).is_some() && find(line, &name[i + 1..]).is_some())
}

/// The newest record of every run a name means (see [`select_runs`]).
pub fn select(ledger: &Ledger, name: Option<&str>) -> Result<Vec<Record>> {
    Ok(select_runs(ledger, name)?
        .iter()
        .map(|r| r.latest().clone())
        .collect())
}
