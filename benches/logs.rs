//! What `rlctl logs RUN | head -n 20` costs on a 2 GB log: wall time (median of 7, warm page
//! cache) and the rlctl process's peak RSS (`/usr/bin/time -f %M`, else its `VmHWM` polled
//! from /proc). The log is the synthetic SkyRL log of the metrics bench
//! (benches/common/synthetic_log.rs), generated once into `target/tmp/` and linked in as a
//! recorded run's log; a stand-in squeue answers. Run with `cargo bench --bench logs`; the bench
//! fails above 20 MB or 50 ms. Without `--bench` (`cargo test --benches`) a 4 MiB log is read
//! once, as a smoke test.

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "common/synthetic_log.rs"]
mod synthetic_log;

use common::Sandbox;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const FULL_SIZE: u64 = 2_000_000_000;
const SMOKE_SIZE: u64 = 4 << 20;
const RUNS: usize = 7;
const MAX_RSS_KB: u64 = 20_000;
const MAX_WALL: Duration = Duration::from_millis(50);

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let size = if full { FULL_SIZE } else { SMOKE_SIZE };
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let master = dir.join(format!(
        "logs-synthetic-v{}-{size}.log",
        synthetic_log::VERSION
    ));
    synthetic_log::ensure_log(&master, size);

    let sandbox = Sandbox::new();
    let launched = sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary"])
        .output()
        .unwrap();
    assert!(launched.status.success(), "{launched:?}");
    let ledger = fs::read_to_string(sandbox.root().join("work/runs/ledger.jsonl")).unwrap();
    let record: serde_json::Value = serde_json::from_str(ledger.lines().next().unwrap()).unwrap();
    let log = PathBuf::from(record["log"].as_str().unwrap());
    fs::create_dir_all(log.parent().unwrap()).unwrap();
    // The same bytes without a 2 GB copy.
    fs::hard_link(&master, &log)
        .or_else(|_| std::os::unix::fs::symlink(&master, &log))
        .unwrap();
    // Warm the page cache.
    std::io::copy(&mut fs::File::open(&log).unwrap(), &mut std::io::sink()).unwrap();

    let first_20 = first_lines(&master, 20);
    let mut times = Vec::new();
    let mut peaks = Vec::new();
    for _ in 0..if full { RUNS } else { 1 } {
        let (took, peak, printed) = logs_head(&sandbox);
        assert_eq!(printed, first_20, "rlctl logs | head printed other lines");
        times.push(took);
        peaks.push(peak);
    }
    times.sort();
    let median = times[times.len() / 2];
    let peak = peaks.iter().copied().max().unwrap_or(0);
    if !full {
        println!(
            "logs bench smoke test: `rlctl logs | head -n 20` on a {} MiB log in {:.1} ms, peak \
             RSS {peak} kB (run `cargo bench --bench logs` for the 2 GB measurement)",
            size >> 20,
            median.as_secs_f64() * 1e3
        );
        return;
    }
    println!(
        "rlctl logs gsm8k-canary | head -n 20, on a {:.2} GB log ({}), warm page cache:\n  \
         median of {RUNS}: {:>7.1} ms\n  peak RSS:     {:>7} kB ({:.1} MB)",
        size as f64 / 1e9,
        master.display(),
        median.as_secs_f64() * 1e3,
        peak,
        peak as f64 / 1e3,
    );
    let mut failed = Vec::new();
    if peak >= MAX_RSS_KB {
        failed.push(format!("peak RSS {peak} kB, not under {MAX_RSS_KB} kB"));
    }
    if median >= MAX_WALL {
        failed.push(format!(
            "median {:.1} ms, not under {} ms",
            median.as_secs_f64() * 1e3,
            MAX_WALL.as_millis()
        ));
    }
    if !failed.is_empty() {
        eprintln!("logs bench FAILED: {}", failed.join("; "));
        std::process::exit(1);
    }
}

/// The first `n` lines of `path`, as `head -n` prints them.
fn first_lines(path: &Path, n: usize) -> String {
    let out = Command::new("head")
        .args(["-n", &n.to_string()])
        .arg(path)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// One `rlctl logs gsm8k-canary | head -n 20`: its wall time (to head's end and rlctl's), the
/// rlctl process's peak RSS in kB, and what head printed.
fn logs_head(sandbox: &Sandbox) -> (Duration, u64, String) {
    let time = Path::new("/usr/bin/time");
    let rss_file = tempfile::NamedTempFile::new().unwrap();
    let mut rlctl = sandbox.rlctl();
    let mut cmd = if time.exists() {
        let mut wrapped = Command::new(time);
        wrapped
            .args(["-f", "%M", "-o"])
            .arg(rss_file.path())
            .arg(rlctl.get_program())
            .args(["logs", "gsm8k-canary"]);
        for (k, v) in rlctl.get_envs() {
            match v {
                Some(v) => wrapped.env(k, v),
                None => wrapped.env_remove(k),
            };
        }
        wrapped
    } else {
        rlctl.args(["logs", "gsm8k-canary"]);
        rlctl
    };
    let start = Instant::now();
    let mut logs = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let head = Command::new("head")
        .args(["-n", "20"])
        .stdin(logs.stdout.take().unwrap())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // Without /usr/bin/time, the child is rlctl itself: its high-water mark, while it lives.
    let mut polled = 0;
    if !time.exists() {
        while logs.try_wait().unwrap().is_none() {
            polled = polled.max(vm_hwm(logs.id()).unwrap_or(0));
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    let printed = head.wait_with_output().unwrap();
    let status = logs.wait().unwrap();
    let took = start.elapsed();
    assert!(status.success(), "rlctl logs | head ended with {status}");
    let peak = if time.exists() {
        fs::read_to_string(rss_file.path())
            .unwrap()
            .trim()
            .lines()
            .last()
            .and_then(|l| l.trim().parse().ok())
            .expect("/usr/bin/time wrote the peak RSS")
    } else {
        polled
    };
    (
        took,
        peak,
        String::from_utf8_lossy(&printed.stdout).into_owned(),
    )
}

/// `VmHWM` of a running process, in kB.
fn vm_hwm(pid: u32) -> Option<u64> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
