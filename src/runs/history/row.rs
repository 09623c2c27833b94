//! The steps of a run's history a row judges (`status`'s step, s/step, reward, entropy,
//! collapse and alert kinds), read with memory bounded by the row, not by the run's length: a
//! run `tend` resubmitted 50,000 times is read one log at a time, newest first, and only the
//! steps the row's rules can look at are kept.
//!
//! The rules of [`alerts`] with their default thresholds read, of the joined train steps (see
//! [`join`](super::join)): the latest values of a few keys ([`RULE_KEYS`], at most [`WINDOW`] of
//! each, all, finite, and finite and not negative), the first few entropy values, the best
//! reward before the recent ones and the highest step. Those steps, in their order, make a
//! series on which every rule answers as on the whole history (see the test
//! `a_rows_steps_judge_as_the_whole_history`).

use super::{History, train_span};
use crate::error::Result;
use crate::runs::alerts::{RULE_KEYS, Thresholds};
use crate::runs::log::read_log;
use crate::runs::metrics::keys::{ENTROPY, REWARD};
use crate::runs::metrics::{Series, Step};
use crate::store::ledger::Record;

/// The values of each of [`RULE_KEYS`] kept from the end of the history: more than any rule's
/// window with the default thresholds (see the test `the_window_covers_every_rules_window`).
pub const WINDOW: usize = 64;

/// The history of `jobs` (see [`super::jobs`]) as its row judges it: the steps of its train
/// series the row's rules read (see the module), the newest job's part, and its pulse. Each log
/// is read through its step cache, newest first; memory holds one log's steps and the kept
/// ones.
pub fn read(jobs: &[&Record]) -> Result<History> {
    let mut keep = Keep::default();
    let mut history = History::default();
    // The lowest first train step of the jobs read so far (all later than the one being read):
    // an earlier job's steps from there on are a trajectory the run left.
    let mut cut: Option<u64> = None;
    for (i, record) in jobs.iter().rev().enumerate() {
        let (series, pulse) = read_log(&record.log)?;
        let span = train_span(&series);
        if i == 0 {
            history.parts.push(span);
            history.pulse = pulse;
        }
        for step in series.train.into_iter().rev() {
            if cut.is_none_or(|c| step.step < c) {
                keep.visit(step);
            }
        }
        if let Some((first, _)) = span {
            cut = Some(cut.map_or(first, |c| c.min(first)));
        }
    }
    history.series = keep.series();
    Ok(history)
}

/// How many values [`Keep`] counts per key: any, finite, finite and not negative (the step
/// time's median takes those).
const TESTS: [fn(f64) -> bool; 3] = [|_| true, f64::is_finite, |v| v.is_finite() && v >= 0.0];

/// The steps kept so far, visited from the history's end back; each with its visit number, so
/// that a step kept for two reasons is kept once and the series comes out in its order.
#[derive(Default)]
struct Keep {
    visited: usize,
    /// Per key of [`RULE_KEYS`] and test of [`TESTS`], the values of the steps visited so far.
    counts: [[usize; TESTS.len()]; RULE_KEYS.len()],
    /// The steps holding one of the last [`WINDOW`] values of a key.
    recent: Vec<(usize, Step)>,
    /// Of the others: the earliest steps with an entropy (the collapse rule's start value)...
    first_entropy: Vec<(usize, Step)>,
    /// ...the one with the best finite reward, the earliest of equals (the reward stall rule's
    /// best before its window), and the highest step number.
    best_reward: Option<(usize, Step)>,
    highest: Option<(usize, Step)>,
}

impl Keep {
    fn visit(&mut self, step: Step) {
        let at = self.visited;
        self.visited += 1;
        let mut wanted = false;
        for (key, counts) in RULE_KEYS.iter().zip(&mut self.counts) {
            let Some(v) = step.get(key) else { continue };
            for (test, count) in TESTS.iter().zip(counts.iter_mut()) {
                if test(v) {
                    wanted |= *count < WINDOW;
                    *count += 1;
                }
            }
        }
        if wanted {
            self.recent.push((at, step));
            return;
        }
        // Visited from the end back: a later visit is an earlier step.
        if step.get(ENTROPY).is_some() {
            self.first_entropy.push((at, step.clone()));
            let n = Thresholds::default().entropy_start_steps.max(1);
            if self.first_entropy.len() > n {
                self.first_entropy.remove(0);
            }
        }
        let reward = |s: &(usize, Step)| s.1.get(REWARD).filter(|v| v.is_finite());
        if let Some(r) = step.get(REWARD).filter(|v| v.is_finite())
            && self
                .best_reward
                .as_ref()
                .and_then(reward)
                .is_none_or(|b| r >= b)
        {
            self.best_reward = Some((at, step.clone()));
        }
        if self.highest.as_ref().is_none_or(|h| step.step > h.1.step) {
            self.highest = Some((at, step));
        }
    }

    /// The kept steps in their order, as a series of train steps.
    fn series(self) -> Series {
        let mut kept: Vec<(usize, Step)> = (self.recent.into_iter())
            .chain(self.first_entropy)
            .chain(self.best_reward)
            .chain(self.highest)
            .collect();
        // The highest visit number is the earliest step.
        kept.sort_by_key(|(at, _)| std::cmp::Reverse(*at));
        kept.dedup_by_key(|(at, _)| *at);
        Series {
            train: kept.into_iter().map(|(_, step)| step).collect(),
            eval: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::alerts::PROGRESS_WINDOW;
    use crate::runs::history::read as read_whole;
    use crate::runs::metrics::keys::{GRAD_NORM, STEP_TIME, TOKEN_KL};
    use crate::runs::state::alert_kinds;
    use crate::runs::{alerts, metrics};

    /// The most values a rule with the default thresholds reads from the end of a key's series.
    fn widest_rule() -> usize {
        let t = Thresholds::default();
        [
            t.grad_window + 1,
            t.reward_stall_steps as usize + 1,
            t.kl_window.max(3),
            PROGRESS_WINDOW,
        ]
        .into_iter()
        .max()
        .unwrap_or(0)
    }

    #[test]
    fn the_window_covers_every_rules_window() {
        assert!(WINDOW >= widest_rule(), "{WINDOW} < {}", widest_rule());
    }

    fn record(dir: &camino::Utf8Path, job: u64) -> Record {
        serde_json::from_value(serde_json::json!({
            "job_id": job.to_string(), "target": "p", "group": "p", "member": "p",
            "job_name": "p", "run_dir": dir, "checkpoint_dir": "/ckpt/p",
            "log": dir.join(format!("p_{job}.out")), "knobs": {}, "sbatch": [],
            "submitted_unix": 0, "rlctl_version": "0",
        }))
        .unwrap()
    }

    /// A metric line as MarinSkyRL prints it.
    fn line(step: u64, metrics: &[(&str, String)]) -> String {
        let body: Vec<String> = metrics
            .iter()
            .map(|(k, v)| format!("\"{k}\": {v}"))
            .collect();
        format!(
            "WANDB_MIRROR kind=train step={step} metrics={{{}}}\n",
            body.join(", ")
        )
    }

    /// What the row reads of a series: its verdicts with the default thresholds.
    fn verdicts(series: &Series) -> String {
        let t = Thresholds::default();
        let last = |k| series.values(metrics::Kind::Train, k).next_back();
        format!(
            "{:?} {:?} {:?} {:?} {:?}",
            alerts::progress(series, Some(10_000)),
            [last(REWARD), last(ENTROPY)],
            alerts::collapsed(series, &t),
            alert_kinds(series, &t),
            (alerts::alerts(series, &t).iter())
                .map(|a| (a.kind, a.step))
                .collect::<Vec<_>>(),
        )
    }

    /// Jobs that resume from every kind of place (behind the last, past it, from step 0), logs
    /// with keys now and then, NaNs, negative step times, a reward that peaked early, entropy
    /// that collapsed or not: each history judged through the kept steps as through all.
    #[test]
    fn a_rows_steps_judge_as_the_whole_history() {
        let mut seed = 7u64;
        let mut rand = move |n: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        for case in 0..60 {
            let dir = tempfile::tempdir().unwrap();
            let dir = camino::Utf8Path::from_path(dir.path()).unwrap();
            let mut records = Vec::new();
            let mut step = 0u64;
            for job in 0..=rand(6) {
                step = match rand(4) {
                    0 => 0,
                    1 => step.saturating_sub(rand(80)),
                    _ => step,
                };
                let mut text = String::new();
                for _ in 0..rand(150) {
                    step += 1;
                    let mut m = Vec::new();
                    let value = |r: u64| match r {
                        0 => "NaN".to_owned(),
                        1 => "-1.5".to_owned(),
                        r => format!("{}", r as f64 / 7.0),
                    };
                    for key in [STEP_TIME, REWARD, ENTROPY, GRAD_NORM, TOKEN_KL] {
                        if rand(5) > 0 || case % 3 == 0 {
                            let r = rand(40);
                            m.push((
                                key,
                                value(if key == REWARD && (10..14).contains(&step) {
                                    90
                                } else {
                                    r
                                }),
                            ));
                        }
                    }
                    m.push(("other/x", "1".to_owned()));
                    text.push_str(&line(step, &m));
                }
                let record = record(dir, 100 + job);
                std::fs::write(&record.log, text).unwrap();
                records.push(record);
            }
            let jobs: Vec<&Record> = records.iter().collect();
            let whole = read_whole(&jobs).unwrap();
            let row = read(&jobs).unwrap();
            assert_eq!(
                verdicts(&row.series),
                verdicts(&whole.series),
                "case {case}"
            );
            assert_eq!(row.resumed_from(), whole.resumed_from(), "case {case}");
            assert!(row.series.train.len() <= 3 * WINDOW * RULE_KEYS.len() + 5);
        }
    }
}
