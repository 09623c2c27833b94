//! The report's markdown table: by default the columns a researcher compares (state, progress,
//! speed, cost, final reward and pass@k), with `--wide` every column; the best cell of a column
//! in bold, chosen only among the cells that completed.

use super::figures::{Better, Figures, best_of, change as versus};
use super::{CellReport, PHASES, SAMPLES_KNOBS, completed, num, pass_at_k_key, pass_at_label};
use crate::runs::alerts::{Thresholds, collapse_rule, divergence_rule};
use crate::runs::metrics::keys::{AVG_NUM_TOKENS, ENTROPY, REWARD, STEP_TIME, TOKEN_KL};
use crate::util::fmt::{Digits, cell, change, percent};
use crate::util::table::{Align, Table, left, right};
use std::fmt::Write as _;

/// One table column: its header, which way is better (for the bold best cell), and its cells.
struct Column {
    head: String,
    align: Align,
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
            align: Align::Right,
            better,
            values,
            text,
        }
    }

    /// A column of text, never marked.
    fn text(head: &str, align: Align, text: Vec<String>) -> Column {
        Column {
            head: head.to_owned(),
            align,
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
            .map(|(v, c)| match versus(*v, of_base) {
                _ if c.base => "base".to_owned(),
                Some(f) => change(f),
                None => cell(None, Digits::Sig(3)),
            })
            .collect();
        Column::text(&format!("{head} vs base"), Align::Right, text)
    }
}

/// The table: one row per cell, in the order given, then a legend line; every column with
/// `wide`, else the compact one. `-` marks a value the cell's log (or accounting) does not have.
/// Numbers have 3 significant digits; the output depends only on the input, so it can be pinned
/// as a snapshot.
pub fn markdown(title: &str, cells: &[CellReport], wide: bool) -> String {
    let pass_key = pass_at_k_key(cells);
    let pass_name = pass_key.as_deref().map(pass_at_label);
    // The rule `watch` alerts on, with the thresholds it has unless told otherwise.
    let thresholds = Thresholds::default();
    let figs: Vec<Figures> = (cells.iter())
        .map(|c| Figures::of(c, pass_key.as_deref(), &thresholds))
        .collect();
    let base = cells.iter().position(|c| c.base);
    let col = |f: fn(&Figures) -> Option<f64>| figs.iter().map(f).collect::<Vec<_>>();
    let steps = (figs.iter().zip(cells))
        .map(|(f, c)| match c.total_steps {
            Some(total) => format!("{}/{total}", f.steps),
            None => f.steps.to_string(),
        })
        .collect();

    let mut columns = vec![
        Column::text(
            "cell",
            Align::Left,
            cells.iter().map(|c| escape(c.name)).collect(),
        ),
        Column::text(
            "state",
            Align::Left,
            cells.iter().map(|c| escape(c.state)).collect(),
        ),
        Column::text("steps", Align::Right, steps),
    ];
    let verdict = |v: Option<bool>| match v {
        Some(true) => "**yes**".to_owned(),
        Some(false) => "no".to_owned(),
        None => "-".to_owned(),
    };
    let collapse_text = figs.iter().map(|f| verdict(f.collapse)).collect();
    let collapse = Column::text("collapse", Align::Left, collapse_text);
    // Like the KL, a column only where it says something: a grid without a diverged cell has none.
    let with_diverged = figs.iter().any(|f| f.diverged);
    let diverged = || {
        let text = figs.iter().map(|f| verdict(Some(f.diverged))).collect();
        Column::text("diverged", Align::Left, text)
    };
    let with_tokens = wide && figs.iter().any(|f| f.tokens_per_s.is_some());
    let with_kl = wide && figs.iter().any(|f| f.kl_end.is_some());
    // The compact table names a collapse only where there is one.
    let with_collapse = wide || figs.iter().any(|f| f.collapse == Some(true));
    if wide {
        columns.extend([
            Column::numbers("GPU-h", None, col(|f| f.gpu_hours)),
            Column::numbers("s/step", Some(Better::Lower), col(|f| f.s_per_step)),
            Column::versus("s/step", &col(|f| f.s_per_step), base, cells),
        ]);
        for (i, (name, _)) in PHASES.iter().enumerate() {
            let text = (figs.iter())
                .map(|f| split(f.phases[i], f.s_per_step))
                .collect();
            columns.push(Column::text(name, Align::Right, text));
        }
        if with_tokens {
            let values = col(|f| f.tokens_per_s);
            columns.push(Column::numbers("tok/s", Some(Better::Higher), values));
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
            let final_ = col(|f| f.pass_final);
            columns.extend([
                Column::numbers(&format!("{p} final"), Some(Better::Higher), final_.clone()),
                Column::numbers(
                    &format!("{p} best"),
                    Some(Better::Higher),
                    col(|f| f.pass_best),
                ),
                Column::versus(p, &final_, base, cells),
                Column::numbers(
                    &format!("{p}/GPU-h"),
                    Some(Better::Higher),
                    col(|f| f.pass_per_gpu_hour),
                ),
            ]);
        }
        columns.push(Column::numbers("entropy end", None, col(|f| f.entropy_end)));
    } else {
        columns.extend([
            Column::numbers("s/step", Some(Better::Lower), col(|f| f.s_per_step)),
            Column::numbers("GPU-h", None, col(|f| f.gpu_hours)),
            Column::numbers("reward", Some(Better::Higher), col(|f| f.reward_final)),
        ]);
        if let Some(p) = &pass_name {
            columns.push(Column::numbers(
                p,
                Some(Better::Higher),
                col(|f| f.pass_final),
            ));
        }
    }
    if with_collapse {
        columns.push(collapse);
    }
    if with_diverged {
        columns.push(diverged());
    }
    if with_kl {
        columns.push(Column::numbers("token KL end", None, col(|f| f.kl_end)));
    }
    let finished: Vec<bool> = cells.iter().map(|c| completed(c.state)).collect();
    for column in &mut columns {
        if let Some(better) = column.better {
            let tops = best_of(&column.values, better, &finished);
            for (text, top) in column.text.iter_mut().zip(tops) {
                if top {
                    *text = format!("**{text}**");
                }
            }
        }
    }

    let mut table = Table::new(columns.iter().map(|c| match c.align {
        Align::Left => left(),
        Align::Right => right(),
    }));
    table.row(columns.iter().map(|c| c.head.clone()));
    for i in 0..cells.len() {
        table.row(columns.iter().map(|c| c.text[i].clone()));
    }
    let mut out = format!("## {title}\n\n{}", table.markdown());

    let mut legend = vec![
        "steps: last train step / the run's total (`trainer.max_steps`, else its epochs' steps), \
         where known"
            .to_owned(),
        "GPU-h: elapsed time of every job and attempt of the cell (requeues, chain links and \
         resubmissions included, as accounting has them) x its GPUs"
            .to_owned(),
    ];
    if wide {
        legend.push(
            "s/step, generate, train, sync: median seconds over the train steps after the first \
             (warm-up), with the share of the median step"
                .to_owned(),
        );
    } else {
        legend.push("s/step: median seconds over the train steps after the first (warm-up)".into());
    }
    if with_tokens {
        legend.push(format!(
            "tok/s: effective tokens/s, `{AVG_NUM_TOKENS}` x `{}` x `{}` / `{STEP_TIME}`, the \
             median over the same steps",
            SAMPLES_KNOBS[0], SAMPLES_KNOBS[1]
        ));
    }
    // The compact table has only the last values; its legend says so with each.
    let last = if wide { "" } else { "the last " };
    legend.push(format!("reward: {last}`{REWARD}`"));
    if let (Some(key), Some(name)) = (&pass_key, &pass_name) {
        let mut text = format!(
            "{name}: {last}`{key}` of the evals (before training, every \
             `trainer.eval_interval` steps)"
        );
        if wide {
            text += &format!("; {name}/GPU-h: its final value per GPU-hour");
        }
        legend.push(text);
    }
    if wide {
        legend.push("final: the last value, best: the highest".to_owned());
        legend.push(match base {
            Some(b) => format!(
                "vs base: the change of s/step and of the final reward{} against `{}`, the cell \
                 with the grid's base configuration",
                (pass_name.as_ref())
                    .map(|p| format!(" and {p}"))
                    .unwrap_or_default(),
                cells[b].name
            ),
            None => "vs base: no cell with the grid's base configuration is recorded".to_owned(),
        });
    }
    let marked = |way: Better| -> Vec<&str> {
        (columns.iter())
            .filter(|c| c.better == Some(way))
            .map(|c| c.head.as_str())
            .collect()
    };
    let mut ways = Vec::new();
    for (way, word) in [(Better::Lower, "lowest"), (Better::Higher, "highest")] {
        let heads = marked(way);
        if !heads.is_empty() {
            ways.push(format!("the {word} {}", heads.join(", ")));
        }
    }
    legend.push(format!(
        "**bold**: the best COMPLETED cell of the column, where completed cells differ ({}); a \
         running, failed, timed-out or cancelled cell is never marked",
        ways.join("; ")
    ));
    if wide {
        legend.push(format!("entropy end: `{ENTROPY}` at the last train step"));
    }
    if with_collapse {
        legend.push(format!(
            "collapse: {} (`rlctl watch`'s entropy-collapse alert)",
            collapse_rule(&thresholds)
        ));
    }
    if with_diverged {
        legend.push(format!(
            "diverged: {} (`rlctl watch`'s diverged alert)",
            divergence_rule()
        ));
    }
    if with_kl {
        legend.push(format!("token KL end: `{TOKEN_KL}` at the last train step"));
    }
    if !wide {
        legend.push(
            "`--wide`: every column (time split, tok/s, best values, change against the base, \
             entropy, KL)"
                .to_owned(),
        );
    }
    legend.push("-: not in the log.".to_owned());
    let _ = writeln!(out, "\n{}", legend.join("; "));
    out
}

/// `41.2 (62%)`: a phase's median seconds and its share of the median step.
fn split(phase: Option<f64>, step: Option<f64>) -> String {
    match (phase, step) {
        (Some(p), Some(s)) if s > 0.0 => format!("{} ({})", num(Some(p)), percent(p / s)),
        (p, _) => num(p),
    }
}

fn escape(s: &str) -> String {
    s.replace('|', "\\|")
}
