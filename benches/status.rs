//! What `rlctl status` of a grid costs when its logs are large, first and later calls: the 20
//! cells of `gsm8k-accuracy`, each RUNNING with a 300 MB SkyRL-like log (one metric line in 200,
//! the rest vLLM/Ray noise). The first call scans every log and leaves its cache next to it; the
//! second finds nothing new; the third reads only the step each log gained. Stand-ins answer for
//! squeue (every job RUNNING) and sacct (nothing accounted). Run with
//! `cargo bench --bench status`; `RLCTL_BENCH_MB` sets the log size (default 300).

#[path = "../tests/common/mod.rs"]
mod common;

use common::{Sandbox, write_exec};
use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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
    let sacct = root.join("bin/sacct-nothing");
    write_exec(&sacct, "#!/bin/bash\nexit 0\n");

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

    // Every cell RUNNING at its log's last step.
    let status = |last: u64| -> Duration {
        let start = Instant::now();
        let out = run(sandbox
            .rlctl()
            .args(["status", "--json", "gsm8k-accuracy"])
            .env("RLCTL_SACCT", &sacct));
        let took = start.elapsed();
        let rows: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap();
        assert_eq!(rows.len(), logs.len(), "{out}");
        for row in &rows {
            assert_eq!(
                (row["state"].as_str(), row["step"].as_u64()),
                (Some("RUNNING"), Some(last)),
                "{row}"
            );
        }
        took
    };
    let first = status(steps);
    let second = status(steps);
    for log in &logs {
        let mut f = fs::OpenOptions::new().append(true).open(log).unwrap();
        f.write_all(metric_line(steps + 1).as_bytes()).unwrap();
    }
    let grown = status(steps + 1);
    let gb = (mb * logs.len() as u64) as f64 / 1e3;
    println!(
        "rlctl status gsm8k-accuracy: {} cells x {mb} MB logs ({gb:.1} GB), {steps} steps each\n  \
         first call (every log scanned, caches written): {:>8.1} ms ({:.2} GB/s)\n  \
         second call (nothing new):                      {:>8.1} ms\n  \
         after one appended step each:                   {:>8.1} ms",
        logs.len(),
        first.as_secs_f64() * 1e3,
        gb / first.as_secs_f64(),
        second.as_secs_f64() * 1e3,
        grown.as_secs_f64() * 1e3,
    );
}
