//! A controlled grid never changes a recorded cell's hyperparameters mid-series: the cells a
//! `grid` would run again with other knobs than the ledger recorded are refused, with the ways
//! out.

use crate::error::{ChangedCell, Error, Result};
use crate::plan::Plan;
use crate::plan::ask::{Ask, Verb};
use crate::store::ledger::{Record, knob_fingerprint};
use std::collections::{BTreeMap, BTreeSet};

/// A controlled grid never changes a recorded cell's hyperparameters mid-series. `asked` is the
/// grid command as given: the ways out the refusal names are that command, changed.
pub fn controlled(plans: &[Plan], recorded: &[Record], asked: &Ask) -> Result<()> {
    let mut changed = Vec::new();
    for plan in plans {
        let Some(record) = recorded.iter().find(|r| r.target == plan.target) else {
            continue;
        };
        let diffs = knob_changes(&record.knobs, plan);
        if !diffs.is_empty() {
            changed.push(changed_cell(&plan.target, &record.job_id, diffs, asked));
        }
    }
    if changed.is_empty() {
        return Ok(());
    }
    Err(Error::ControlledGridChanged { cells: changed })
}

/// The cell `target` refused, with the ways out: each `asked`, changed.
fn changed_cell(target: &str, job_id: &str, diffs: Vec<String>, asked: &Ask) -> ChangedCell {
    let (grid, cell) = target.rsplit_once('/').unwrap_or(("", target));
    // A cell already asked `--as` another is that cell again, under the next new name.
    let verb = match (&asked.verb, &asked.as_cell) {
        (Verb::Grid { .. }, Some(_)) => asked.verb.clone(),
        _ => Verb::Grid {
            cell: target.to_owned(),
        },
    };
    let as_new = Ask {
        verb,
        as_cell: Some(format!("{cell}-v2")),
        skip: Vec::new(),
        ..asked.clone()
    };
    let mut skip = Ask {
        verb: Verb::GridAll {
            grid: grid.to_owned(),
        },
        as_cell: None,
        ..asked.clone()
    };
    if !skip.skip.iter().any(|s| s == cell || s == target) {
        skip.skip.push(cell.to_owned());
    }
    ChangedCell {
        target: target.to_owned(),
        job_id: job_id.to_owned(),
        diffs,
        as_new: as_new.command(),
        again: asked.command(),
        skip: skip.command(),
    }
}

/// How a run's knobs would change from what it `recorded` to `plan`'s: one `key: recorded ->
/// asked` per knob that differs. A run keeps its knobs, a grid's cell as a resumed run.
pub fn knob_changes(recorded: &BTreeMap<String, String>, plan: &Plan) -> Vec<String> {
    let now = knob_fingerprint(plan);
    let keys: BTreeSet<&String> = recorded.keys().chain(now.keys()).collect();
    let show = |v: Option<&String>| v.map_or("(unset)".to_owned(), |v| v.clone());
    (keys.into_iter())
        .filter(|key| recorded.get(*key) != now.get(*key))
        .map(|key| {
            format!(
                "{key}: {} -> {}",
                show(recorded.get(key)),
                show(now.get(key))
            )
        })
        .collect()
}
