//! A report of a grid's cells or of any recorded runs: one markdown table row per cell (see
//! [`markdown`]: state, progress, GPU-hours, speed, reward, pass@k, and with `--wide` the time
//! split, effective tokens/s, entropy, collapse, divergence, each change against the grid's base
//! cell), and SVG plots (see [`plots`]).

mod columns;
pub mod escape;
mod figures;
mod knobs;
mod plots;
mod table;

pub use knobs::COMPACT as COMPACT_CHANGED;
pub use plots::plots;
pub use table::markdown;

use crate::error::{Error, Result};
use crate::runs::metrics::keys::{EVAL_ALL, GENERATE_TIME, SYNC_TIME, TRAIN_TIME, eval_pass_at};
use crate::runs::metrics::{Lookup, Series, Step};
use crate::util::fmt::{Digits, cell};
use crate::util::out::emit;
use camino::{Utf8Path, Utf8PathBuf};
use figures::eval_steps;
use std::io::Write;

/// The parts of a step the table splits its time into: column name and metric.
pub const PHASES: [(&str, &str); 3] = [
    ("generate", GENERATE_TIME),
    ("train", TRAIN_TIME),
    ("sync", SYNC_TIME),
];

/// The knobs whose product is the samples a train step generates (for effective tokens/s).
pub const SAMPLES_KNOBS: [&str; 2] = ["trainer.train_batch_size", "generator.n_samples_per_prompt"];

/// One grid cell or run: its name, its SLURM state (or `"unknown"`), the metrics from its log,
/// the steps it is to run (if known), the GPU-hours its jobs used (all attempts, from
/// accounting), the samples a step generates, whether it is the grid's base (the cell each number
/// is compared with), and the knobs (`key=value`) its grid entry sets unlike the base's (for the
/// base itself: the ones it sets on top of the grid's), `None` for a run that is no grid's cell.
#[derive(Debug, Clone, Copy)]
pub struct CellReport<'a> {
    pub name: &'a str,
    pub state: &'a str,
    pub series: &'a Series,
    pub total_steps: Option<u64>,
    pub gpu_hours: Option<f64>,
    pub samples_per_step: Option<f64>,
    pub base: bool,
    pub knobs: Option<&'a [String]>,
}

impl<'a> CellReport<'a> {
    /// A cell with only its name, state and metrics: no accounting, knobs or base.
    pub fn new(name: &'a str, state: &'a str, series: &'a Series) -> CellReport<'a> {
        CellReport {
            name,
            state,
            series,
            total_steps: None,
            gpu_hours: None,
            samples_per_step: None,
            base: false,
            knobs: None,
        }
    }
}

/// Whether a cell's run completed, the only cells a column's best is chosen among and whose plot
/// lines end without a mark: one still running, failed, timed out or cancelled has not.
pub fn completed(state: &str) -> bool {
    state.split_whitespace().next() == Some("COMPLETED")
}

/// How to write a report: every table column (`--wide`), and the steps of the trailing mean the
/// per-step plots draw over their raw lines (0 or 1: none).
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    pub wide: bool,
    pub smooth: usize,
}

/// The product of the [`SAMPLES_KNOBS`] a run's knobs give, if they give both as numbers.
pub fn samples_per_step(knob: impl Fn(&str) -> Option<String>) -> Option<f64> {
    SAMPLES_KNOBS
        .iter()
        .map(|k| knob(k)?.trim().parse::<f64>().ok())
        .product()
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

/// A number cell: 3 significant digits with their zeros, so that a column reads at one
/// precision; `-` for a value not in the log.
fn num(x: Option<f64>) -> String {
    cell(x, Digits::SigKept(3))
}

/// `rlctl report`: the table on `out`, and the table and plots written into `dir`, their files
/// named after `title` and the variant ([`variant_stem`]), the markdown embedding the plots: the
/// paths written, the table first.
pub fn write(
    title: &str,
    cells: &[CellReport],
    options: Options,
    dir: &Utf8Path,
    out: &mut dyn Write,
) -> Result<Vec<Utf8PathBuf>> {
    let text = markdown(title, cells, options.wide);
    emit(out, &text)?;
    let mut written = plots(title, cells, options.smooth, dir)
        .map_err(|e| Error::io("write plots into", dir, e))?;
    let md = dir.join(format!("{}.md", variant_stem(title, options)));
    crate::util::fs::write_atomic(&md, &(text + &embedded(&written)), 0o644)?;
    written.insert(0, md);
    Ok(written)
}

/// The name of a report variant's markdown file, without `.md`: the title's, then `-wide` and
/// `-smooth<n>` as asked, so that no variant overwrites another.
pub fn variant_stem(title: &str, options: Options) -> String {
    let mut stem = plots::file_stem(title);
    if options.wide {
        stem += "-wide";
    }
    if options.smooth > 1 {
        stem += &format!("-smooth{}", options.smooth);
    }
    stem
}

/// The plots as markdown images, linked by their file names (written beside the markdown).
fn embedded(plots: &[Utf8PathBuf]) -> String {
    let mut out = String::from("\n### Plots\n\n");
    for name in plots.iter().filter_map(|p| p.file_name()) {
        let alt = name.strip_suffix(".svg").unwrap_or(name);
        out += &format!("![{}](<{}>)\n\n", escape::md(alt), escape::plain(name));
    }
    out.pop();
    out
}
