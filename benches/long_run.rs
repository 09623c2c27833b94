//! What `rlctl status RUN` costs for one run of 50,000 recorded jobs (as `tend` resubmits a run
//! that keeps failing), each job with its own small log of two train steps: peak RSS (the
//! target: bounded by what is shown, not by the run's length) and wall time, cold (no log
//! caches), warm (the ended run sealed) and running (the newest job in the queue: unsealed, every
//! log read again through its cache). Stand-ins: squeue empty (then holding the newest job),
//! sacct says every job it is asked of COMPLETED.
//!
//! Run with `cargo bench --bench long_run`. `RLCTL_BENCH_JOBS` sets the run's length;
//! `RLCTL_BENCH_BIN` measures another rlctl binary (an older build) on the same run;
//! `RLCTL_BENCH_KEEP=1` keeps the sandbox (for a profiler). Peak RSS is `/usr/bin/time -f %M`'s.

#[path = "../tests/common/mod.rs"]
mod common;

use common::{Sandbox, write_exec};
use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// One call of `cmd` under `/usr/bin/time`: its wall seconds, peak RSS in MB and stdout.
fn measure(cmd: &Command) -> (f64, f64, String) {
    let rss = tempfile::NamedTempFile::new().unwrap();
    let mut timed = Command::new("/usr/bin/time");
    timed.args(["-f", "%M", "-o"]).arg(rss.path());
    timed.arg(cmd.get_program()).args(cmd.get_args());
    for (k, v) in cmd.get_envs() {
        if let Some(v) = v {
            timed.env(k, v);
        }
    }
    let start = Instant::now();
    let out = timed.stderr(Stdio::piped()).output().unwrap();
    let took = start.elapsed().as_secs_f64();
    assert!(
        out.status.success(),
        "{timed:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let kb: f64 = (fs::read_to_string(rss.path()).unwrap().lines())
        .filter_map(|l| l.trim().parse().ok())
        .next_back()
        .expect("/usr/bin/time wrote the peak RSS");
    (took, kb / 1024.0, String::from_utf8(out.stdout).unwrap())
}

fn metric_line(step: u64) -> String {
    format!(
        "(skyrl_entrypoint pid=4242) WANDB_MIRROR kind=train step={step} metrics={{\
         \"timing/step\": 41.5, \"policy/entropy\": 0.5, \"reward/avg_raw_reward\": 0.25}}\n"
    )
}

fn main() {
    let jobs: usize = env_or("RLCTL_BENCH_JOBS", 50_000);
    let sandbox = Sandbox::new();
    let root = sandbox.root();
    if std::env::var_os("RLCTL_BENCH_KEEP").is_some() {
        println!("sandbox kept at {}", root.display());
    }
    let out = sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--job-name", "long"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let path = root.join("work/runs/ledger.jsonl");
    let first: serde_json::Value =
        serde_json::from_str(fs::read_to_string(&path).unwrap().lines().next().unwrap()).unwrap();
    let run_dir = PathBuf::from(first["run_dir"].as_str().unwrap());
    let mut ledger = BufWriter::new(File::create(&path).unwrap());
    for i in 0..jobs {
        let id = 40_000_000 + i;
        let log = run_dir.join(format!("long_{id}.out"));
        let mut text = String::new();
        for step in [2 * i as u64 + 1, 2 * i as u64 + 2] {
            text.push_str(&metric_line(step));
        }
        fs::write(&log, text).unwrap();
        let mut r = first.clone();
        r["job_id"] = id.to_string().into();
        r["log"] = log.to_str().unwrap().into();
        r["attempt"] = (i + 1).into();
        serde_json::to_writer(&mut ledger, &r).unwrap();
        ledger.write_all(b"\n").unwrap();
    }
    ledger.flush().unwrap();
    write_exec(
        &root.join("bin/sacct"),
        "#!/bin/bash\nwhile [ $# -gt 0 ]; do [ \"$1\" = -j ] && list=$2; shift; done\n\
         tr ',' '\\n' <<< \"$list\" | sed 's/$/|COMPLETED|0:0|60|node=1/'\n",
    );
    let mut cmd = sandbox.rlctl();
    if let Ok(bin) = std::env::var("RLCTL_BENCH_BIN") {
        let mut other = Command::new(bin);
        for (k, v) in cmd.get_envs() {
            if let Some(v) = v {
                other.env(k, v);
            }
        }
        cmd = other;
    }
    cmd.args(["status", "gsm8k-canary/long", "--json"]);
    let newest = 40_000_000 + jobs - 1;
    for pass in ["cold", "warm", "running"] {
        if pass == "running" {
            // Held by the queue: the run is not sealed, and every log is read (through its cache).
            sandbox.queue(&format!("{newest}|long|RUNNING|normal|None\n"));
        }
        let (secs, mb, out) = measure(&cmd);
        let rows: serde_json::Value = serde_json::from_str(&out).unwrap();
        println!(
            "status of a run of {jobs} jobs, {pass}: {secs:.1} s, peak RSS {mb:.0} MB; step {}, attempt {}",
            rows[0]["step"], rows[0]["attempt"]
        );
    }
    if std::env::var_os("RLCTL_BENCH_KEEP").is_some() {
        let _ = sandbox.dir.keep();
    }
}
