//! `rlctl retire`: a recorded cell that must run again no longer blocks its grid. Its jobs are
//! cancelled, its checkpoint folder moved aside, one retirement line appended: the grid plans
//! the cell afresh, while every folder and every old ledger line stays.

use crate::common::{Sandbox, fails, ok, stderr, stdout};
use std::path::Path;

fn ledger_lines(sandbox: &Sandbox) -> Vec<String> {
    let text = std::fs::read_to_string(sandbox.root().join("work/runs/ledger.jsonl")).unwrap();
    text.lines().map(str::to_owned).collect()
}

/// No warning but the `[slots]` ones of the grid's big-batch cells, whose speed is the
/// reference scaled to their samples per step.
fn no_warning(what: &str, output: &std::process::Output) {
    assert!(
        !(stderr(output).lines()).any(|l| l.contains("warning") && !l.contains("[slots]")),
        "{what}: {}",
        stderr(output)
    );
}

#[test]
fn the_worked_example_runs_on_after_retire_with_a_fresh_checkpoint_folder_and_every_old_one_kept() {
    let sandbox = Sandbox::new();
    // The guide's worked example (docs/guide/first-run.md): one cell with an override, then the whole grid.
    ok(sandbox
        .rlctl()
        .args(["grid", "tbs128", "--", "trainer.epochs=2"]));
    let ckpt = sandbox
        .root()
        .join("work/checkpoints/gsm8k-throughput/tbs128");
    std::fs::create_dir_all(ckpt.join("ckpt/global_step_5")).unwrap();
    std::fs::write(ckpt.join("ckpt/latest_ckpt_global_step.txt"), "5").unwrap();
    let refused = fails(sandbox.rlctl().args(["grid", "--all", "gsm8k-throughput"]));
    assert!(
        refused.contains("`rlctl retire gsm8k-throughput/tbs128`")
            && refused.contains("`rlctl grid --all gsm8k-throughput --skip tbs128`"),
        "{refused}"
    );
    let retired = ok(sandbox.rlctl().args(["retire", "gsm8k-throughput/tbs128"]));
    no_warning("retire", &retired);
    let moved = sandbox
        .root()
        .join("work/checkpoints/gsm8k-throughput/tbs128.retired-1001");
    assert_eq!(
        stdout(&retired),
        format!(
            "gsm8k-throughput/tbs128: retired (job 1001); its checkpoints moved to {}; its run \
             folders and ledger records are kept\n",
            moved.display()
        )
    );
    assert!(!ckpt.exists());
    assert_eq!(
        std::fs::read_to_string(moved.join("ckpt/latest_ckpt_global_step.txt")).unwrap(),
        "5"
    );
    assert!(moved.join("ckpt/global_step_5").is_dir());
    // The grid runs on: the cell is submitted again, in a new run folder, on no checkpoints.
    let grid = ok(sandbox.rlctl().args(["grid", "--all", "gsm8k-throughput"]));
    no_warning("grid --all", &grid);
    let text = stdout(&grid);
    assert!(!text.contains("tbs128: already submitted"), "{text}");
    let again = (text.lines())
        .find(|l| l.starts_with("gsm8k-throughput/tbs128: job "))
        .unwrap_or_else(|| panic!("tbs128 submitted again:\n{text}"));
    assert_ne!(again, "gsm8k-throughput/tbs128: job 1001");
    let runs = sandbox.root().join("work/runs/gsm8k-throughput/tbs128");
    assert!(runs.join("001/run.sh").is_file(), "the old run folder kept");
    assert!(runs.join("002/run.sh").is_file(), "a new run folder");
    assert!(!ckpt.join("ckpt").exists(), "a fresh checkpoint folder");
    // The ledger keeps the history: the old record, the retirement, then the grid's 18.
    let lines = ledger_lines(&sandbox);
    assert_eq!(lines.len(), 1 + 1 + 18, "{lines:#?}");
    assert!(lines[0].contains("\"job_id\":\"1001\""), "{}", lines[0]);
    assert!(
        lines[1].starts_with("{\"retired\":\"gsm8k-throughput/tbs128\",\"jobs\":[\"1001\"]"),
        "{}",
        lines[1]
    );
    // Status shows the new job alone; the retired one is history.
    sandbox.sacct("");
    let status = ok(sandbox
        .rlctl()
        .args(["status", "gsm8k-throughput/tbs128", "--json"]));
    no_warning("status", &status);
    let json: serde_json::Value = serde_json::from_str(&stdout(&status)).unwrap();
    let jobs: Vec<&str> = (json.as_array().unwrap().iter())
        .map(|s| s["job_id"].as_str().unwrap())
        .collect();
    assert_eq!(jobs.len(), 1, "{json}");
    assert_ne!(jobs[0], "1001");
    let estimate = ok(sandbox.rlctl().args(["estimate", "tbs128"]));
    no_warning("estimate", &estimate);
}

#[test]
fn retire_cancels_the_runs_queued_job_and_status_shows_no_old_record() {
    let sandbox = Sandbox::new();
    sandbox.scancel();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    sandbox.queue("1001|gsm8k-canary|PENDING\n");
    let out = stdout(&ok(sandbox.rlctl().args(["retire", "gsm8k-canary"])));
    assert!(out.starts_with("cancelled job 1001\n"), "{out}");
    assert!(
        out.contains("gsm8k-canary: retired (job 1001); it had no checkpoint folder"),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(sandbox.root().join("sbatch-calls/scancel")).unwrap(),
        "1001\n"
    );
    sandbox.sacct("");
    let status = ok(sandbox.rlctl().arg("status"));
    no_warning("status", &status);
    assert!(!stdout(&status).contains("1001"), "{}", stdout(&status));
    // Retired, it is not recorded: a second retire says so, and suggests nothing of itself.
    let err = fails(sandbox.rlctl().args(["retire", "gsm8k-canary"]));
    assert!(err.contains("unknown recorded run `gsm8k-canary`"), "{err}");
    assert!(!err.contains("did you mean"), "{err}");
    assert_eq!(ledger_lines(&sandbox).len(), 2);
}

#[test]
fn retire_names_a_run_never_a_path_and_suggests_a_recorded_one() {
    let sandbox = Sandbox::new();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    let err = fails(sandbox.rlctl().args(["retire", "gsm8k-canry"]));
    assert!(
        err.contains("unknown recorded run `gsm8k-canry`: did you mean `gsm8k-canary`?"),
        "{err}"
    );
    for path in [
        "./gsm8k-canary",
        "/work/runs/gsm8k-canary",
        "../gsm8k-canary",
    ] {
        let err = fails(sandbox.rlctl().args(["retire", path]));
        assert!(err.contains("never by a path"), "{path}: {err}");
    }
    // Several runs are confirmed first: without a terminal, --yes is named.
    ok(sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--job-name", "other"]));
    let err = fails(sandbox.rlctl().args(["retire", "gsm8k-canary"]));
    assert!(err.contains("pass --yes"), "{err}");
    assert_eq!(ledger_lines(&sandbox).len(), 2, "nothing retired");
    assert!(!Path::new(&sandbox.root().join("sbatch-calls/scancel")).exists());
}

#[test]
fn a_retirement_line_makes_the_runs_earlier_records_history_without_a_warning() {
    let sandbox = Sandbox::new();
    ok(sandbox
        .rlctl()
        .args(["grid", "tbs128", "--", "trainer.epochs=2"]));
    let ledger = sandbox.root().join("work/runs/ledger.jsonl");
    let mut text = std::fs::read_to_string(&ledger).unwrap();
    text.push_str("{\"retired\":\"gsm8k-throughput/tbs128\",\"jobs\":[\"1001\"],\"unix\":1,\"moved_to\":null}\n");
    std::fs::write(&ledger, text).unwrap();
    // Not recorded: the grid plans the cell afresh, and nobody warns about the line.
    let grid = ok(sandbox
        .rlctl()
        .args(["grid", "--all", "gsm8k-throughput", "--dry-run"]));
    no_warning("grid --all", &grid);
    assert!(
        stdout(&grid).contains("==> sbatch command for gsm8k-throughput/tbs128 <=="),
        "{}",
        stdout(&grid)
    );
    let err = fails(sandbox.rlctl().args(["status", "1001"]));
    assert!(err.contains("unknown recorded run `1001`"), "{err}");
    assert!(!err.contains("warning"), "{err}");
}
