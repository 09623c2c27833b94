//! The report's markdown table: by default the columns a researcher compares (what each cell
//! changed, state, progress, speed, cost, final reward and pass@k), with `--wide` every column;
//! each number with its change against the base cell, the best cell of a column in bold, chosen
//! only among the cells that completed without a collapse or a divergence. Each column carries
//! its own legend (see [`columns`](super::columns)).

use super::columns::{Column, Context, columns};
use super::escape;
use super::figures::best_of;
use crate::util::table::{Align, Table, left, right};

/// The table: one row per cell, in the order given, then its legend wrapped; every column with
/// `wide`, else the compact one. `-` marks a value the cell's log (or accounting) does not have.
/// Numbers have 3 significant digits; the output depends only on the input, so it can be pinned
/// as a snapshot.
pub fn markdown(title: &str, cells: &[super::CellReport], wide: bool) -> String {
    let ctx = Context::new(cells, wide);
    let mut columns = columns(&ctx);
    mark_best(&mut columns, &ctx.eligible);
    let mut legend: Vec<String> = columns.iter().filter_map(|c| c.legend.clone()).collect();
    legend.extend(ctx.legend(&columns));
    format!(
        "## {}\n\n{}\n{}\n",
        escape::md(title),
        table(&columns, cells.len()),
        wrap(&legend.join("; "), LEGEND_WIDTH)
    )
}

/// The legend's widest line: it reads in `less` and a terminal, and renders as one paragraph.
const LEGEND_WIDTH: usize = 100;

/// `text` wrapped at spaces into lines of at most `width` characters (a longer word alone on
/// its line). Never inside a code span, nor before a word that would start a markdown block
/// (`- `, `#`, `>`, `|`, `1.`), so the wrapped paragraph renders exactly as the one line did.
fn wrap(text: &str, width: usize) -> String {
    let starts_block = |word: &str| {
        word.starts_with(['-', '+', '*', '#', '>', '|', '='])
            || (word.starts_with(|c: char| c.is_ascii_digit())
                && (word.trim_start_matches(|c: char| c.is_ascii_digit())).starts_with(['.', ')']))
    };
    let mut out = String::new();
    let mut line = 0;
    for word in words(text) {
        let len = word.chars().count();
        if line == 0 {
            line = len;
        } else if line + 1 + len > width && !starts_block(word) {
            out.push('\n');
            line = len;
        } else {
            out.push(' ');
            line += 1 + len;
        }
        out.push_str(word);
    }
    out
}

/// `text` split at its spaces outside code spans (a run of N backticks to the next run of
/// exactly N, as CommonMark reads them).
fn words(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let run_at = |i: usize| bytes[i..].iter().take_while(|b| **b == b'`').count();
    let mut words = Vec::new();
    let (mut start, mut i) = (0, 0);
    while i < bytes.len() {
        match bytes[i] {
            b'`' => {
                let n = run_at(i);
                let mut j = i + n;
                // The closing run, if any: the span's spaces are no place to break.
                while j < bytes.len() && !(bytes[j] == b'`' && run_at(j) == n) {
                    j += if bytes[j] == b'`' { run_at(j) } else { 1 };
                }
                i = if j < bytes.len() { j + n } else { i + n };
            }
            b' ' => {
                words.push(&text[start..i]);
                start = i + 1;
                i += 1;
            }
            _ => i += 1,
        }
    }
    words.push(&text[start..]);
    words
}

/// Bolds the best value of each column that has a better way, among the `eligible` cells.
fn mark_best(columns: &mut [Column], eligible: &[bool]) {
    for column in columns {
        if let Some(better) = column.better {
            let tops = best_of(&column.values, better, eligible);
            for (text, top) in column.text.iter_mut().zip(tops) {
                if top {
                    *text = format!("**{text}**");
                }
            }
        }
    }
}

/// The markdown table of the columns, each cell its text then its change against the base.
fn table(columns: &[Column], rows: usize) -> String {
    let mut table = Table::new(columns.iter().map(|c| match c.align {
        Align::Left => left(),
        Align::Right => right(),
    }));
    table.row(columns.iter().map(|c| c.head.clone()));
    for i in 0..rows {
        table.row(columns.iter().map(|c| match c.versus.get(i) {
            Some(Some(change)) => format!("{} ({change})", c.text[i]),
            _ => c.text[i].clone(),
        }));
    }
    table.markdown()
}
