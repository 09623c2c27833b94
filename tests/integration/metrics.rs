//! The metric-line parser and scanner (`rlctl::runs::metrics`) and the log followed as it grows
//! ([`Tail`], for `watch`), on lines in the exact format SkyRL and the stand-in trainer print;
//! what `rlctl metrics LOG` prints as a table, JSON or CSV, through the binary; and, in
//! [`alerts`], the health alerts and progress.

mod alerts;

use crate::common::recorded_logs;
use crate::common::{Sandbox, ok, rlctl};
use rlctl::runs::metrics::{self, Kind, Series, Step, Tail, scan};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const PREFIX: &str = "\x1b[36m(skyrl_entrypoint pid=1234)\x1b[0m ";

fn step(kind: Kind, n: u64, metrics: &[(&str, f64)]) -> Step {
    Step {
        kind,
        step: n,
        metrics: metrics.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        rounded: false,
    }
}

fn train(n: u64, metrics: &[(&str, f64)]) -> Step {
    step(Kind::Train, n, metrics)
}

fn eval(n: u64, metrics: &[(&str, f64)]) -> Step {
    step(Kind::Eval, n, metrics)
}

/// The step of a log that is this one line, if it is a metric line.
fn parse(line: &str) -> Option<Step> {
    let series = scan(format!("{line}\n").as_bytes()).unwrap();
    assert!(series.len() <= 1, "{line:?}");
    series.train.into_iter().chain(series.eval).next()
}

// ---------------------------------------------------------------------------------------------
// One line

#[test]
fn parses_the_line_skyrl_prints_with_its_colour_codes_and_ray_prefix() {
    let line = format!(
        "{PREFIX}WANDB_MIRROR kind=train step=3 metrics={{\"timing/step\": 9.5, \
         \"timing/generate\": 31.5, \"reward/avg_raw_reward\": 0.35, \"policy/policy_entropy\": \
         0.821223, \"policy/raw_grad_norm\": 0.533333, \"trainer/global_step\": 3}}"
    );
    assert_eq!(
        parse(&line),
        Some(train(
            3,
            &[
                ("timing/step", 9.5),
                ("timing/generate", 31.5),
                ("reward/avg_raw_reward", 0.35),
                ("policy/policy_entropy", 0.821223),
                ("policy/raw_grad_norm", 0.533333),
                ("trainer/global_step", 3.0),
            ]
        ))
    );
}

#[test]
fn parses_eval_lines() {
    let line = format!(
        "{PREFIX}WANDB_MIRROR kind=eval step=20 metrics={{\"eval/all/avg_score\": 0.41, \
         \"eval/all/pass_at_8\": 0.72}}"
    );
    assert_eq!(
        parse(&line),
        Some(eval(
            20,
            &[("eval/all/avg_score", 0.41), ("eval/all/pass_at_8", 0.72)]
        ))
    );
}

#[test]
fn parses_lines_with_other_prefixes_and_colours_or_none() {
    let want = Some(train(7, &[("a", 1.0)]));
    for line in [
        "WANDB_MIRROR kind=train step=7 metrics={\"a\": 1}",
        "(skyrl_entrypoint pid=99, ip=10.6.0.12) WANDB_MIRROR kind=train step=7 metrics={\"a\": 1}",
        // loguru, coloured even when piped, its reset after the object
        "\x1b[32m2026-07-14 09:00:00.000\x1b[0m | \x1b[1mINFO    \x1b[0m | \
         skyrl_train.trainer:_log_metrics_stdout:1951 - \x1b[1mWANDB_MIRROR kind=train step=7 \
         metrics={\"a\": 1}\x1b[0m",
        // a progress bar overwritten with \r, a CRLF ending, an OSC title sequence
        "Processed prompts: 50%|#####\r\x1b]0;title\x07WANDB_MIRROR kind=train step=7 metrics={\"a\": 1}\r",
        // Ray's deduplication note, tabs and several spaces between fields
        "WANDB_MIRROR\tkind=train  step=7 metrics={\"a\": 1} [repeated 2x across cluster]",
    ] {
        assert_eq!(parse(line), want, "{line:?}");
    }
}

#[test]
fn keeps_numeric_values_only() {
    let line = "WANDB_MIRROR kind=train step=1 metrics={\"int\": 3, \"neg\": -2, \"float\": 0.25, \
                \"exp\": 1e-7, \"big\": 18446744073709551615, \"str\": \"0.5\", \"bool\": true, \
                \"null\": null, \"list\": [1, 2], \"obj\": {\"x\": 1}, \"nan_text\": \"NaN\"}";
    assert_eq!(
        parse(line),
        Some(train(
            1,
            &[
                ("int", 3.0),
                ("neg", -2.0),
                ("float", 0.25),
                ("exp", 1e-7),
                ("big", 18446744073709551615.0),
            ]
        ))
    );
}

#[test]
fn reads_python_non_finite_floats() {
    // json.dumps writes these for float('nan') and float('inf'); they are not JSON.
    let line = "WANDB_MIRROR kind=train step=4 metrics={\"policy/raw_grad_norm\": NaN, \
                \"a\": Infinity, \"b\": -Infinity, \"note\": \"NaN Infinity\", \"c\": 1.5}";
    let step = parse(line).unwrap();
    assert!(step.get("policy/raw_grad_norm").unwrap().is_nan());
    assert_eq!(step.get("a"), Some(f64::INFINITY));
    assert_eq!(step.get("b"), Some(f64::NEG_INFINITY));
    assert_eq!(step.get("c"), Some(1.5));
    assert_eq!(step.get("note"), None);
    assert_eq!(step.metrics.len(), 4);
}

#[test]
fn noise_that_mentions_the_marker_is_not_a_metric_line() {
    for line in [
        "export WANDB_MIRROR=1",
        "INFO trainer: metrics go to stdout as WANDB_MIRROR lines (logger=console)",
        "    print(f\"WANDB_MIRROR kind={kind} step={step} metrics={json.dumps(metrics)}\")",
        "WANDB_MIRROR kind=train step=abc metrics={\"a\": 1}",
        "WANDB_MIRROR kind=train step= metrics={\"a\": 1}",
        "WANDB_MIRROR kind=train step=-1 metrics={\"a\": 1}",
        "WANDB_MIRROR kind=train step=99999999999999999999999 metrics={\"a\": 1}",
        "WANDB_MIRROR kind=rollout step=1 metrics={\"a\": 1}",
        "WANDB_MIRROR kind=trainer step=1 metrics={\"a\": 1}",
        "WANDB_MIRROR kind=train step=1 metrics=[1, 2]",
        "WANDB_MIRROR kind=train step=1 metrics=",
        "WANDB_MIRROR kind=train step=1",
        "WANDB_MIRRORkind=train step=1 metrics={\"a\": 1}",
        "NOT_WANDB_MIRROR kind=train step=1 metrics={\"a\": 1}",
        "WANDB_MIRROR kind=train step=1 metrics={\"a\": 1} and then some",
        "WANDB_MIRROR kind=train step=1 metrics={\"a\": 1}{\"b\": 2}",
        // cut short: a running job's last line, or two processes' output interleaved
        "WANDB_MIRROR kind=train step=1 metrics={\"a\": 1, \"b\": 0.",
        "WANDB_MIRROR kind=train step=1 metrics={\"a\": 1, (raylet) worker died\"b\": 2}",
        "WANDB_MIRROR kind=train step=1 metrics={\"a\": Nan}",
        "",
    ] {
        assert_eq!(parse(line), None, "{line:?}");
    }
}

#[test]
fn the_stand_in_trainers_output_parses() {
    // Runs the stand-in exactly as the run script does and reads its stdout.
    let skyrl = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/standin/MarinSkyRL/skyrl-train");
    let dir = tempfile::tempdir().unwrap();
    let ckpt = dir.path().join("ckpt");
    let out = Command::new("python3")
        .args(["-m", "skyrl_train.entrypoints.main_base"])
        .arg("trainer.resume_mode=null")
        .arg(format!("trainer.ckpt_path={}", ckpt.display()))
        .arg(format!(
            "trainer.export_path={}",
            dir.path().join("export").display()
        ))
        .arg("trainer.policy.model.path=Qwen/Qwen2.5-1.5B-Instruct")
        .arg("data.train_data=['/data/train.parquet']")
        .arg("trainer.max_steps=5")
        .current_dir(&skyrl)
        .env("PYTHONPATH", &skyrl)
        .env("HOME", dir.path())
        .env("HF_HUB_OFFLINE", "1")
        .env("TRANSFORMERS_OFFLINE", "1")
        .env("WANDB_MODE", "offline")
        .env_remove("RAY_ADDRESS")
        .env_remove("RLCTL_STANDIN_EXIT")
        .env_remove("RLCTL_STANDIN_STEP_SECONDS")
        .output()
        .expect("python3 runs the stand-in");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.contains(&0x1b), "the stand-in colours its lines");
    let series = scan(&out.stdout[..]).unwrap();
    assert_eq!(
        series.train.iter().map(|s| s.step).collect::<Vec<_>>(),
        [1, 2, 3, 4, 5]
    );
    assert!(series.eval.is_empty());
    // Each step holds what the stand-in's metrics_for(step) returns, as Python reads it back.
    for step in &series.train {
        let code = format!(
            "import json; from skyrl_train.entrypoints.main_base import metrics_for; \
             print(json.dumps(metrics_for({})))",
            step.step
        );
        let out = Command::new("python3")
            .args(["-c", &code])
            .env("PYTHONPATH", &skyrl)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let want: BTreeMap<String, f64> = serde_json::from_slice(&out.stdout).unwrap();
        let got: BTreeMap<String, f64> = (step.metrics.iter())
            .map(|(k, v)| (k.to_owned(), v))
            .collect();
        assert_eq!(got, want, "step {}", step.step);
        assert!(want.contains_key("policy/policy_entropy"));
    }
}

// ---------------------------------------------------------------------------------------------
// scan

/// A log as a running job writes it: vLLM and Ray noise, a step printed twice (the first copy
/// with other values: a resumed slot trained it again), a first copy that is cut short and
/// printed again whole, an eval line, noise mentioning the marker, and a last line without its
/// newline.
fn small_log() -> String {
    let mut log = String::new();
    let noise = [
        "\x1b[36m(AsyncVLLMInferenceEngine pid=2211)\x1b[0m INFO 11-30 10:23:45 [metrics.py:455] \
         Avg prompt throughput: 1234.5 tokens/s, Avg generation throughput: 4567.8 tokens/s",
        "\x1b[33m(raylet)\x1b[0m [2026-11-30 10:23:45,123 I 1234 5678] worker_pool.cc:512: \
         Started worker process with pid 9876",
        "Processed prompts: 100%|██████████| 256/256 [00:12<00:00, 20.1it/s]",
        "",
        "INFO trainer: metrics go to stdout as WANDB_MIRROR lines",
    ];
    let metric = |kind: &str, n: u64, body: &str| {
        format!("{PREFIX}WANDB_MIRROR kind={kind} step={n} metrics={{{body}}}\n")
    };
    for line in noise {
        log.push_str(line);
        log.push('\n');
    }
    log.push_str(&metric(
        "train",
        1,
        "\"timing/step\": 99.0, \"reward/avg_raw_reward\": 0.99",
    ));
    log.push_str(noise[0]);
    log.push('\n');
    log.push_str(&metric(
        "train",
        1,
        "\"timing/step\": 40.5, \"reward/avg_raw_reward\": 0.25",
    ));
    // step 2's first copy was cut by another process's output
    log.push_str(&format!(
        "{PREFIX}WANDB_MIRROR kind=train step=2 metrics={{\"timing/step\": 41{}\n",
        noise[1]
    ));
    log.push_str(&metric(
        "train",
        2,
        "\"timing/step\": 41.0, \"reward/avg_raw_reward\": 0.5",
    ));
    log.push_str(&metric("eval", 2, "\"eval/all/pass_at_8\": 0.0"));
    log.push_str(&metric(
        "eval",
        2,
        "\"eval/all/pass_at_8\": 0.75, \"eval/all/avg_score\": 0.5",
    ));
    for line in noise {
        log.push_str(line);
        log.push('\n');
    }
    log.push_str(&metric(
        "train",
        3,
        "\"timing/step\": 42.0, \"reward/avg_raw_reward\": 0.625",
    ));
    // the last line, still being written
    log.push_str(&format!(
        "{PREFIX}WANDB_MIRROR kind=train step=4 metrics={{\"timing/step\": 43.0}}"
    ));
    log
}

fn small_log_series() -> Series {
    Series {
        train: vec![
            train(1, &[("timing/step", 40.5), ("reward/avg_raw_reward", 0.25)]),
            train(2, &[("timing/step", 41.0), ("reward/avg_raw_reward", 0.5)]),
            train(
                3,
                &[("timing/step", 42.0), ("reward/avg_raw_reward", 0.625)],
            ),
        ],
        eval: vec![eval(
            2,
            &[("eval/all/pass_at_8", 0.75), ("eval/all/avg_score", 0.5)],
        )],
    }
}

#[test]
fn scan_keeps_the_last_valid_line_of_each_step_and_not_the_unfinished_last_line() {
    assert_eq!(scan(small_log().as_bytes()).unwrap(), small_log_series());
}

#[test]
fn scan_parses_the_last_line_once_its_newline_is_written() {
    let log = small_log() + "\n";
    let series = scan(log.as_bytes()).unwrap();
    assert_eq!(series.train.len(), 4);
    assert_eq!(series.train[3], train(4, &[("timing/step", 43.0)]));
}

/// A reader that hands out at most `sizes[i % len]` bytes per read.
struct Trickle<'a> {
    data: &'a [u8],
    sizes: &'a [usize],
    call: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.sizes[self.call % self.sizes.len()]
            .min(buf.len())
            .min(self.data.len());
        self.call += 1;
        if self.call.is_multiple_of(5) && !self.data.is_empty() {
            return Err(io::ErrorKind::Interrupted.into());
        }
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

#[test]
fn scan_finds_the_same_steps_whatever_the_reads_boundaries() {
    let log = small_log().repeat(3);
    let want = scan(log.as_bytes()).unwrap();
    assert_eq!(want, small_log_series(), "repeats are the same steps");
    for sizes in [&[1][..], &[2, 3, 5, 7], &[13], &[64, 1], &[4096]] {
        let reader = Trickle {
            data: log.as_bytes(),
            sizes,
            call: 0,
        };
        assert_eq!(
            metrics::scan_reader_from(reader, 0).unwrap().0,
            want,
            "{sizes:?}"
        );
    }
}

#[test]
fn scan_of_a_log_of_several_chunks_finds_every_step() {
    // ~6 MB: many reads, metric lines across their boundaries.
    let mut log = String::new();
    let mut want = Series::default();
    for n in 1..=3000u64 {
        for i in 0..(n % 13) {
            log.push_str(&format!(
                "\x1b[36m(AsyncVLLMInferenceEngine pid={i})\x1b[0m INFO Avg prompt throughput: \
                 {n}.{i} tokens/s {}\n",
                "x".repeat((n * 7 + i) as usize % 300)
            ));
        }
        let v = n as f64 / 8.0;
        log.push_str(&format!(
            "{PREFIX}WANDB_MIRROR kind=train step={n} metrics={{\"timing/step\": {v}}}\n"
        ));
        want.train.push(train(n, &[("timing/step", v)]));
    }
    assert!(log.len() > 4 << 20);
    assert_eq!(scan(log.as_bytes()).unwrap(), want);
}

#[test]
fn overlong_lines_are_skipped_and_the_rest_is_read() {
    let long = "y".repeat(metrics::MAX_LINE + 10);
    let log = format!(
        "{PREFIX}WANDB_MIRROR kind=train step=1 metrics={{\"a\": 1}}\n\
         {long}\n\
         WANDB_MIRROR kind=train step=2 metrics={{\"a\": 2, \"pad\": \"{long}\"}}\n\
         {PREFIX}WANDB_MIRROR kind=train step=3 metrics={{\"a\": 3}}\n\
         {long}"
    );
    let (series, offset) = metrics::scan_reader_from(log.as_bytes(), 0).unwrap();
    let steps: Vec<u64> = series.train.iter().map(|s| s.step).collect();
    assert_eq!(steps, [1, 3]);
    assert_eq!(offset as usize, log.len() - long.len());
}

// ---------------------------------------------------------------------------------------------
// Tail

#[test]
fn tail_follows_a_growing_log() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job.out");
    let mut tail = Tail::new(&path);
    assert_eq!(
        tail.poll().unwrap(),
        0,
        "a log not written yet has no steps"
    );
    let mut file = std::fs::File::create(&path).unwrap();
    assert_eq!(tail.poll().unwrap(), 0);
    let log = small_log();
    let (a, b) = log.split_at(log.find("step=2").unwrap() + 3);
    file.write_all(a.as_bytes()).unwrap();
    assert_eq!(tail.poll().unwrap(), 1);
    file.write_all(b.as_bytes()).unwrap();
    assert_eq!(tail.poll().unwrap(), 3);
    assert_eq!(tail.series(), &small_log_series());
    assert_eq!(tail.poll().unwrap(), 0, "nothing new");
    file.write_all(b"\n").unwrap();
    assert_eq!(tail.poll().unwrap(), 1);
    assert_eq!(tail.series().last_train_step(), Some(4));
}

#[test]
fn a_tail_loses_and_doubles_no_step_wherever_the_log_is_cut() {
    // Every step of the second half is printed twice, the second copy with other values.
    let log = small_log() + "\n" + &small_log().replace("step=", "step=1");
    let whole = scan(log.as_bytes()).unwrap();
    assert_eq!(whole.len(), 4 + 1 + 4);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job.out");
    for cut in 0..=log.len() {
        // The job has written `cut` bytes; we read them; it writes the rest; we read again.
        std::fs::write(&path, &log.as_bytes()[..cut]).unwrap();
        let mut tail = Tail::new(&path);
        tail.poll().unwrap();
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        file.write_all(&log.as_bytes()[cut..]).unwrap();
        tail.poll().unwrap();
        assert_eq!(tail.series(), &whole, "cut at {cut}");
    }
}

#[test]
fn a_log_that_shrank_is_read_again_from_its_start() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job.out");
    std::fs::write(&path, small_log() + "\n").unwrap();
    let mut tail = Tail::new(&path);
    assert_eq!(tail.poll().unwrap(), 5);
    // Replaced by a shorter log whose step 1 has other values: its steps only.
    let shorter = format!("{PREFIX}WANDB_MIRROR kind=train step=1 metrics={{\"a\": 7}}\n");
    std::fs::write(&path, &shorter).unwrap();
    assert_eq!(tail.poll().unwrap(), 1);
    assert_eq!(tail.series(), &scan(shorter.as_bytes()).unwrap());
    std::fs::remove_file(&path).unwrap();
    assert_eq!(tail.poll().unwrap(), 0);
    assert!(tail.series().is_empty(), "a log gone has no steps");
}

#[test]
fn watch_reads_what_the_log_gains_and_a_replaced_log_from_its_start() {
    let sandbox = Sandbox::new();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    let log = recorded_logs(&sandbox)["gsm8k-canary"].clone();
    let queue = sandbox.root().join("sbatch-calls/queue");
    std::fs::write(&queue, "1001|gsm8k-canary|RUNNING\n").unwrap();
    let line = |n: u64| {
        format!(
            "{PREFIX}WANDB_MIRROR kind=train step={n} metrics={{\"timing/step\": 40.0, \
             \"policy/policy_entropy\": 0.5}}\n"
        )
    };
    let append = |text: &str| {
        let mut file = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
        file.write_all(text.as_bytes()).unwrap();
    };
    std::fs::write(&log, line(1) + &line(2)).unwrap();
    let mut watch = sandbox
        .rlctl()
        .args(["watch", "gsm8k-canary", "--interval", "1"])
        .env("RLCTL_SACCT", "/nonexistent/sacct")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let (lines, frames) = mpsc::channel();
    let out = watch.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in io::BufRead::lines(io::BufReader::new(out)) {
            if lines.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    // The next frame line that says `step n` (of a total or not) and `state`.
    let frame = |n: u64, state: &str| loop {
        let line = (frames.recv_timeout(Duration::from_secs(30)))
            .unwrap_or_else(|e| panic!("no frame at step {n} ({state}): {e}"));
        let at = [format!(" step {n}/"), format!(" step {n},")];
        if at.iter().any(|a| line.contains(a.as_str())) && line.contains(state) {
            return line;
        }
    };
    frame(2, "RUNNING");
    append(&line(3));
    frame(3, "RUNNING");
    // Replaced by a shorter log (the job restarted): its steps only.
    std::fs::write(&log, line(1)).unwrap();
    frame(1, "RUNNING");
    // The job ends: one last frame, and a run without alerts exits 0.
    append(&line(2));
    append("rlctl: job 1001 finished with status 0\n");
    std::fs::write(&queue, "").unwrap();
    frame(2, "COMPLETED");
    assert!(watch.wait().unwrap().success());
}

// ---------------------------------------------------------------------------------------------
// `rlctl metrics LOG`

/// The log a trainer prints for `series`: its steps' metric lines, in order, non-finite values
/// written as Python's `json.dumps` writes them.
fn log_of(series: &Series) -> String {
    let mut log = String::new();
    for step in series.train.iter().chain(&series.eval) {
        let values: Vec<String> = (step.metrics.iter())
            .map(|(key, v)| match v {
                v if v.is_nan() => format!("\"{key}\": NaN"),
                v if v.is_infinite() => {
                    format!("\"{key}\": {}Infinity", if v < 0.0 { "-" } else { "" })
                }
                v => format!("\"{key}\": {v:?}"),
            })
            .collect();
        let _ = writeln!(
            log,
            "{PREFIX}WANDB_MIRROR kind={} step={} metrics={{{}}}",
            step.kind,
            step.step,
            values.join(", ")
        );
    }
    log
}

/// What `rlctl metrics <file holding log> args...` prints; it must succeed.
fn metrics_of(log: &str, args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job.out");
    std::fs::write(&path, log).unwrap();
    let out = rlctl()
        .arg("metrics")
        .arg(&path)
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    String::from_utf8(out.stdout).unwrap()
}

fn output_series() -> Series {
    let t = |n: u64, extra: &[(&str, f64)]| {
        let mut m: Vec<(&str, f64)> = vec![
            ("timing/step", 40.25 + n as f64),
            ("timing/generate", 30.5),
            ("timing/policy_train", 8.125),
            ("timing/sync_weights", 1.5),
            ("reward/avg_raw_reward", 0.25 * n as f64),
            ("reward/avg_pass_at_4", 0.5),
            ("policy/policy_entropy", 0.9 / n as f64),
            ("policy/raw_grad_norm", 0.55),
            ("policy/mismatch/pooled/log_ratio_abs_mean", 0.00012),
            ("policy/mismatch/pooled/log_ratio_max", 3.0),
            ("distill/token_kl_mean", 0.8 / n as f64),
            ("teacher/chosen_logprob_mean", -0.6),
        ];
        m.extend_from_slice(extra);
        train(n, &m)
    };
    Series {
        train: vec![
            t(1, &[]),
            t(2, &[("policy/raw_grad_norm", f64::NAN)]),
            t(3, &[("reward/avg_raw_reward", 0.0000004)]),
        ],
        eval: vec![eval(
            2,
            &[
                ("eval/all/avg_score", 0.4),
                ("eval/all/pass_at_8", 0.7),
                ("eval/gsm8k/pass_at_8", 0.7),
            ],
        )],
    }
}

#[test]
fn table_has_a_column_per_watched_metric_present_and_marks_eval_rows() {
    assert_eq!(
        metrics_of(&log_of(&output_series()), &[]),
        "\
step    s/step  generate  train  sync   reward  pass@4  eval score  eval pass@8  entropy  mismatch/pooled/log_ratio_abs_mean  grad norm  token KL  teacher lp
1         41.2      30.5    8.1   1.5    0.250   0.500           -            -   0.9000                              0.0001      0.550    0.8000      -0.600
2         42.2      30.5    8.1   1.5    0.500   0.500           -            -   0.4500                              0.0001        NaN    0.4000      -0.600
2 eval       -         -      -     -        -       -       0.400        0.700        -                                   -          -         -           -
3         43.2      30.5    8.1   1.5  4.00e-7   0.500           -            -   0.3000                              0.0001      0.550    0.2667      -0.600
"
    );
}

#[test]
fn table_of_a_plain_grpo_run_and_of_nothing() {
    assert_eq!(
        metrics_of(&small_log(), &[]),
        "\
step    s/step  reward  eval score  eval pass@8  entropy
1         40.5   0.250           -            -        -
2         41.0   0.500           -            -        -
2 eval       -       -       0.500        0.750        -
3         42.0   0.625           -            -        -
"
    );
    let none = metrics_of("", &[]);
    assert!(
        none.starts_with("no step lines: neither `WANDB_MIRROR kind=train"),
        "{none}"
    );
    assert!(
        none.contains("nor upstream's console logger records"),
        "{none}"
    );
    assert_eq!(
        metrics_of(
            "INFO trainer: metrics go to stdout as WANDB_MIRROR lines\n",
            &[]
        ),
        none
    );
}

#[test]
fn json_is_one_document_of_both_kinds() {
    let series = Series {
        train: vec![
            train(1, &[("a", 0.5), ("b", f64::NAN)]),
            train(2, &[("a", 1.0)]),
        ],
        eval: vec![eval(2, &[("eval/all/pass_at_8", 0.75)])],
    };
    let json = metrics_of(&log_of(&series), &["--json"]);
    // One line, ended as a line.
    assert_eq!(
        json.strip_suffix('\n').unwrap(),
        r#"{"schema_version":1,"train":[{"kind":"train","step":1,"metrics":{"a":0.5,"b":null}},{"kind":"train","step":2,"metrics":{"a":1.0}}],"eval":[{"kind":"eval","step":2,"metrics":{"eval/all/pass_at_8":0.75}}]}"#
    );
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(value["train"][1]["metrics"]["a"], 1.0);
}

#[test]
fn csv_has_the_union_of_keys_and_a_row_per_step() {
    let series = Series {
        train: vec![
            train(1, &[("timing/step", 40.5), ("b", f64::NAN)]),
            train(
                2,
                &[("timing/step", 41.0), ("tiny", 1e-7), ("odd,key", -3.0)],
            ),
        ],
        eval: vec![eval(1, &[("eval/all/pass_at_8", 0.75)])],
    };
    assert_eq!(
        metrics_of(&log_of(&series), &["--csv"]),
        "\
kind,step,b,eval/all/pass_at_8,\"odd,key\",timing/step,tiny
train,1,NaN,,,40.5,
eval,1,,0.75,,,
train,2,,,-3,41,0.0000001
"
    );
    assert_eq!(metrics_of("", &["--csv"]), "kind,step\n");
}

/// A log written by upstream SkyRL's REAL console logger (the `skyrl` 0.4.0 wheel's `Tracking`
/// with `backend="console"`, through loguru, under Ray's prefix, interleaved with another
/// actor's lines: tests/upstream_console_log.py) gives every step in `rlctl metrics`, each value
/// as the logger wrote it (four decimals), marked rounded.
#[test]
fn upstreams_console_logger_gives_every_step_with_the_values_it_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("job.out");
    let log_arg = log.to_str().unwrap();
    let logged = crate::common::python_oracle(
        "tests/upstream_console_log.py",
        &[log_arg, "12"],
        b"",
        "tests/setup.sh installs the skyrl 0.4.0 wheel and loguru",
    );
    let logged: BTreeMap<String, BTreeMap<String, Option<f64>>> =
        serde_json::from_str(&logged).unwrap();
    let out = ok(rlctl().args(["metrics", log_arg, "--json"]));
    let read: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let train = read["train"].as_array().unwrap();
    assert_eq!(train.len(), 12, "{read}");
    for (step, row) in (1..).zip(train) {
        assert_eq!(row["step"], step);
        assert_eq!(row["rounded"], true, "{row}");
        let want = &logged[&step.to_string()];
        let got = row["metrics"].as_object().unwrap();
        // Numbers only: the list and the nested dict are not metrics.
        assert_eq!(
            got.keys().collect::<Vec<_>>(),
            want.keys().collect::<Vec<_>>(),
            "step {step}"
        );
        for (key, value) in want {
            match value {
                // ConsoleLogger.stringify_floats: f"{v:.4f}"; ints stay ints.
                Some(v) => {
                    let shown: f64 = format!("{v:.4}").parse().unwrap();
                    assert_eq!(got[key].as_f64(), Some(shown), "step {step} {key}");
                }
                None => assert!(got[key].is_null(), "step {step} {key}: NaN"),
            }
        }
    }
    let table = String::from_utf8(ok(rlctl().args(["metrics", log_arg])).stdout).unwrap();
    assert!(
        table.contains(
            "12 step(s) read from upstream's console logger, which rounds every float to 4 decimals"
        ),
        "{table}"
    );
}
