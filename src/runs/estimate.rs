//! The speed of recorded runs, for `estimate`: the median step time of runs with the same knobs,
//! else of the nearest run of the same model and GPU layout, else the preset's reference.

use crate::plan::Plan;
use crate::plan::estimate::{Estimate, Speed, estimate};
use crate::runs::alerts::median;
use crate::runs::metrics::Kind;
use crate::runs::metrics::keys::STEP_TIME;
use crate::runs::read_series;
use crate::submit::ledger::{Record, knob_fingerprint};
use std::collections::{BTreeMap, HashMap};

/// Recorded runs read for one speed at most: the newest are the ones that tell.
const RUNS_READ: usize = 5;

/// The knobs that make two runs comparable at all: the model and the GPU layout.
const LAYOUT_KEYS: [&str; 5] = [
    "trainer.policy.model.path",
    "trainer.placement.policy_num_nodes",
    "trainer.placement.policy_num_gpus_per_node",
    "generator.num_inference_engines",
    "generator.inference_engine_tensor_parallel_size",
];

/// `timing/step` of every train step after the first (which pays compilation and warm-up).
fn step_times(record: &Record) -> Vec<f64> {
    let Ok(series) = read_series(&record.log) else {
        return vec![];
    };
    let first = series.steps(Kind::Train).first().map(|s| s.step);
    (series.values(Kind::Train, STEP_TIME))
        .filter(|(step, v)| Some(*step) != first && v.is_finite() && *v > 0.0)
        .map(|(_, v)| v)
        .collect()
}

/// The median step time of the first [`RUNS_READ`] of `records` that logged one, and their jobs.
fn measured<'r>(records: impl Iterator<Item = &'r Record>) -> Option<(f64, Vec<&'r str>)> {
    let mut times = Vec::new();
    let mut jobs = Vec::new();
    for record in records {
        let t = step_times(record);
        if !t.is_empty() {
            times.extend(t);
            jobs.push(record.job_id.as_str());
            if jobs.len() == RUNS_READ {
                break;
            }
        }
    }
    median(times.into_iter()).map(|m| (m, jobs))
}

/// How many knobs differ between two fingerprints.
fn distance(a: &BTreeMap<String, String>, b: &BTreeMap<String, String>) -> usize {
    let differ = a.iter().filter(|(k, v)| b.get(*k) != Some(*v)).count();
    differ + b.keys().filter(|k| !a.contains_key(*k)).count()
}

/// The ledger's records grouped by knob fingerprint, built once for every target estimated: a
/// ledger of thousands of runs holds few distinct fingerprints, so matching and ranking go over
/// those, not over every record.
pub struct Recorded<'r> {
    /// Each distinct fingerprint with its records, newest first; groups in order of first seen.
    groups: Vec<(&'r BTreeMap<String, String>, Vec<&'r Record>)>,
    index: HashMap<&'r BTreeMap<String, String>, usize>,
}

impl<'r> Recorded<'r> {
    /// `records` oldest first, as the ledger holds them.
    pub fn new(records: &'r [Record]) -> Recorded<'r> {
        let mut groups: Vec<(&BTreeMap<String, String>, Vec<&Record>)> = Vec::new();
        let mut index = HashMap::new();
        for record in records.iter().rev() {
            let i = *index.entry(&record.knobs).or_insert_with(|| {
                groups.push((&record.knobs, Vec::new()));
                groups.len() - 1
            });
            groups[i].1.push(record);
        }
        Recorded { groups, index }
    }
}

/// The speed of `plan` from the recorded runs, else its reference.
pub fn speed(plan: &Plan, recorded: &Recorded) -> Option<Speed> {
    let fingerprint = knob_fingerprint(plan);
    let same = recorded.index.get(&fingerprint).copied();
    if let Some((s, jobs)) = same.and_then(|i| measured(recorded.groups[i].1.iter().copied())) {
        return Some(Speed {
            s_per_step: s,
            from: format!("median of recorded job(s) {} (same knobs)", jobs.join(", ")),
            same_knobs: true,
        });
    }
    let layout = |knobs: &BTreeMap<String, String>| -> Vec<Option<String>> {
        LAYOUT_KEYS.iter().map(|k| knobs.get(*k).cloned()).collect()
    };
    let mine = layout(&fingerprint);
    // Nearest first; among as near, the group seen first in the ledger's newest-first order.
    let mut near: Vec<(usize, usize)> = (recorded.groups.iter().enumerate())
        .filter(|(i, (knobs, _))| Some(*i) != same && layout(knobs) == mine)
        .map(|(i, (knobs, _))| (distance(&fingerprint, knobs), i))
        .collect();
    near.sort_unstable();
    let candidates = (near.iter())
        .flat_map(|&(d, i)| recorded.groups[i].1.iter().map(move |r| (d, *r)))
        .take(RUNS_READ);
    for (d, record) in candidates {
        if let Some((s, _)) = measured(std::iter::once(record)) {
            return Some(Speed {
                s_per_step: s,
                from: format!(
                    "nearest recorded run: job {} ({}), same model and layout, {d} knob(s) differ",
                    record.job_id, record.target
                ),
                same_knobs: false,
            });
        }
    }
    Speed::reference(plan)
}

/// The estimate of `plan` given the recorded runs.
pub fn of(plan: &Plan, recorded: &Recorded) -> Estimate {
    estimate(plan, speed(plan, recorded).as_ref(), plan.startup_s as f64)
}
