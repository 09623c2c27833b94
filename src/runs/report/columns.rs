//! The report table's columns, each with its header, cells, change against the base cell and its
//! own legend entry; and the legend entries of the table as a whole.

use super::figures::{Better, Figures, change as versus};
use super::{CellReport, PHASES, SAMPLES_KNOBS, completed, escape, num, pass_at_k_key};
use super::{knobs, pass_at_label};
use crate::runs::alerts::{Thresholds, collapse_rule, divergence_rule};
use crate::runs::metrics::keys::{AVG_NUM_TOKENS, ENTROPY, REWARD, STEP_TIME, TOKEN_KL};
use crate::util::fmt::{change, percent};
use crate::util::table::Align;

/// One table column: its header, which way is better (for the bold best cell), its cells, each
/// cell's change against the base cell, and what the legend says of it.
pub(super) struct Column {
    pub head: String,
    pub align: Align,
    pub better: Option<Better>,
    pub values: Vec<Option<f64>>,
    pub text: Vec<String>,
    pub versus: Vec<Option<String>>,
    pub legend: Option<String>,
}

impl Column {
    /// A column of numbers, written with [`num`].
    fn numbers(head: &str, better: Option<Better>, values: Vec<Option<f64>>) -> Column {
        let text = values.iter().map(|v| num(*v)).collect();
        Column {
            better,
            values,
            ..Column::text(head, Align::Right, text)
        }
    }

    /// A column of text, never marked.
    pub(super) fn text(head: &str, align: Align, text: Vec<String>) -> Column {
        Column {
            head: head.to_owned(),
            align,
            better: None,
            values: vec![],
            text,
            versus: vec![],
            legend: None,
        }
    }

    /// Each value with its change against the base cell's (none in the base's own row).
    fn compared(self, ctx: &Context) -> Column {
        let Some(base) = ctx.base else { return self };
        let versus = (0..self.values.len())
            .map(|i| (i != base).then(|| versus(self.values[i], self.values[base]))?)
            .map(|f| f.map(change))
            .collect();
        Column { versus, ..self }
    }

    pub(super) fn legend(self, text: impl Into<String>) -> Column {
        Column {
            legend: Some(text.into()),
            ..self
        }
    }
}

/// What every column is computed from: the cells, their figures, the base cell, the cells a
/// best may be chosen among, the pass@k metric (key and label), and the layout.
pub(super) struct Context<'a> {
    pub cells: &'a [CellReport<'a>],
    pub figs: Vec<Figures>,
    pub base: Option<usize>,
    pub eligible: Vec<bool>,
    pub pass: Option<(String, String)>,
    pub wide: bool,
    pub thresholds: Thresholds,
}

impl<'a> Context<'a> {
    pub fn new(cells: &'a [CellReport<'a>], wide: bool) -> Context<'a> {
        let pass = pass_at_k_key(cells).map(|k| (pass_at_label(&k), k));
        // The rule `watch` alerts on, with the thresholds it has unless told otherwise.
        let thresholds = Thresholds::default();
        let figs: Vec<Figures> = (cells.iter())
            .map(|c| Figures::of(c, pass.as_ref().map(|p| p.1.as_str()), &thresholds))
            .collect();
        // A collapsed or diverged run is broken, however high its reward went.
        let eligible = (cells.iter().zip(&figs))
            .map(|(c, f)| completed(c.state) && f.collapse != Some(true) && !f.diverged)
            .collect();
        Context {
            cells,
            base: cells.iter().position(|c| c.base),
            figs,
            eligible,
            pass: pass.map(|(label, key)| (key, label)),
            wide,
            thresholds,
        }
    }

    fn col(&self, f: fn(&Figures) -> Option<f64>) -> Vec<Option<f64>> {
        self.figs.iter().map(f).collect()
    }

    /// The legend entries of the table as a whole: the change against the base, the bold best,
    /// and `-`.
    pub fn legend(&self, columns: &[Column]) -> Vec<String> {
        let mut out = Vec::new();
        match self.base {
            Some(b) => out.push(format!(
                "(+x%): the change against the base cell {} (the grid's cell with no knobs of \
                 its own, else a run of the grid's base preset where the grid adds no knobs, \
                 else the grid's first cell)",
                escape::code(self.cells[b].name)
            )),
            None if self.wide => out.push("(+x%): no base cell is recorded".to_owned()),
            None => {}
        }
        out.push(bold_legend(columns));
        if !self.wide {
            out.push(
                "`--wide`: every column (time split, tok/s, best values, knobs in full, \
                 entropy, KL)"
                    .to_owned(),
            );
        }
        out.push("-: not in the log.".to_owned());
        out
    }
}

/// What the bold marks, and among which cells.
fn bold_legend(columns: &[Column]) -> String {
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
    format!(
        "**bold**: the best COMPLETED cell of the column, where such cells differ ({}); a \
         running, failed, timed-out or cancelled cell, or one whose entropy collapsed or that \
         diverged, is never marked",
        ways.join("; ")
    )
}

/// Every column of the table, in order.
pub(super) fn columns(ctx: &Context) -> Vec<Column> {
    let mut out = identity(ctx);
    if ctx.wide {
        out.extend(speed_wide(ctx));
        out.extend(outcome_wide(ctx));
    } else {
        out.extend(compact(ctx));
    }
    out.extend(flags(ctx));
    out
}

/// The cell, what it changed against the base, its state and its steps.
fn identity(ctx: &Context) -> Vec<Column> {
    let cells = ctx.cells;
    let names = cells.iter().map(|c| escape::md(c.name)).collect();
    let mut out = vec![Column::text("cell", Align::Left, names)];
    if cells.iter().any(|c| c.knobs.is_some()) {
        out.push(knobs::column(ctx));
    }
    let states = cells.iter().map(|c| escape::md(c.state)).collect();
    out.push(Column::text("state", Align::Left, states));
    let steps = (ctx.figs.iter().zip(cells))
        .map(|(f, c)| match c.total_steps {
            Some(total) => format!("{}/{total}", f.steps),
            None => f.steps.to_string(),
        })
        .collect();
    out.push(Column::text("steps", Align::Right, steps).legend(
        "steps: last train step / the run's total (`trainer.max_steps`, else its epochs' \
         steps), where known",
    ));
    out
}

fn gpu_hours(ctx: &Context) -> Column {
    Column::numbers("GPU-h", None, ctx.col(|f| f.gpu_hours)).legend(
        "GPU-h: elapsed time of every job and attempt of the cell (requeues, chain links and \
         resubmissions included, as accounting has them) x its GPUs",
    )
}

fn s_per_step(ctx: &Context) -> Column {
    (Column::numbers("s/step", Some(Better::Lower), ctx.col(|f| f.s_per_step)))
        .compared(ctx)
        .legend("s/step: median seconds over the train steps after the first (warm-up)")
}

/// The compact table's numbers: speed, cost, and the last reward and pass@k.
fn compact(ctx: &Context) -> Vec<Column> {
    let mut out = vec![s_per_step(ctx), gpu_hours(ctx)];
    out.push(
        (Column::numbers("reward", Some(Better::Higher), ctx.col(|f| f.reward_final)))
            .compared(ctx)
            .legend(format!("reward: the last `{REWARD}`")),
    );
    if let Some((key, name)) = &ctx.pass {
        out.push(
            (Column::numbers(name, Some(Better::Higher), ctx.col(|f| f.pass_final)))
                .compared(ctx)
                .legend(format!(
                    "{name}: the last {} of the evals (before training, every \
                     `trainer.eval_interval` steps)",
                    escape::code(key)
                )),
        );
    }
    out
}

/// The wide table's cost and speed: GPU-hours, s/step, its split, effective tokens/s.
fn speed_wide(ctx: &Context) -> Vec<Column> {
    let mut out = vec![gpu_hours(ctx).compared(ctx), s_per_step(ctx)];
    for (i, (name, _)) in PHASES.iter().enumerate() {
        let text = (ctx.figs.iter())
            .map(|f| split(f.phases[i], f.s_per_step))
            .collect();
        let column = Column::text(name, Align::Right, text);
        out.push(match i {
            0 => column.legend(
                "generate, train, sync: the median seconds of each part of a step over the same \
                 steps, with its share of the median step",
            ),
            _ => column,
        });
    }
    if ctx.figs.iter().any(|f| f.tokens_per_s.is_some()) {
        let values = ctx.col(|f| f.tokens_per_s);
        out.push(
            (Column::numbers("tok/s", Some(Better::Higher), values))
                .compared(ctx)
                .legend(format!(
                    "tok/s: effective tokens/s, `{AVG_NUM_TOKENS}` x `{}` x `{}` / \
                     `{STEP_TIME}`, the median over the same steps",
                    SAMPLES_KNOBS[0], SAMPLES_KNOBS[1]
                )),
        );
    }
    out
}

/// The wide table's outcome: reward and pass@k, final and best, pass@k per GPU-hour, entropy.
fn outcome_wide(ctx: &Context) -> Vec<Column> {
    let high = Some(Better::Higher);
    let mut out = vec![
        (Column::numbers("reward final", high, ctx.col(|f| f.reward_final)))
            .compared(ctx)
            .legend(format!(
                "reward final, best: the last and the highest `{REWARD}`"
            )),
        Column::numbers("reward best", high, ctx.col(|f| f.reward_best)),
    ];
    if let Some((key, p)) = &ctx.pass {
        out.extend([
            (Column::numbers(&format!("{p} final"), high, ctx.col(|f| f.pass_final)))
                .compared(ctx)
                .legend(format!(
                    "{p} final, best: the last and the highest {} of the evals (before \
                     training, every `trainer.eval_interval` steps)",
                    escape::code(key)
                )),
            Column::numbers(&format!("{p} best"), high, ctx.col(|f| f.pass_best)),
            (Column::numbers(
                &format!("{p}/GPU-h"),
                high,
                ctx.col(|f| f.pass_per_gpu_hour),
            ))
            .compared(ctx)
            .legend(format!("{p}/GPU-h: its final value per GPU-hour")),
        ]);
    }
    out.push(
        Column::numbers("entropy end", None, ctx.col(|f| f.entropy_end))
            .legend(format!("entropy end: `{ENTROPY}` at the last train step")),
    );
    out
}

/// The alerts a run is judged broken by, as `watch` raises them, each a column only where it
/// says something (the wide table always has collapse); then the distillation KL.
fn flags(ctx: &Context) -> Vec<Column> {
    let verdict = |v: Option<bool>| match v {
        Some(true) => "yes".to_owned(),
        Some(false) => "no".to_owned(),
        None => "-".to_owned(),
    };
    let mut out = Vec::new();
    if ctx.wide || ctx.figs.iter().any(|f| f.collapse == Some(true)) {
        let text = ctx.figs.iter().map(|f| verdict(f.collapse)).collect();
        out.push(Column::text("collapse", Align::Left, text).legend(format!(
            "collapse: {} (`rlctl watch`'s entropy-collapse alert)",
            collapse_rule(&ctx.thresholds)
        )));
    }
    if ctx.figs.iter().any(|f| f.diverged) {
        let text = ctx.figs.iter().map(|f| verdict(Some(f.diverged))).collect();
        out.push(Column::text("diverged", Align::Left, text).legend(format!(
            "diverged: {} (`rlctl watch`'s diverged alert)",
            divergence_rule()
        )));
    }
    if ctx.wide && ctx.figs.iter().any(|f| f.kl_end.is_some()) {
        out.push(
            Column::numbers("token KL end", None, ctx.col(|f| f.kl_end))
                .legend(format!("token KL end: `{TOKEN_KL}` at the last train step")),
        );
    }
    out
}

/// `41.2 (62%)`: a phase's median seconds and its share of the median step.
fn split(phase: Option<f64>, step: Option<f64>) -> String {
    match (phase, step) {
        (Some(p), Some(s)) if s > 0.0 => format!("{} ({})", num(Some(p)), percent(p / s)),
        (p, _) => num(p),
    }
}
