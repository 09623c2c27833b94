//! What `rlctl tend` costs over 10,000 recorded runs of which 20 are live (target: under 1 s):
//! the 20 cells of `gsm8k-accuracy` RUNNING, and 9,980 other runs that ended long ago, each with
//! its small log and checkpoint pointer. Compiled stand-ins (`common/standins.rs`) answer for
//! squeue (the grid's jobs RUNNING) and sacct (every job it is asked about COMPLETED), and count
//! their calls. The first pass
//! seals the ended runs (`<run_root>/.sealed`); later passes read neither their logs nor their
//! pointers, nor ask accounting of them. Wall time is the median of three later passes.
//!
//! Run with `cargo bench --bench tend`; `RLCTL_BENCH_RUNS` sets the number of recorded runs;
//! `RLCTL_BENCH_BEFORE=PATH` times an older rlctl binary too, in the same run.

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "common/standins.rs"]
mod standins;

use common::Sandbox;
use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CELLS: usize = 20;

/// The squeue and sacct calls made since the last look.
fn calls(root: &Path) -> (usize, usize) {
    let count = |name: &str| {
        let path = root.join(format!("sbatch-calls/{name}.calls"));
        let n = fs::read_to_string(&path).map_or(0, |t| t.lines().count());
        let _ = fs::remove_file(&path);
        n
    };
    (count("squeue"), count("sacct"))
}

fn main() {
    let total: usize = std::env::var("RLCTL_BENCH_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000);
    let sandbox = Sandbox::new();
    let root = sandbox.root();
    let mut grid = sandbox.rlctl();
    grid.args(["grid", "--all", "gsm8k-accuracy"]);
    assert!(grid.stdout(Stdio::null()).status().unwrap().success());
    let path = root.join("work/runs/ledger.jsonl");
    let cells: Vec<serde_json::Value> = (fs::read_to_string(&path).unwrap().lines())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(cells.len(), CELLS);
    let queue: String = (cells.iter())
        .map(|r| {
            format!(
                "{}|{}|RUNNING|normal\n",
                r["job_id"].as_str().unwrap(),
                r["job_name"].as_str().unwrap()
            )
        })
        .collect();
    fs::write(root.join("sbatch-calls/queue"), queue).unwrap();
    // Compiled stand-ins (`common/standins.rs`): squeue prints the queue, sacct says every job
    // it is asked of COMPLETED.
    let sacct = standins::build(&root.join("bin"), &root.join("sbatch-calls"));
    fs::write(root.join("sbatch-calls/ended"), "").unwrap();
    let unit = standins::process_start(Path::new(common::BIN));

    // The other runs: a cell's record under other names, each in its own folders, its log a few
    // steps long and its checkpoint pointer at its last step.
    let template = serde_json::to_string(&cells[0])
        .unwrap()
        .replace("gsm8k-accuracy", "old-@G@")
        .replace(cells[0]["member"].as_str().unwrap(), "c@C@");
    let mut out = BufWriter::new(fs::OpenOptions::new().append(true).open(&path).unwrap());
    let mut job = 5_000_000u64;
    for run in 0..total - CELLS {
        job += 1;
        let line = (template.replace(cells[0]["job_id"].as_str().unwrap(), &job.to_string()))
            .replace("@G@", &(run / 20).to_string())
            .replace("@C@", &(run % 20).to_string());
        let record: serde_json::Value = serde_json::from_str(&line).unwrap();
        let log = PathBuf::from(record["log"].as_str().unwrap());
        fs::create_dir_all(log.parent().unwrap()).unwrap();
        let mut text = String::new();
        for step in 1..=5 {
            text.push_str(&format!(
                "WANDB_MIRROR kind=train step={step} metrics={{\"timing/step\": 41.5, \
                 \"reward/avg_raw_reward\": 0.5, \"policy/policy_entropy\": 0.7}}\n"
            ));
        }
        fs::write(&log, text).unwrap();
        writeln!(out, "{line}").unwrap();
    }
    out.flush().unwrap();
    drop(out);

    let before = std::env::var_os("RLCTL_BENCH_BEFORE").map(PathBuf::from);
    let bins: Vec<(&str, Option<&PathBuf>)> = before
        .iter()
        .map(|b| ("before", Some(b)))
        .chain([("after", None)])
        .collect();
    let tend = |bin: Option<&PathBuf>| -> (Duration, usize, usize) {
        let mut cmd = sandbox.rlctl();
        cmd.arg("tend").env("RLCTL_SACCT", &sacct);
        if let Some(bin) = bin {
            let mut other = Command::new(bin);
            other.args(cmd.get_args());
            for (k, v) in cmd.get_envs() {
                match v {
                    Some(v) => other.env(k, v),
                    None => other.env_remove(k),
                };
            }
            cmd = other;
        }
        calls(root);
        let start = Instant::now();
        let out = cmd.stderr(Stdio::inherit()).output().unwrap();
        let took = start.elapsed();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains(&format!("tend: {total} runs, 0 resumed, 0 need a look")),
            "{text}"
        );
        let (squeue, sacct) = calls(root);
        (took, squeue, sacct)
    };
    println!("rlctl tend: {total} recorded runs, {CELLS} of them live");
    println!(
        "  (rlctl --version, a process start: {:.2} ms)",
        unit.as_secs_f64() * 1e3
    );
    for (name, bin) in &bins {
        let _ = fs::remove_file(root.join("work/runs/.sealed"));
        let (first, q, a) = tend(*bin);
        println!(
            "  {name:<6} first pass:  {:>8.1} ms, {q} squeue, {a} sacct",
            first.as_secs_f64() * 1e3
        );
        let mut passes: Vec<(Duration, usize, usize)> = (0..3).map(|_| tend(*bin)).collect();
        passes.sort_by_key(|p| p.0);
        let (median, q, a) = passes[1];
        println!(
            "  {name:<6} later passes: {:>8.1} ms (median of 3, {:.1}x), {q} squeue, {a} sacct",
            median.as_secs_f64() * 1e3,
            median.as_secs_f64() / unit.as_secs_f64()
        );
    }
}
