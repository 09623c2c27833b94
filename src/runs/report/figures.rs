//! The figures of one report row, and what compares the rows: the change against the grid's base
//! cell and the best cell of a column.

use super::{CellReport, PHASES, best, last, timing};
use crate::runs::alerts::{Thresholds, collapsed, diverged_alert, median};
use crate::runs::metrics::keys::{AVG_NUM_TOKENS, ENTROPY, REWARD, STEP_TIME, TOKEN_KL};
use crate::runs::metrics::{Series, Step};

/// Which way a column is better, for the best-cell mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Better {
    Lower,
    Higher,
}

/// One cell's figures, each `None` where its log or accounting does not have it.
#[derive(Debug, Clone, Default)]
pub(super) struct Figures {
    pub steps: u64,
    pub gpu_hours: Option<f64>,
    pub s_per_step: Option<f64>,
    pub phases: [Option<f64>; PHASES.len()],
    pub tokens_per_s: Option<f64>,
    pub reward_final: Option<f64>,
    pub reward_best: Option<f64>,
    pub pass_final: Option<f64>,
    pub pass_best: Option<f64>,
    pub pass_per_gpu_hour: Option<f64>,
    pub entropy_end: Option<f64>,
    pub collapse: Option<bool>,
    pub diverged: bool,
    pub kl_end: Option<f64>,
}

impl Figures {
    pub fn of(cell: &CellReport, pass_key: Option<&str>, thresholds: &Thresholds) -> Figures {
        let s = cell.series;
        let pass = pass_key.map(|key| eval_values(s, key)).unwrap_or_default();
        let pass_final = pass.last().map(|p| p.1);
        Figures {
            steps: s.train.iter().map(|t| t.step).max().unwrap_or(0),
            gpu_hours: cell.gpu_hours,
            s_per_step: s_per_step(s),
            phases: PHASES.map(|(_, key)| median(timing(s, key))),
            tokens_per_s: tokens_per_s(s, cell.samples_per_step),
            reward_final: last(&s.train, REWARD),
            reward_best: best(&s.train, REWARD),
            pass_final,
            pass_best: pass.iter().map(|p| p.1).max_by(f64::total_cmp),
            pass_per_gpu_hour: match (pass_final, cell.gpu_hours) {
                (Some(p), Some(h)) if h > 0.0 => Some(p / h),
                _ => None,
            },
            entropy_end: last(&s.train, ENTROPY),
            collapse: collapsed(s, thresholds),
            diverged: diverged_alert(s).is_some(),
            kl_end: last(&s.train, TOKEN_KL),
        }
    }
}

/// The median seconds of a train step after the first (warm-up): the table's s/step, and the
/// bar chart's.
pub(super) fn s_per_step(series: &Series) -> Option<f64> {
    median(timing(series, STEP_TIME))
}

/// Effective tokens/s: `generate/avg_num_tokens` x the samples of a step (train batch x samples
/// per prompt) / `timing/step`, each train step after the first, the median of them.
fn tokens_per_s(series: &Series, samples: Option<f64>) -> Option<f64> {
    let samples = samples.filter(|n| *n > 0.0)?;
    let steps = series.train.get(1..).unwrap_or_default();
    median(steps.iter().filter_map(|s| {
        let (tokens, secs) = (s.get(AVG_NUM_TOKENS)?, s.get(STEP_TIME)?);
        let rate = tokens * samples / secs;
        (secs > 0.0 && rate.is_finite()).then_some(rate)
    }))
}

/// (step, value) of an eval metric, in step order: from `kind=eval` lines (before training, at the
/// end) and from train lines, where SkyRL merges its periodic evals; one value a step, an eval
/// line's over a train line's.
pub(crate) fn eval_values(series: &Series, key: &str) -> Vec<(u64, f64)> {
    let mut points: Vec<(u64, f64)> = super::values(&series.eval, key).collect();
    for (step, v) in super::values(&series.train, key) {
        if !points.iter().any(|p| p.0 == step) {
            points.push((step, v));
        }
    }
    points.sort_by_key(|p| p.0);
    points
}

/// Every step that may carry eval metrics: eval lines, and train lines with merged evals.
pub(super) fn eval_steps(series: &Series) -> impl Iterator<Item = &Step> {
    series.eval.iter().chain(&series.train)
}

/// The change of `x` against the base's value, as a fraction; `None` without both, or a base of 0.
pub(super) fn change(x: Option<f64>, base: Option<f64>) -> Option<f64> {
    match (x, base) {
        (Some(x), Some(b)) if b != 0.0 => Some((x - b) / b),
        _ => None,
    }
}

/// Which cells hold the column's best value (ties all) among the `eligible` ones (those that
/// completed), when their values differ: a column where every such cell has the same value, or
/// only one has a value, has no best.
pub(super) fn best_of(values: &[Option<f64>], better: Better, eligible: &[bool]) -> Vec<bool> {
    let present: Vec<f64> = (values.iter().zip(eligible))
        .filter(|(_, e)| **e)
        .filter_map(|(v, _)| *v)
        .collect();
    let low = present.iter().copied().min_by(f64::total_cmp);
    let high = present.iter().copied().max_by(f64::total_cmp);
    let top = match better {
        Better::Lower => low,
        Better::Higher => high,
    };
    match top {
        Some(top) if low != high => (values.iter().zip(eligible))
            .map(|(v, e)| *e && *v == Some(top))
            .collect(),
        _ => vec![false; values.len()],
    }
}
