//! A grid's report: one markdown table row per cell (GPU-hours, speed, time split, effective
//! tokens/s, reward, pass@k, entropy, collapse, divergence, each change against the grid's base
//! cell, the best cell of a column in bold), and SVG plots (see [`plots`]).

mod figures;
mod plots;

pub use plots::plots;

use crate::error::{Error, Result};
use crate::runs::alerts::{Thresholds, collapse_rule, divergence_rule};
use crate::runs::metrics::keys::{
    AVG_NUM_TOKENS, ENTROPY, EVAL_ALL, GENERATE_TIME, REWARD, STEP_TIME, SYNC_TIME, TOKEN_KL,
    TRAIN_TIME, eval_pass_at,
};
use crate::runs::metrics::{Lookup, Series, Step};
use crate::util::fmt::{Digits, cell, change, percent};
use crate::util::out::emit;
use camino::{Utf8Path, Utf8PathBuf};
use figures::{Better, Figures, best_of, eval_steps};
use std::fmt::Write as _;
use std::io::Write;

/// The parts of a step the table splits its time into: column name and metric.
pub const PHASES: [(&str, &str); 3] = [
    ("generate", GENERATE_TIME),
    ("train", TRAIN_TIME),
    ("sync", SYNC_TIME),
];

/// The knobs whose product is the samples a train step generates (for effective tokens/s).
pub const SAMPLES_KNOBS: [&str; 2] = ["trainer.train_batch_size", "generator.n_samples_per_prompt"];

/// One grid cell: its name, its SLURM state (or `"unknown"`), the metrics from its log, the
/// GPU-hours its jobs used (all attempts, from accounting), the samples a step generates, and
/// whether it is the grid's base (the cell the `vs base` columns compare with).
#[derive(Debug, Clone, Copy)]
pub struct CellReport<'a> {
    pub name: &'a str,
    pub state: &'a str,
    pub series: &'a Series,
    pub gpu_hours: Option<f64>,
    pub samples_per_step: Option<f64>,
    pub base: bool,
}

impl<'a> CellReport<'a> {
    /// A cell with only its name, state and metrics: no accounting, knobs or base.
    pub fn new(name: &'a str, state: &'a str, series: &'a Series) -> CellReport<'a> {
        CellReport {
            name,
            state,
            series,
            gpu_hours: None,
            samples_per_step: None,
            base: false,
        }
    }
}

/// The product of the [`SAMPLES_KNOBS`] a run's knobs give, if they give both as numbers.
pub fn samples_per_step(knob: impl Fn(&str) -> Option<String>) -> Option<f64> {
    SAMPLES_KNOBS
        .iter()
        .map(|k| knob(k)?.trim().parse::<f64>().ok())
        .product()
}

/// One table column: its header, which way is better (for the bold best cell), and its cells.
struct Column {
    head: String,
    better: Option<Better>,
    values: Vec<Option<f64>>,
    text: Vec<String>,
}

impl Column {
    /// A column of numbers, written with [`num`].
    fn numbers(head: &str, better: Option<Better>, values: Vec<Option<f64>>) -> Column {
        let text = values.iter().map(|v| num(*v)).collect();
        Column {
            head: head.to_owned(),
            better,
            values,
            text,
        }
    }

    /// A column of text, never marked.
    fn text(head: &str, text: Vec<String>) -> Column {
        Column {
            head: head.to_owned(),
            better: None,
            values: vec![],
            text,
        }
    }

    /// The change of each value against the base cell's: `base` in the base's row, `-` where
    /// either is missing.
    fn versus(
        head: &str,
        values: &[Option<f64>],
        base: Option<usize>,
        cells: &[CellReport],
    ) -> Column {
        let of_base = base.and_then(|b| values[b]);
        let text = (values.iter().zip(cells))
            .map(|(v, c)| match figures::change(*v, of_base) {
                _ if c.base => "base".to_owned(),
                Some(f) => change(f),
                None => cell(None, Digits::Sig(3)),
            })
            .collect();
        Column::text(&format!("{head} vs base"), text)
    }
}

/// The table: one row per cell, in the order given, then a legend line. `-` marks a value the
/// cell's log (or accounting) does not have. Numbers have 3 significant digits; the output
/// depends only on the input, so it can be pinned as a snapshot.
pub fn markdown(grid: &str, cells: &[CellReport]) -> String {
    let pass_key = pass_at_k_key(cells);
    let pass_name = pass_key.as_deref().map(pass_at_label);
    // The rule `watch` alerts on, with the thresholds it has unless told otherwise.
    let thresholds = Thresholds::default();
    let figs: Vec<Figures> = (cells.iter())
        .map(|c| Figures::of(c, pass_key.as_deref(), &thresholds))
        .collect();
    let base = cells.iter().position(|c| c.base);
    let col = |f: fn(&Figures) -> Option<f64>| figs.iter().map(f).collect::<Vec<_>>();

    let mut columns = vec![
        Column::text("cell", cells.iter().map(|c| escape(c.name)).collect()),
        Column::text("state", cells.iter().map(|c| escape(c.state)).collect()),
        Column::text("steps", figs.iter().map(|f| f.steps.to_string()).collect()),
        Column::numbers("GPU-h", None, col(|f| f.gpu_hours)),
        Column::numbers("s/step", Some(Better::Lower), col(|f| f.s_per_step)),
        Column::versus("s/step", &col(|f| f.s_per_step), base, cells),
    ];
    for (i, (name, _)) in PHASES.iter().enumerate() {
        let text = (figs.iter())
            .map(|f| split(f.phases[i], f.s_per_step))
            .collect();
        columns.push(Column::text(name, text));
    }
    let with_tokens = figs.iter().any(|f| f.tokens_per_s.is_some());
    if with_tokens {
        columns.push(Column::numbers(
            "tok/s",
            Some(Better::Higher),
            col(|f| f.tokens_per_s),
        ));
    }
    columns.extend([
        Column::numbers(
            "reward final",
            Some(Better::Higher),
            col(|f| f.reward_final),
        ),
        Column::numbers("reward best", Some(Better::Higher), col(|f| f.reward_best)),
        Column::versus("reward", &col(|f| f.reward_final), base, cells),
    ]);
    if let Some(p) = &pass_name {
        columns.extend([
            Column::numbers(
                &format!("{p} final"),
                Some(Better::Higher),
                col(|f| f.pass_final),
            ),
            Column::numbers(
                &format!("{p} best"),
                Some(Better::Higher),
                col(|f| f.pass_best),
            ),
            Column::versus(p, &col(|f| f.pass_final), base, cells),
            Column::numbers(
                &format!("{p}/GPU-h"),
                Some(Better::Higher),
                col(|f| f.pass_per_gpu_hour),
            ),
        ]);
    }
    columns.push(Column::numbers("entropy end", None, col(|f| f.entropy_end)));
    let verdict = |v: Option<bool>| match v {
        Some(true) => "**yes**".to_owned(),
        Some(false) => "no".to_owned(),
        None => "-".to_owned(),
    };
    columns.push(Column::text(
        "collapse",
        figs.iter().map(|f| verdict(f.collapse)).collect(),
    ));
    // Like the KL, a column only where it says something: a grid without a diverged cell has none.
    let with_diverged = figs.iter().any(|f| f.diverged);
    if with_diverged {
        let text = figs.iter().map(|f| verdict(Some(f.diverged))).collect();
        columns.push(Column::text("diverged", text));
    }
    let with_kl = figs.iter().any(|f| f.kl_end.is_some());
    if with_kl {
        columns.push(Column::numbers("token KL end", None, col(|f| f.kl_end)));
    }
    for column in &mut columns {
        if let Some(better) = column.better {
            for (text, top) in column.text.iter_mut().zip(best_of(&column.values, better)) {
                if top {
                    *text = format!("**{text}**");
                }
            }
        }
    }

    let mut out = format!("## {grid}\n\n");
    row(&mut out, columns.iter().map(|c| c.head.clone()));
    row(&mut out, columns.iter().map(|_| "---".to_owned()));
    for i in 0..cells.len() {
        row(&mut out, columns.iter().map(|c| c.text[i].clone()));
    }

    let mut legend = vec![
        "steps: last train step".to_owned(),
        "GPU-h: elapsed time of every job and attempt of the cell (requeues, chain links and \
         resubmissions included, as accounting has them) x its GPUs"
            .to_owned(),
        "s/step, generate, train, sync: median seconds over the train steps after the first \
         (warm-up), with the share of the median step"
            .to_owned(),
    ];
    if with_tokens {
        legend.push(format!(
            "tok/s: effective tokens/s, `{AVG_NUM_TOKENS}` x `{}` x `{}` / `{STEP_TIME}`, the \
             median over the same steps",
            SAMPLES_KNOBS[0], SAMPLES_KNOBS[1]
        ));
    }
    legend.push(format!("reward: `{REWARD}`"));
    if let (Some(key), Some(name)) = (&pass_key, &pass_name) {
        legend.push(format!(
            "{name}: `{key}` of the evals (before training, every `trainer.eval_interval` \
             steps); {name}/GPU-h: its final value per GPU-hour"
        ));
    }
    legend.push("final: the last value, best: the highest".to_owned());
    legend.push(match base {
        Some(b) => format!(
            "vs base: the change of s/step and of the final reward{} against `{}`, the cell \
             with the grid's base configuration",
            pass_name
                .as_ref()
                .map(|p| format!(" and {p}"))
                .unwrap_or_default(),
            cells[b].name
        ),
        None => "vs base: no cell with the grid's base configuration is recorded".to_owned(),
    });
    let marked = |way: Better| -> Vec<&str> {
        (columns.iter())
            .filter(|c| c.better == Some(way))
            .map(|c| c.head.as_str())
            .collect()
    };
    legend.push(format!(
        "**bold**: the best cell of the column, where cells differ (the lowest {}; the highest {})",
        marked(Better::Lower).join(", "),
        marked(Better::Higher).join(", ")
    ));
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
        let keys: std::collections::BTreeSet<&str> = eval_steps(cell.series)
            .flat_map(|s| s.metrics.keys())
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
pub(crate) fn values<'s>(
    steps: &'s [Step],
    key: &'s str,
) -> impl DoubleEndedIterator<Item = (u64, f64)> + 's {
    let mut lookup = Lookup::new(key);
    (steps.iter())
        .filter_map(move |s| Some((s.step, lookup.get(&s.metrics)?)))
        .filter(|(_, v)| v.is_finite())
}

/// A timing metric over the train steps after the first, whose time includes the warm-up.
pub(crate) fn timing<'s>(series: &'s Series, key: &'s str) -> impl Iterator<Item = f64> + 's {
    values(series.train.get(1..).unwrap_or_default(), key).map(|(_, v)| v)
}

fn last(steps: &[Step], key: &str) -> Option<f64> {
    values(steps, key).next_back().map(|(_, v)| v)
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

/// `rlctl report GRID`: the grid's table on `out`, and the table and plots written into `dir`:
/// the paths written, the table first.
pub fn write(
    grid: &str,
    cells: &[CellReport],
    dir: &Utf8Path,
    out: &mut dyn Write,
) -> Result<Vec<Utf8PathBuf>> {
    let text = markdown(grid, cells);
    emit(out, &text)?;
    let mut written = plots(grid, cells, dir).map_err(|e| Error::io("write plots into", dir, e))?;
    let md = dir.join(format!("{grid}.md"));
    crate::util::fs::write_atomic(&md, &text, 0o644)?;
    written.insert(0, md);
    Ok(written)
}
