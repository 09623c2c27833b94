//! What `rlctl status` of a grid costs in log reading, first and second call: 19 cells, each
//! with a 300 MB SkyRL-like log (one metric line in 200, the rest vLLM/Ray noise). The first
//! call scans every log and leaves its cache next to it; the second reads only what the logs
//! gained (here, one appended step each). Run with `cargo bench --bench status`; without
//! `--bench` the logs are 3 MB (a smoke test).

use camino::Utf8PathBuf;
use rlctl::runs::read_series;
use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::time::Instant;

const CELLS: usize = 19;

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

fn write_log(path: &std::path::Path, size: u64) -> u64 {
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

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let size: u64 = if full { 300_000_000 } else { 3_000_000 };
    let root = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("status-bench");
    let _ = fs::remove_dir_all(&root);
    fs::create_dir_all(&root).unwrap();
    let master = root.join("master.log");
    let steps = write_log(&master, size);
    let logs: Vec<Utf8PathBuf> = (0..CELLS)
        .map(|i| {
            let dir = root.join(format!("cell{i:02}/001"));
            fs::create_dir_all(&dir).unwrap();
            let log = dir.join(format!("cell{i:02}_{}.out", 1000 + i));
            fs::copy(&master, &log).unwrap();
            Utf8PathBuf::from_path_buf(log).unwrap()
        })
        .collect();
    fs::remove_file(&master).unwrap();
    let read_all = || -> f64 {
        let start = Instant::now();
        for log in &logs {
            let series = read_series(log).unwrap();
            assert!(series.train.len() as u64 >= steps);
        }
        start.elapsed().as_secs_f64()
    };
    let gb = (size * CELLS as u64) as f64 / 1e9;
    let first = read_all();
    let second = read_all();
    for log in &logs {
        let mut f = fs::OpenOptions::new().append(true).open(log).unwrap();
        f.write_all(metric_line(steps + 1).as_bytes()).unwrap();
    }
    let grown = read_all();
    println!(
        "status bench: {CELLS} logs x {} MB ({gb:.1} GB), {steps} steps each\n  first call (scan, cache written): {first:.3} s ({:.2} GB/s)\n  second call (cache hit):          {second:.4} s\n  after one appended step each:      {grown:.4} s",
        size / 1_000_000,
        gb / first
    );
    fs::remove_dir_all(&root).unwrap();
}
