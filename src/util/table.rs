//! Aligned text columns: every plain-text table rlctl prints (`status`, `metrics`, `doctor`,
//! `list`, and the listings `cancel` and `clean` ask about) goes through [`Table`], and so does
//! `report`'s markdown table ([`Table::markdown`]), padded so that it reads aligned as text too.

use super::term::width;

/// Which side of its column a cell keeps to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// A column's alignment and the least width it takes: a table whose rows change (`status`
/// from PENDING to COMPLETED) keeps its layout, and tables printed one after another line up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    align: Align,
    min: usize,
}

/// A left-aligned column.
pub fn left() -> Column {
    Column {
        align: Align::Left,
        min: 0,
    }
}

/// A right-aligned column (numbers).
pub fn right() -> Column {
    Column {
        align: Align::Right,
        min: 0,
    }
}

impl Column {
    /// At least `width` characters wide.
    pub fn min(self, width: usize) -> Column {
        Column { min: width, ..self }
    }
}

/// Rows of cells, each column as wide as its widest cell (or its minimum), columns `gap` spaces
/// apart, every line `indent` spaces in and without trailing spaces.
#[derive(Debug, Clone)]
pub struct Table {
    columns: Vec<Column>,
    gap: usize,
    indent: usize,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table of these columns, two spaces apart, not indented.
    pub fn new(columns: impl IntoIterator<Item = Column>) -> Table {
        Table {
            columns: columns.into_iter().collect(),
            gap: 2,
            indent: 0,
            rows: Vec::new(),
        }
    }

    pub fn gap(self, spaces: usize) -> Table {
        Table {
            gap: spaces,
            ..self
        }
    }

    pub fn indent(self, spaces: usize) -> Table {
        Table {
            indent: spaces,
            ..self
        }
    }

    /// Adds a row; cells past the last column are left-aligned, missing cells are empty.
    pub fn row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) {
        self.rows.push(cells.into_iter().map(Into::into).collect());
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Each column's width: its widest cell, its minimum, and at least `floor`.
    fn widths(&self, floor: usize) -> Vec<usize> {
        let n = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        (0..n)
            .map(|i| {
                let widest = self.rows.iter().filter_map(|r| r.get(i));
                let widest = widest.map(|c| width(c)).max().unwrap_or(0);
                let min = self.columns.get(i).copied().unwrap_or_else(left).min;
                widest.max(min).max(floor)
            })
            .collect()
    }

    /// The lines, each ending in a newline.
    pub fn render(&self) -> String {
        let column = |i: usize| self.columns.get(i).copied().unwrap_or_else(left);
        let widths = self.widths(0);
        let mut out = String::new();
        for row in &self.rows {
            let mut line = " ".repeat(self.indent);
            for (i, wide) in widths.iter().copied().enumerate() {
                if i > 0 {
                    line.push_str(&" ".repeat(self.gap));
                }
                let cell = row.get(i).map_or("", String::as_str);
                let pad = " ".repeat(wide.saturating_sub(width(cell)));
                match column(i).align {
                    Align::Left => line.extend([cell, &pad]),
                    Align::Right => line.extend([&pad, cell]),
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

impl Table {
    /// The rows as a markdown table, the first row its header: `| a | b |` lines padded to the
    /// column widths (so the text reads as aligned as the rendered table), a right-aligned
    /// column's separator `---:`. The gap and indent are not used.
    pub fn markdown(&self) -> String {
        let column = |i: usize| self.columns.get(i).copied().unwrap_or_else(left);
        // A markdown rule needs three dashes.
        let widths = self.widths(3);
        let line = |cells: &mut dyn Iterator<Item = String>| -> String {
            let mut out = String::from("|");
            for c in cells {
                out.push(' ');
                out.push_str(&c);
                out.push_str(" |");
            }
            out.push('\n');
            out
        };
        let padded = |row: &Vec<String>| -> String {
            let mut cells = widths.iter().enumerate().map(|(i, width)| {
                let cell = row.get(i).map_or("", String::as_str);
                let pad = " ".repeat(width.saturating_sub(cell.chars().count()));
                match column(i).align {
                    Align::Left => format!("{cell}{pad}"),
                    Align::Right => format!("{pad}{cell}"),
                }
            });
            line(&mut cells)
        };
        let mut out = String::new();
        let mut rows = self.rows.iter();
        if let Some(head) = rows.next() {
            out.push_str(&padded(head));
            let mut rule = widths
                .iter()
                .enumerate()
                .map(|(i, width)| match column(i).align {
                    Align::Left => "-".repeat(*width),
                    Align::Right => format!("{}:", "-".repeat(width - 1)),
                });
            out.push_str(&line(&mut rule));
        }
        for row in rows {
            out.push_str(&padded(row));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_as_wide_as_their_widest_cell_or_their_minimum() {
        let mut t = Table::new([left(), right(), left().min(6)]);
        t.row(["name", "n", "state"]);
        t.row(["a", "1234", "ok"]);
        t.row(["longer name", "5", ""]);
        assert_eq!(
            t.render(),
            "name            n  state\n\
             a            1234  ok\n\
             longer name     5\n"
        );
    }

    #[test]
    fn indent_and_gap() {
        let mut t = Table::new([right().min(4), left()]).indent(2).gap(1);
        t.row(["1", "one"]);
        t.row(["22", "two", "extra"]);
        assert_eq!(t.render(), "     1 one\n    22 two extra\n");
        assert!(Table::new([left()]).render().is_empty());
    }

    #[test]
    fn markdown_pads_cells_and_marks_right_aligned_columns() {
        let mut t = Table::new([left(), right()]);
        t.row(["cell", "s"]);
        t.row(["a", "41.0"]);
        assert_eq!(
            t.markdown(),
            "| cell |    s |\n| ---- | ---: |\n| a    | 41.0 |\n"
        );
    }
}
