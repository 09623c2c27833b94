//! What `rlctl status` of a grid costs when its logs are large, first and later calls: the 20
//! cells of `gsm8k-accuracy`, each with a 300 MB SkyRL-like log (one metric line in 200, the
//! rest vLLM/Ray noise).
//!
//! While every cell is RUNNING (squeue says so, sacct knows nothing): the first call scans every
//! log and leaves its cache next to it; the second finds nothing new; the third reads only the
//! step each log gained. Once every cell has ended (squeue empty, sacct says COMPLETED): the
//! first call seals the runs (`<run_root>/.sealed`), the second answers from the index. Each
//! line counts the squeue and sacct calls of one call.
//!
//! Run with `cargo bench --bench status`; `RLCTL_BENCH_MB` sets the log size (default 300);
//! `RLCTL_BENCH_BEFORE=PATH` times an older rlctl binary too, in the same run on the same logs.

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
    // Stand-ins that count their calls: squeue prints the queue file, sacct knows nothing until
    // `sbatch-calls/ended` exists, then says every job it is asked of COMPLETED.
    write_exec(
        &root.join("bin/squeue"),
        "#!/bin/bash\necho >> \"$FAKE_SBATCH_DIR/squeue.calls\"\n\
         cat \"$FAKE_SBATCH_DIR/queue\" 2>/dev/null || true\n",
    );
    let sacct = root.join("bin/sacct-counted");
    write_exec(
        &sacct,
        &format!(
            "#!/bin/bash\necho >> {dir}/sacct.calls\n[ -e {dir}/ended ] || exit 0\n\
             while [ $# -gt 0 ]; do [ \"$1\" = -j ] && l=$2; shift; done\n\
             tr ',' '\\n' <<< \"$l\" | sed 's/$/|COMPLETED|0:0|60|node=1/'\n",
            dir = root.join("sbatch-calls").display()
        ),
    );

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

    let before = std::env::var_os("RLCTL_BENCH_BEFORE").map(PathBuf::from);
    let bins: Vec<(&str, Option<&PathBuf>)> = before
        .iter()
        .map(|b| ("before", Some(b)))
        .chain([("after", None)])
        .collect();
    // Every cell in `state` at its log's last step; the wall time and the calls it made.
    let status = |bin: Option<&PathBuf>, state: &str, last: u64| -> String {
        let mut cmd = sandbox.rlctl();
        cmd.args(["status", "--json", "gsm8k-accuracy"])
            .env("RLCTL_SACCT", &sacct);
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
        let out = run(&mut cmd);
        let took: Duration = start.elapsed();
        let (squeue, sacct) = calls(root);
        let rows: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap();
        assert_eq!(rows.len(), logs.len(), "{out}");
        for row in &rows {
            assert_eq!(
                (row["state"].as_str(), row["step"].as_u64()),
                (Some(state), Some(last)),
                "{row}"
            );
        }
        format!(
            "{:>8.1} ms, {squeue} squeue, {sacct} sacct",
            took.as_secs_f64() * 1e3
        )
    };
    let gb = (mb * logs.len() as u64) as f64 / 1e3;
    println!(
        "rlctl status gsm8k-accuracy: {} cells x {mb} MB logs ({gb:.1} GB), {steps} steps each",
        logs.len()
    );
    let mut last = steps;
    println!("  every cell RUNNING:");
    println!(
        "    first call (every log scanned, caches written):  {}",
        status(None, "RUNNING", last)
    );
    for (name, bin) in &bins {
        // Untimed: this binary's own caches of the logs as they are now.
        status(*bin, "RUNNING", last);
        println!(
            "    {name:<6} second call (nothing new):              {}",
            status(*bin, "RUNNING", last)
        );
        last += 1;
        append(last);
        println!(
            "    {name:<6} after one appended step each:           {}",
            status(*bin, "RUNNING", last)
        );
    }
    fs::write(root.join("sbatch-calls/queue"), "").unwrap();
    fs::write(root.join("sbatch-calls/ended"), "").unwrap();
    println!("  every cell ended (COMPLETED), logs unchanged:");
    for (name, bin) in &bins {
        let _ = fs::remove_file(root.join("work/runs/.sealed"));
        println!(
            "    {name:<6} first call (runs sealed):               {}",
            status(*bin, "COMPLETED", last)
        );
        println!(
            "    {name:<6} second call:                            {}",
            status(*bin, "COMPLETED", last)
        );
    }
}
