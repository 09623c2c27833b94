//! The report's SVG plots, parsed back as XML: a line and a legend entry per cell, told apart by
//! colour and dash past ten cells, a mark at the end of a line whose run did not complete, "no
//! data yet" on an empty plot, and the s/step bar chart.

use crate::common::report_cells::{all_series, collapsing, grid};
use camino::Utf8Path;
use rlctl::runs::metrics::Series;
use rlctl::runs::report::{self, CellReport};

#[test]
fn plots_are_svg_with_a_line_and_a_legend_entry_per_cell() {
    let series = all_series();
    let cells = grid(&series);
    let tmp = tempfile::tempdir().unwrap();
    let dir = Utf8Path::from_path(tmp.path()).unwrap().join("report");
    let files = report::plots("gsm8k-accuracy", &cells, 0, &dir).unwrap();
    let names: Vec<&str> = files.iter().map(|f| f.file_name().unwrap()).collect();
    assert_eq!(
        names,
        [
            "gsm8k-accuracy-reward.svg",
            "gsm8k-accuracy-entropy.svg",
            "gsm8k-accuracy-step-time.svg",
            "gsm8k-accuracy-pass-at-8.svg",
            "gsm8k-accuracy-s_per_step.svg",
        ]
    );
    let mut on_disk: Vec<String> = (std::fs::read_dir(&dir).unwrap())
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    on_disk.sort();
    let mut expected: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    expected.sort();
    assert_eq!(on_disk, expected, "no temporary files left behind");

    // Which cells have values in which plot: the empty cell is in none.
    let in_plot: [&[&str]; 4] = [
        &["base_long", "lr1e-5"],
        &["base_long", "lr1e-5", "opd_q3"],
        &["base_long", "lr1e-5", "opd_q3"],
        &["base_long"],
    ];
    for (file, cells_in) in files[..4].iter().zip(in_plot) {
        let text = std::fs::read_to_string(file).unwrap();
        let doc = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(doc.root_element().tag_name().name(), "svg", "{file}");
        let texts: Vec<&str> = (doc.descendants())
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| Some(n.text()?.trim()))
            .collect();
        for name in cells_in {
            let failed = format!("{name} (FAILED)");
            assert!(
                texts.contains(name) || texts.contains(&failed.as_str()),
                "{file}: no legend text `{name}` in {texts:?}"
            );
        }
        assert!(
            !texts.contains(&"gen2048"),
            "{file}: the empty cell is left out"
        );
        assert!(
            texts.iter().any(|t| t.starts_with("gsm8k-accuracy: ")),
            "{file}: title"
        );
        assert!(texts.contains(&"step"), "{file}: x axis label");
        let lines = (doc.descendants())
            .filter(|n| n.has_tag_name("polyline") || n.has_tag_name("path"))
            .count();
        assert!(
            lines >= 2 * cells_in.len(),
            "{file}: a line and a legend swatch per cell"
        );
    }
}

#[test]
fn plots_of_cells_without_steps_are_empty_but_valid() {
    let empty = Series::default();
    let cells = [CellReport::new("only", "PENDING", &empty)];
    let tmp = tempfile::tempdir().unwrap();
    let dir = Utf8Path::from_path(tmp.path()).unwrap();
    let files = report::plots("g/x", &cells, 0, dir).unwrap();
    assert_eq!(files.len(), 4, "no pass@k plot without eval values");
    for file in files {
        assert!(file.file_name().unwrap().starts_with("g_x-"), "{file}");
        let text = std::fs::read_to_string(&file).unwrap();
        roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(!text.contains(">only<"), "{file}");
    }
}

#[test]
fn the_s_per_step_bar_chart_has_a_bar_per_cell_and_marks_the_base() {
    let series = all_series();
    let cells = grid(&series);
    let tmp = tempfile::tempdir().unwrap();
    let dir = Utf8Path::from_path(tmp.path()).unwrap();
    let files = report::plots("gsm8k-accuracy", &cells, 0, dir).unwrap();
    let bars = files.last().unwrap();
    assert_eq!(bars.file_name(), Some("gsm8k-accuracy-s_per_step.svg"));
    let text = std::fs::read_to_string(bars).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{bars}: {e}"));
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    // Filled rectangles other than the white background: one bar per cell with an s/step.
    let filled: Vec<&str> = (doc.descendants())
        .filter(|n| n.has_tag_name("rect"))
        .filter_map(|n| n.attribute("fill"))
        .filter(|f| !f.eq_ignore_ascii_case("#FFFFFF") && *f != "none")
        .collect();
    assert_eq!(
        filled.len(),
        3,
        "base_long, lr1e-5, opd_q3; gen2048 has no steps: {filled:?}"
    );
    let texts: Vec<&str> = (doc.descendants())
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| Some(n.text()?.trim()))
        .collect();
    for label in [
        "base_long (base)",
        "lr1e-5",
        "opd_q3",
        "41.0",
        "33.0 (-20%)",
        "46.5 (+13%)",
    ] {
        assert!(texts.contains(&label), "no `{label}` in {texts:?}");
    }
    assert!(!texts.contains(&"gen2048"), "{texts:?}");
    assert!(
        texts.contains(&"gsm8k-accuracy: seconds per step against the base (base_long)"),
        "{texts:?}"
    );
}

/// The SVG elements of a file, parsed.
fn svg_nodes<'a>(doc: &'a roxmltree::Document<'a>) -> Vec<roxmltree::Node<'a, 'a>> {
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    doc.descendants().collect()
}

#[test]
fn plots_tell_cells_past_ten_apart_and_mark_lines_that_ended_early() {
    let series: Vec<Series> = (0..12)
        .map(|i| lifted(collapsing(), i as f64 / 100.0))
        .collect();
    let states = [
        "COMPLETED",
        "FAILED",
        "TIMEOUT",
        "RUNNING",
        "CANCELLED by 42",
    ];
    let names: Vec<String> = (0..12).map(|i| format!("c{i}")).collect();
    let cells: Vec<CellReport> = (0..12)
        .map(|i| CellReport::new(&names[i], states[i % states.len()], &series[i]))
        .collect();
    let tmp = tempfile::tempdir().unwrap();
    let dir = Utf8Path::from_path(tmp.path()).unwrap();
    let files = report::plots("g", &cells, 0, dir).unwrap();
    let text = std::fs::read_to_string(&files[0]).unwrap();
    assert!(files[0].as_str().ends_with("g-reward.svg"));
    let doc = roxmltree::Document::parse(&text).unwrap();
    let nodes = svg_nodes(&doc);
    // The data lines: polylines with 6 points (the swatches have 2).
    let looks: Vec<(String, String)> = (nodes.iter())
        .filter(|n| n.has_tag_name("polyline"))
        .filter(|n| n.attribute("points").unwrap_or("").split(' ').count() == 6)
        .map(|n| {
            let stroke = n.attribute("stroke").unwrap_or("").to_owned();
            (
                stroke,
                n.attribute("stroke-dasharray").unwrap_or("").to_owned(),
            )
        })
        .collect();
    assert_eq!(looks.len(), 12, "{looks:?}");
    let mut distinct = looks.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(
        distinct.len(),
        12,
        "every cell its own colour and dash: {looks:?}"
    );
    assert!(
        looks[..10].iter().all(|l| l.1.is_empty()),
        "the first ten solid"
    );
    assert!(
        looks[10..].iter().all(|l| !l.1.is_empty()),
        "then dashed: {looks:?}"
    );
    // A mark at the end of each line that did not complete, saying its state and step.
    let marks: Vec<String> = (nodes.iter())
        .filter(|n| n.has_tag_name("circle") && n.attribute("class") == Some("ended"))
        .filter_map(|n| n.children().find(|c| c.has_tag_name("title")))
        .filter_map(|t| t.text().map(str::to_owned))
        .collect();
    for i in 0..12 {
        let state = states[i % states.len()];
        let mark = format!("c{i}: {state} at step 6");
        assert_eq!(
            marks.contains(&mark),
            state != "COMPLETED",
            "c{i} ({state}): {marks:?}"
        );
    }
    let texts: Vec<&str> = (nodes.iter())
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| Some(n.text()?.trim()))
        .collect();
    assert!(texts.contains(&"c1 (FAILED)"), "{texts:?}");
    assert!(texts.contains(&"c0"), "{texts:?}");
}

#[test]
fn an_empty_plot_says_no_data_yet() {
    let empty = Series::default();
    let cells = [CellReport::new("only", "PENDING", &empty)];
    let tmp = tempfile::tempdir().unwrap();
    let dir = Utf8Path::from_path(tmp.path()).unwrap();
    for file in report::plots("g", &cells, 0, dir).unwrap() {
        let text = std::fs::read_to_string(&file).unwrap();
        let doc = roxmltree::Document::parse(&text).unwrap();
        let says = (svg_nodes(&doc).iter())
            .filter(|n| n.has_tag_name("text"))
            .any(|n| n.text().map(str::trim) == Some("no data yet"));
        assert!(says, "{file}: no `no data yet` text");
    }
    // A plot with data does not say it.
    let series = all_series();
    let files = report::plots("h", &grid(&series), 0, dir).unwrap();
    let text = std::fs::read_to_string(&files[0]).unwrap();
    assert!(!text.contains("no data yet"), "{}", files[0]);
}

/// The bars of an s/step chart: (fill, height) of each filled rectangle but the background.
fn bars(text: &str) -> Vec<(String, f64)> {
    let doc = roxmltree::Document::parse(text).unwrap();
    (doc.descendants())
        .filter(|n| n.has_tag_name("rect"))
        .filter_map(|n| Some((n.attribute("fill")?.to_owned(), n.attribute("height")?)))
        .filter(|(f, _)| !f.eq_ignore_ascii_case("#FFFFFF") && f != "none")
        .map(|(f, h)| (f, h.parse::<f64>().unwrap()))
        .collect()
}

#[test]
fn the_s_per_step_chart_of_one_run_draws_its_bar() {
    let series = [collapsing()];
    let cells = [CellReport::new("only", "COMPLETED", &series[0])];
    let tmp = tempfile::tempdir().unwrap();
    let dir = Utf8Path::from_path(tmp.path()).unwrap();
    let files = report::plots("one", &cells, 0, dir).unwrap();
    let text = std::fs::read_to_string(files.last().unwrap()).unwrap();
    let drawn = bars(&text);
    assert_eq!(drawn.len(), 1, "{text}");
    assert!(drawn[0].1 > 10.0, "a bar of positive height: {drawn:?}");
}

/// The series with its reward `by` higher at every step: a curve of its own.
fn lifted(mut series: Series, by: f64) -> Series {
    for step in &mut series.train {
        step.metrics = (step.metrics.iter())
            .map(|(k, v)| {
                (
                    k,
                    if k == "reward/avg_raw_reward" {
                        v + by
                    } else {
                        v
                    },
                )
            })
            .collect();
    }
    series
}

/// The data lines of a plot (polylines through `points` points: the swatches have 2), each as
/// (stroke, dasharray, dashoffset).
fn data_lines(text: &str, points: usize) -> Vec<(String, String, String)> {
    let doc = roxmltree::Document::parse(text).unwrap();
    let attr = |n: &roxmltree::Node, a: &str| n.attribute(a).unwrap_or("").to_owned();
    (doc.descendants())
        .filter(|n| n.has_tag_name("polyline"))
        .filter(|n| n.attribute("points").unwrap_or("").split(' ').count() == points)
        .map(|n| {
            let look = ["stroke", "stroke-dasharray", "stroke-dashoffset"].map(|a| attr(&n, a));
            let [a, b, c] = look;
            (a, b, c)
        })
        .collect()
}

fn texts(text: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(text).unwrap();
    (doc.descendants())
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| Some(n.text()?.trim().to_owned()))
        .collect()
}

#[test]
fn identical_curves_are_drawn_in_turns_and_said_to_coincide() {
    // Three cells with the same rewards (a rerun, or a knob that changed nothing), one apart.
    let series = [
        collapsing(),
        collapsing(),
        lifted(collapsing(), 0.1),
        collapsing(),
    ];
    let names = ["a", "b", "other", "c"];
    let cells: Vec<CellReport> = (0..4)
        .map(|i| CellReport::new(names[i], "COMPLETED", &series[i]))
        .collect();
    let tmp = tempfile::tempdir().unwrap();
    let dir = Utf8Path::from_path(tmp.path()).unwrap();
    let files = report::plots("g", &cells, 0, dir).unwrap();
    let text = std::fs::read_to_string(&files[0]).unwrap();
    let lines = data_lines(&text, 6);
    assert_eq!(lines.len(), 4, "{lines:?}");
    // The first of the three is solid; the other two dashed over it, each its own turn.
    let same = [&lines[0], &lines[1], &lines[3]];
    assert_eq!(same[0].1, "", "{lines:?}");
    assert_eq!((&*same[1].1, &*same[2].1), ("8 16", "8 16"), "{lines:?}");
    assert_ne!(same[1].2, same[2].2, "different turns: {lines:?}");
    assert_eq!(lines[2].1, "", "a line of its own stays solid: {lines:?}");
    assert!(
        texts(&text).contains(&"curves coincide: a, b, c".to_owned()),
        "{:?}",
        texts(&text)
    );
    // The entropy plot: all four the same.
    let text = std::fs::read_to_string(&files[1]).unwrap();
    assert!(texts(&text).contains(&"curves coincide: a, b, other, c".to_owned()));
}

#[test]
fn a_grid_of_sixty_cells_gives_each_its_own_look() {
    let series: Vec<Series> = (0..60)
        .map(|i| lifted(collapsing(), i as f64 / 100.0))
        .collect();
    let names: Vec<String> = (0..60).map(|i| format!("c{i}")).collect();
    let cells: Vec<CellReport> = (0..60)
        .map(|i| CellReport::new(&names[i], "COMPLETED", &series[i]))
        .collect();
    let tmp = tempfile::tempdir().unwrap();
    let dir = Utf8Path::from_path(tmp.path()).unwrap();
    let files = report::plots("g", &cells, 0, dir).unwrap();
    let text = std::fs::read_to_string(&files[0]).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    // Past 50 looks of colour and dash, a marker on each point: 10 cells x 6 points, and one
    // on each of their legend swatches.
    let markers = (doc.descendants())
        .filter(|n| n.attribute("class") == Some("marker"))
        .count();
    assert_eq!(markers, 10 * 7, "{text}");
    assert_eq!(data_lines(&text, 6).len(), 60);
    let legend = texts(&text);
    assert!(legend.contains(&"c59".to_owned()), "{legend:?}");
    // The bar chart has a bar for each, every one drawn.
    let bars = bars(&std::fs::read_to_string(files.last().unwrap()).unwrap());
    assert_eq!(bars.len(), 60);
    assert!(bars.iter().all(|b| b.1 > 0.0), "{bars:?}");
}

#[test]
fn names_and_keys_from_a_log_reach_the_svg_as_text() {
    let key = "eval/<b>&\x01/pass_at_8";
    let series = Series {
        train: vec![],
        eval: vec![crate::common::report_cells::step(
            rlctl::runs::metrics::Kind::Eval,
            0,
            &[(key, 0.5)],
        )],
    };
    let cells = [CellReport::new("x\x1b[2J<script>", "FAILED\x07", &series)];
    let tmp = tempfile::tempdir().unwrap();
    let dir = Utf8Path::from_path(tmp.path()).unwrap();
    for file in report::plots("g", &cells, 0, dir).unwrap() {
        let text = std::fs::read_to_string(&file).unwrap();
        let doc = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(
            !doc.descendants()
                .any(|n| n.has_tag_name("script") || n.has_tag_name("b")),
            "{file}"
        );
        assert!(!text.contains(['\x1b', '\x01', '\x07']), "{file}");
    }
    let pass = std::fs::read_to_string(dir.join("g-pass-at-8.svg")).unwrap();
    assert!(
        texts(&pass)
            .iter()
            .any(|t| t.contains("eval/<b>&?/pass_at_8")),
        "{:?}",
        texts(&pass)
    );
}
