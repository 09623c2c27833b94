//! What `rlctl status GRID` and `rlctl tend GRID` cost over a ledger of 1,000,000 records
//! (targets: under 5 s and under 200 MB of peak RSS each): the 20 cells of `gsm8k-accuracy`,
//! three submissions each, among 1,000,000 records of 50,000 other, older runs, every record
//! with the ~40 knobs a real one has. Stand-ins answer for squeue (the grid's newest jobs
//! RUNNING) and sacct (every job it is asked about COMPLETED). Wall time is the median of three
//! calls; peak RSS is `/usr/bin/time -f %M`'s (`apt-get install time`).
//!
//! Run with `cargo bench --bench ledger`. `RLCTL_BENCH_RECORDS` sets the ledger's size;
//! `RLCTL_BENCH_BIN` times another rlctl binary (an older build) on the same ledger;
//! `RLCTL_BENCH_TEND=0` leaves `tend` out. The sandbox lives under `target/bench-tmp` (the
//! ledger is about 2.5 GB).

#[path = "../tests/common/mod.rs"]
mod common;

use common::{Sandbox, write_exec};
use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CELLS: usize = 20;
const PER_CELL: usize = 3;
const OTHER_RUNS: usize = 50_000;

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// One call: its wall time, its peak RSS in MB, and its stdout; it must succeed.
fn measure(cmd: Command) -> (Duration, f64, String) {
    let rss = tempfile::NamedTempFile::new().unwrap();
    let program = cmd.get_program().to_owned();
    let args: Vec<OsString> = cmd.get_args().map(|a| a.to_owned()).collect();
    let mut timed = Command::new("/usr/bin/time");
    timed
        .args(["-f", "%M", "-o"])
        .arg(rss.path())
        .arg(program)
        .args(args);
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => timed.env(k, v),
            None => timed.env_remove(k),
        };
    }
    let start = Instant::now();
    let out = timed.stderr(Stdio::piped()).output().unwrap();
    let took = start.elapsed();
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

/// The median wall time and the largest peak RSS of three calls (after one to warm up).
fn bench(make: impl Fn() -> Command, check: impl Fn(&str)) -> (Duration, f64) {
    let (_, _, out) = measure(make());
    check(&out);
    let mut runs: Vec<(Duration, f64)> = (0..3)
        .map(|_| {
            let (t, rss, _) = measure(make());
            (t, rss)
        })
        .collect();
    let rss = runs.iter().map(|r| r.1).fold(0.0, f64::max);
    runs.sort_by_key(|r| r.0);
    (runs[1].0, rss)
}

fn main() {
    let records: usize = env_or("RLCTL_BENCH_RECORDS", 1_000_000);
    let tmp = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench-tmp");
    fs::create_dir_all(&tmp).unwrap();
    // SAFETY: set before any other thread starts; the sandbox's temp dir goes under target/.
    #[expect(unsafe_code)]
    unsafe {
        std::env::set_var("TMPDIR", &tmp)
    };
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

    // Other runs' records: a cell's record under other names, padded to 40 knobs.
    let mut other = cells[0].clone();
    let knobs = other["knobs"].as_object_mut().unwrap();
    for i in knobs.len()..40 {
        knobs.insert(format!("trainer.extra_{i}"), format!("{i}.5e-3").into());
    }
    for (key, value) in [
        ("job_id", "@ID@"),
        ("target", "old-@G@/c@C@"),
        ("group", "old-@G@"),
        ("member", "c@C@"),
        ("grid", "old-@G@"),
        ("job_name", "c@C@"),
        ("log", "/scratch/runs/old-@G@/c@C@/001/c@C@_@ID@.out"),
    ] {
        other[key] = value.into();
    }
    // Its folders, log and sbatch arguments too: nothing of it names the grid.
    let template = serde_json::to_string(&other)
        .unwrap()
        .replace("gsm8k-accuracy", "old-@G@");
    let mut out = BufWriter::with_capacity(1 << 20, File::create(&path).unwrap());
    let grid_at = |i: usize| i.is_multiple_of(records / (PER_CELL + 1)) && i > 0;
    let (mut job, mut written) = (5_000_000u64, 0usize);
    let mut queue = String::new();
    let mut pass = 0;
    for i in 0..records - CELLS * PER_CELL {
        if grid_at(i) && pass < PER_CELL {
            // One submission of every cell, a third of the way further each time.
            pass += 1;
            for cell in &cells {
                let mut r = cell.clone();
                job += 1;
                r["job_id"] = job.to_string().into();
                if pass == PER_CELL {
                    queue.push_str(&format!("{job}|{}|RUNNING|normal\n", r["job_name"]));
                }
                writeln!(out, "{}", serde_json::to_string(&r).unwrap()).unwrap();
                written += 1;
            }
        }
        job += 1;
        let run = i % OTHER_RUNS;
        let line = (template.replace("@ID@", &job.to_string()))
            .replace("@G@", &(run / 20).to_string())
            .replace("@C@", &(run % 20).to_string());
        writeln!(out, "{line}").unwrap();
        written += 1;
    }
    out.flush().unwrap();
    drop(out);
    let queue = queue.replace('"', "");
    fs::write(root.join("sbatch-calls/queue"), queue).unwrap();
    let sacct = root.join("bin/sacct-completed");
    write_exec(
        &sacct,
        "#!/bin/bash\nwhile [ $# -gt 0 ]; do [ \"$1\" = -j ] && l=$2; shift; done\n\
         tr ',' '\\n' <<< \"$l\" | sed 's/$/|COMPLETED|0:0|60|node=1/'\n",
    );
    let size = fs::metadata(&path).unwrap().len();
    // Read once, so every call finds the ledger in the page cache.
    std::io::copy(&mut File::open(&path).unwrap(), &mut std::io::sink()).unwrap();

    let bin = std::env::var_os("RLCTL_BENCH_BIN");
    let rlctl = |args: &[&str]| {
        let mut cmd = sandbox.rlctl();
        cmd.args(args).env("RLCTL_SACCT", &sacct);
        match &bin {
            Some(bin) => {
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
            None => cmd,
        }
    };
    println!(
        "ledger: {written} records ({:.2} GB), {CELLS} cells x {PER_CELL} of gsm8k-accuracy; binary {}",
        size as f64 / 1e9,
        bin.as_ref()
            .map_or("of this build".into(), |b| b.to_string_lossy().into_owned())
    );
    let (wall, rss) = bench(
        || rlctl(&["status", "--json", "gsm8k-accuracy"]),
        |out| {
            let rows: Vec<serde_json::Value> = serde_json::from_str(out).unwrap();
            assert_eq!(rows.len(), CELLS, "{out}");
            assert!(rows.iter().all(|r| r["state"] == "RUNNING"), "{out}");
        },
    );
    println!(
        "  rlctl status gsm8k-accuracy: {:>8.1} ms, peak RSS {rss:>7.1} MB",
        wall.as_secs_f64() * 1e3
    );
    if env_or("RLCTL_BENCH_TEND", 1) != 0 {
        // Every cell is RUNNING with no log yet: a pass that has nothing to do.
        let (wall, rss) = bench(|| rlctl(&["tend", "gsm8k-accuracy"]), |_| {});
        println!(
            "  rlctl tend gsm8k-accuracy:   {:>8.1} ms, peak RSS {rss:>7.1} MB",
            wall.as_secs_f64() * 1e3
        );
    }
}
