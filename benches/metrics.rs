//! Throughput of `rlctl::runs::metrics::scan` on a synthetic 1 GiB SkyRL job log, next to
//! `grep -c WANDB_MIRROR` on the same file. Run with `cargo bench --bench metrics`.
//!
//! The log is generated once (deterministically) into `target/tmp/` and reused: one line in 200
//! is a `WANDB_MIRROR` metric line (a train step with SkyRL's ~40 metrics, an eval step every 10
//! steps, 1% of them printed twice); the rest is vLLM / Ray / tqdm / Python-warning noise of
//! varied length with ANSI colour codes and Ray's `(name pid=N)` prefixes, a few lines that
//! mention `WANDB_MIRROR` without being metric lines, and the last line cut short without its
//! newline. The page cache is warmed first, then each of scan and grep runs several times; the
//! medians are printed in GB/s (1 GB = 10^9 bytes) with their ratio, and the bench fails if scan
//! is below 1 GB/s or more than 2x slower than grep.
//!
//! Other modes: without `--bench` (e.g. `cargo test --benches`) a 4 MiB log is scanned once, as
//! a smoke test; `--scan-once PATH` scans one file once and prints what it found (for measuring
//! the scanner's peak memory with `/usr/bin/time -v`).

#[path = "common/synthetic_log.rs"]
mod synthetic_log;

use rlctl::runs::metrics::scan;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use synthetic_log::{ensure_log, step_time};

const FULL_SIZE: u64 = 1 << 30;
const SMOKE_SIZE: u64 = 4 << 20;
const RUNS: usize = 7;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(i) = args.iter().position(|a| a == "--scan-once") {
        let path = args.get(i + 1).expect("--scan-once PATH");
        let start = Instant::now();
        let series = scan(File::open(path).unwrap()).unwrap();
        println!(
            "{path}: {} train + {} eval steps in {:.3} s",
            series.train.len(),
            series.eval.len(),
            start.elapsed().as_secs_f64()
        );
        return;
    }
    let full = args.iter().any(|a| a == "--bench");
    if full {
        console_bench();
    }
    let size = if full { FULL_SIZE } else { SMOKE_SIZE };
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let path = dir.join(format!(
        "metrics-synthetic-v{}-{size}.log",
        synthetic_log::VERSION
    ));
    let expected = ensure_log(&path, size);

    // Warm the page cache, and check what scan finds.
    let series = scan(File::open(&path).unwrap()).unwrap();
    assert_eq!(
        (series.train.len() as u64, series.eval.len() as u64),
        (expected.train, expected.eval),
        "scan found other steps than the generator wrote"
    );
    let last = series.train.last().unwrap();
    assert_eq!(last.get("timing/step"), Some(step_time(last.step)));
    assert!(
        series
            .eval
            .iter()
            .all(|s| s.get("eval/all/pass_at_8").is_some())
    );
    let grep_count = grep(&path);
    assert_eq!(
        grep_count, expected.marker_lines,
        "grep -c counted other lines"
    );
    if !full {
        println!(
            "metrics bench smoke test: {} train + {} eval steps in a {} MiB log (run `cargo bench \
             --bench metrics` for the 1 GiB measurement)",
            series.train.len(),
            series.eval.len(),
            size >> 20
        );
        return;
    }

    // The series scan returns is dropped outside the time taken.
    let scan_time = median_of(RUNS, || {
        let s = scan(File::open(&path).unwrap()).unwrap();
        assert_eq!(s.train.len() as u64, expected.train);
        s
    });
    let grep_time = median_of(RUNS, || {
        assert_eq!(grep(&path), expected.marker_lines);
    });
    let gbps = |d: Duration| size as f64 / d.as_secs_f64() / 1e9;
    let ratio = scan_time.as_secs_f64() / grep_time.as_secs_f64();
    println!(
        "synthetic log: {} ({:.2} GB, {} lines, {} WANDB_MIRROR lines: {} train + {} eval steps, \
         {} repeats, {} noise)",
        path.display(),
        size as f64 / 1e9,
        expected.lines,
        expected.marker_lines,
        expected.train,
        expected.eval,
        expected.repeats,
        expected.marker_lines - expected.train - expected.eval - expected.repeats,
    );
    println!("median of {RUNS} runs, warm page cache:");
    println!(
        "  metrics::scan             {:>8.1} ms  {:>6.2} GB/s",
        ms(scan_time),
        gbps(scan_time)
    );
    println!(
        "  LC_ALL=C grep -c WANDB_MIRROR {:>4.1} ms  {:>6.2} GB/s",
        ms(grep_time),
        gbps(grep_time)
    );
    println!("  scan time / grep time     {ratio:>8.2}");
    let mut failed = Vec::new();
    if gbps(scan_time) < 1.0 {
        failed.push(format!(
            "scan ran at {:.2} GB/s, below 1 GB/s",
            gbps(scan_time)
        ));
    }
    if ratio > 2.0 {
        failed.push(format!("scan took {ratio:.2}x grep's time, more than 2x"));
    }
    if !failed.is_empty() {
        eprintln!("metrics bench FAILED: {}", failed.join("; "));
        std::process::exit(1);
    }
}

/// Upstream SkyRL's console logger records (tests/upstream_console_log.py: the `skyrl` 0.4.0
/// wheel's real `Tracking`, under Ray's prefix, a line of another actor after each step): how
/// fast `scan` reads a log of them, in MB/s and steps/s. Skipped, said, without the wheel.
fn console_bench() {
    const STEPS: u64 = 20_000;
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("console-{STEPS}.log"));
    if !path.exists() {
        let made = Command::new("python3")
            .arg(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/upstream_console_log.py"
            ))
            .arg(&path)
            .arg(STEPS.to_string())
            .stdout(std::process::Stdio::null())
            .status();
        if !made.is_ok_and(|s| s.success()) {
            let _ = std::fs::remove_file(&path);
            println!("upstream console log: skipped (tests/setup.sh installs the skyrl wheel)");
            return;
        }
    }
    let size = std::fs::metadata(&path).unwrap().len();
    let time = median_of(RUNS, || {
        let s = scan(File::open(&path).unwrap()).unwrap();
        assert_eq!(s.train.len() as u64, STEPS);
        s
    });
    println!(
        "upstream console log: {} ({:.1} MB, {STEPS} steps of the real ConsoleLogger)",
        path.display(),
        size as f64 / 1e6
    );
    println!(
        "  metrics::scan             {:>8.1} ms  {:>6.0} MB/s  {:>8.0} steps/s",
        ms(time),
        size as f64 / time.as_secs_f64() / 1e6,
        STEPS as f64 / time.as_secs_f64()
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The median wall time of `runs` calls of `once`; what it returns is dropped after its time is
/// taken.
fn median_of<T>(runs: usize, mut once: impl FnMut() -> T) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            let result = once();
            let elapsed = start.elapsed();
            drop(result);
            elapsed
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

/// `grep -c WANDB_MIRROR` in the C locale (its fastest).
fn grep(path: &Path) -> u64 {
    let out = Command::new("grep")
        .args(["-c", "WANDB_MIRROR"])
        .arg(path)
        .env("LC_ALL", "C")
        .output()
        .expect("grep runs");
    assert!(out.status.success(), "grep failed: {out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}
