//! Grids that finish themselves: `grid --all --skip`, the grid's record of what was asked, the
//! lanes a waiting cell keeps, and the report `tend` writes once every cell has ended.

use crate::common::{Sandbox, fails, ok, stdout};

#[test]
fn tend_writes_the_report_once_when_every_cell_has_ended() {
    let sandbox = Sandbox::new();
    let out = stdout(&ok(sandbox.rlctl().args([
        "grid",
        "--all",
        "gsm8k-throughput",
        "--skip",
        "tbs512",
        "--skip",
        "gsm8k-throughput/combo_D",
    ])));
    assert_eq!(sandbox.sbatch_calls(), 16, "{out}");
    assert!(!out.contains("tbs512"), "{out}");
    assert!(!out.contains("combo_D"), "{out}");
    assert!(
        out.contains("grid gsm8k-throughput: 16 cells: 16 submitted (8 of them waiting on a lane), 0 waiting for the QOS, 2 skipped; about"),
        "{out}"
    );
    let intent =
        std::fs::read_to_string(sandbox.root().join("work/runs/gsm8k-throughput/grid.toml"))
            .unwrap();
    assert!(
        intent.contains("skipped = [\"tbs512\", \"gsm8k-throughput/combo_D\"]"),
        "{intent}"
    );

    // Half the grid still queued: no report.
    let queued: String = (1001..=1008)
        .map(|id| format!("{id}|x|RUNNING|boost_qos_dbg\n"))
        .collect();
    sandbox.queue(&queued);
    let out = stdout(&ok(sandbox.rlctl().arg("tend")));
    assert!(
        out.contains("8 running, 0 queued, 0 waiting on a lane, 0 waiting for the QOS, 8 ended"),
        "{out}"
    );
    let report = sandbox.root().join("work/runs/gsm8k-throughput/report");
    assert!(!report.exists(), "{out}");

    // Every cell ended: the report is written, once, and tend says where.
    sandbox.queue("");
    let out = stdout(&ok(sandbox.rlctl().arg("tend")));
    assert!(
        out.ends_with(&format!(
            "grid gsm8k-throughput: every cell has ended; its report is in {}\n",
            report.join("gsm8k-throughput.md").display()
        )),
        "{out}"
    );
    let table = std::fs::read_to_string(report.join("gsm8k-throughput.md")).unwrap();
    assert!(table.contains("tbs64"), "{table}");
    assert!(!table.contains("tbs512"), "{table}");
    let out = stdout(&ok(sandbox.rlctl().arg("tend")));
    assert!(!out.contains("report"), "{out}");

    // A cell run again: once it has ended too, the report is written again.
    ok(sandbox
        .rlctl()
        .args(["grid", "tbs64", "--resume", "latest"]));
    let out = stdout(&ok(sandbox.rlctl().arg("tend")));
    assert!(
        out.contains("every cell has ended; its report is in"),
        "{out}"
    );
}

#[test]
fn a_waiting_cell_keeps_its_lane_and_the_order_asked() {
    let sandbox = Sandbox::new();
    sandbox.debug_submit_limit(9);
    let out = stdout(&ok(sandbox.rlctl().args([
        "grid",
        "--all",
        "gsm8k-throughput",
    ])));
    assert_eq!(sandbox.sbatch_calls(), 9, "{out}");
    // Cell 9 waited on cell 1 (job 1001).
    assert!(
        sandbox
            .sbatch_argv(9)
            .contains(&"--dependency=afterany:1001".to_owned())
    );
    // Cells 1-9 queued; 1002 (cell 2) ends: cell 10 goes in, behind cell 2's lane... which has
    // ended, so behind nothing; cell 11 waits behind cell 3 (job 1003), still queued.
    let queued: String = [1001, 1003, 1004, 1005, 1006, 1007, 1008, 1009]
        .iter()
        .map(|id| format!("{id}|x|PENDING|boost_qos_dbg\n"))
        .collect();
    sandbox.queue(&queued);
    let out = stdout(&ok(sandbox.rlctl().arg("tend")));
    assert_eq!(sandbox.sbatch_calls(), 10, "{out}");
    assert!(
        !sandbox
            .sbatch_argv(10)
            .iter()
            .any(|a| a.starts_with("--dependency"))
    );
    assert!(out.contains("8 waiting for the QOS"), "{out}");
}

#[test]
fn skip_names_a_cell_of_the_grid_or_is_refused() {
    let sandbox = Sandbox::new();
    let err = fails(
        sandbox
            .rlctl()
            .args(["grid", "--all", "gsm8k-throughput", "--skip", "tbs65"]),
    );
    assert!(err.contains("tbs65"), "{err}");
    assert!(err.contains("did you mean"), "{err}");
    assert_eq!(sandbox.sbatch_calls(), 0);
    let err = fails(sandbox.rlctl().args(["grid", "tbs64", "--skip", "tbs128"]));
    assert!(err.contains("--all"), "{err}");
}

/// The guide's worked example (docs/guide/first-run.md), its command lines read from that page and
/// run in order:
/// a try-out of one cell with an override, its retirement, then the whole grid on the debug
/// QOS's two slots, the rest waiting for `tend`.
#[test]
fn the_guides_worked_example_runs_as_written() {
    let page = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/guide/first-run.md"
    ))
    .unwrap();
    let commands: Vec<Vec<String>> = [
        "$ rlctl grid tbs128 ",
        "$ rlctl retire tbs128",
        "$ rlctl grid --all gsm8k-throughput ",
    ]
    .iter()
    .map(|start| {
        let line = page
            .lines()
            .find(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("docs/guide/first-run.md has no line `{start}`"));
        let command = line.split(" # ").next().unwrap();
        command
            .split_whitespace()
            .skip(2)
            .map(str::to_owned)
            .collect()
    })
    .collect();
    let sandbox = Sandbox::new();
    sandbox.debug_submit_limit(2);
    for (i, args) in commands.iter().enumerate() {
        let out = stdout(&ok(sandbox.rlctl().args(args)));
        if i == 2 {
            assert!(
                out.starts_with("gsm8k-throughput/base: job 1002\n"),
                "{out}"
            );
            assert!(out.contains("gsm8k-throughput/tbs64: job 1003\n"), "{out}");
            assert!(
                out.contains("gsm8k-throughput/tbs128: waits for room in QOS boost_qos_dbg\n"),
                "{out}"
            );
            assert!(out.contains("16 waiting for the QOS"), "{out}");
        }
    }
    assert_eq!(sandbox.sbatch_calls(), 3);
}

/// A grid whose QOS has no room at all: nothing is submitted, every cell waits, and `status` and
/// `tend` of the grid (which has no recorded run yet) say so rather than "unknown run".
#[test]
fn a_grid_whose_every_cell_waits_is_known_to_status_and_tend() {
    let sandbox = Sandbox::new();
    sandbox.debug_submit_limit(2);
    sandbox.queue("900|a|RUNNING|boost_qos_dbg\n901|b|PENDING|boost_qos_dbg\n");
    let out = stdout(&ok(sandbox.rlctl().args([
        "grid",
        "--all",
        "gsm8k-throughput",
    ])));
    assert_eq!(sandbox.sbatch_calls(), 0, "{out}");
    assert!(
        out.contains("0 submitted (0 of them waiting on a lane), 18 waiting for the QOS"),
        "{out}"
    );
    let status = stdout(&ok(sandbox.rlctl().args(["status", "gsm8k-throughput"])));
    assert!(
        status.starts_with("gsm8k-throughput: 18 cells wait for room in their QOS, and `rlctl tend` submits them in order: base, tbs64,"),
        "{status}"
    );
    let out = stdout(&ok(sandbox.rlctl().args(["tend", "gsm8k-throughput"])));
    assert!(out.contains("18 waiting for the QOS"), "{out}");
    assert_eq!(sandbox.sbatch_calls(), 0, "{out}");
    sandbox.queue("");
    let out = stdout(&ok(sandbox.rlctl().args(["tend", "gsm8k-throughput"])));
    assert_eq!(sandbox.sbatch_calls(), 2, "{out}");
    assert!(
        out.contains("gsm8k-throughput/base: job 1001 (it waited for room in QOS boost_qos_dbg)"),
        "{out}"
    );
}
