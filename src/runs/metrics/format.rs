//! What `rlctl metrics` prints: a run's steps as a table of the watched columns, JSON or CSV.

use crate::runs::metrics::{Kind, MARKER, Series};
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// One column of [`table`]: its header, metric and decimals.
struct Column {
    head: String,
    key: String,
    decimals: usize,
}

/// The step table of `rlctl metrics`: one row per step (train and eval interleaved by step, an
/// eval row's step written `N eval`), and a column for each watched metric that some step has:
///
/// | column | metric |
/// |---|---|
/// | `s/step`, `generate`, `train`, `sync` | `timing/step`, `timing/generate`, `timing/policy_train`, `timing/sync_weights` (seconds) |
/// | `reward`, `pass@N` | `reward/avg_raw_reward`, `reward/avg_pass_at_N` |
/// | `eval score`, `eval pass@N` | `eval/all/avg_score`, `eval/all/pass_at_N` |
/// | `entropy` | `policy/policy_entropy`: shown whenever there are train steps (`-` when absent) |
/// | log-ratio columns | `policy/...log_ratio...` keys ending in `mean` (all of them if none does), `policy/` dropped |
/// | `grad norm` | `policy/raw_grad_norm` |
/// | `token KL`, `teacher lp` | OPD: `distill/token_kl_mean`, `teacher/chosen_logprob_mean` |
///
/// `-` marks a value the step does not have. Numbers have the column's decimals (1 for seconds,
/// 3 or 4 otherwise); a non-zero value too small for them, or 1e6 and more, is written in
/// scientific notation. An empty series gives `no WANDB_MIRROR metric lines`.
pub fn table(series: &Series) -> String {
    if series.is_empty() {
        return format!("no {MARKER} metric lines\n");
    }
    let columns = table_columns(series);
    let mut cells: Vec<Vec<String>> = Vec::with_capacity(series.len() + 1);
    let mut head = vec!["step".to_owned()];
    head.extend(columns.iter().map(|c| c.head.clone()));
    cells.push(head);
    for step in series.rows() {
        let mut row = vec![match step.kind {
            Kind::Train => step.step.to_string(),
            Kind::Eval => format!("{} eval", step.step),
        }];
        row.extend(columns.iter().map(|c| {
            step.get(&c.key)
                .map_or_else(|| "-".to_owned(), |v| fixed(v, c.decimals))
        }));
        cells.push(row);
    }
    let widths: Vec<usize> = (0..=columns.len())
        .map(|i| {
            cells
                .iter()
                .map(|r| r[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in &cells {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i == 0 {
                let _ = write!(line, "{cell:<w$}", w = widths[0]);
            } else {
                let _ = write!(line, "  {cell:>w$}", w = widths[i]);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn table_columns(series: &Series) -> Vec<Column> {
    let keys = series.keys();
    let mut columns = Vec::new();
    let mut add = |head: &str, key: &str, decimals: usize, always: bool| {
        if always || keys.contains(key) {
            columns.push(Column {
                head: head.to_owned(),
                key: key.to_owned(),
                decimals,
            });
        }
    };
    add("s/step", "timing/step", 1, false);
    add("generate", "timing/generate", 1, false);
    add("train", "timing/policy_train", 1, false);
    add("sync", "timing/sync_weights", 1, false);
    add("reward", "reward/avg_raw_reward", 3, false);
    for (n, key) in numbered(&keys, "reward/avg_pass_at_") {
        add(&format!("pass@{n}"), key, 3, false);
    }
    add("eval score", "eval/all/avg_score", 3, false);
    for (n, key) in numbered(&keys, "eval/all/pass_at_") {
        add(&format!("eval pass@{n}"), key, 3, false);
    }
    add(
        "entropy",
        "policy/policy_entropy",
        4,
        !series.train.is_empty(),
    );
    let log_ratio: Vec<&str> = (keys.iter().copied())
        .filter(|k| k.starts_with("policy/") && k.contains("log_ratio"))
        .collect();
    let means: Vec<&str> = (log_ratio.iter().copied())
        .filter(|k| k.ends_with("mean"))
        .collect();
    for key in if means.is_empty() { log_ratio } else { means } {
        add(&key["policy/".len()..], key, 4, false);
    }
    add("grad norm", "policy/raw_grad_norm", 3, false);
    add("token KL", "distill/token_kl_mean", 4, false);
    add("teacher lp", "teacher/chosen_logprob_mean", 3, false);
    columns
}

/// The keys `<prefix><N>`, by N.
fn numbered<'k>(keys: &BTreeSet<&'k str>, prefix: &str) -> Vec<(u64, &'k str)> {
    let mut found: Vec<(u64, &str)> = (keys.iter())
        .filter_map(|k| Some((k.strip_prefix(prefix)?.parse().ok()?, *k)))
        .collect();
    found.sort();
    found
}

/// `v` with `decimals` decimals; scientific when that would round a non-zero value to zero or
/// when it is 1e6 or more.
fn fixed(v: f64, decimals: usize) -> String {
    if v.is_nan() {
        return "NaN".to_owned();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.to_owned();
    }
    let a = v.abs();
    if (a != 0.0 && a < 0.5 * 10f64.powi(-(decimals as i32))) || a >= 1e6 {
        format!("{v:.2e}")
    } else {
        format!("{v:.decimals$}")
    }
}

/// The whole series as one JSON document: `{"train":[{"kind":"train","step":1,"metrics":{...}},
/// ...],"eval":[...]}` (non-finite values are written `null`).
pub fn to_json(series: &Series) -> String {
    serde_json::to_string(series).expect("a series serializes")
}

/// CSV: a header `kind,step,<every metric name, sorted>`, then one row per step in the order of
/// [`Series::rows`]; an empty cell where the step lacks the metric. Values are written in the
/// shortest form that reads back exactly (`NaN`, `inf`, `-inf` for non-finite ones).
pub fn to_csv(series: &Series) -> String {
    let keys: Vec<&str> = series.keys().into_iter().collect();
    let mut out = String::from("kind,step");
    for key in &keys {
        out.push(',');
        out.push_str(&csv_field(key));
    }
    out.push('\n');
    for step in series.rows() {
        let _ = write!(out, "{},{}", step.kind, step.step);
        for key in &keys {
            out.push(',');
            if let Some(v) = step.get(key) {
                let _ = write!(out, "{v}");
            }
        }
        out.push('\n');
    }
    out
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}
