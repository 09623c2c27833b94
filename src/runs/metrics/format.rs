//! What `rlctl metrics` prints: a run's steps as a table of the watched columns, JSON or CSV.

use crate::runs::metrics::keys::{
    ENTROPY, EVAL_ALL, EVAL_SCORE, GENERATE_TIME, GRAD_NORM, LOG_RATIO, POLICY_PREFIX, REWARD,
    STEP_TIME, SYNC_TIME, TEACHER_LOGPROB, TOKEN_KL, TRAIN_TIME, eval_pass_at, train_pass_at,
};
use crate::runs::metrics::{Kind, MARKER, Series};
use crate::util::fmt::{Digits, cell};
use crate::util::table::{Table, left, right};
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
/// 3 or 4 otherwise), as [`Digits::Decimals`] writes them. An empty series gives
/// `no step lines (...)`, naming the forms read. Steps read from upstream's console logger
/// (see `console`) are followed by a line saying their values are rounded.
pub fn table(series: &Series) -> String {
    if series.is_empty() {
        return format!(
            "no step lines: neither `{MARKER} kind=train step=N metrics={{...}}` (MarinSkyRL, or rlctl's \
             progress callback on upstream SkyRL) nor upstream's console logger records (`... - Step N:`)\n"
        );
    }
    let columns = table_columns(series);
    let mut out = Table::new(std::iter::once(left()).chain(columns.iter().map(|_| right())));
    out.row(std::iter::once("step".to_owned()).chain(columns.iter().map(|c| c.head.clone())));
    for step in series.rows() {
        let name = match step.kind {
            Kind::Train => step.step.to_string(),
            Kind::Eval => format!("{} eval", step.step),
        };
        let values = (columns.iter()).map(|c| cell(step.get(&c.key), Digits::Decimals(c.decimals)));
        out.row(std::iter::once(name).chain(values));
    }
    let mut text = out.render();
    let rounded = (series.train.iter().chain(&series.eval))
        .filter(|s| s.rounded)
        .count();
    if rounded > 0 {
        text.push_str(&format!(
            "{rounded} step(s) read from upstream's console logger, which rounds every float to 4 decimals \
             (launch with rlctl for full precision: its progress callback prints every step whole)\n"
        ));
    }
    text
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
    add("s/step", STEP_TIME, 1, false);
    add("generate", GENERATE_TIME, 1, false);
    add("train", TRAIN_TIME, 1, false);
    add("sync", SYNC_TIME, 1, false);
    add("reward", REWARD, 3, false);
    for (n, key) in numbered(&keys, train_pass_at) {
        add(&format!("pass@{n}"), key, 3, false);
    }
    add("eval score", EVAL_SCORE, 3, false);
    let eval_all = |k: &str| eval_pass_at(k).and_then(|(set, n)| (set == EVAL_ALL).then_some(n));
    for (n, key) in numbered(&keys, eval_all) {
        add(&format!("eval pass@{n}"), key, 3, false);
    }
    add("entropy", ENTROPY, 4, !series.train.is_empty());
    let log_ratio: Vec<&str> = (keys.iter().copied())
        .filter(|k| k.starts_with(POLICY_PREFIX) && k.contains(LOG_RATIO))
        .collect();
    let means: Vec<&str> = (log_ratio.iter().copied())
        .filter(|k| k.ends_with("mean"))
        .collect();
    for key in if means.is_empty() { log_ratio } else { means } {
        add(&key[POLICY_PREFIX.len()..], key, 4, false);
    }
    add("grad norm", GRAD_NORM, 3, false);
    add("token KL", TOKEN_KL, 4, false);
    add("teacher lp", TEACHER_LOGPROB, 3, false);
    columns
}

/// The keys that `number` reads an N from, by N.
fn numbered<'k>(
    keys: &BTreeSet<&'k str>,
    number: impl Fn(&str) -> Option<u64>,
) -> Vec<(u64, &'k str)> {
    let mut found: Vec<(u64, &str)> = (keys.iter())
        .filter_map(|k| Some((number(k)?, *k)))
        .collect();
    found.sort();
    found
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
