//! The report's `changed` column: what each cell sets unlike the base cell, named as the seed's
//! grid tables name a change (`enforce_eager=false`), so that a row reads "this knob: this
//! change of s/step".

use super::columns::{Column, Context};
use super::{CellReport, escape};
use crate::util::table::Align;

/// The compact table's widest `changed` cell: past it, the knobs that do not fit are counted.
pub const COMPACT: usize = 36;

pub(super) fn column(ctx: &Context) -> Column {
    let text = ctx.cells.iter().map(|c| text(c, ctx.wide)).collect();
    let how = match ctx.wide {
        true => "in full",
        false => {
            "by the last part of their name, those past the column's width counted \
                  (`--wide`: in full)"
        }
    };
    Column::text("changed", Align::Left, text).legend(format!(
        "changed: the knobs the grid gives the cell unlike the base cell, {how}; `base`: the \
         base cell (with the knobs it sets on top of the grid's, where it sets any); `none`: \
         the base's knobs; `-`: not a cell of a grid in the presets"
    ))
}

fn text(cell: &CellReport, wide: bool) -> String {
    let Some(knobs) = cell.knobs else {
        return "-".to_owned();
    };
    let list = match wide {
        true => (knobs.iter())
            .map(|k| escape::md(k))
            .collect::<Vec<_>>()
            .join(", "),
        false => summary(knobs, COMPACT),
    };
    match (cell.base, knobs.is_empty()) {
        (true, true) => "base".to_owned(),
        (true, false) => format!("base: {list}"),
        (false, true) => "none".to_owned(),
        (false, false) => list,
    }
}

/// `generator.enforce_eager=false` as `enforce_eager=false`: the key's last part.
fn short(knob: &str) -> String {
    let (key, value) = knob.split_once('=').unwrap_or((knob, ""));
    let last = key.rsplit('.').next().unwrap_or(key);
    escape::md(&format!("{last}={value}"))
}

/// The knobs' short names, as many as fit in `limit` characters (at least one), the rest
/// counted: `train_batch_size=128, +6 more`.
fn summary(knobs: &[String], limit: usize) -> String {
    let names: Vec<String> = knobs.iter().map(|k| short(k)).collect();
    let joined = |n: usize| -> String {
        let mut text = names[..n].join(", ");
        if n < names.len() {
            text += &format!(", +{} more", names.len() - n);
        }
        text
    };
    (1..=names.len())
        .rev()
        .map(joined)
        .find(|t| t.chars().count() <= limit)
        .unwrap_or_else(|| joined(names.len().min(1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_compact_summary_names_what_fits_and_counts_the_rest() {
        let knobs: Vec<String> = [
            "trainer.train_batch_size=128",
            "generator.n_samples_per_prompt=8",
            "generator.enforce_eager=false",
        ]
        .map(str::to_owned)
        .into();
        assert_eq!(summary(&knobs[2..], 32), "enforce_eager=false");
        assert_eq!(summary(&knobs, 36), "train_batch_size=128, +2 more");
        assert_eq!(
            summary(&knobs, 80),
            "train_batch_size=128, n_samples_per_prompt=8, enforce_eager=false"
        );
        assert_eq!(summary(&knobs[..1], 5), "train_batch_size=128");
        assert_eq!(summary(&[], 5), "");
    }
}
