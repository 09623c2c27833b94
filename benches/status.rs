//! What `rlctl status` of a grid costs when its logs are large, first and later calls: the 20
//! cells of `gsm8k-accuracy`, each with a 300 MB SkyRL-like log (one metric line in 200, the
//! rest vLLM/Ray noise).
//!
//! While every cell is RUNNING (squeue says so, sacct knows nothing): the first call scans every
//! log and leaves its cache next to it; the second finds nothing new; the third reads only the
//! step each log gained. Once every cell has ended (squeue empty, sacct says COMPLETED): the
//! first call seals the runs (`<run_root>/.sealed`), the second answers from the index. Once
//! accounting knows none of them either (purged, or none) and their logs say how they ended:
//! the first call settles the runs, the second stats their logs. Each line counts the squeue
//! and sacct calls of one call, and gives its time as a multiple of `rlctl --version`'s (a
//! process start); the stand-ins are compiled programs (`common/standins.rs`).
//!
//! Run with `cargo bench --bench status`; `RLCTL_BENCH_MB` sets the log size (default 300);
//! `RLCTL_BENCH_BEFORE=PATH` times an older rlctl binary too, in the same run on the same logs.
//! Last, the grid's `rlctl report` (its table and plots) is timed on the same ended cells.

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "common/standins.rs"]
mod standins;

use common::Sandbox;
use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Calls timed for each idempotent measurement.
const REPEAT: usize = 15;

fn metric_line(step: u64) -> String {
    let mut body = String::new();
    for i in 0..40 {
        body.push_str(&format!(
            "\"group{}/metric_{i}\": {}.{:03}, ",
            i % 5,
            step,
            i
        ));
    }
    body.push_str(&format!("\"timing/step\": {}.5", 40 + step % 7));
    format!(
        "\x1b[36m(skyrl_entrypoint pid=4242)\x1b[0m WANDB_MIRROR kind=train step={step} metrics={{{body}}}\n"
    )
}

/// A log of about `size` bytes; returns its last step.
fn write_log(path: &Path, size: u64) -> u64 {
    let mut out = BufWriter::new(File::create(path).unwrap());
    let (mut written, mut step, mut line) = (0u64, 0u64, 0u64);
    while written < size {
        line += 1;
        let text = if line % 200 == 0 {
            step += 1;
            metric_line(step)
        } else {
            format!(
                "\x1b[36m(AsyncVLLMInferenceEngine pid={})\x1b[0m INFO 11-30 10:23:45 [metrics.py:455] Avg prompt throughput: {}.5 tokens/s, pending {}\n",
                2000 + line % 8,
                line % 9973,
                "x".repeat((line % 50) as usize)
            )
        };
        out.write_all(text.as_bytes()).unwrap();
        written += text.len() as u64;
    }
    step
}

/// Runs `cmd`, which must succeed; its stdout.
fn run(cmd: &mut Command) -> String {
    let out = cmd.stderr(Stdio::inherit()).output().unwrap();
    assert!(out.status.success(), "{cmd:?} failed");
    String::from_utf8(out.stdout).unwrap()
}

/// `cmd` (its arguments and environment) run by another rlctl binary, an older build.
fn run_by(cmd: Command, bin: &Path) -> Command {
    let mut other = Command::new(bin);
    other.args(cmd.get_args());
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => other.env(k, v),
            None => other.env_remove(k),
        };
    }
    other
}

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
    let mb: u64 = std::env::var("RLCTL_BENCH_MB")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(300);
    let sandbox = Sandbox::new();
    let root = sandbox.root();
    run(sandbox.rlctl().args(["grid", "--all", "gsm8k-accuracy"]));
    let ledger = fs::read_to_string(root.join("work/runs/ledger.jsonl")).unwrap();
    let records: Vec<serde_json::Value> = (ledger.lines())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let queue: String = (records.iter())
        .map(|r| {
            format!(
                "{}|{}|RUNNING|normal\n",
                r["job_id"].as_str().unwrap(),
                r["job_name"].as_str().unwrap()
            )
        })
        .collect();
    fs::write(root.join("sbatch-calls/queue"), queue).unwrap();
    // Stand-ins that count their calls, compiled (a process start each, as cheap as SLURM's own
    // clients are to start), so that what is timed is rlctl: squeue prints the queue file, sacct
    // knows nothing until `sbatch-calls/ended` exists, then says every job it is asked of
    // COMPLETED.
    let sacct = standins::build(&root.join("bin"), &root.join("sbatch-calls"));
    let master = root.join("master.log");
    let steps = write_log(&master, mb * 1_000_000);
    let logs: Vec<PathBuf> = (records.iter())
        .map(|r| PathBuf::from(r["log"].as_str().unwrap()))
        .collect();
    for log in &logs {
        fs::create_dir_all(log.parent().unwrap()).unwrap();
        fs::copy(&master, log).unwrap();
    }
    fs::remove_file(&master).unwrap();
    // Read once, so every call finds the logs in the page cache.
    for log in &logs {
        std::io::copy(&mut File::open(log).unwrap(), &mut std::io::sink()).unwrap();
    }
    let append = |step: u64| {
        for log in &logs {
            let mut f = fs::OpenOptions::new().append(true).open(log).unwrap();
            f.write_all(metric_line(step).as_bytes()).unwrap();
        }
    };

    let append_noise = || {
        let noise: String = (1..200)
            .map(|line| {
                format!(
                    "\x1b[36m(AsyncVLLMInferenceEngine pid={})\x1b[0m INFO 11-30 10:23:45 [metrics.py:455] Avg prompt throughput: {line}.5 tokens/s\n",
                    2000 + line % 8
                )
            })
            .collect();
        for log in &logs {
            let mut f = fs::OpenOptions::new().append(true).open(log).unwrap();
            f.write_all(noise.as_bytes()).unwrap();
        }
    };
    let before = std::env::var_os("RLCTL_BENCH_BEFORE").map(PathBuf::from);
    let bins: Vec<(&str, Option<&PathBuf>)> = before
        .iter()
        .map(|b| ("before", Some(b)))
        .chain([("after", None)])
        .collect();
    // Every cell in `state` at its log's last step; the median wall time of `times` calls and
    // the squeue and sacct calls of the last one.
    let unit = standins::process_start(Path::new(common::BIN));
    let status = |bin: Option<&PathBuf>, state: &str, last: u64, times: usize| -> String {
        let mut cmd = sandbox.rlctl();
        cmd.args(["status", "--json", "gsm8k-accuracy"])
            .env("RLCTL_SACCT", &sacct)
            // cargo's search path for its own build, which a user's shell does not have.
            .env_remove("LD_LIBRARY_PATH");
        if let Some(bin) = bin {
            cmd = run_by(cmd, bin);
        }
        let mut took: Vec<Duration> = Vec::new();
        let mut counted = (0, 0);
        for _ in 0..times {
            calls(root);
            let start = Instant::now();
            let out = run(&mut cmd);
            took.push(start.elapsed());
            counted = calls(root);
            let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
            let rows = doc["runs"].as_array().expect("status --json has its runs");
            assert_eq!(rows.len(), logs.len(), "{out}");
            for row in rows {
                assert_eq!(
                    (row["state"].as_str(), row["step"].as_u64()),
                    (Some(state), Some(last)),
                    "{row}"
                );
            }
        }
        took.sort();
        let median = took[took.len() / 2];
        format!(
            "{:>8.1} ms ({:>5.1}x), {} squeue, {} sacct",
            median.as_secs_f64() * 1e3,
            median.as_secs_f64() / unit.as_secs_f64(),
            counted.0,
            counted.1
        )
    };
    // What the stand-ins themselves cost, to tell rlctl's share from theirs.
    let standin = |program: &Path, args: &[&str]| -> f64 {
        let mut took: Vec<Duration> = (0..21)
            .map(|_| {
                let start = Instant::now();
                run(Command::new(program)
                    .args(args)
                    .env_remove("LD_LIBRARY_PATH"));
                start.elapsed()
            })
            .collect();
        took.sort();
        calls(root);
        took[took.len() / 2].as_secs_f64() * 1e3
    };
    let gb = (mb * logs.len() as u64) as f64 / 1e3;
    println!(
        "rlctl status gsm8k-accuracy: {} cells x {mb} MB logs ({gb:.1} GB), {steps} steps each; \
         medians of {REPEAT} calls",
        logs.len()
    );
    println!(
        "  (rlctl --version, a process start: {:.2} ms; the figures' x is a multiple of it)",
        unit.as_secs_f64() * 1e3
    );
    println!(
        "  (the stand-ins alone: squeue {:.1} ms, sacct of 20 jobs {:.1} ms)",
        standin(&root.join("bin/squeue"), &[]),
        standin(
            &sacct,
            &[
                "-j",
                &(1001..=1020)
                    .map(|j| j.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            ]
        ),
    );
    let mut last = steps;
    println!("  every cell RUNNING:");
    println!(
        "    first call (every log scanned, caches written):  {}",
        status(None, "RUNNING", last, 1)
    );
    for (name, bin) in &bins {
        // Untimed: this binary's own caches of the logs as they are now.
        status(*bin, "RUNNING", last, 1);
        println!(
            "    {name:<6} second call (nothing new):              {}",
            status(*bin, "RUNNING", last, REPEAT)
        );
        let mut appended = Vec::new();
        for _ in 0..5 {
            last += 1;
            append(last);
            appended.push(status(*bin, "RUNNING", last, 1));
        }
        appended.sort();
        println!(
            "    {name:<6} after one appended step each:           {}",
            appended[appended.len() / 2]
        );
        // What most of a log's growth is: vLLM's and Ray's lines, no step.
        let mut noisy = Vec::new();
        for _ in 0..5 {
            append_noise();
            noisy.push(status(*bin, "RUNNING", last, 1));
        }
        noisy.sort();
        println!(
            "    {name:<6} after 199 lines of noise each (no step): {}",
            noisy[noisy.len() / 2]
        );
    }
    fs::write(root.join("sbatch-calls/queue"), "").unwrap();
    fs::write(root.join("sbatch-calls/ended"), "").unwrap();
    println!("  every cell ended (COMPLETED), logs unchanged:");
    for (name, bin) in &bins {
        let _ = fs::remove_file(root.join("work/runs/.sealed"));
        println!(
            "    {name:<6} first call (runs sealed):               {}",
            status(*bin, "COMPLETED", last, 1)
        );
        println!(
            "    {name:<6} second call:                            {}",
            status(*bin, "COMPLETED", last, REPEAT)
        );
    }
    // Accounting purged (or none): SLURM knows none of the jobs, and their logs say how each
    // ended, their last lines written an hour ago. The first call settles the runs; later ones
    // stat their logs.
    fs::remove_file(root.join("sbatch-calls/ended")).unwrap();
    for (log, record) in logs.iter().zip(&records) {
        let mut f = fs::OpenOptions::new().append(true).open(log).unwrap();
        let job = record["job_id"].as_str().unwrap();
        writeln!(f, "rlctl: job {job} finished with status 0").unwrap();
        f.set_modified(std::time::SystemTime::now() - Duration::from_secs(3600))
            .unwrap();
    }
    println!("  every cell ended, unknown to squeue and sacct (its log says COMPLETED):");
    for (name, bin) in &bins {
        let _ = fs::remove_file(root.join("work/runs/.sealed"));
        println!(
            "    {name:<6} first call (runs settled):              {}",
            status(*bin, "COMPLETED", last, 1)
        );
        println!(
            "    {name:<6} second call:                            {}",
            status(*bin, "COMPLETED", last, REPEAT)
        );
    }
    fs::write(root.join("sbatch-calls/ended"), "").unwrap();
    // The grid's report: the table and every plot, from the same 20 logs (their caches warm),
    // as a researcher asks for it once the grid has ended.
    let out = root.join("report-bench");
    for (name, bin) in &bins {
        let mut cmd = sandbox.rlctl();
        cmd.args(["report", "gsm8k-accuracy", "--out"])
            .arg(&out)
            .env("RLCTL_SACCT", &sacct)
            .env_remove("LD_LIBRARY_PATH");
        if let Some(bin) = bin {
            cmd = run_by(cmd, bin);
        }
        let mut took: Vec<Duration> = (0..5)
            .map(|_| {
                let start = Instant::now();
                let table = run(&mut cmd);
                let took = start.elapsed();
                let rows = table.lines().filter(|l| l.starts_with('|')).count();
                assert_eq!(rows, logs.len() + 2, "{table}");
                took
            })
            .collect();
        took.sort();
        let plots = (fs::read_dir(&out).unwrap().flatten())
            .filter(|e| e.path().extension().is_some_and(|x| x == "svg"))
            .count();
        println!(
            "  {name:<6} rlctl report gsm8k-accuracy (its table and {plots} plots): {:>8.1} ms, median of 5",
            took[took.len() / 2].as_secs_f64() * 1e3
        );
    }
}
