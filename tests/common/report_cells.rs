//! Synthetic report cells (a healthy run with eval pass@8, a collapsing one, an on-policy
//! distillation one, one not started) and a reader of the report's markdown table, for the
//! report's table and plot tests.

use rlctl::runs::metrics::{Kind, Series, Step};
use rlctl::runs::report::CellReport;
use std::collections::BTreeMap;

pub fn step(kind: Kind, step: u64, metrics: &[(&str, f64)]) -> Step {
    Step {
        kind,
        step,
        metrics: metrics.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect(),
        rounded: false,
    }
}

/// Train steps 1..=n with warm-up in step 1, `generate` seconds of generation a step, and
/// `extra(i)` metrics on top.
pub fn train(n: u64, generate: f64, extra: impl Fn(u64) -> Vec<(&'static str, f64)>) -> Vec<Step> {
    (1..=n)
        .map(|i| {
            let warm = if i == 1 { 80.0 } else { 0.0 };
            let jitter = (i % 3) as f64;
            let mut m = vec![
                ("timing/step", generate + 14.0 + jitter + warm),
                ("timing/generate", generate + jitter + warm * 0.5),
                ("timing/policy_train", 11.5),
                ("timing/sync_weights", 1.25),
                ("policy/raw_grad_norm", 0.4),
            ];
            m.extend(extra(i));
            step(Kind::Train, i, &m)
        })
        .collect()
}

/// Evals as MarinSkyRL prints them: a `kind=eval` line before training, then every 3 steps the
/// eval metrics merged into that step's `kind=train` line.
pub fn healthy() -> Series {
    healthy_at(26.0, 0.0)
}

/// [`healthy`] with `generate` seconds of generation a step, its rewards and pass@8 `lift` higher.
pub fn healthy_at(generate: f64, lift: f64) -> Series {
    let eval = |p: f64| {
        let p = p + lift;
        vec![
            ("eval/all/pass_at_8", p),
            ("eval/gsm8k/pass_at_8", p),
            ("eval/all/avg_score", p / 2.0),
        ]
    };
    Series {
        train: train(6, generate, |i| {
            let mut m = vec![
                ("reward/avg_raw_reward", 0.3 + lift + 0.07 * i as f64),
                ("reward/avg_pass_at_8", 0.5 + 0.05 * i as f64),
                ("policy/policy_entropy", 0.6 - 0.02 * i as f64),
                ("generate/avg_num_tokens", 250.0),
            ];
            match i {
                3 => m.extend(eval(0.734)),
                6 => m.extend(eval(0.7125)),
                _ => {}
            }
            m
        }),
        eval: vec![step(Kind::Eval, 0, &eval(0.61))],
    }
}

pub fn collapsing() -> Series {
    let entropy = [0.6, 0.41, 0.22, 0.09, 0.05, 0.03];
    let reward = [0.35, 0.52, 0.66, 0.58, 0.31, 0.12];
    Series {
        train: train(6, 18.0, |i| {
            let i = (i - 1) as usize;
            vec![
                ("reward/avg_raw_reward", reward[i]),
                ("policy/policy_entropy", entropy[i]),
                ("generate/avg_num_tokens", 310.0),
            ]
        }),
        eval: vec![],
    }
}

pub fn distillation() -> Series {
    Series {
        train: train(4, 31.5, |i| {
            vec![
                ("distill/token_kl_mean", 0.9 / i as f64),
                ("teacher/chosen_logprob_mean", -0.4),
                ("policy/policy_entropy", 0.5),
            ]
        }),
        eval: vec![],
    }
}

/// The four cells: the base (GPU-hours from accounting, 128 x 8 samples a step), a faster cell
/// whose entropy collapses, an OPD cell on two nodes that failed, one not started (nothing
/// accounted).
pub fn grid(series: &[Series; 4]) -> [CellReport<'_>; 4] {
    [
        CellReport {
            gpu_hours: Some(0.5),
            samples_per_step: Some(1024.0),
            base: true,
            total_steps: Some(6),
            ..CellReport::new("base_long", "COMPLETED", &series[0])
        },
        CellReport {
            gpu_hours: Some(0.4),
            samples_per_step: Some(1024.0),
            total_steps: Some(6),
            ..CellReport::new("lr1e-5", "COMPLETED", &series[1])
        },
        CellReport {
            gpu_hours: Some(2.0),
            total_steps: Some(10),
            ..CellReport::new("opd_q3", "FAILED", &series[2])
        },
        CellReport::new("gen2048", "unknown", &series[3]),
    ]
}

/// What each cell of [`grid`] changed against the base (the base: nothing), as `rlctl report`
/// gives them from the grid's catalog.
pub fn grid_knobs() -> [Vec<String>; 4] {
    let owned = |k: &[&str]| k.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    [
        vec![],
        owned(&["trainer.policy.optimizer_config.lr=1e-5"]),
        owned(&[
            "trainer.algorithm.advantage_estimator=no_op",
            "trainer.algorithm.use_kl_in_reward=true",
            "trainer.placement.policy_num_nodes=2",
        ]),
        owned(&["generator.max_generate_length=2048"]),
    ]
}

/// The cells of [`grid`], each with what it changed ([`grid_knobs`]).
pub fn with_knobs<'a>(
    cells: [CellReport<'a>; 4],
    knobs: &'a [Vec<String>; 4],
) -> [CellReport<'a>; 4] {
    let mut i = 0;
    cells.map(|c| {
        i += 1;
        CellReport {
            knobs: Some(&knobs[i - 1]),
            ..c
        }
    })
}

pub fn all_series() -> [Series; 4] {
    [healthy(), collapsing(), distillation(), Series::default()]
}

/// The cells of a table row by column header.
pub fn table_rows(md: &str) -> Vec<BTreeMap<String, String>> {
    let split = |line: &str| -> Vec<String> {
        (line.trim().trim_matches('|').split(" | "))
            .map(|c| c.trim().to_owned())
            .collect()
    };
    let mut lines = md.lines().filter(|l| l.starts_with('|'));
    let head = split(lines.next().unwrap());
    lines
        .skip(1)
        .map(|l| head.iter().cloned().zip(split(l)).collect())
        .collect()
}
