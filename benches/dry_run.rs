//! Wall time of the commands a user waits on, next to `/bin/true` (the cost of starting any
//! process). Run with `cargo bench --bench dry_run`; it prints a table of medians.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RUNS: usize = 200;

fn median_of(runs: usize, mut once: impl FnMut()) -> Duration {
    once(); // warm the page cache
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

fn run(program: &str, args: &[&str]) {
    let status = Command::new(program)
        .args(args)
        .env_remove("RLCTL_CLUSTER")
        .env_remove("RLCTL_PRESETS")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "{program} {args:?} failed");
}

fn main() {
    let rlctl = env!("CARGO_BIN_EXE_rlctl");
    let library = rlctl::preset::Library::load(None).unwrap();
    let cells: Vec<String> = library
        .grid_names()
        .flat_map(|g| {
            let grid = library.grid(g).unwrap();
            grid.cells
                .iter()
                .map(move |c| format!("{g}/{}", c.name))
                .collect::<Vec<_>>()
        })
        .collect();
    let grids: Vec<&str> = library.grid_names().collect();

    let rows = [
        ("/bin/true", median_of(RUNS, || run("/bin/true", &[]))),
        (
            "rlctl --version",
            median_of(RUNS, || run(rlctl, &["--version"])),
        ),
        (
            "rlctl show gsm8k-canary",
            median_of(RUNS, || run(rlctl, &["show", "gsm8k-canary"])),
        ),
        (
            "rlctl launch gsm8k-canary --dry-run",
            median_of(RUNS, || {
                run(rlctl, &["launch", "gsm8k-canary", "--dry-run"])
            }),
        ),
        (
            "rlctl grid --all GRID --dry-run, every grid",
            median_of(RUNS / 4, || {
                for grid in &grids {
                    run(rlctl, &["grid", "--all", grid, "--dry-run"]);
                }
            }),
        ),
        (
            "rlctl grid CELL --dry-run, each cell of every grid",
            median_of(RUNS / 10, || {
                for cell in &cells {
                    run(rlctl, &["grid", cell, "--dry-run"]);
                }
            }),
        ),
    ];
    println!("{:<52} {:>12}", "command", "median");
    for (name, time) in rows {
        println!("{name:<52} {:>9.2} ms", time.as_secs_f64() * 1e3);
    }
    println!("({} cells; {RUNS} runs of single commands)", cells.len());
}
