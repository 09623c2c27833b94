//! Wall time of `rlctl estimate` over a ledger of 10,000 recorded runs: one target, and a
//! 54-cell grid with `--all` (targets: 10 ms and 100 ms), as every call after the first costs
//! (the ledger's groups kept next to it); and the first call, which groups all 10,000 records.
//! Run with `cargo bench --bench estimate`.

#[path = "../tests/common/mod.rs"]
mod common;

use common::Sandbox;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs of the single-target command (a fifth of them for `--all`); `RLCTL_BENCH_RUNS` lowers
/// it for a quick look with a debug build (`cargo test --bench estimate`).
fn runs() -> usize {
    std::env::var("RLCTL_BENCH_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(50)
}
const RECORDS: usize = 10_000;
const CELLS: usize = 54;

fn median_of(runs: usize, mut once: impl FnMut()) -> Duration {
    once();
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            once();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

fn run(mut cmd: Command) {
    let status = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "{cmd:?} failed");
}

/// The learning rate of cell `i`: every cell its own knobs.
fn lr(i: usize) -> String {
    format!("{}e-7", i + 1)
}

fn main() {
    let sandbox = Sandbox::new();
    let root = sandbox.root();
    // A 54-cell grid over the canary, one learning rate per cell.
    let mut grid = String::from("description = \"bench\"\nbase = \"gsm8k-canary\"\n");
    for i in 0..CELLS {
        grid.push_str(&format!(
            "\n[[cells]]\nname = \"c{i}\"\ndescription = \"lr {}\"\nmax_steps = 100\n[cells.knobs]\n\
             \"trainer.policy.optimizer_config.lr\" = {}\n",
            lr(i),
            lr(i)
        ));
    }
    std::fs::create_dir_all(root.join("presets/grids")).unwrap();
    std::fs::write(root.join("presets/grids/bench.toml"), grid).unwrap();
    // One real record of a cell, copied into 10,000 with the cells' knobs and 100 logs.
    let mut launch = sandbox.rlctl();
    launch.args(["grid", "bench/c0"]);
    run(launch);
    let ledger = root.join("work/runs/ledger.jsonl");
    let first: serde_json::Value =
        serde_json::from_str(std::fs::read_to_string(&ledger).unwrap().trim()).unwrap();
    let logs = root.join("bench-logs");
    std::fs::create_dir_all(&logs).unwrap();
    for n in 0..100 {
        let text: String = (1..=50)
            .map(|s| {
                format!(
                    "WANDB_MIRROR kind=train step={s} metrics={{\"timing/step\": {}}}\n",
                    9.0 + (s + n) as f64 % 3.0
                )
            })
            .collect();
        std::fs::write(logs.join(format!("{n}.out")), text).unwrap();
    }
    let mut text = String::new();
    for n in 0..RECORDS {
        let mut record = first.clone();
        let cell = n % CELLS;
        record["job_id"] = (100_000 + n).to_string().into();
        record["target"] = format!("bench/c{cell}").into();
        record["member"] = format!("c{cell}").into();
        record["log"] = logs
            .join(format!("{}.out", n % 100))
            .display()
            .to_string()
            .into();
        record["knobs"]["trainer.policy.optimizer_config.lr"] = lr(cell).into();
        text.push_str(&serde_json::to_string(&record).unwrap());
        text.push('\n');
    }
    std::fs::write(&ledger, text).unwrap();

    let estimate = |args: &[&str]| {
        let mut cmd = sandbox.rlctl();
        cmd.arg("estimate").args(args);
        run(cmd);
    };
    let groups = root.join("work/runs/.ledger.jsonl.groups");
    let rows = [
        (
            "rlctl estimate bench/c7, first call (groups 10,000 records)",
            median_of(runs(), || {
                let _ = std::fs::remove_file(&groups);
                estimate(&["bench/c7"])
            }),
        ),
        (
            "rlctl estimate bench/c7 (10,000 records)",
            median_of(runs(), || estimate(&["bench/c7"])),
        ),
        (
            "rlctl estimate --all bench (54 cells, 10,000 records)",
            median_of((runs() / 5).max(1), || estimate(&["--all", "bench"])),
        ),
    ];
    println!("{:<62} {:>12}", "command", "median");
    for (name, time) in rows {
        println!("{name:<62} {:>9.2} ms", time.as_secs_f64() * 1e3);
    }
}
