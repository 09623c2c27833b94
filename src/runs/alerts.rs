//! Health checks over a run's metrics ([`alerts`]) and its progress ([`progress`]): pure
//! functions of a [`Series`], for `watch`, `status` and the grid report, which all judge a run
//! by these rules (the report and `status` with [`Thresholds::default`]).
//!
//! Each detector looks at the latest train steps of one metric; its thresholds are the fields of
//! [`Thresholds`], whose defaults suit a GRPO / OPD run of a few hundred steps. A non-finite
//! latest value (`NaN`, `inf`) of the loss, reward, entropy, grad norm or token KL is one alert,
//! [`AlertKind::Diverged`], whichever it is; the other detectors judge finite values only.

use crate::runs::metrics::keys::{
    ENTROPY, GRAD_NORM, GRAD_NORM_CLIPPED, POLICY_LOSS, REWARD, STEP_TIME, TOKEN_KL,
};
use crate::runs::metrics::{Kind, Series};
use crate::util::fmt::{Digits, duration, number, percent};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// The thresholds of the detectors; every field can be overridden, the defaults are
/// [`Thresholds::default`]. Deserializes from e.g. a TOML table of just the fields to change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Thresholds {
    /// Entropy collapse: the latest `policy/policy_entropy` is below this absolute floor (nats per
    /// token). Default 0.1.
    pub entropy_floor: f64,
    /// Entropy collapse: the latest entropy is below this fraction of its start value. Default 0.2
    /// (a fall by 5x).
    pub entropy_min_ratio: f64,
    /// Entropy collapse: the start value is the mean of the first this many train steps that have
    /// entropy; the ratio check runs once a later step exists. Default 3.
    pub entropy_start_steps: usize,
    /// Grad-norm spike: the latest grad norm is more than this many times the median of the
    /// steps before it. Default 5.
    pub grad_spike_factor: f64,
    /// Grad-norm spike: how many preceding steps the rolling median covers (at most). Default 20.
    pub grad_window: usize,
    /// Grad-norm spike: the check runs once at least this many steps precede the latest.
    /// Default 5.
    pub grad_min_history: usize,
    /// Reward stall: no alert before train step `reward_warmup_steps + reward_stall_steps`, and
    /// the warm-up steps are always among the steps the recent best is compared with.
    /// Default 10.
    pub reward_warmup_steps: u64,
    /// Reward stall: the best `reward/avg_raw_reward` of the last this many steps (by step
    /// number) is compared with the best before them. Default 30.
    pub reward_stall_steps: u64,
    /// Reward stall: the recent best must beat the earlier best by at least this much (in reward
    /// units) to count as an improvement. Default 0.01.
    pub reward_min_delta: f64,
    /// OPD token KL rising: the least-squares trend of `distill/token_kl_mean` over the last this
    /// many train steps that have it (at least 3 needed). Default 10.
    pub kl_window: usize,
    /// OPD token KL rising: alert when the fitted trend rises by more than this fraction of its
    /// value at the start of the window. Default 0.1 (+10%).
    pub kl_min_rise: f64,
    /// OPD token KL rising: ...and by more than this many times the standard deviation of the
    /// values around the trend, so that noise around a converged KL is not taken for a rise.
    /// Default 2.
    pub kl_noise_factor: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            entropy_floor: 0.1,
            entropy_min_ratio: 0.2,
            entropy_start_steps: 3,
            grad_spike_factor: 5.0,
            grad_window: 20,
            grad_min_history: 5,
            reward_warmup_steps: 10,
            reward_stall_steps: 30,
            reward_min_delta: 0.01,
            kl_window: 10,
            kl_min_rise: 0.1,
            kl_noise_factor: 2.0,
        }
    }
}

/// What an alert is about.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum AlertKind {
    /// A watched metric's latest value is `NaN` or infinite.
    Diverged,
    /// Policy entropy below the floor, or fallen by a large factor.
    EntropyCollapse,
    /// Train steps without `policy/policy_entropy`: the collapse guard cannot run.
    EntropyMissing,
    /// The latest grad norm far above its rolling median.
    GradSpike,
    /// The best reward has not improved over the last steps.
    RewardStall,
    /// OPD's token KL to the teacher trending up.
    KlRising,
}

impl AlertKind {
    pub fn as_str(self) -> &'static str {
        match self {
            AlertKind::Diverged => "diverged",
            AlertKind::EntropyCollapse => "entropy-collapse",
            AlertKind::EntropyMissing => "entropy-missing",
            AlertKind::GradSpike => "grad-spike",
            AlertKind::RewardStall => "reward-stall",
            AlertKind::KlRising => "kl-rising",
        }
    }
}

impl fmt::Display for AlertKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One problem found: its kind, the train step it was seen at and a sentence with the numbers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Alert {
    pub kind: AlertKind,
    pub step: u64,
    pub message: String,
}

impl fmt::Display for Alert {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] {}", self.kind, self.message)
    }
}

/// The keys the rules read ([`alerts`], [`collapsed`], [`progress`]): a row reads only the steps
/// holding their latest values (see `history::row`), so a rule reading another key names it here.
pub const RULE_KEYS: [&str; 7] = [
    STEP_TIME,
    REWARD,
    ENTROPY,
    POLICY_LOSS,
    GRAD_NORM,
    GRAD_NORM_CLIPPED,
    TOKEN_KL,
];

/// Every alert the train steps of `series` raise, in the order divergence, entropy, grad norm,
/// reward, KL.
pub fn alerts(series: &Series, t: &Thresholds) -> Vec<Alert> {
    [
        diverged_alert(series),
        entropy_alert(series, t),
        grad_alert(series, t),
        reward_alert(series, t),
        kl_alert(series, t),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The most train steps [`alerts_since`] judges in one window: the last this many of it. A
/// reader away for longer (a cron pass after days) judges the latest ones, each over the series
/// as it stood, at a bounded cost.
pub const SINCE_MAX_STEPS: usize = 1000;

/// Every kind of alert raised at some train step after `after` (a reader's watermark: the last
/// train step it judged), each kind once, at the first step of the window where it fired; in
/// [`alerts`]' order. Each step is judged on the series as it stood then (the train steps up
/// to it, in log order), so a spike between two looks is found by the second; at most the last
/// [`SINCE_MAX_STEPS`] steps of the window are judged. `None` (no earlier look) judges the
/// latest step alone, as [`alerts`] does. The window is the train steps at the end of the log
/// whose number is above `after`.
pub fn alerts_since(series: &Series, t: &Thresholds, after: Option<u64>) -> Vec<Alert> {
    let Some(after) = after else {
        return alerts(series, t);
    };
    // One copy, cut down from its end: each step is judged on the steps up to it, without a
    // copy per step. The detectors read train steps only.
    let mut past = Series {
        train: series.train.clone(),
        eval: Vec::new(),
    };
    let mut first: BTreeMap<AlertKind, Alert> = BTreeMap::new();
    let mut judged = 0;
    while past.train.last().is_some_and(|s| s.step > after) && judged < SINCE_MAX_STEPS {
        // From the latest step back: an earlier firing of a kind replaces a later one.
        for alert in alerts(&past, t) {
            first.insert(alert.kind, alert);
        }
        past.train.pop();
        judged += 1;
    }
    first.into_values().collect()
}

/// The metrics whose latest value [`diverged_alert`] checks: the loss, reward, entropy, grad
/// norm ([`GRAD_NORM`], or [`GRAD_NORM_CLIPPED`] when a run lacks it) and OPD's token KL.
pub const DIVERGENCE_KEYS: [&str; 5] = [POLICY_LOSS, REWARD, ENTROPY, GRAD_NORM, TOKEN_KL];

/// Divergence: the latest value of one of [`DIVERGENCE_KEYS`] is `NaN` or infinite. One alert
/// names every such metric: once one is, the others follow, and the fix is the same.
pub fn diverged_alert(series: &Series) -> Option<Alert> {
    let bad: Vec<(&str, u64, f64)> = (DIVERGENCE_KEYS.iter())
        .filter_map(|&key| {
            let (key, values) = if key == GRAD_NORM {
                grad_norms(series)
            } else {
                (key, series.values(Kind::Train, key).collect())
            };
            let &(step, v) = values.last()?;
            (!v.is_finite()).then_some((key, step, v))
        })
        .collect();
    let step = bad.iter().map(|b| b.1).max()?;
    let what: Vec<String> = (bad.iter())
        .map(|(key, at, v)| format!("`{key}` is {} at step {at}", number(*v, Digits::Sig(3))))
        .collect();
    Some(Alert {
        kind: AlertKind::Diverged,
        step,
        message: format!(
            "{}: training has diverged; restart from an earlier checkpoint with a lower learning \
             rate (`trainer.policy.optimizer_config.lr`)",
            what.join(", ")
        ),
    })
}

/// What [`diverged_alert`] means, for a legend.
pub fn divergence_rule() -> String {
    let keys: Vec<String> = DIVERGENCE_KEYS.iter().map(|k| format!("`{k}`")).collect();
    let (last, rest) = keys.split_last().expect("keys to check");
    format!(
        "the latest {} or {last} is NaN or infinite",
        rest.join(", ")
    )
}

/// Entropy collapse: the latest entropy below `entropy_floor`, or below `entropy_min_ratio` x
/// the mean of the first `entropy_start_steps` (a non-finite one is [`diverged_alert`]'s).
/// Without any entropy value in train steps: [`AlertKind::EntropyMissing`].
pub fn entropy_alert(series: &Series, t: &Thresholds) -> Option<Alert> {
    let values: Vec<(u64, f64)> = series.values(Kind::Train, ENTROPY).collect();
    let Some(&(step, latest)) = values.last() else {
        let last = series.last_train_step()?;
        return Some(Alert {
            kind: AlertKind::EntropyMissing,
            step: last,
            message: format!(
                "none of the {} train steps logged `{ENTROPY}` (the latest at step {last}): the \
                 entropy collapse guard cannot run; check that the trainer computes the policy \
                 entropy",
                series.train.len()
            ),
        });
    };
    if !latest.is_finite() {
        return None;
    }
    let alert = |message| {
        Some(Alert {
            kind: AlertKind::EntropyCollapse,
            step,
            message,
        })
    };
    let advice = "the policy is collapsing; consider the entropy bonus \
                  `trainer.algorithm.use_entropy_loss=true` (`trainer.algorithm.entropy_loss_coef`) \
                  or a lower learning rate";
    let n = t.entropy_start_steps.max(1);
    let start = (values.len() > n).then(|| values[..n].iter().map(|v| v.1).sum::<f64>() / n as f64);
    let fell = start.filter(|&s| s.is_finite() && s > 0.0 && latest < t.entropy_min_ratio * s);
    if let Some(start) = fell {
        return alert(format!(
            "policy entropy fell from {} to {} (x{}) at step {step}: {advice}",
            number(start, Digits::Sig(3)),
            number(latest, Digits::Sig(3)),
            number(latest / start, Digits::Sig(2)),
        ));
    }
    if latest < t.entropy_floor {
        let from = start.map_or_else(String::new, |s| {
            format!(" (it started at {})", number(s, Digits::Sig(3)))
        });
        return alert(format!(
            "policy entropy is {} at step {step}, below the floor {}{from}: {advice}",
            number(latest, Digits::Sig(3)),
            number(t.entropy_floor, Digits::Sig(3)),
        ));
    }
    None
}

/// Whether the entropy collapsed by [`entropy_alert`]'s rule: the verdict of the report and of
/// `status --json`. `None` without a verdict: no entropy logged, or the latest value not finite.
pub fn collapsed(series: &Series, t: &Thresholds) -> Option<bool> {
    let (_, latest) = series.values(Kind::Train, ENTROPY).next_back()?;
    let collapse = |a: Alert| a.kind == AlertKind::EntropyCollapse;
    latest
        .is_finite()
        .then(|| entropy_alert(series, t).is_some_and(collapse))
}

/// What [`collapsed`] means with these thresholds, for a legend.
pub fn collapse_rule(t: &Thresholds) -> String {
    format!(
        "the latest `{ENTROPY}` below {}, or below {} x its mean over its first {} train steps, \
         once there are more",
        number(t.entropy_floor, Digits::Sig(3)),
        number(t.entropy_min_ratio, Digits::Sig(3)),
        t.entropy_start_steps.max(1),
    )
}

/// The grad norm's key and (step, value) of the train steps: [`GRAD_NORM`]'s, or
/// [`GRAD_NORM_CLIPPED`]'s when a run lacks it.
fn grad_norms(series: &Series) -> (&'static str, Vec<(u64, f64)>) {
    let values: Vec<(u64, f64)> = series.values(Kind::Train, GRAD_NORM).collect();
    if values.is_empty() {
        let clipped = series.values(Kind::Train, GRAD_NORM_CLIPPED).collect();
        return (GRAD_NORM_CLIPPED, clipped);
    }
    (GRAD_NORM, values)
}

/// Grad-norm spike: the latest grad norm more than `grad_spike_factor` x the median of the up to
/// `grad_window` steps before it (with at least `grad_min_history` of them); a non-finite one
/// is [`diverged_alert`]'s.
pub fn grad_alert(series: &Series, t: &Thresholds) -> Option<Alert> {
    let (_, values) = grad_norms(series);
    let (&(step, latest), before) = values.split_last()?;
    if !latest.is_finite() {
        return None;
    }
    let window: Vec<f64> = before[before.len().saturating_sub(t.grad_window.max(1))..]
        .iter()
        .map(|v| v.1)
        .filter(|v| v.is_finite())
        .collect();
    if window.len() < t.grad_min_history.max(1) {
        return None;
    }
    let median = median(window.iter().copied())?;
    if median > 0.0 && latest > t.grad_spike_factor * median {
        return Some(Alert {
            kind: AlertKind::GradSpike,
            step,
            message: format!(
                "grad norm spiked to {} at step {step}, x{} the median {} of the {} steps before: \
             training may be diverging; lower the learning rate \
             (`trainer.policy.optimizer_config.lr`) or clip harder \
             (`trainer.policy.optimizer_config.max_grad_norm`)",
                number(latest, Digits::Sig(3)),
                number(latest / median, Digits::Sig(3)),
                number(median, Digits::Sig(3)),
                window.len(),
            ),
        });
    }
    None
}

/// Reward stall: once the latest train step is at least `reward_warmup_steps +
/// reward_stall_steps`, the best `reward/avg_raw_reward` of the last `reward_stall_steps` steps
/// does not beat the best of the steps before them by `reward_min_delta`.
pub fn reward_alert(series: &Series, t: &Thresholds) -> Option<Alert> {
    let values: Vec<(u64, f64)> = (series.values(Kind::Train, REWARD))
        .filter(|v| v.1.is_finite())
        .collect();
    let latest = values.iter().map(|v| v.0).max()?;
    let k = t.reward_stall_steps.max(1);
    if latest < t.reward_warmup_steps + k {
        return None;
    }
    let cut = latest - k;
    let best = |recent: bool| {
        (values.iter())
            .filter(|v| (v.0 > cut) == recent)
            .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))
            .copied()
    };
    let ((best_step, best_before), (_, best_recent)) = (best(false)?, best(true)?);
    if best_recent >= best_before + t.reward_min_delta {
        return None;
    }
    Some(Alert {
        kind: AlertKind::RewardStall,
        step: latest,
        message: format!(
            "reward has not improved for {k} steps at step {latest}: steps {}..{latest} reached at most {} \
             (`{REWARD}`), the best before them was {} at step {best_step}: learning has stalled; \
             check the learning rate and whether the prompts are too easy or too hard (groups \
             that are all right or all wrong give GRPO no signal)",
            cut + 1,
            number(best_recent, Digits::Sig(3)),
            number(best_before, Digits::Sig(3)),
        ),
    })
}

/// OPD token KL rising: the least-squares line through the last `kl_window` values of
/// `distill/token_kl_mean` rises by more than `kl_min_rise` x its value at the window's start
/// and by more than `kl_noise_factor` x the scatter of the values around it (a non-finite
/// latest value is [`diverged_alert`]'s).
pub fn kl_alert(series: &Series, t: &Thresholds) -> Option<Alert> {
    let values: Vec<(u64, f64)> = series.values(Kind::Train, TOKEN_KL).collect();
    let &(step, _) = values.last().filter(|v| v.1.is_finite())?;
    let window = &values[values.len().saturating_sub(t.kl_window.max(3))..];
    if window.len() < 3 || window.iter().any(|v| !v.1.is_finite()) {
        return None;
    }
    let (slope, intercept) = fit(window)?;
    let trend = |x: u64| intercept + slope * x as f64;
    let (first, last) = (window[0].0, step);
    let (from, to) = (trend(first), trend(last));
    let scatter = (window
        .iter()
        .map(|p| (p.1 - trend(p.0)).powi(2))
        .sum::<f64>()
        / (window.len() - 2) as f64)
        .sqrt();
    if slope <= 0.0
        || from <= 0.0
        || to - from <= t.kl_min_rise * from
        || to - from <= t.kl_noise_factor * scatter
    {
        return None;
    }
    Some(Alert {
        kind: AlertKind::KlRising,
        step,
        message: format!(
            "OPD token KL rose from {} to {} (+{}, least-squares trend) over steps {first}..{last}, \
         at step {last}; it should fall as the student learns the teacher: lower the learning rate \
         (`trainer.policy.optimizer_config.lr`) and check that the teacher is the intended model",
            number(from, Digits::Sig(3)),
            number(to, Digits::Sig(3)),
            percent((to - from) / from),
        ),
    })
}

/// Slope and intercept of the least-squares line through (step, value).
fn fit(points: &[(u64, f64)]) -> Option<(f64, f64)> {
    let n = points.len() as f64;
    let mx = points.iter().map(|p| p.0 as f64).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 as f64 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 as f64 - mx) * (p.1 - my)).sum();
    (sxx > 0.0).then(|| {
        let slope = sxy / sxx;
        (slope, my - slope * mx)
    })
}

/// How far a run is: its latest train step, the total (if known), the median `timing/step` of
/// the last [`PROGRESS_WINDOW`] train steps that have it, and the time left at that pace.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Progress {
    /// The highest train step logged, 0 before the first.
    pub step: u64,
    pub total: Option<u64>,
    pub secs_per_step: Option<f64>,
    /// `(total - step) x secs_per_step`, when both are known.
    pub eta_secs: Option<f64>,
}

/// Train steps whose `timing/step` [`progress`] takes the median of.
pub const PROGRESS_WINDOW: usize = 10;

/// The run's [`Progress`] towards `total_steps` (e.g. `trainer.max_steps`), if known.
pub fn progress(series: &Series, total_steps: Option<u64>) -> Progress {
    let step = series.last_train_step().unwrap_or(0);
    let times: Vec<f64> = (series.values(Kind::Train, STEP_TIME))
        .map(|v| v.1)
        .filter(|v| v.is_finite() && *v >= 0.0)
        .collect();
    let secs_per_step = median(
        times[times.len().saturating_sub(PROGRESS_WINDOW)..]
            .iter()
            .copied(),
    );
    Progress::at(step, total_steps, secs_per_step)
}

impl Progress {
    /// At `step` of `total`, at `secs_per_step`: with the time left at that pace.
    pub fn at(step: u64, total: Option<u64>, secs_per_step: Option<f64>) -> Progress {
        let eta_secs = match (total, secs_per_step) {
            (Some(total), Some(s)) => Some(total.saturating_sub(step) as f64 * s),
            _ => None,
        };
        Progress {
            step,
            total,
            secs_per_step,
            eta_secs,
        }
    }

    /// `step / total`, capped at 1.
    pub fn fraction(&self) -> Option<f64> {
        let total = self.total.filter(|&t| t > 0)?;
        Some((self.step as f64 / total as f64).min(1.0))
    }

    /// One line: `step 120/500 (24%), 42.1 s/step, ETA 4h27m`; the parts not known are left out
    /// (`step 0, no timing yet` before the first step).
    pub fn summary(&self) -> String {
        let mut out = format!("step {}", self.step);
        if let (Some(total), Some(f)) = (self.total, self.fraction()) {
            out = format!("step {}/{total} ({})", self.step, percent(f));
        }
        match self.secs_per_step {
            Some(s) => out.push_str(&format!(", {} s/step", number(s, Digits::Decimals(1)))),
            None => out.push_str(", no timing yet"),
        }
        if let Some(eta) = self.eta_secs {
            out.push_str(&format!(", ETA {}", duration(eta)));
        }
        out
    }
}

/// The median, `None` for no values.
pub fn median(values: impl Iterator<Item = f64>) -> Option<f64> {
    let mut v: Vec<f64> = values.collect();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}
