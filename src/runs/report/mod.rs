//! A grid's report: one markdown table row per cell (speed, time split, reward, pass@k, entropy,
//! collapse, divergence), and SVG plots of the per-step metrics with one line per cell (see [`plots`]).

mod plots;

pub use plots::plots;

use crate::runs::alerts::{
    Thresholds, collapse_rule, collapsed, diverged_alert, divergence_rule, median,
};
use crate::runs::metrics::keys::{
    ENTROPY, EVAL_ALL, GENERATE_TIME, REWARD, STEP_TIME, SYNC_TIME, TOKEN_KL, TRAIN_TIME,
    eval_pass_at,
};
use crate::runs::metrics::{Series, Step};
use crate::util::fmt::{Digits, cell, percent};
use std::fmt::Write as _;

/// The parts of a step the table splits its time into: column name and metric.
pub const PHASES: [(&str, &str); 3] = [
    ("generate", GENERATE_TIME),
    ("train", TRAIN_TIME),
    ("sync", SYNC_TIME),
];

/// One grid cell: its name, its SLURM state (or `"unknown"`) and the metrics from its log.
#[derive(Debug, Clone, Copy)]
pub struct CellReport<'a> {
    pub name: &'a str,
    pub state: &'a str,
    pub series: &'a Series,
}

/// The table: one row per cell, in the order given, then a legend line. `-` marks a value the
/// cell's log does not have. Numbers have 3 significant digits; the output depends only on the
/// input, so it can be pinned as a snapshot.
pub fn markdown(grid: &str, cells: &[CellReport]) -> String {
    let pass_key = pass_at_k_key(cells);
    let pass_name = pass_key.as_deref().map(pass_at_label);
    let with_kl = cells
        .iter()
        .any(|c| last(&c.series.train, TOKEN_KL).is_some());
    // Like the KL, a column only where it says something: a grid without a diverged cell has none.
    let diverged: Vec<bool> = (cells.iter())
        .map(|c| diverged_alert(c.series).is_some())
        .collect();
    let with_diverged = diverged.contains(&true);

    let mut head = vec!["cell", "state", "steps", "s/step"];
    head.extend(PHASES.map(|(name, _)| name));
    head.extend(["reward final", "reward best"]);
    let pass_head = pass_name
        .as_ref()
        .map(|p| [format!("{p} final"), format!("{p} best")]);
    if let Some([f, b]) = &pass_head {
        head.extend([f.as_str(), b.as_str()]);
    }
    head.extend(["entropy end", "collapse"]);
    if with_diverged {
        head.push("diverged");
    }
    if with_kl {
        head.push("token KL end");
    }

    // The rule `watch` alerts on, with the thresholds it has unless told otherwise.
    let thresholds = Thresholds::default();
    let mut out = format!("## {grid}\n\n");
    row(&mut out, head.iter().map(|h| h.to_string()));
    row(&mut out, head.iter().map(|_| "---".to_owned()));
    for (cell, diverged) in cells.iter().zip(diverged) {
        let s = cell.series;
        let step_time = median(timing(s, STEP_TIME));
        let mut r = vec![
            escape(cell.name),
            escape(cell.state),
            s.train
                .iter()
                .map(|t| t.step)
                .max()
                .unwrap_or(0)
                .to_string(),
            num(step_time),
        ];
        for (_, key) in PHASES {
            r.push(split(median(timing(s, key)), step_time));
        }
        r.push(num(last(&s.train, REWARD)));
        r.push(num(best(&s.train, REWARD)));
        if let Some(key) = &pass_key {
            r.push(num(last(&s.eval, key)));
            r.push(num(best(&s.eval, key)));
        }
        r.push(num(last(&s.train, ENTROPY)));
        r.push(match collapsed(s, &thresholds) {
            Some(true) => "**yes**".to_owned(),
            Some(false) => "no".to_owned(),
            None => "-".to_owned(),
        });
        if with_diverged {
            r.push(if diverged { "**yes**" } else { "no" }.to_owned());
        }
        if with_kl {
            r.push(num(last(&s.train, TOKEN_KL)));
        }
        row(&mut out, r.into_iter());
    }

    let mut legend = vec![
        "steps: last train step".to_owned(),
        "s/step, generate, train, sync: median seconds over the train steps after the first \
         (warm-up), with the share of the median step"
            .to_owned(),
        format!("reward: `{REWARD}`"),
    ];
    if let (Some(key), Some(name)) = (&pass_key, &pass_name) {
        legend.push(format!("{name}: `{key}` of the eval steps"));
    }
    legend.push("final: the last value, best: the highest".to_owned());
    legend.push(format!(
        "entropy end: `{ENTROPY}` at the last train step; collapse: {} (`rlctl watch`'s \
         entropy-collapse alert)",
        collapse_rule(&thresholds)
    ));
    if with_diverged {
        legend.push(format!(
            "diverged: {} (`rlctl watch`'s diverged alert)",
            divergence_rule()
        ));
    }
    if with_kl {
        legend.push(format!("token KL end: `{TOKEN_KL}` at the last train step"));
    }
    legend.push("-: not in the log.".to_owned());
    let _ = writeln!(out, "\n{}", legend.join("; "));
    out
}

/// The eval pass@k metric the report shows: the `eval/<set>/pass_at_<k>` key that the most cells
/// have, preferring `eval/all/`, then the larger k, then the name. `None` without eval pass@k.
pub fn pass_at_k_key(cells: &[CellReport]) -> Option<String> {
    let mut counts = std::collections::BTreeMap::<&str, usize>::new();
    for cell in cells {
        let keys: std::collections::BTreeSet<&str> = (cell.series.eval.iter())
            .flat_map(|s| s.metrics.keys())
            .map(String::as_str)
            .filter(|k| eval_pass_at(k).is_some())
            .collect();
        for key in keys {
            *counts.entry(key).or_default() += 1;
        }
    }
    let rank = |k: &str| eval_pass_at(k).map(|(set, k)| (set == EVAL_ALL, k));
    (counts.into_iter())
        .max_by(|a, b| (a.1, rank(a.0)).cmp(&(b.1, rank(b.0))).then(b.0.cmp(a.0)))
        .map(|(k, _)| k.to_owned())
}

/// `pass@8` for `eval/all/pass_at_8`.
pub(crate) fn pass_at_label(key: &str) -> String {
    eval_pass_at(key).map_or_else(|| key.to_owned(), |(_, k)| format!("pass@{k}"))
}

/// (step, value) of each step that has the metric, with a finite value.
pub(crate) fn values<'s>(steps: &'s [Step], key: &'s str) -> impl Iterator<Item = (u64, f64)> + 's {
    (steps.iter())
        .filter_map(move |s| Some((s.step, *s.metrics.get(key)?)))
        .filter(|(_, v)| v.is_finite())
}

/// A timing metric over the train steps after the first, whose time includes the warm-up.
pub(crate) fn timing<'s>(series: &'s Series, key: &'s str) -> impl Iterator<Item = f64> + 's {
    values(series.train.get(1..).unwrap_or_default(), key).map(|(_, v)| v)
}

fn last(steps: &[Step], key: &str) -> Option<f64> {
    values(steps, key).last().map(|(_, v)| v)
}

fn best(steps: &[Step], key: &str) -> Option<f64> {
    values(steps, key).map(|(_, v)| v).max_by(f64::total_cmp)
}

/// `41.2 (62%)`: a phase's median seconds and its share of the median step.
fn split(phase: Option<f64>, step: Option<f64>) -> String {
    match (phase, step) {
        (Some(p), Some(s)) if s > 0.0 => format!("{} ({})", num(Some(p)), percent(p / s)),
        (p, _) => num(p),
    }
}

/// A number cell: 3 significant digits with their zeros, so that a column reads at one
/// precision; `-` for a value not in the log.
fn num(x: Option<f64>) -> String {
    cell(x, Digits::SigKept(3))
}

fn escape(s: &str) -> String {
    s.replace('|', "\\|")
}

fn row(out: &mut String, cells: impl Iterator<Item = String>) {
    out.push('|');
    for c in cells {
        out.push(' ');
        out.push_str(&c);
        out.push_str(" |");
    }
    out.push('\n');
}
