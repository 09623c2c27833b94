//! The speed of recorded runs, for `estimate`: the median step time of runs with the same knobs,
//! else of the nearest run of the same model and GPU layout, else the preset's reference.

use crate::plan::Plan;
use crate::plan::estimate::{Estimate, Speed, estimate};
use crate::runs::alerts::median;
use crate::runs::metrics::Kind;
use crate::runs::metrics::keys::STEP_TIME;
use crate::runs::read_series;
use crate::runs::recorded::Recorded;
use crate::submit::ledger::{Record, knob_fingerprint};

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
fn measured(records: impl Iterator<Item = Record>) -> Option<(f64, Vec<String>)> {
    let mut times = Vec::new();
    let mut jobs = Vec::new();
    for record in records {
        let t = step_times(&record);
        if !t.is_empty() {
            times.extend(t);
            jobs.push(record.job_id);
            if jobs.len() == RUNS_READ {
                break;
            }
        }
    }
    median(times.into_iter()).map(|m| (m, jobs))
}

/// The speed of `plan` from the recorded runs, else its reference.
pub fn speed(plan: &Plan, recorded: &Recorded) -> Option<Speed> {
    let fingerprint = knob_fingerprint(plan);
    let query = recorded.query(&fingerprint);
    if let Some((s, jobs)) = query.same().and_then(|g| measured(query.records(g))) {
        return Some(Speed {
            s_per_step: s,
            from: format!("median of recorded job(s) {} (same knobs)", jobs.join(", ")),
            same_knobs: true,
        });
    }
    // Nearest first; among as near, the group with the newest record.
    let near = query.near(&LAYOUT_KEYS);
    let candidates = (near.iter())
        .flat_map(|&(d, g)| query.records(g).map(move |r| (d, r)))
        .take(RUNS_READ);
    for (d, record) in candidates {
        let (job, target) = (record.job_id.clone(), record.target.clone());
        if let Some((s, _)) = measured(std::iter::once(record)) {
            return Some(Speed {
                s_per_step: s,
                from: format!(
                    "nearest recorded run: job {job} ({target}), same model and layout, {d} knob(s) differ"
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
