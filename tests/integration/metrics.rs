//! The metric-line parser and scanner (`rlctl::runs::metrics`), the health alerts and progress
//! (`rlctl::runs::alerts`), and the table / JSON / CSV outputs, on lines in the exact format SkyRL and
//! the stand-in trainer print.

use rlctl::runs::alerts::{self, AlertKind, Progress, Thresholds, alerts, progress};
use rlctl::runs::metrics::{self, Kind, Series, Step, Tail, parse_line, scan, scan_from};
use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::path::Path;
use std::process::Command;

const PREFIX: &str = "\x1b[36m(skyrl_entrypoint pid=1234)\x1b[0m ";

fn step(kind: Kind, n: u64, metrics: &[(&str, f64)]) -> Step {
    Step {
        kind,
        step: n,
        metrics: metrics.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
    }
}

fn train(n: u64, metrics: &[(&str, f64)]) -> Step {
    step(Kind::Train, n, metrics)
}

fn eval(n: u64, metrics: &[(&str, f64)]) -> Step {
    step(Kind::Eval, n, metrics)
}

fn parse(line: &str) -> Option<Step> {
    parse_line(line.as_bytes())
}

// ---------------------------------------------------------------------------------------------
// parse_line

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
        assert_eq!(step.metrics, want, "step {}", step.step);
        assert!(want.contains_key("policy/policy_entropy"));
    }
}

// ---------------------------------------------------------------------------------------------
// scan

/// A log as a running job writes it: vLLM and Ray noise, a step printed twice (the second copy
/// with other values), a first copy that is cut short and printed again whole, an eval line,
/// noise mentioning the marker, and a last line without its newline.
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
        "\"timing/step\": 40.5, \"reward/avg_raw_reward\": 0.25",
    ));
    log.push_str(noise[0]);
    log.push('\n');
    log.push_str(&metric(
        "train",
        1,
        "\"timing/step\": 99.0, \"reward/avg_raw_reward\": 0.99",
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
    log.push_str(&metric(
        "eval",
        2,
        "\"eval/all/pass_at_8\": 0.75, \"eval/all/avg_score\": 0.5",
    ));
    log.push_str(&metric("eval", 2, "\"eval/all/pass_at_8\": 0.0"));
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
fn scan_keeps_the_first_valid_line_of_each_step_and_not_the_unfinished_last_line() {
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
    assert_eq!(want.train.len(), 3, "repeats are the same steps");
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

#[test]
fn scan_from_returns_the_offset_after_the_last_complete_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job.out");
    let log = small_log();
    std::fs::write(&path, &log).unwrap();
    let (series, offset) = scan_from(&path, 0).unwrap();
    assert_eq!(series, small_log_series());
    assert_eq!(offset as usize, log.rfind('\n').unwrap() + 1);
    // Nothing new: nothing found, the same offset.
    assert_eq!(
        scan_from(&path, offset).unwrap(),
        (Series::default(), offset)
    );
}

#[test]
fn resuming_from_the_returned_offset_loses_and_doubles_no_step_wherever_the_log_is_cut() {
    let log = small_log() + "\n" + &small_log().replace("step=", "step=1");
    let whole = scan(log.as_bytes()).unwrap();
    assert_eq!(whole.len(), 4 + 1 + 4);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job.out");
    for cut in 0..=log.len() {
        // The job has written `cut` bytes; we read them; it writes the rest; we read again.
        std::fs::write(&path, &log.as_bytes()[..cut]).unwrap();
        let (mut series, offset) = scan_from(&path, 0).unwrap();
        assert!(offset as usize <= cut);
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        file.write_all(&log.as_bytes()[cut..]).unwrap();
        let (newer, end) = scan_from(&path, offset).unwrap();
        series.merge(newer);
        assert_eq!(series, whole, "cut at {cut}");
        assert_eq!(end as usize, log.rfind('\n').unwrap() + 1);
    }
}

#[test]
fn tail_follows_a_growing_log() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job.out");
    let mut tail = Tail::new(&path);
    assert_eq!(tail.poll().unwrap_err().kind(), io::ErrorKind::NotFound);
    let mut file = std::fs::File::create(&path).unwrap();
    assert_eq!(tail.poll().unwrap(), 0);
    let log = small_log();
    let (a, b) = log.split_at(log.find("step=2").unwrap() + 3);
    file.write_all(a.as_bytes()).unwrap();
    assert_eq!(tail.poll().unwrap(), 1);
    file.write_all(b.as_bytes()).unwrap();
    assert_eq!(tail.poll().unwrap(), 3);
    assert_eq!(tail.series(), &small_log_series());
    file.write_all(b"\n").unwrap();
    assert_eq!(tail.poll().unwrap(), 1);
    assert_eq!(tail.series().last_train_step(), Some(4));
    assert_eq!(tail.offset(), log.len() as u64 + 1);
}

#[test]
fn scan_from_an_offset_past_the_end_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job.out");
    std::fs::write(&path, "short\n").unwrap();
    let err = scan_from(&path, 100).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    assert!(
        err.to_string()
            .contains("6 bytes long, shorter than the offset 100"),
        "{err}"
    );
}

#[test]
fn merge_adds_only_steps_not_there_yet() {
    let mut series = small_log_series();
    let newer = Series {
        train: vec![
            train(3, &[("timing/step", 1.0)]),
            train(4, &[("timing/step", 44.0)]),
        ],
        eval: vec![eval(2, &[]), eval(4, &[("eval/all/pass_at_8", 0.8)])],
    };
    assert_eq!(series.merge(newer), 2);
    assert_eq!(series.train[2].get("timing/step"), Some(42.0));
    assert_eq!(
        (series.rows().iter())
            .map(|s| (s.step, s.kind))
            .collect::<Vec<_>>(),
        [
            (1, Kind::Train),
            (2, Kind::Train),
            (2, Kind::Eval),
            (3, Kind::Train),
            (4, Kind::Train),
            (4, Kind::Eval)
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// Outputs

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
        metrics::table(&output_series()),
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
    let series = small_log_series();
    assert_eq!(
        metrics::table(&series),
        "\
step    s/step  reward  eval score  eval pass@8  entropy
1         40.5   0.250           -            -        -
2         41.0   0.500           -            -        -
2 eval       -       -       0.500        0.750        -
3         42.0   0.625           -            -        -
"
    );
    assert_eq!(
        metrics::table(&Series::default()),
        "no WANDB_MIRROR metric lines\n"
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
    let json = metrics::to_json(&series);
    assert_eq!(
        json,
        r#"{"train":[{"kind":"train","step":1,"metrics":{"a":0.5,"b":null}},{"kind":"train","step":2,"metrics":{"a":1.0}}],"eval":[{"kind":"eval","step":2,"metrics":{"eval/all/pass_at_8":0.75}}]}"#
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
        metrics::to_csv(&series),
        "\
kind,step,b,eval/all/pass_at_8,\"odd,key\",timing/step,tiny
train,1,NaN,,,40.5,
eval,1,,0.75,,,
train,2,,,-3,41,0.0000001
"
    );
    assert_eq!(metrics::to_csv(&Series::default()), "kind,step\n");
}

// ---------------------------------------------------------------------------------------------
// Alerts

/// `steps` train steps whose metrics are `f(step)`.
fn run(steps: u64, f: impl Fn(u64) -> Vec<(&'static str, f64)>) -> Series {
    Series {
        train: (1..=steps).map(|n| train(n, &f(n))).collect(),
        eval: vec![],
    }
}

fn healthy(n: u64) -> Vec<(&'static str, f64)> {
    let s = n as f64;
    vec![
        ("policy/policy_entropy", 0.6 * 0.995f64.powf(s)),
        ("reward/avg_raw_reward", 0.1 + 0.002 * s),
        ("policy/raw_grad_norm", 0.5 + 0.05 * (s * 1.7).sin()),
        (
            "distill/token_kl_mean",
            0.5 * 0.97f64.powf(s) + 0.01 * (s * 2.3).sin().abs(),
        ),
        ("timing/step", 40.0 + (n % 3) as f64),
    ]
}

fn with(n: u64, key: &'static str, value: f64) -> Vec<(&'static str, f64)> {
    let mut m: Vec<_> = healthy(n).into_iter().filter(|(k, _)| *k != key).collect();
    m.push((key, value));
    m
}

#[test]
fn a_healthy_run_raises_no_alert() {
    let t = Thresholds::default();
    for steps in [0, 1, 2, 5, 30, 60, 120, 300] {
        assert_eq!(alerts(&run(steps, healthy), &t), vec![], "{steps} steps");
    }
}

#[test]
fn a_collapsing_entropy_raises_an_alert_with_the_numbers() {
    let series = run(120, |n| {
        let e = if n <= 3 {
            0.62
        } else {
            0.62 * (0.04f64 / 0.62).powf((n - 3) as f64 / 117.0)
        };
        with(n, "policy/policy_entropy", e)
    });
    let found = alerts(&series, &Thresholds::default());
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].kind, AlertKind::EntropyCollapse);
    assert_eq!(found[0].step, 120);
    assert_eq!(
        found[0].message,
        "policy entropy fell from 0.62 to 0.04 (x0.065) by step 120: the policy is collapsing; \
         consider the entropy bonus `trainer.algorithm.use_entropy_loss=true` \
         (`trainer.algorithm.entropy_loss_coef`) or a lower learning rate"
    );
    assert_eq!(
        found[0].to_string(),
        format!("[entropy-collapse] {}", found[0].message)
    );
}

#[test]
fn entropy_below_the_floor_is_a_collapse_even_without_a_large_fall() {
    let series = run(2, |n| {
        with(n, "policy/policy_entropy", 0.08 - 0.01 * n as f64)
    });
    let found = alerts(&series, &Thresholds::default());
    assert_eq!(found.len(), 1);
    assert_eq!(
        found[0].message,
        "policy entropy is 0.06 at step 2, below the floor 0.1: the policy is collapsing; \
         consider the entropy bonus `trainer.algorithm.use_entropy_loss=true` \
         (`trainer.algorithm.entropy_loss_coef`) or a lower learning rate"
    );
    // Every threshold can be overridden.
    let lenient = Thresholds {
        entropy_floor: 0.01,
        ..Thresholds::default()
    };
    assert_eq!(alerts(&series, &lenient), vec![]);
    let strict = Thresholds {
        entropy_floor: 0.3,
        ..Thresholds::default()
    };
    assert_eq!(alerts(&run(10, healthy), &strict), vec![]);
    let stricter = Thresholds {
        entropy_floor: 0.6,
        ..Thresholds::default()
    };
    assert_eq!(
        alerts(&run(10, healthy), &stricter)[0].kind,
        AlertKind::EntropyCollapse
    );
}

#[test]
fn a_run_without_entropy_is_flagged_because_the_guard_cannot_run() {
    let series = run(4, |n| {
        healthy(n)
            .into_iter()
            .filter(|(k, _)| *k != "policy/policy_entropy")
            .collect()
    });
    let found = alerts(&series, &Thresholds::default());
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].kind, AlertKind::EntropyMissing);
    assert_eq!(
        found[0].message,
        "none of the 4 train steps logged `policy/policy_entropy`: the entropy collapse guard \
         cannot run; check that the trainer computes the policy entropy"
    );
    assert_eq!(alerts(&Series::default(), &Thresholds::default()), vec![]);
}

#[test]
fn a_grad_norm_spike_raises_an_alert() {
    let series = run(40, |n| {
        let g = if n == 40 { 12.4 } else { 0.5 };
        with(n, "policy/raw_grad_norm", g)
    });
    let found = alerts(&series, &Thresholds::default());
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].kind, AlertKind::GradSpike);
    assert_eq!(found[0].step, 40);
    assert_eq!(
        found[0].message,
        "grad norm spiked to 12.4 at step 40, x24.8 the median 0.5 of the 20 steps before: \
         training may be diverging; lower the learning rate (`trainer.policy.optimizer_config.lr`) \
         or clip harder (`trainer.policy.optimizer_config.max_grad_norm`)"
    );
    // Not enough history yet: no verdict.
    let early = run(4, |n| {
        with(n, "policy/raw_grad_norm", if n == 4 { 12.4 } else { 0.5 })
    });
    assert_eq!(alerts(&early, &Thresholds::default()), vec![]);
    // A spike that has passed is not the latest step's problem.
    let passed = run(41, |n| {
        with(n, "policy/raw_grad_norm", if n == 40 { 12.4 } else { 0.5 })
    });
    assert_eq!(alerts(&passed, &Thresholds::default()), vec![]);
}

#[test]
fn a_non_finite_grad_norm_is_an_alert_at_once() {
    let series = run(2, |n| {
        with(
            n,
            "policy/raw_grad_norm",
            if n == 2 { f64::NAN } else { 0.5 },
        )
    });
    let found = alerts(&series, &Thresholds::default());
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].kind, AlertKind::GradSpike);
    assert!(
        found[0]
            .message
            .starts_with("grad norm (`policy/raw_grad_norm`) is NaN at step 2")
    );
}

#[test]
fn a_stalled_reward_raises_an_alert_after_the_warm_up() {
    // Rises until step 20, then flat just under its best.
    let reward = |n: u64| if n <= 20 { 0.02 * n as f64 } else { 0.395 };
    let series = run(50, |n| with(n, "reward/avg_raw_reward", reward(n)));
    let found = alerts(&series, &Thresholds::default());
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].kind, AlertKind::RewardStall);
    assert_eq!(found[0].step, 50);
    assert_eq!(
        found[0].message,
        "reward has not improved for 30 steps: steps 21..50 reached at most 0.395 \
         (`reward/avg_raw_reward`), the best before them was 0.4 at step 20: learning has \
         stalled; check the learning rate and whether the prompts are too easy or too hard \
         (groups that are all right or all wrong give GRPO no signal)"
    );
    // A step earlier the window still holds step 20's climb.
    let shorter = run(49, |n| with(n, "reward/avg_raw_reward", reward(n)));
    assert_eq!(alerts(&shorter, &Thresholds::default()), vec![]);
    // Within warm-up + window: no verdict, however flat.
    let flat = run(39, |n| with(n, "reward/avg_raw_reward", 0.3));
    assert_eq!(alerts(&flat, &Thresholds::default()), vec![]);
    let flat = run(40, |n| with(n, "reward/avg_raw_reward", 0.3));
    assert_eq!(
        alerts(&flat, &Thresholds::default())[0].kind,
        AlertKind::RewardStall
    );
    let patient = Thresholds {
        reward_stall_steps: 35,
        ..Thresholds::default()
    };
    assert_eq!(alerts(&series, &patient), vec![]);
}

#[test]
fn a_rising_opd_token_kl_raises_an_alert() {
    // Falls for 20 steps, then climbs again.
    let kl = |n: u64| {
        if n <= 20 {
            0.5 - 0.02 * n as f64
        } else {
            0.1 + 0.01 * (n - 20) as f64
        }
    };
    let series = run(30, |n| with(n, "distill/token_kl_mean", kl(n)));
    let found = alerts(&series, &Thresholds::default());
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].kind, AlertKind::KlRising);
    assert_eq!(found[0].step, 30);
    assert_eq!(
        found[0].message,
        "OPD token KL rose from 0.11 to 0.2 (+82%, least-squares trend) over steps 21..30; it \
         should fall as the student learns the teacher: lower the learning rate \
         (`trainer.policy.optimizer_config.lr`) and check that the teacher is the intended model"
    );
    // Still falling at step 20: nothing.
    let falling = run(20, |n| with(n, "distill/token_kl_mean", kl(n)));
    assert_eq!(alerts(&falling, &Thresholds::default()), vec![]);
    // A flat KL with noise is not a rise.
    let flat = run(30, |n| {
        with(n, "distill/token_kl_mean", 0.1 + 0.002 * (n % 2) as f64)
    });
    assert_eq!(alerts(&flat, &Thresholds::default()), vec![]);
}

#[test]
fn alerts_come_in_a_fixed_order() {
    let series = run(60, |n| {
        let mut m = with(n, "policy/policy_entropy", if n <= 3 { 0.6 } else { 0.01 });
        m.retain(|(k, _)| *k != "policy/raw_grad_norm" && *k != "reward/avg_raw_reward");
        m.push((
            "policy/raw_grad_norm",
            if n == 60 { f64::INFINITY } else { 1.0 },
        ));
        m.push(("reward/avg_raw_reward", 0.5));
        m.retain(|(k, _)| *k != "distill/token_kl_mean");
        m.push(("distill/token_kl_mean", 0.1 * n as f64));
        m
    });
    let kinds: Vec<AlertKind> = alerts(&series, &Thresholds::default())
        .into_iter()
        .map(|a| a.kind)
        .collect();
    assert_eq!(
        kinds,
        [
            AlertKind::EntropyCollapse,
            AlertKind::GradSpike,
            AlertKind::RewardStall,
            AlertKind::KlRising
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// Progress

#[test]
fn progress_uses_the_median_of_recent_step_times() {
    // 20 steps: the first 10 slow (warm-up), then 40 s with one 400 s outlier.
    let series = run(20, |n| {
        let t = if n <= 10 {
            300.0
        } else if n == 15 {
            400.0
        } else {
            40.0
        };
        with(n, "timing/step", t)
    });
    let p = progress(&series, Some(200));
    assert_eq!(
        p,
        Progress {
            step: 20,
            total: Some(200),
            secs_per_step: Some(40.0),
            eta_secs: Some(180.0 * 40.0),
        }
    );
    assert_eq!(p.fraction(), Some(0.1));
    assert_eq!(p.summary(), "step 20/200 (10%), 40.0 s/step, ETA 2h00m");
    let open_ended = progress(&series, None);
    assert_eq!(open_ended.eta_secs, None);
    assert_eq!(open_ended.summary(), "step 20, 40.0 s/step");
    let nothing = progress(&Series::default(), Some(25));
    assert_eq!(nothing.summary(), "step 0/25 (0%), no timing yet");
    let past = progress(&series, Some(10));
    assert_eq!((past.eta_secs, past.fraction()), (Some(0.0), Some(1.0)));
}

#[test]
fn durations_read_naturally() {
    let cases = [
        (0.0, "0s"),
        (59.4, "59s"),
        (61.0, "1m01s"),
        (3599.0, "59m59s"),
        (3600.0, "1h00m"),
        (16020.0, "4h27m"),
        (183600.0, "2d03h"),
        (-5.0, "0s"),
    ];
    for (secs, want) in cases {
        assert_eq!(alerts::duration(secs), want, "{secs}");
    }
}

#[test]
fn numbers_in_messages_have_significant_digits() {
    let cases = [
        (0.62, 3, "0.62"),
        (0.0645, 2, "0.065"),
        (12.4, 3, "12.4"),
        (1234.0, 3, "1234"),
        (0.5, 3, "0.5"),
        (0.0, 3, "0"),
        (0.00001234, 3, "1.23e-5"),
        (f64::NAN, 3, "NaN"),
        (-0.25, 2, "-0.25"),
    ];
    for (v, digits, want) in cases {
        assert_eq!(alerts::sig(v, digits), want, "{v}");
    }
}

#[test]
fn thresholds_have_documented_defaults() {
    let t = Thresholds::default();
    assert_eq!(
        (t.entropy_floor, t.entropy_min_ratio, t.entropy_start_steps),
        (0.1, 0.2, 3)
    );
    assert_eq!(
        (t.grad_spike_factor, t.grad_window, t.grad_min_history),
        (5.0, 20, 5)
    );
    assert_eq!(
        (
            t.reward_warmup_steps,
            t.reward_stall_steps,
            t.reward_min_delta
        ),
        (10, 30, 0.01)
    );
    assert_eq!(
        (t.kl_window, t.kl_min_rise, t.kl_noise_factor),
        (10, 0.1, 2.0)
    );
    // Overrides read from TOML: only the fields given change; a misspelt one is an error.
    let custom: Thresholds = toml::from_str("entropy_floor = 0.05\ngrad_window = 50").unwrap();
    assert_eq!(
        custom,
        Thresholds {
            entropy_floor: 0.05,
            grad_window: 50,
            ..Thresholds::default()
        }
    );
    assert!(toml::from_str::<Thresholds>("entropy_flor = 0.05").is_err());
}
