//! The synthetic SkyRL job log the benches read (`metrics`, `logs`): deterministic, generated
//! once into `target/tmp/` and reused. One line in 200 is a `WANDB_MIRROR` metric line (a train
//! step with SkyRL's ~40 metrics, an eval step every 10 steps, 1% of them printed twice); the
//! rest is vLLM / Ray / tqdm / Python-warning noise of varied length with ANSI colour codes and
//! Ray's `(name pid=N)` prefixes, a few lines that mention `WANDB_MIRROR` without being metric
//! lines, and the last line cut short without its newline.
#![allow(dead_code)]

use rlctl::runs::metrics::Kind;
use std::fmt::Write as _;
use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::Instant;

/// Bumped whenever the generator changes, so a stale cached log is not reused.
pub const VERSION: u32 = 1;

/// What the generator wrote, for checking scan and grep.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Expected {
    pub lines: u64,
    /// Lines containing `WANDB_MIRROR` (grep's count).
    pub marker_lines: u64,
    pub train: u64,
    pub eval: u64,
    /// Metric lines printed a second time.
    pub repeats: u64,
}

/// The log at `path`, generated unless a complete one is there; returns what it holds.
pub fn ensure_log(path: &Path, size: u64) -> Expected {
    let stamp = path.with_extension("expected");
    if let (Ok(meta), Ok(text)) = (fs::metadata(path), fs::read_to_string(&stamp)) {
        let n: Vec<u64> = text
            .split_whitespace()
            .filter_map(|w| w.parse().ok())
            .collect();
        if meta.len() == size && n.len() == 5 {
            return Expected {
                lines: n[0],
                marker_lines: n[1],
                train: n[2],
                eval: n[3],
                repeats: n[4],
            };
        }
    }
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let start = Instant::now();
    eprintln!("generating {} ({} MiB)...", path.display(), size >> 20);
    let partial = path.with_extension("partial");
    let expected = generate(&partial, size);
    fs::rename(&partial, path).unwrap();
    let e = expected;
    fs::write(
        &stamp,
        format!(
            "{} {} {} {} {}\n",
            e.lines, e.marker_lines, e.train, e.eval, e.repeats
        ),
    )
    .unwrap();
    eprintln!("generated in {:.1} s", start.elapsed().as_secs_f64());
    expected
}

/// xorshift64*: fast, deterministic.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn float(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

const CYAN: &str = "\x1b[36m";
const YELLOW: &str = "\x1b[33m";
const RESET: &str = "\x1b[0m";

pub fn step_time(step: u64) -> f64 {
    40.0 + (step % 17) as f64 * 0.25
}

/// Writes a log of exactly `size` bytes, its last line a metric line cut short.
fn generate(path: &Path, size: u64) -> Expected {
    const FILL: &str = "INFO: idle\n";
    const TAIL_ROOM: u64 = 1024;
    let mut out = BufWriter::with_capacity(1 << 20, File::create(path).unwrap());
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut e = Expected::default();
    let mut line = String::with_capacity(8192);
    let mut written = 0u64;
    let mut step = 0u64;
    let mut last_metric = String::new();
    loop {
        // One line (two for a train step followed by its eval step), counted in `d`.
        line.clear();
        let mut d = Expected {
            lines: 1,
            ..Expected::default()
        };
        let mut next_step = step;
        let n = e.lines + 1;
        if n.is_multiple_of(200) {
            d.marker_lines = 1;
            if rng.below(100) == 0 && !last_metric.is_empty() {
                line.push_str(&last_metric);
                d.repeats = 1;
            } else {
                next_step += 1;
                metric_line(&mut line, &mut rng, Kind::Train, next_step);
                d.train = 1;
                if next_step.is_multiple_of(10) {
                    line.push('\n');
                    metric_line(&mut line, &mut rng, Kind::Eval, next_step);
                    d.eval = 1;
                    d.lines += 1;
                    d.marker_lines += 1;
                }
            }
        } else if n.is_multiple_of(50_021) {
            // Mentions the marker, is not a metric line.
            let _ = write!(
                line,
                "{CYAN}(skyrl_entrypoint pid=4242){RESET} INFO trainer: metrics go to stdout as \
                 WANDB_MIRROR lines (logger=console); step={step}"
            );
            d.marker_lines = 1;
        } else {
            noise_line(&mut line, &mut rng);
        }
        line.push('\n');
        if written + line.len() as u64 + TAIL_ROOM + FILL.len() as u64 > size {
            break;
        }
        out.write_all(line.as_bytes()).unwrap();
        written += line.len() as u64;
        for (total, delta) in [
            (&mut e.lines, d.lines),
            (&mut e.marker_lines, d.marker_lines),
            (&mut e.train, d.train),
            (&mut e.eval, d.eval),
            (&mut e.repeats, d.repeats),
        ] {
            *total += delta;
        }
        if d.train == 1 {
            step = next_step;
            last_metric.clear();
            let last_start = line.trim_end().rfind(CYAN).unwrap();
            last_metric.push_str(line[last_start..].trim_end());
        }
    }
    while size - written >= TAIL_ROOM + FILL.len() as u64 {
        out.write_all(FILL.as_bytes()).unwrap();
        written += FILL.len() as u64;
        e.lines += 1;
    }
    // The last line, still being written: the next step's metric line, cut short.
    line.clear();
    metric_line(&mut line, &mut rng, Kind::Train, step + 1);
    let room = (size - written) as usize;
    assert!(line.len() > room && line[..room].contains("WANDB_MIRROR"));
    out.write_all(&line.as_bytes()[..room]).unwrap();
    e.lines += 1;
    e.marker_lines += 1;
    out.flush().unwrap();
    e
}

fn metric_line(line: &mut String, rng: &mut Rng, kind: Kind, step: u64) {
    let _ = write!(
        line,
        "{CYAN}(skyrl_entrypoint pid=3141592){RESET} WANDB_MIRROR kind={kind} step={step} metrics="
    );
    let mut json = String::with_capacity(2048);
    json.push('{');
    let field = |json: &mut String, key: &str, value: f64| {
        if json.len() > 1 {
            json.push_str(", ");
        }
        let _ = write!(json, "\"{key}\": {value}");
    };
    let s = step as f64;
    match kind {
        Kind::Train => {
            field(&mut json, "timing/step", step_time(step));
            for key in [
                "timing/generate",
                "timing/policy_train",
                "timing/sync_weights",
                "timing/fwd_logprobs_values_reward",
                "timing/compute_advantages_and_returns",
                "timing/convert_to_training_input",
            ] {
                field(&mut json, key, (rng.float() * 30.0 * 1e4).round() / 1e4);
            }
            field(
                &mut json,
                "reward/avg_raw_reward",
                ((0.2 + 0.6 * s / (s + 50.0)) * 1e4).round() / 1e4,
            );
            field(&mut json, "reward/avg_pass_at_8", rng.float());
            field(&mut json, "policy/policy_entropy", 0.6 * 0.999f64.powf(s));
            field(&mut json, "policy/raw_grad_norm", 0.3 + 0.1 * rng.float());
            field(&mut json, "policy/grad_norm", 0.3);
            field(&mut json, "policy/policy_loss", rng.float() - 0.5);
            field(&mut json, "policy/final_loss", rng.float() - 0.5);
            field(&mut json, "policy/ppo_clip_ratio", rng.float() * 0.01);
            field(&mut json, "policy/policy_kl", rng.float() * 1e-3);
            field(
                &mut json,
                "policy/mismatch/pooled/log_ratio_abs_mean",
                rng.float() * 1e-2,
            );
            field(&mut json, "policy/policy_lr", 1e-6);
            for key in [
                "generate/avg_num_tokens",
                "generate/std_num_tokens",
                "generate/min_num_tokens",
                "generate/max_num_tokens",
                "generate/avg_tokens_non_zero_rewards",
                "generate/avg_tokens_zero_rewards",
            ] {
                field(&mut json, key, (rng.float() * 4096.0).round());
            }
            for key in [
                "loss/avg_final_rewards",
                "loss/avg_raw_advantages",
                "loss/avg_raw_advantages_abs",
                "diag/frac_groups_mixed",
                "diag/frac_groups_all_wrong",
                "diag/frac_groups_all_correct",
                "diag/truncated_frac",
            ] {
                field(&mut json, key, rng.float());
            }
            field(&mut json, "trainer/global_step", s);
            field(&mut json, "trainer/epoch", (step / 100) as f64);
        }
        Kind::Eval => {
            field(&mut json, "eval/all/avg_score", rng.float());
            field(&mut json, "eval/all/pass_at_8", rng.float());
            field(&mut json, "eval/all/mean_positive_reward", rng.float());
            field(&mut json, "eval/gsm8k/avg_score", rng.float());
            field(&mut json, "eval/gsm8k/pass_at_8", rng.float());
        }
    }
    // A non-numeric value, as SkyRL sometimes logs one.
    json.push_str(", \"trainer/run_name\": \"gsm8k-canary\"}");
    line.push_str(&json);
}

const ENGINES: &[&str] = &[
    "AsyncVLLMInferenceEngine pid=2211",
    "AsyncVLLMInferenceEngine pid=2212",
    "AsyncVLLMInferenceEngine pid=2213, ip=10.6.0.12",
    "RayWorkerWrapper pid=3301",
    "PolicyWorker pid=4401",
    "skyrl_entrypoint pid=3141592",
];
const FILES: &[&str] = &[
    "metrics.py:455",
    "block_manager.py:281",
    "scheduler.py:1560",
    "llm_engine.py:1024",
    "model_runner.py:1442",
    "worker.py:267",
    "cuda_graph_runner.py:90",
];
const WORDS: &[&str] = &[
    "the",
    "of",
    "and",
    "to",
    "a",
    "in",
    "is",
    "that",
    "for",
    "it",
    "as",
    "with",
    "was",
    "on",
    "answer",
    "step",
    "total",
    "so",
    "we",
    "number",
    "each",
    "=",
    "+",
    "*",
    "$",
    "therefore",
];

fn noise_line(line: &mut String, rng: &mut Rng) {
    let r = rng.below(1000);
    let (mm, dd, hh, mi, ss) = (
        1 + rng.below(12),
        1 + rng.below(28),
        rng.below(24),
        rng.below(60),
        rng.below(60),
    );
    match r {
        // vLLM periodic stats
        0..=249 => {
            let _ = write!(
                line,
                "{CYAN}({}){RESET} INFO {mm:02}-{dd:02} {hh:02}:{mi:02}:{ss:02} [{}] Avg prompt \
                 throughput: {:.1} tokens/s, Avg generation throughput: {:.1} tokens/s, Running: \
                 {} reqs, Swapped: 0 reqs, Pending: {} reqs, GPU KV cache usage: {:.1}%, CPU KV \
                 cache usage: 0.0%.",
                rng.pick(ENGINES),
                rng.pick(FILES),
                rng.float() * 20000.0,
                rng.float() * 8000.0,
                rng.below(256),
                rng.below(64),
                rng.float() * 100.0,
            );
        }
        // tqdm progress bar (UTF-8 blocks)
        250..=449 => {
            let done = rng.below(257);
            let bar = (done * 10 / 256) as usize;
            let _ = write!(
                line,
                "{CYAN}({}){RESET} Processed prompts: {:>3}%|{}{}| {done}/256 [00:{:02}<00:{:02}, \
                 {:.2}it/s, est. speed input: {:.2} toks/s, output: {:.2} toks/s]",
                rng.pick(ENGINES),
                done * 100 / 256,
                "█".repeat(bar),
                " ".repeat(10 - bar),
                rng.below(60),
                rng.below(60),
                rng.float() * 30.0,
                rng.float() * 5000.0,
                rng.float() * 9000.0,
            );
        }
        // Ray's own log lines
        450..=599 => {
            let _ = write!(
                line,
                "{YELLOW}(raylet){RESET} [2026-{mm:02}-{dd:02} {hh:02}:{mi:02}:{ss:02},{:03} I {} \
                 {}] worker_pool.cc:{}: Started worker process with pid {}, the token is {}",
                rng.below(1000),
                rng.below(99999),
                rng.below(99999),
                rng.below(2000),
                rng.below(99999),
                rng.below(1000),
            );
        }
        // short HTTP access lines
        600..=749 => {
            let _ = write!(
                line,
                "INFO:     127.0.0.1:{} - \"POST /v1/completions HTTP/1.1\" 200 OK",
                1024 + rng.below(60000)
            );
        }
        // Python warnings
        750..=849 => {
            let _ = write!(
                line,
                "{CYAN}(PolicyWorker pid=4401){RESET} /leonardo_work/AIFAC_5C0_290/venv/lib/\
                 python3.12/site-packages/torch/distributed/fsdp/_fully_shard/_fsdp_param.py:{}: \
                 UserWarning: FSDP.state_dict_type() and FSDP.set_state_dict_type() are being \
                 deprecated. Please use APIs, get_state_dict() and set_state_dict(), which can \
                 support different parallelisms, FSDP1, FSDP2, DDP.",
                rng.below(900)
            );
        }
        // wandb chatter (not the marker)
        850..=879 => {
            let _ = write!(
                line,
                "wandb: WARNING WANDB_MODE=offline: run {} will be synced later; \
                 wandb_mirror disabled for step logging? no",
                rng.below(1 << 30)
            );
        }
        // blank and tiny lines
        880..=929 => {
            if rng.below(2) == 0 {
                line.push_str("  ");
            }
        }
        // sample dumps: long lines of generated text
        _ => {
            let _ = write!(
                line,
                "{CYAN}(skyrl_entrypoint pid=3141592){RESET} Example response: "
            );
            let words = 50 + rng.below(550);
            for _ in 0..words {
                line.push_str(rng.pick(WORDS));
                line.push(' ');
            }
        }
    }
}
