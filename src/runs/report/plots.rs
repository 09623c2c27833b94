//! SVG plots of a grid's (or runs') per-step metrics, one line per cell, told apart by colour and
//! dash, a line whose run has not completed ending in a mark; and a bar chart of each cell's
//! s/step against the base cell's. Text is written as SVG `<text>` (plotters' SVG backend without
//! its font features): no font files or system libraries needed.

use super::figures::{change as versus, eval_values, s_per_step};
use super::{CellReport, completed, escape, num, pass_at_k_key, pass_at_label, values};
use crate::runs::metrics::keys::{ENTROPY, REWARD, STEP_TIME};
use crate::util::fmt::change;
use camino::{Utf8Path, Utf8PathBuf};
use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::io;

const WIDTH: u32 = 960;
const LEGEND_WIDTH: u32 = 220;
const MIN_HEIGHT: u32 = 480;
const LEGEND_ROW: u32 = 18;
/// Height of one bar of the s/step chart, with its gap.
const BAR_ROW: u32 = 28;
/// Tableau's ten colours, one a cell; the next ten cells take them again with the next of
/// [`DASHES`], so that every cell of a grid of up to 50 has its own look.
const COLOURS: [(u8, u8, u8); 10] = [
    (31, 119, 180),
    (255, 127, 14),
    (44, 160, 44),
    (214, 39, 40),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (127, 127, 127),
    (188, 189, 34),
    (23, 190, 207),
];
/// SVG `stroke-dasharray`s: the first ten cells solid, then dashed, dotted, dash-dot, long dash.
const DASHES: [&str; 5] = ["", "8 4", "2 3", "8 3 2 3", "14 4"];

fn colour(i: usize) -> RGBColor {
    let (r, g, b) = COLOURS[i % COLOURS.len()];
    RGBColor(r, g, b)
}

fn hex(i: usize) -> String {
    let RGBColor(r, g, b) = colour(i);
    format!("#{r:02X}{g:02X}{b:02X}")
}

fn dash(i: usize) -> &'static str {
    DASHES[(i / COLOURS.len()) % DASHES.len()]
}

/// A cell's line: its index (which picks its colour and dash, the same in every plot), name,
/// state (a line not COMPLETED ends in a mark) and points.
struct Line<'a> {
    index: usize,
    name: &'a str,
    state: &'a str,
    points: Vec<(u64, f64)>,
}

/// Writes, into `dir` (created if missing), `<grid>-reward.svg`, `<grid>-entropy.svg`,
/// `<grid>-step-time.svg` (the first, warm-up step left out, as in the table) and, when some
/// cell has eval pass@k, `<grid>-pass-at-<k>.svg`, then the bar chart `<grid>-s_per_step.svg`;
/// returns their paths. Each file is written to a
/// temporary file in `dir`, then renamed. Cells without values for a plot are left out of it; a
/// plot without any says "no data yet". With `smooth` over 1, the per-step plots (not pass@k's,
/// whose evals are few) draw each line as the trailing mean of its last `smooth` steps over its
/// raw values, drawn faint, into files of their own: `<grid>-smooth<n>-reward.svg` and so on.
pub fn plots(
    grid: &str,
    cells: &[CellReport],
    smooth: usize,
    dir: &Utf8Path,
) -> io::Result<Vec<Utf8PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let stem = file_stem(grid);
    // A smoothed plot is a variant of its own: it never overwrites the raw one.
    let per_step = match smooth > 1 {
        true => format!("{stem}-smooth{smooth}"),
        false => stem.clone(),
    };
    let lines = |f: &dyn Fn(&CellReport) -> Vec<(u64, f64)>| -> Vec<Line> {
        (cells.iter().enumerate())
            .map(|(index, c)| Line {
                index,
                name: c.name,
                state: c.state,
                points: f(c),
            })
            .filter(|line| !line.points.is_empty())
            .collect()
    };
    let points = |steps: &[crate::runs::metrics::Step], key: &str| -> Vec<(u64, f64)> {
        values(steps, key).collect()
    };
    let mut charts = vec![
        Chart {
            file: format!("{per_step}-reward.svg"),
            title: format!("{grid}: reward per step"),
            y_label: format!("reward ({REWARD})"),
            lines: lines(&|c| points(&c.series.train, REWARD)),
            smooth,
        },
        Chart {
            file: format!("{per_step}-entropy.svg"),
            title: format!("{grid}: policy entropy per step"),
            y_label: format!("entropy ({ENTROPY})"),
            lines: lines(&|c| points(&c.series.train, ENTROPY)),
            smooth,
        },
        Chart {
            file: format!("{per_step}-step-time.svg"),
            title: format!("{grid}: seconds per step (first step left out)"),
            y_label: format!("seconds ({STEP_TIME})"),
            lines: lines(&|c| points(c.series.train.get(1..).unwrap_or_default(), STEP_TIME)),
            smooth,
        },
    ];
    if let Some(key) = pass_at_k_key(cells) {
        let label = pass_at_label(&key);
        charts.push(Chart {
            file: format!("{stem}-{}.svg", file_stem(&label.replace('@', "-at-"))),
            title: format!("{grid}: eval {label} per step"),
            y_label: format!("{label} ({key})"),
            lines: lines(&|c| eval_values(c.series, &key)),
            smooth: 0,
        });
    }
    let mut written = Vec::new();
    let mut write = |file: &str, svg: Result<String, Box<dyn std::error::Error + '_>>| {
        let path = dir.join(file);
        let svg = svg.map_err(|e| io::Error::other(format!("cannot draw `{path}`: {e}")))?;
        crate::util::fs::write_atomic(&path, &svg, 0o644).map_err(io::Error::other)?;
        written.push(path);
        Ok::<_, io::Error>(())
    };
    for chart in &charts {
        write(&chart.file, chart.render())?;
    }
    write(
        &format!("{stem}-s_per_step.svg"),
        s_per_step_bars(grid, cells),
    )?;
    Ok(written)
}

/// One horizontal bar per cell with an s/step (the table's: the median after the first step),
/// first cell on top, in the cell's colour of the line plots and labelled with its value and its
/// change against the base; the base's bar is outlined, its label says `(base)`, and a dashed
/// line marks its value across the chart.
fn s_per_step_bars(grid: &str, cells: &[CellReport]) -> Result<String, Box<dyn std::error::Error>> {
    let bars: Vec<(usize, &CellReport, f64)> = (cells.iter().enumerate())
        .filter_map(|(i, c)| Some((i, c, s_per_step(c.series)?)))
        .collect();
    let base = bars.iter().find(|b| b.1.base).map(|b| b.2);
    // Two rows at least: plotters maps a one-segment axis (0..0) to nothing, and a lone bar
    // would get a negative height.
    let n = bars.len().max(2);
    let top = bars.iter().map(|b| b.2).fold(0.0, f64::max);
    let x_max = if top > 0.0 { top * 1.25 } else { 1.0 };
    let rows = u32::try_from(n).unwrap_or(u32::MAX);
    let height = MIN_HEIGHT.max(100u32.saturating_add(rows.saturating_mul(BAR_ROW)));
    let names: Vec<String> = (bars.iter().rev())
        .map(|(_, c, _)| match c.base {
            true => format!("{} (base)", label(c.name)),
            false => label(c.name),
        })
        .collect();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let title = match bars.iter().find(|b| b.1.base) {
            Some((_, c, _)) => format!("{grid}: seconds per step against the base ({})", c.name),
            None => format!("{grid}: seconds per step (no base cell recorded)"),
        };
        let title = escape::plain(&title);
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(LEGEND_WIDTH)
            // Integer ranges are inclusive in plotters: 0..n-1 is n segments, a bar each.
            .build_cartesian_2d(0.0..x_max, (0..n - 1).into_segmented())?;
        let label = |v: &SegmentValue<usize>| match v {
            SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => {
                names.get(*i).cloned().unwrap_or_default()
            }
            SegmentValue::Last => String::new(),
        };
        (chart.configure_mesh())
            .disable_y_mesh()
            .y_labels(n)
            .y_label_formatter(&label)
            .x_desc("seconds per step (median after the first step)")
            .draw()?;
        let font = ("sans-serif", 13).into_font();
        let left = TextStyle::from(font).pos(Pos::new(HPos::Left, VPos::Center));
        for (row, (i, cell, secs)) in bars.iter().rev().enumerate() {
            let span = [
                (0.0, SegmentValue::Exact(row)),
                (*secs, SegmentValue::Exact(row + 1)),
            ];
            let bar = |style: ShapeStyle| -> Rectangle<(f64, SegmentValue<usize>)> {
                let mut bar = Rectangle::new(span.clone(), style);
                bar.set_margin(4, 4, 0, 0);
                bar
            };
            chart.draw_series([bar(colour(*i).filled())])?;
            if cell.base {
                chart.draw_series([bar(BLACK.stroke_width(2))])?;
            }
            let text = match versus(Some(*secs), base) {
                Some(f) if !cell.base => format!(" {} ({})", num(Some(*secs)), change(f)),
                _ => format!(" {}", num(Some(*secs))),
            };
            let at = (*secs, SegmentValue::CenterOf(row));
            chart.draw_series([Text::new(text, at, left.clone())])?;
        }
        if let Some(b) = base {
            let line = [(b, SegmentValue::Exact(0)), (b, SegmentValue::Exact(n))];
            chart.draw_series(DashedLineSeries::new(line, 6, 4, BLACK.stroke_width(1)))?;
        }
        if bars.is_empty() {
            no_data(chart.plotting_area())?;
        }
        root.present()?;
    }
    Ok(svg)
}

struct Chart<'a> {
    file: String,
    title: String,
    y_label: String,
    lines: Vec<Line<'a>>,
    /// The steps of the trailing mean drawn over each raw line; 0 or 1 for none.
    smooth: usize,
}

impl Chart<'_> {
    /// Axes, title and legend text come from plotters; the lines, legend swatches, markers and
    /// end marks are written as SVG here, for what plotters' SVG backend cannot say:
    /// `stroke-dasharray`, faint raw lines, and a `<title>` on a mark.
    fn render(&self) -> Result<String, Box<dyn std::error::Error + '_>> {
        let (x, y) = self.ranges();
        let notes = self.notes();
        let rows = u32::try_from(self.lines.len() + notes.len()).unwrap_or(u32::MAX);
        let height = MIN_HEIGHT.max(130u32.saturating_add(rows.saturating_mul(LEGEND_ROW)));
        let mut own = String::new();
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
            root.fill(&WHITE)?;
            let (plot, legend) = root.split_horizontally(WIDTH - LEGEND_WIDTH);
            let mut chart = ChartBuilder::on(&plot)
                .caption(escape::plain(&self.title), ("sans-serif", 20))
                .margin(12)
                .x_label_area_size(40)
                .y_label_area_size(64)
                .build_cartesian_2d(x.0..x.1, y.0..y.1)?;
            (chart.configure_mesh())
                .x_desc("step")
                .y_desc(escape::plain(&self.y_label))
                .draw()?;
            let pixels = |points: &[(u64, f64)]| -> Vec<(i32, i32)> {
                points.iter().map(|p| chart.backend_coord(p)).collect()
            };
            let curves = self.curves();
            let drawn: Vec<Vec<(i32, i32)>> = curves.iter().map(|c| pixels(c)).collect();
            let looks = looks(&self.lines, &curves);
            for ((line, drawn), look) in self.lines.iter().zip(&drawn).zip(&looks) {
                if self.smooth > 1 {
                    let faint = Look {
                        dash: String::new(),
                        offset: 0,
                        ..look.clone()
                    };
                    own += &polyline(&pixels(&line.points), &faint, 1, Some(0.3));
                }
                own += &draw_line(line, drawn, look);
            }
            let font = ("sans-serif", 13).into_font();
            let left = TextStyle::from(font.clone()).pos(Pos::new(HPos::Left, VPos::Center));
            legend.draw(&Text::new("cells", (8, 40), font))?;
            let base = legend.get_base_pixel();
            for (row, (line, look)) in self.lines.iter().zip(&looks).enumerate() {
                let (entry, label) = legend_entry(base, legend_y(row), line, look);
                own += &entry;
                legend.draw(&Text::new(label, (44, legend_y(row)), left.clone()))?;
            }
            for (k, note) in notes.into_iter().enumerate() {
                let at = (8, legend_y(self.lines.len() + 1 + k));
                legend.draw(&Text::new(note, at, left.clone()))?;
            }
            if self.lines.is_empty() {
                no_data(chart.plotting_area())?;
            }
            root.present()?;
        }
        let end = svg.rfind("</svg>").unwrap_or(svg.len());
        svg.insert_str(end, &own);
        Ok(svg)
    }

    /// The steps and values the axes span.
    fn ranges(&self) -> ((u64, u64), (f64, f64)) {
        let all = || self.lines.iter().flat_map(|l| l.points.iter());
        let x = match (all().map(|p| p.0).min(), all().map(|p| p.0).max()) {
            (Some(lo), Some(hi)) if lo < hi => (lo, hi),
            (Some(lo), _) => (lo.saturating_sub(1), lo + 1),
            _ => (0, 1),
        };
        (x, padded(all().map(|p| p.1), 0.05))
    }

    /// The points each line is drawn through: its values, or their trailing mean.
    fn curves(&self) -> Vec<Vec<(u64, f64)>> {
        (self.lines.iter())
            .map(|l| match self.smooth > 1 {
                true => trailing_mean(&l.points, self.smooth),
                false => l.points.clone(),
            })
            .collect()
    }

    /// The legend's notes under the cells: the smoothing, and which cells' lines coincide (the
    /// same values at every step: one would hide the other).
    fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if self.smooth > 1 && !self.lines.is_empty() {
            notes.push(format!("lines: mean of the last {} steps", self.smooth));
            notes.push("faint: the raw values".to_owned());
        }
        for (i, (first, same)) in groups(&self.curves()).into_iter().enumerate() {
            if same.len() > 1 && first == i {
                let names: Vec<String> = same.iter().map(|&i| label(self.lines[i].name)).collect();
                notes.push(format!("curves coincide: {}", names.join(", ")));
            }
        }
        notes
    }
}

/// For each item, the first item equal to it and every item equal to it, in order.
fn groups<T: PartialEq>(items: &[T]) -> Vec<(usize, Vec<usize>)> {
    (items.iter())
        .map(|item| {
            let same: Vec<usize> = (0..items.len()).filter(|&j| items[j] == *item).collect();
            (same[0], same)
        })
        .collect()
}

/// How a cell's line is drawn: its colour, dash (with the offset into it) and marker.
#[derive(Debug, Clone)]
struct Look {
    colour: String,
    dash: String,
    offset: u32,
    marker: Marker,
}

/// The look of each line: its cell's colour, dash and marker; a line through the same points
/// as earlier ones is dashed so that each of them shows in turn along it.
fn looks(lines: &[Line], curves: &[Vec<(u64, f64)>]) -> Vec<Look> {
    const DASH: u32 = 8;
    (lines.iter().zip(groups(curves)))
        .enumerate()
        .map(|(j, (line, (_, same)))| {
            let look = Look {
                colour: hex(line.index),
                dash: dash(line.index).to_owned(),
                offset: 0,
                marker: marker(line.index),
            };
            let turn = same.iter().position(|&i| i == j).unwrap_or(0);
            let m = u32::try_from(same.len()).unwrap_or(u32::MAX);
            match turn {
                0 => look,
                k => Look {
                    dash: format!("{DASH} {}", DASH.saturating_mul(m - 1)),
                    offset: DASH.saturating_mul(u32::try_from(k).unwrap_or(0)),
                    ..look
                },
            }
        })
        .collect()
}

/// A cell's line as SVG: the polyline, a dot where it has one point, its markers, and where
/// its run has not completed, a mark at its end saying its state and step.
fn draw_line(line: &Line, drawn: &[(i32, i32)], look: &Look) -> String {
    let mut out = polyline(drawn, look, 2, None);
    if let [only] = drawn {
        out += &format!(
            "<circle cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"{}\"/>\n",
            only.0, only.1, look.colour
        );
    }
    // At most 25 markers a line, evenly over its points.
    let every = drawn.len().div_ceil(25).max(1);
    for at in drawn.iter().step_by(every) {
        out += &look.marker.svg(*at, &look.colour);
    }
    if !completed(line.state) {
        let last = line.points.last().map_or(0, |p| p.0);
        let at = drawn.last().copied().unwrap_or_default();
        let what = format!("{}: {} at step {last}", line.name, line.state);
        out += &end_mark(at, &look.colour, &what);
    }
    out
}

/// A cell's legend entry: the swatch (with its marker and end mark) as SVG, and its label.
fn legend_entry(base: (i32, i32), y: i32, line: &Line, look: &Look) -> (String, String) {
    let swatch = [(base.0 + 8, base.1 + y), (base.0 + 36, base.1 + y)];
    let mut svg = polyline(&swatch, look, 2, None);
    svg += &look.marker.svg((base.0 + 22, base.1 + y), &look.colour);
    let mut text = label(line.name);
    if !completed(line.state) {
        svg += &end_mark(swatch[1], &look.colour, line.state);
        text = format!("{text} ({})", escape::plain(line.state));
    }
    (svg, text)
}

/// The legend's row `row` (0 the first cell), in pixels below its top.
fn legend_y(row: usize) -> i32 {
    70 + i32::try_from(row)
        .unwrap_or(i32::MAX / 2)
        .saturating_mul(LEGEND_ROW as i32)
}

/// A cell's name as the legend shows it: one line, cut to what the legend's width holds.
fn label(name: &str) -> String {
    const MAX: usize = 26;
    let name = escape::plain(name);
    match name.chars().count() > MAX {
        true => name.chars().take(MAX - 1).chain(['…']).collect(),
        false => name,
    }
}

/// The shape drawn on a line's points: none for the first 50 cells (their colour and dash tell
/// them apart), then one per further 50.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Marker {
    None,
    Circle,
    Square,
    Triangle,
}

fn marker(i: usize) -> Marker {
    const LOOKS: usize = COLOURS.len() * DASHES.len();
    [
        Marker::None,
        Marker::Circle,
        Marker::Square,
        Marker::Triangle,
    ][(i / LOOKS) % 4]
}

impl Marker {
    fn svg(self, (x, y): (i32, i32), colour: &str) -> String {
        let shape = match self {
            Marker::None => return String::new(),
            Marker::Circle => format!("<circle cx=\"{x}\" cy=\"{y}\" r=\"3.5\""),
            Marker::Square => format!(
                "<rect x=\"{}\" y=\"{}\" width=\"7\" height=\"7\"",
                x - 3,
                y - 3
            ),
            Marker::Triangle => format!(
                "<polygon points=\"{x},{} {},{} {},{}\"",
                y - 4,
                x - 4,
                y + 3,
                x + 4,
                y + 3
            ),
        };
        format!("{shape} class=\"marker\" fill=\"{colour}\"/>\n")
    }
}

/// "no data yet" in the middle of a plot with nothing to draw, so that an empty plot does not
/// read as a broken one.
fn no_data<DB: DrawingBackend, CT: CoordTranslate>(
    area: &DrawingArea<DB, CT>,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let (xs, ys) = area.get_pixel_range();
    let centre = ((xs.end - xs.start) / 2, (ys.end - ys.start) / 2);
    let grey = RGBColor(110, 110, 110);
    let style = ("sans-serif", 22)
        .into_font()
        .color(&grey)
        .pos(Pos::new(HPos::Center, VPos::Center));
    (area.strip_coord_spec()).draw(&Text::new("no data yet", centre, style))
}

/// An SVG polyline through backend pixels, in a look; `opacity` for a faint one.
fn polyline(pixels: &[(i32, i32)], look: &Look, width: u32, opacity: Option<f64>) -> String {
    let points: Vec<String> = pixels.iter().map(|(x, y)| format!("{x},{y}")).collect();
    let mut out = format!(
        "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"{width}\" points=\"{}\"",
        look.colour,
        points.join(" ")
    );
    if !look.dash.is_empty() {
        out += &format!(" stroke-dasharray=\"{}\"", look.dash);
    }
    if look.offset > 0 {
        out += &format!(" stroke-dashoffset=\"{}\"", look.offset);
    }
    if let Some(o) = opacity {
        out += &format!(" stroke-opacity=\"{o}\"");
    }
    out + "/>\n"
}

/// The mark at the last point of a line whose run has not completed: a hollow circle, with a
/// `<title>` (the tooltip) saying the state and step.
fn end_mark(at: (i32, i32), colour: &str, title: &str) -> String {
    format!(
        "<circle class=\"ended\" cx=\"{}\" cy=\"{}\" r=\"5\" fill=\"#FFFFFF\" stroke=\"{colour}\" \
         stroke-width=\"2\"><title>{}</title></circle>\n",
        at.0,
        at.1,
        escape::xml(title)
    )
}

/// Each point's value as the mean of it and the `n - 1` points before it (fewer at the start).
fn trailing_mean(points: &[(u64, f64)], n: usize) -> Vec<(u64, f64)> {
    let n = n.max(1);
    (0..points.len())
        .map(|i| {
            let window = &points[(i + 1).saturating_sub(n)..=i];
            let mean = window.iter().map(|p| p.1).sum::<f64>() / window.len() as f64;
            (points[i].0, mean)
        })
        .collect()
}

/// The range of the values, widened by `pad` of its span (or by 1 when it has none).
fn padded(values: impl Iterator<Item = f64>, pad: f64) -> (f64, f64) {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    let span = hi - lo;
    if !span.is_finite() {
        (0.0, 1.0)
    } else if span == 0.0 {
        (lo - 1.0, hi + 1.0)
    } else {
        (lo - pad * span, hi + pad * span)
    }
}

/// The grid name as a file name: letters, digits, `-`, `_` and `.` kept, the rest `_`.
pub(super) fn file_stem(name: &str) -> String {
    let keep = |c: char| c.is_ascii_alphanumeric() || "-_.".contains(c);
    (name.chars())
        .map(|c| if keep(c) { c } else { '_' })
        .collect()
}
