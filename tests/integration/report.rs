//! The report: the compact and the wide markdown table pinned as snapshots on synthetic cells (a
//! healthy run with eval pass@8, a collapsing one, an on-policy distillation one, one not
//! started), the best marked only among completed cells, its collapse verdicts against `watch`'s
//! alerts through the binary, and a report of runs outside a grid with smoothed plots (the plots
//! themselves: `report_plots`).

use crate::common::recorded_logs;
use crate::common::report_cells::{
    all_series, collapsing, distillation, grid, grid_knobs, healthy, healthy_at, step, table_rows,
    with_knobs,
};
use crate::common::{Sandbox, ok, stdout};
use rlctl::runs::metrics::{Kind, Series};
use rlctl::runs::report::{self, CellReport};
use std::collections::BTreeMap;

#[test]
fn markdown_table_of_a_grid() {
    let (series, knobs) = (all_series(), grid_knobs());
    let md = report::markdown("gsm8k-accuracy", &with_knobs(grid(&series), &knobs), true);
    insta::assert_snapshot!(md);
}

#[test]
fn the_compact_table_has_the_columns_a_researcher_compares_within_100_characters() {
    let (series, knobs) = (all_series(), grid_knobs());
    let md = report::markdown("gsm8k-accuracy", &with_knobs(grid(&series), &knobs), false);
    insta::assert_snapshot!(md);
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
    assert_eq!(rows.len(), 6, "header, rule, four cells:\n{md}");
    let cells = table_rows(&md);
    let changed = cells.iter().map(|r| r["changed"].chars().count()).max();
    for row in &rows {
        // Within 100 characters but for what the cells changed, itself cut to its width.
        let rest = row.chars().count() - changed.unwrap();
        assert!(rest <= 100, "{rest} characters: {row}");
        assert_eq!(row.len(), rows[0].len(), "aligned: {row}");
    }
    assert!(
        changed <= Some(rlctl::runs::report::COMPACT_CHANGED),
        "{md}"
    );
    // The legend under the table reads in `less` too: wrapped, not one line of 1,400 characters.
    for line in md.lines().filter(|l| !l.starts_with('|')) {
        assert!(
            line.chars().count() <= 100,
            "{} characters: {line}",
            line.len()
        );
    }
    let rows = cells;
    let heads: Vec<&str> = rows[0].keys().map(String::as_str).collect();
    for head in [
        "cell", "changed", "state", "steps", "s/step", "GPU-h", "reward", "pass@8",
    ] {
        assert!(heads.contains(&head), "no `{head}` in {heads:?}");
    }
    assert_eq!(rows[0]["changed"], "base");
    assert_eq!(rows[1]["changed"], "lr=1e-5");
    assert_eq!(rows[2]["changed"], "advantage_estimator=no_op, +2 more");
    assert_eq!(rows[2]["steps"], "4/10", "done/total");
    assert_eq!(rows[3]["steps"], "0", "no total known");
    // Each number with its change against the base, as the seed's tables read.
    assert_eq!(rows[1]["s/step"], "33.0 (-20%)");
    assert_eq!(rows[0]["s/step"], "41.0");
    assert!(md.contains("`--wide`: every column"), "{md}");
}

#[test]
fn the_table_compares_every_cell_with_the_base_and_marks_the_best() {
    let (series, knobs) = (all_series(), grid_knobs());
    let md = report::markdown("gsm8k-accuracy", &with_knobs(grid(&series), &knobs), true);
    let rows = table_rows(&md);
    let [base, fast, opd, empty] = [&rows[0], &rows[1], &rows[2], &rows[3]];
    assert_eq!(base["GPU-h"], "0.500");
    assert_eq!(opd["GPU-h"], "2.00 (+300%)");
    assert_eq!(empty["GPU-h"], "-", "nothing accounted");
    // s/step 33.0 against the base's 41.0: -20%; not the best: its entropy collapsed.
    assert_eq!(base["s/step"], "41.0");
    assert_eq!(fast["s/step"], "33.0 (-20%)");
    assert_eq!(opd["s/step"], "46.5 (+13%)");
    assert_eq!(empty["s/step"], "-");
    assert_eq!(fast["reward final"], "0.120 (-83%)");
    assert_eq!(
        base["reward final"], "0.720",
        "the only healthy completed cell: no best"
    );
    // 250 tokens x 1024 samples / the median step after the first; none without the knobs.
    assert_eq!(base["tok/s"], "6244");
    assert_eq!(fast["tok/s"], "9619 (+54%)");
    assert_eq!(opd["tok/s"], "-");
    // pass@8 from the eval line and the evals merged into train lines; per GPU-hour.
    assert_eq!(base["pass@8 final"], "0.713");
    assert_eq!(base["pass@8 best"], "0.734");
    assert_eq!(base["pass@8/GPU-h"], "1.43");
    assert_eq!(fast["pass@8 final"], "-");
    // What each cell changed, in full.
    assert_eq!(base["changed"], "base");
    assert_eq!(fast["changed"], "trainer.policy.optimizer_config.lr=1e-5");
    assert!(
        md.replace('\n', " ").contains("(+x%): the change against the base cell `base_long` (the grid's cell with no knobs of its own, else a run of the grid's base preset where the grid adds no knobs, else the grid's first cell)"),
        "{md}"
    );

    let no_base: Vec<CellReport> = (grid(&series).into_iter())
        .map(|c| CellReport { base: false, ..c })
        .collect();
    let md = report::markdown("g", &no_base, true);
    assert!(
        table_rows(&md).iter().all(|r| !r["s/step"].contains('%')),
        "{md}"
    );
    assert!(
        md.replace('\n', " ")
            .contains("(+x%): no base cell is recorded"),
        "{md}"
    );
}

#[test]
fn a_grid_without_eval_or_distillation_has_no_such_columns() {
    let series = [collapsing(), Series::default()];
    let cells = [
        CellReport::new("a", "RUNNING", &series[0]),
        CellReport::new("b|c", "PENDING", &series[1]),
    ];
    let md = report::markdown("g", &cells, true);
    assert!(!md.contains("pass@"), "{md}");
    assert!(!md.contains("token KL"), "{md}");
    let rows = table_rows(&md);
    assert_eq!(rows[1]["cell"], "b\\|c", "a `|` in a name is escaped: {md}");
    assert_eq!(rows[1]["state"], "PENDING");
    let widths: Vec<usize> = (md.lines())
        .filter(|l| l.starts_with('|'))
        .map(|l| l.replace("\\|", "").matches('|').count())
        .collect();
    assert_eq!(widths.len(), 4);
    assert!(
        widths.iter().all(|w| *w == widths[0]),
        "rows as wide as the header: {md}"
    );
}

/// A finished job's log: a train step per entropy value, then the wrapper's last line.
pub(crate) fn finished_log(job_id: &str, entropy: &[f64]) -> String {
    let mut log = String::new();
    for (i, e) in entropy.iter().enumerate() {
        log.push_str(&format!(
            "WANDB_MIRROR kind=train step={} metrics={{\"timing/step\": 40.0, \
             \"reward/avg_raw_reward\": 0.5, \"policy/policy_entropy\": {e}}}\n",
            i + 1
        ));
    }
    log + &format!("rlctl: job {job_id} finished with status 0\n")
}

#[test]
fn report_and_watch_judge_collapse_and_divergence_by_one_rule() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.presets().join("grids")).unwrap();
    // Each cell: its entropy per step, the report's collapse and diverged cells, watch's alert.
    type Case = (
        &'static str,
        &'static [f64],
        &'static str,
        &'static str,
        Option<&'static str>,
    );
    let cells: [Case; 4] = [
        (
            "steady",
            &[0.6, 0.58, 0.57, 0.55, 0.5, 0.48],
            "no",
            "no",
            None,
        ),
        (
            "fell",
            &[0.6, 0.41, 0.22, 0.09, 0.05, 0.03],
            "yes",
            "no",
            Some("entropy-collapse"),
        ),
        // Below 0.2 x the first step, not below 0.2 x the mean of the first three: a
        // collapse by the rule the report had before, not by the one watch alerts on.
        (
            "dipped",
            &[1.0, 0.6, 0.5, 0.45, 0.3, 0.19],
            "no",
            "no",
            None,
        ),
        (
            "blew_up",
            &[0.6, 0.5, 0.4, f64::NAN],
            "-",
            "yes",
            Some("diverged"),
        ),
    ];
    let mut grid = "description = \"four cells\"\nbase = \"gsm8k-canary\"\n".to_owned();
    for (i, (cell, ..)) in cells.iter().enumerate() {
        // Cells must differ: each its own learning rate.
        grid.push_str(&format!(
            "[[cells]]\nname = \"{cell}\"\ndescription = \"{cell}\"\n\
             knobs = {{ \"trainer.policy.optimizer_config.lr\" = {}.0e-6 }}\n",
            i + 1
        ));
    }
    std::fs::write(sandbox.presets().join("grids/tiny.toml"), grid).unwrap();
    ok(sandbox.rlctl().args(["grid", "--all", "tiny"]));
    let logs = recorded_logs(&sandbox);
    for (cell, entropy, ..) in cells {
        let log = &logs[&format!("tiny/{cell}")];
        let stem = log.file_stem().unwrap().to_str().unwrap();
        let job = stem.rsplit('_').next().unwrap();
        std::fs::write(log, finished_log(job, entropy)).unwrap();
    }
    let dir = sandbox.root().join("report");
    let md = stdout(&ok(sandbox
        .rlctl()
        .args(["report", "tiny", "--out"])
        .arg(&dir)
        .env("RLCTL_SACCT", "/nonexistent/sacct")));
    let rows = table_rows(&md);
    for (cell, _, collapse, diverged, alert) in cells {
        let row = (rows.iter())
            .find(|r| r["cell"] == cell)
            .unwrap_or_else(|| panic!("no row for {cell}:\n{md}"));
        assert_eq!(
            (row["collapse"].as_str(), row["diverged"].as_str()),
            (collapse, diverged),
            "{cell}:\n{md}"
        );
        let watch = sandbox
            .rlctl()
            .args(["watch", &format!("tiny/{cell}"), "--once"])
            .env("RLCTL_SACCT", "/nonexistent/sacct")
            .output()
            .unwrap();
        let text = stdout(&watch);
        assert!(text.contains("COMPLETED"), "{text}");
        let alerts: Vec<&str> = (text.lines())
            .filter_map(|l| l.trim().strip_prefix("ALERT ["))
            .filter_map(|l| l.split(']').next())
            .collect();
        assert_eq!(alerts, Vec::from_iter(alert), "{cell}: {text}");
        assert_eq!(watch.status.success(), alert.is_none(), "{cell}: {text}");
    }
}

#[test]
fn a_diverged_cell_gets_a_column_and_a_legend() {
    let mut blew_up = collapsing();
    let last = blew_up.train.last_mut().unwrap();
    last.metrics = (last.metrics.iter())
        .chain([("policy/raw_grad_norm", f64::NAN)])
        .collect();
    let series = [healthy(), blew_up];
    let cells = [
        CellReport::new("fine", "RUNNING", &series[0]),
        CellReport::new("nan", "RUNNING", &series[1]),
    ];
    let md = report::markdown("g", &cells, true);
    let rows = table_rows(&md);
    let last = |r: &BTreeMap<String, String>| -> [String; 3] {
        ["entropy end", "collapse", "diverged"].map(|h| r[h].clone())
    };
    assert_eq!(last(&rows[0]), ["0.480", "no", "no"], "{md}");
    assert_eq!(
        last(&rows[1]),
        ["0.0300", "yes", "yes"],
        "flags are never bold: {md}"
    );
    assert!(
        md.replace('\n', " ").contains(
            "diverged: the latest `policy/policy_loss`, `reward/avg_raw_reward`, \
             `policy/policy_entropy`, `policy/raw_grad_norm` or `distill/token_kl_mean` is NaN or \
             infinite (`rlctl watch`'s diverged alert);"
        ),
        "{md}"
    );
}

#[test]
fn the_pass_at_k_key_prefers_the_most_common_then_eval_all_then_the_larger_k() {
    let eval = |keys: &[&str]| Series {
        train: vec![],
        eval: vec![step(
            Kind::Eval,
            0,
            &keys.iter().map(|k| (*k, 0.5)).collect::<Vec<_>>(),
        )],
    };
    let key = |series: &[Series]| {
        let cells: Vec<CellReport> = (series.iter())
            .map(|s| CellReport::new("c", "unknown", s))
            .collect();
        report::pass_at_k_key(&cells)
    };
    assert_eq!(key(&[Series::default(), collapsing()]), None);
    let all = [
        "eval/gsm8k/pass_at_16",
        "eval/all/pass_at_4",
        "eval/all/pass_at_8",
        "eval/all/avg_score",
    ];
    assert_eq!(key(&[eval(&all)]).as_deref(), Some("eval/all/pass_at_8"));
    let common = [
        eval(&["eval/math/pass_at_8"]),
        eval(&["eval/math/pass_at_8", "eval/all/pass_at_1"]),
    ];
    assert_eq!(key(&common).as_deref(), Some("eval/math/pass_at_8"));
    assert_eq!(
        key(&[eval(&["reward/avg_pass_at_8", "eval/pass_at_8"])]),
        None
    );
}

/// A finished job's log: train steps with these seconds each (the first a warm-up at 3x), 300
/// tokens a sample, and a reward rising by `gain` a step.
fn timed_log(job_id: &str, secs: f64, gain: f64) -> String {
    let mut log = String::new();
    for i in 1..=4 {
        let step = if i == 1 { 3.0 * secs } else { secs };
        log.push_str(&format!(
            "WANDB_MIRROR kind=train step={i} metrics={{\"timing/step\": {step}, \
             \"generate/avg_num_tokens\": 300.0, \"reward/avg_raw_reward\": {}, \
             \"policy/policy_entropy\": 0.5}}\n",
            0.2 + gain * i as f64
        ));
    }
    log + &format!("rlctl: job {job_id} finished with status 0\n")
}

#[test]
fn the_report_has_gpu_hours_of_every_attempt_from_one_sacct_call_and_compares_with_the_base() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.presets().join("grids")).unwrap();
    std::fs::write(
        sandbox.presets().join("grids/acc.toml"),
        "description = \"three cells\"\nbase = \"gsm8k-canary\"\n\
         [[cells]]\nname = \"wide\"\ndescription = \"train batch 64\"\n\
         knobs = { \"trainer.train_batch_size\" = 64, \"trainer.policy_mini_batch_size\" = 64 }\n\
         [[cells]]\nname = \"base\"\ndescription = \"the canary\"\nknobs = {}\n\
         [[cells]]\nname = \"fast\"\ndescription = \"lr 2e-6\"\n\
         knobs = { \"trainer.policy.optimizer_config.lr\" = 2.0e-6 }\n",
    )
    .unwrap();
    ok(sandbox.rlctl().args(["grid", "--all", "acc"]));
    let logs = recorded_logs(&sandbox);
    let job = |cell: &str| -> String {
        let stem = logs[&format!("acc/{cell}")]
            .file_stem()
            .unwrap()
            .to_str()
            .unwrap();
        stem.rsplit('_').next().unwrap().to_owned()
    };
    for (cell, secs, gain) in [
        ("wide", 20.0, 0.05),
        ("base", 10.0, 0.1),
        ("fast", 8.0, 0.1),
    ] {
        let log = &logs[&format!("acc/{cell}")];
        std::fs::write(log, timed_log(&job(cell), secs, gain)).unwrap();
    }
    // `wide` was resubmitted once (as `rlctl tend` does): a second record of the same run.
    let ledger = sandbox.root().join("work/runs/ledger.jsonl");
    let text = std::fs::read_to_string(&ledger).unwrap();
    let first = text.lines().find(|l| l.contains("\"acc/wide\"")).unwrap();
    let again = first.replace(
        &format!("\"job_id\":\"{}\"", job("wide")),
        "\"job_id\":\"2001\"",
    );
    assert_ne!(again, first);
    std::fs::write(&ledger, format!("{text}{again}\n")).unwrap();

    // Accounting: `wide`'s first job ran twice (requeued), 30 min each on 4 GPUs, its
    // resubmission 15 min on two nodes without GPU accounting (the profile's 4 a node); `base`
    // one hour on 4 GPUs; `fast` unknown to accounting.
    let calls = sandbox.root().join("sacct-calls");
    let sacct = sandbox.root().join("bin/sacct-fake");
    crate::common::write_exec(
        &sacct,
        &format!(
            "#!/bin/bash\necho \"$*\" >> {calls}\n\
             echo '{wide}|REQUEUED|0:0|1800|billing=4,cpu=32,gres/gpu=4,node=1'\n\
             echo '{wide}|COMPLETED|0:0|1800|billing=4,cpu=32,gres/gpu=4,node=1'\n\
             echo '2001|COMPLETED|0:0|900|billing=8,cpu=64,node=2'\n\
             echo '{base}|COMPLETED|0:0|3600|billing=4,cpu=32,gres/gpu=4,node=1'\n",
            calls = calls.display(),
            wide = job("wide"),
            base = job("base"),
        ),
    );
    let dir = sandbox.root().join("report");
    let md = stdout(&ok(sandbox
        .rlctl()
        .args(["report", "acc", "--wide", "--out"])
        .arg(&dir)
        .env("RLCTL_SACCT", &sacct)));
    let asked = std::fs::read_to_string(&calls).unwrap();
    assert_eq!(asked.lines().count(), 1, "one sacct call: {asked}");
    for id in [job("wide"), job("base"), job("fast"), "2001".to_owned()] {
        assert!(asked.contains(&id), "sacct asked for {id}: {asked}");
    }
    assert!(
        asked.contains("-D"),
        "every attempt of a requeued job: {asked}"
    );

    let rows = table_rows(&md);
    let row = |cell: &str| rows.iter().find(|r| r["cell"] == cell).unwrap();
    assert_eq!(
        row("wide")["GPU-h"],
        "6.00 (+50%)",
        "(2 x 1800 x 4 + 900 x 8) / 3600:\n{md}"
    );
    assert_eq!(row("base")["GPU-h"], "4.00");
    assert_eq!(row("fast")["GPU-h"], "-");
    assert_eq!(row("base")["s/step"], "10.0");
    assert_eq!(row("wide")["s/step"], "20.0 (+100%)");
    assert_eq!(row("fast")["s/step"], "**8.00** (-20%)");
    assert_eq!(
        row("wide")["reward final"],
        "0.400 (-33%)",
        "0.4 against 0.6"
    );
    // 300 tokens x (64 or 32) prompts x 4 samples / s/step.
    assert_eq!(row("wide")["tok/s"], "3840 (0%)");
    assert_eq!(row("base")["tok/s"], "3840");
    assert_eq!(row("fast")["tok/s"], "**4800** (+25%)");
    // What each cell changed against the base cell, from the grid's catalog.
    assert_eq!(row("base")["changed"], "base");
    assert_eq!(
        row("wide")["changed"],
        "trainer.policy_mini_batch_size=64, trainer.train_batch_size=64"
    );
    assert_eq!(
        row("fast")["changed"],
        "trainer.policy.optimizer_config.lr=2e-6"
    );
    assert!(
        md.replace('\n', " ").contains("(+x%): the change against the base cell `base` (the grid's cell with no knobs of its own"),
        "{md}"
    );
    let bars = std::fs::read_to_string(dir.join("acc-s_per_step.svg")).unwrap();
    assert!(
        bars.contains("base (base)") && bars.contains("20.0 (+100%)"),
        "{bars}"
    );
}

#[test]
fn cells_that_all_tie_have_no_best() {
    let series = [healthy(), healthy()];
    let cells = [
        CellReport::new("a", "COMPLETED", &series[0]),
        CellReport::new("b", "COMPLETED", &series[1]),
    ];
    let md = report::markdown("g", &cells, true);
    let rows = table_rows(&md);
    assert!(
        rows.iter()
            .all(|r| r["s/step"] == "41.0" && r["reward final"] == "0.720"),
        "no bold where every cell is the same:\n{md}"
    );
}

#[test]
fn the_best_is_marked_only_among_completed_cells() {
    // The running, failed and timed-out cells have the fastest steps and the highest reward; the
    // best of the column is still the completed cells' best.
    let series = [
        healthy(),
        collapsing(),
        healthy(),
        distillation(),
        collapsing(),
        healthy_at(18.0, -0.1),
    ];
    let cells = [
        CellReport::new("done_a", "COMPLETED", &series[0]),
        CellReport::new("still", "RUNNING", &series[1]),
        CellReport::new("done_b", "COMPLETED", &series[2]),
        CellReport::new("broke", "FAILED", &series[3]),
        CellReport::new("late", "TIMEOUT", &series[4]),
    ];
    for wide in [false, true] {
        let md = report::markdown("g", &cells, wide);
        let rows = table_rows(&md);
        for row in &rows {
            let marked: Vec<&String> = row.values().filter(|v| v.starts_with("**")).collect();
            let cell = &row["cell"];
            if !cell.starts_with("done_") {
                assert!(
                    marked.is_empty(),
                    "{cell} is not completed, yet marked best: {marked:?}\n{md}"
                );
            }
        }
        // done_a and done_b have the same values: no best among them.
        assert!(rows.iter().all(|r| !r["s/step"].starts_with("**")), "{md}");
        assert!(md.contains("the best COMPLETED cell of the column"), "{md}");
    }
    // With two completed cells that differ, the better is marked.
    let cells = [
        CellReport::new("slow", "COMPLETED", &series[0]),
        CellReport::new("still", "RUNNING", &series[1]),
        CellReport::new("fast", "COMPLETED", &series[5]),
    ];
    let rows = table_rows(&report::markdown("g", &cells, false));
    assert_eq!(rows[2]["s/step"], "**33.0**");
    assert_eq!(rows[1]["s/step"], "33.0", "as fast, but running");
    assert_eq!(rows[0]["reward"], "**0.720**");
}

#[test]
fn a_collapsed_or_diverged_cell_is_never_the_best_and_only_bests_are_bold() {
    // The collapsed cell had the fastest steps and the highest reward on the way; the diverged
    // one the highest reward and pass@8 at its end. Both completed.
    let mut blew_up = healthy_at(10.0, 0.2);
    let last = blew_up.train.last_mut().unwrap();
    last.metrics = (last.metrics.iter())
        .chain([("policy/raw_grad_norm", f64::NAN)])
        .collect();
    let series = [healthy(), collapsing(), blew_up, healthy_at(22.0, -0.1)];
    let cells = [
        CellReport {
            base: true,
            ..CellReport::new("base", "COMPLETED", &series[0])
        },
        CellReport::new("collapsed", "COMPLETED", &series[1]),
        CellReport::new("diverged", "COMPLETED", &series[2]),
        CellReport::new("steady", "COMPLETED", &series[3]),
    ];
    for wide in [false, true] {
        let md = report::markdown("g", &cells, wide);
        let rows = table_rows(&md);
        let reward = if wide { "reward final" } else { "reward" };
        let pass = if wide { "pass@8 final" } else { "pass@8" };
        for broken in &rows[1..3] {
            let bold: Vec<&String> = broken.values().filter(|v| v.contains("**")).collect();
            assert!(bold.is_empty(), "{}: {bold:?}\n{md}", broken["cell"]);
        }
        assert_eq!(rows[1]["collapse"], "yes", "{md}");
        assert_eq!(rows[2]["diverged"], "yes", "{md}");
        // Among the healthy: the base has the better reward and pass@8, `steady` the faster step.
        assert_eq!(rows[0][reward], "**0.720**", "{md}");
        assert_eq!(rows[0][pass], "**0.713**", "{md}");
        assert_eq!(rows[3]["s/step"], "**37.0** (-10%)", "{md}");
        assert_eq!(rows[3][reward], "0.620 (-14%)", "{md}");
        // Bold is a best and nothing else.
        for row in &rows {
            for (head, value) in row {
                if value.contains("**") {
                    let plain = value.trim_start_matches("**");
                    assert!(
                        value.starts_with("**") && plain.contains("**"),
                        "{head}: {value}"
                    );
                    assert!(["base", "steady"].contains(&row["cell"].as_str()), "{md}");
                }
            }
        }
        let flat = md.replace('\n', " ");
        assert!(flat.contains("or one whose entropy collapsed or that diverged, is never marked"));
    }
}

#[test]
fn metric_keys_and_names_from_a_log_reach_markdown_as_text() {
    // An eval set named to close the code span and open raw HTML, and a cell named with a
    // terminal escape and a newline.
    let key = "eval/x` <img src=x onerror=alert(1)> `/pass_at_8";
    let series = Series {
        train: vec![],
        eval: vec![step(Kind::Eval, 0, &[(key, 0.5)])],
    };
    let cells = [CellReport::new("a\x1b[2J\nb<i>|", "COMPLETED", &series)];
    for wide in [false, true] {
        let md = report::markdown("g<script>", &cells, wide);
        let rows = md.lines().filter(|l| l.starts_with('|')).count();
        assert!(!md.contains('\x1b') && rows == 3, "{md:?}");
        assert!(md.starts_with("## g\\<script\\>\n"), "{md}");
        // The key is one code span, fenced by more backticks than it holds.
        assert!(
            md.contains("``eval/x` <img src=x onerror=alert(1)> `/pass_at_8``"),
            "{md}"
        );
        let rows = table_rows(&md);
        assert_eq!(rows[0]["cell"], "a?\\[2J?b\\<i\\>\\|", "{md}");
        // Parsed as CommonMark with GFM tables, no HTML survives.
        let html = markdown_html(&md);
        assert!(
            !html.contains("<img") && !html.contains("<i>") && !html.contains("<script"),
            "{html}"
        );
        assert!(html.contains("onerror"), "the key is shown as text: {html}");
    }
}

/// The markdown as HTML, by a CommonMark renderer with GFM tables (pulldown-cmark).
fn markdown_html(md: &str) -> String {
    let parser = pulldown_cmark::Parser::new_ext(md, pulldown_cmark::Options::ENABLE_TABLES);
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, parser);
    html
}

#[test]
fn report_of_runs_outside_a_grid_and_of_grid_cells_with_smoothing_and_wide() {
    let sandbox = Sandbox::new();
    for name in ["first", "second"] {
        ok(sandbox
            .rlctl()
            .args(["launch", "gsm8k-canary", "--job-name", name]));
    }
    std::fs::create_dir_all(sandbox.presets().join("grids")).unwrap();
    std::fs::write(
        sandbox.presets().join("grids/two.toml"),
        "description = \"two cells\"\nbase = \"gsm8k-canary\"\n\
         [[cells]]\nname = \"base\"\ndescription = \"the canary\"\nknobs = {}\n\
         [[cells]]\nname = \"fast\"\ndescription = \"lr 2e-6\"\n\
         knobs = { \"trainer.policy.optimizer_config.lr\" = 2.0e-6 }\n",
    )
    .unwrap();
    ok(sandbox.rlctl().args(["grid", "--all", "two"]));
    let logs = recorded_logs(&sandbox);
    for (target, secs) in [
        ("gsm8k-canary/first", 10.0),
        ("gsm8k-canary/second", 8.0),
        ("two/fast", 12.0),
    ] {
        let log = &logs[target];
        let stem = log.file_stem().unwrap().to_str().unwrap();
        let job = stem.rsplit('_').next().unwrap();
        std::fs::write(log, timed_log(job, secs, 0.1)).unwrap();
    }
    let dir = sandbox.root().join("runs-report");
    let md = stdout(&ok(sandbox
        .rlctl()
        .args(["report", "gsm8k-canary/first", "second", "two/fast"])
        .args(["--smooth", "3", "--out"])
        .arg(&dir)
        .env("RLCTL_SACCT", "/nonexistent/sacct")));
    let rows = table_rows(&md);
    let names: Vec<&str> = rows.iter().map(|r| r["cell"].as_str()).collect();
    assert_eq!(
        names,
        ["gsm8k-canary/first", "gsm8k-canary/second", "two/fast"],
        "{md}"
    );
    assert!(md.starts_with("## runs\n"), "{md}");
    assert_eq!(rows[1]["s/step"], "**8.00**", "{md}");
    assert_eq!(rows[2]["state"], "COMPLETED", "{md}");
    assert!(!rows[0].contains_key("tok/s"), "compact by default: {md}");
    // The plots: each line drawn faint and as the mean of its last 3 steps.
    let svg = std::fs::read_to_string(dir.join("runs-smooth3-reward.svg")).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let lines: Vec<roxmltree::Node> = doc
        .descendants()
        .filter(|n| n.has_tag_name("polyline"))
        .filter(|n| n.attribute("points").unwrap_or("").split(' ').count() == 4)
        .collect();
    let faint = lines
        .iter()
        .filter(|n| n.attribute("stroke-opacity").is_some());
    assert_eq!(faint.count(), 3, "a faint raw line per run");
    assert_eq!(lines.len(), 6, "and a smoothed one");
    assert!(svg.contains("mean of the last 3 steps"), "{svg}");
    assert!(dir.join("runs-smooth3.md").exists());

    let wide = stdout(&ok(sandbox
        .rlctl()
        .args(["report", "second", "--wide", "--out"])
        .arg(&dir)
        .env("RLCTL_SACCT", "/nonexistent/sacct")));
    let head = &table_rows(&wide)[0];
    assert!(
        head.contains_key("tok/s") && head.contains_key("reward best"),
        "{wide}"
    );
    assert!(wide.starts_with("## second\n"), "{wide}");
    // `report GRID` still compares the grid's cells, named as cells, with its base.
    let grid = stdout(&ok(sandbox
        .rlctl()
        .args(["report", "two", "--wide", "--out"])
        .arg(&dir)
        .env("RLCTL_SACCT", "/nonexistent/sacct")));
    let rows = table_rows(&grid);
    assert_eq!(rows.len(), 2, "{grid}");
    assert!(rows.iter().any(|r| r["cell"] == "fast"), "{grid}");
    // An unknown name is an error that names the runs there are.
    let out = sandbox
        .rlctl()
        .args(["report", "first", "nosuch"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nosuch"), "{err}");
}

#[test]
fn each_variant_writes_its_own_markdown_embedding_its_plots_and_a_grid_without_a_plain_cell_compares_with_its_first()
 {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.presets().join("grids")).unwrap();
    // Every cell sets the learning rate: none runs the grid's configuration as it is.
    std::fs::write(
        sandbox.presets().join("grids/lrs.toml"),
        "description = \"three rates\"\nbase = \"gsm8k-canary\"\n\
         [[cells]]\nname = \"lr1\"\ndescription = \"lr 1e-6\"\n\
         knobs = { \"trainer.policy.optimizer_config.lr\" = 1.0e-6 }\n\
         [[cells]]\nname = \"lr2\"\ndescription = \"lr 2e-6\"\n\
         knobs = { \"trainer.policy.optimizer_config.lr\" = 2.0e-6 }\n\
         [[cells]]\nname = \"eager\"\ndescription = \"CUDA graphs\"\n\
         knobs = { \"trainer.policy.optimizer_config.lr\" = 1.0e-6, \
         \"generator.enforce_eager\" = false }\n",
    )
    .unwrap();
    ok(sandbox.rlctl().args(["grid", "--all", "lrs"]));
    let logs = recorded_logs(&sandbox);
    for (cell, secs) in [("lr1", 10.0), ("lr2", 10.0), ("eager", 7.1)] {
        let log = &logs[&format!("lrs/{cell}")];
        let stem = log.file_stem().unwrap().to_str().unwrap();
        let job = stem.rsplit('_').next().unwrap();
        std::fs::write(log, timed_log(job, secs, 0.1)).unwrap();
    }
    let dir = sandbox.root().join("lrs-report");
    let report = |extra: &[&str]| {
        stdout(&ok(sandbox
            .rlctl()
            .args(["report", "lrs", "--out"])
            .arg(&dir)
            .args(extra)
            .env("RLCTL_SACCT", "/nonexistent/sacct")))
    };
    let compact = report(&[]);
    let rows = table_rows(&compact);
    let row = |cell: &str| rows.iter().find(|r| r["cell"] == cell).unwrap().clone();
    // The compact table of every grid says what each cell changed, and by how much.
    assert_eq!(row("lr1")["changed"], "base: lr=1e-6", "{compact}");
    assert_eq!(row("lr2")["changed"], "lr=2e-6", "{compact}");
    assert_eq!(row("eager")["changed"], "enforce_eager=false", "{compact}");
    assert_eq!(row("eager")["s/step"], "**7.10** (-29%)", "{compact}");
    assert!(compact.contains("else the grid's first cell"), "{compact}");
    let wide = report(&["--wide"]);
    let smooth = report(&["--smooth", "3"]);
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    let (md, md_wide, md_smooth) = (read("lrs.md"), read("lrs-wide.md"), read("lrs-smooth3.md"));
    assert!(
        md.starts_with(&compact) && md_wide.starts_with(&wide),
        "{md}\n{md_wide}"
    );
    assert!(md_smooth.starts_with(&smooth));
    assert_ne!(md, md_wide, "`--wide` does not overwrite the report");
    // Each markdown embeds its plots, linked by the names written beside it.
    for (text, reward) in [
        (&md, "lrs-reward.svg"),
        (&md_wide, "lrs-reward.svg"),
        (&md_smooth, "lrs-smooth3-reward.svg"),
    ] {
        let links: Vec<&str> = (text.lines())
            .filter_map(|l| {
                l.strip_prefix("![")?
                    .split("](<")
                    .nth(1)?
                    .strip_suffix(">)")
            })
            .collect();
        assert!(links.contains(&reward), "{links:?}");
        assert!(links.contains(&"lrs-s_per_step.svg"), "{links:?}");
        for link in links {
            roxmltree::Document::parse(&read(link)).unwrap();
        }
    }
    assert!(
        !std::fs::read_to_string(dir.join("lrs-reward.svg"))
            .unwrap()
            .contains("mean of the last"),
        "the smoothed plots did not overwrite the raw ones"
    );
}
