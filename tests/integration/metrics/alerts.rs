//! The health alerts and progress (`rlctl::runs::alerts`): pure functions of a [`Series`], so
//! these tests are the rules' specification.

use super::train;
use rlctl::runs::alerts::{
    AlertKind, Progress, SINCE_MAX_STEPS, Thresholds, alerts, alerts_since, progress,
};
use rlctl::runs::metrics::Series;

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
        "policy entropy fell from 0.62 to 0.04 (x0.065) at step 120: the policy is collapsing; \
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
        "none of the 4 train steps logged `policy/policy_entropy` (the latest at step 4): the \
         entropy collapse guard cannot run; check that the trainer computes the policy entropy"
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
fn a_non_finite_loss_reward_entropy_grad_norm_or_kl_is_a_divergence() {
    let advice = "training has diverged; restart from an earlier checkpoint with a lower \
                  learning rate (`trainer.policy.optimizer_config.lr`)";
    for (key, bad) in [
        ("policy/policy_loss", f64::NAN),
        ("reward/avg_raw_reward", f64::NAN),
        ("policy/policy_entropy", f64::INFINITY),
        ("policy/raw_grad_norm", f64::NAN),
        ("distill/token_kl_mean", f64::NEG_INFINITY),
    ] {
        let series = run(8, |n| with(n, key, if n == 8 { bad } else { 0.5 }));
        let found = alerts(&series, &Thresholds::default());
        assert_eq!(found.len(), 1, "{key}: {found:?}");
        assert_eq!(found[0].kind, AlertKind::Diverged, "{key}");
        assert_eq!(found[0].step, 8);
        let v = if bad.is_nan() {
            "NaN"
        } else if bad > 0.0 {
            "inf"
        } else {
            "-inf"
        };
        assert_eq!(
            found[0].message,
            format!("`{key}` is {v} at step 8: {advice}")
        );
        // Finite again at the latest step: the run recovered, nothing to say.
        let recovered = run(9, |n| with(n, key, if n == 8 { bad } else { 0.5 }));
        assert_eq!(alerts(&recovered, &Thresholds::default()), vec![], "{key}");
    }
    // A run that only logs the clipped grad norm is judged on it; several at once, one alert.
    let series = run(3, |n| {
        let mut m = with(
            n,
            "policy/policy_entropy",
            if n == 3 { f64::NAN } else { 0.5 },
        );
        m.retain(|(k, _)| *k != "policy/raw_grad_norm");
        m.push(("policy/grad_norm", if n == 3 { f64::INFINITY } else { 0.5 }));
        m
    });
    let found = alerts(&series, &Thresholds::default());
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        found[0].to_string(),
        format!(
            "[diverged] `policy/policy_entropy` is NaN at step 3, `policy/grad_norm` is inf at \
             step 3: {advice}"
        )
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
        "reward has not improved for 30 steps at step 50: steps 21..50 reached at most 0.395 \
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
        "OPD token KL rose from 0.11 to 0.2 (+82%, least-squares trend) over steps 21..30, at \
         step 30; it should fall as the student learns the teacher: lower the learning rate \
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
        m.push(("policy/raw_grad_norm", if n == 60 { 40.0 } else { 1.0 }));
        m.push(("reward/avg_raw_reward", 0.5));
        m.retain(|(k, _)| *k != "distill/token_kl_mean");
        m.push(("distill/token_kl_mean", 0.1 * n as f64));
        m.push(("policy/policy_loss", if n == 60 { f64::NAN } else { 0.1 }));
        m
    });
    let kinds: Vec<AlertKind> = alerts(&series, &Thresholds::default())
        .into_iter()
        .map(|a| a.kind)
        .collect();
    assert_eq!(
        kinds,
        [
            AlertKind::Diverged,
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
fn thresholds_read_from_toml_change_only_the_fields_given() {
    let custom: Thresholds = toml::from_str("entropy_floor = 0.05\ngrad_window = 50").unwrap();
    assert_eq!(
        custom,
        Thresholds {
            entropy_floor: 0.05,
            grad_window: 50,
            ..Thresholds::default()
        }
    );
    assert!(
        toml::from_str::<Thresholds>("entropy_flor = 0.05").is_err(),
        "a misspelt field is an error"
    );
}

// ---------------------------------------------------------------------------------------------
// Every step since a reader's last look (`alerts_since`)

/// Healthy steps (the entropy steady, however many) but for a grad-norm spike at `spike`.
fn spiked(steps: u64, spike: u64) -> Series {
    run(steps, |n| {
        let g = if n == spike { 50.0 } else { 0.5 };
        let mut m = with(n, "policy/raw_grad_norm", g);
        m.retain(|(k, _)| *k != "policy/policy_entropy");
        m.push(("policy/policy_entropy", 0.6));
        m
    })
}

#[test]
fn a_spike_between_two_looks_is_found_by_the_second_at_its_step() {
    let t = Thresholds::default();
    let series = spiked(25, 15);
    // The latest step alone (what a first look judges) is healthy: the spike is 10 steps back.
    assert_eq!(alerts(&series, &t), vec![]);
    assert_eq!(alerts_since(&series, &t, None), vec![]);
    let found = alerts_since(&series, &t, Some(10));
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!((found[0].kind, found[0].step), (AlertKind::GradSpike, 15));
    assert!(
        found[0].message.contains("at step 15"),
        "{}",
        found[0].message
    );
    // The window after the spike, and an empty one, find nothing.
    assert_eq!(alerts_since(&series, &t, Some(15)), vec![]);
    assert_eq!(alerts_since(&series, &t, Some(25)), vec![]);
    // The window's first step is the spike: found.
    assert_eq!(alerts_since(&series, &t, Some(14))[0].step, 15);
}

#[test]
fn each_kind_is_reported_once_at_the_first_step_it_fired_in_the_window() {
    let t = Thresholds::default();
    // Spikes at 12 and 20; the loss NaN from step 18 on.
    let series = run(25, |n| {
        let mut m = with(
            n,
            "policy/raw_grad_norm",
            if n == 12 || n == 20 { 50.0 } else { 0.5 },
        );
        if n >= 18 {
            m.push(("policy/policy_loss", f64::NAN));
        }
        m
    });
    let found = alerts_since(&series, &t, Some(5));
    let kinds: Vec<(AlertKind, u64)> = found.iter().map(|a| (a.kind, a.step)).collect();
    // In `alerts`' order: divergence before grad norm.
    assert_eq!(
        kinds,
        [(AlertKind::Diverged, 18), (AlertKind::GradSpike, 12)]
    );
    // A condition that still holds is found again by a later window.
    let later: Vec<(AlertKind, u64)> = (alerts_since(&series, &t, Some(19)).iter())
        .map(|a| (a.kind, a.step))
        .collect();
    assert_eq!(
        later,
        [(AlertKind::Diverged, 20), (AlertKind::GradSpike, 20)]
    );
}

#[test]
fn a_window_longer_than_the_limit_judges_its_latest_steps() {
    let t = Thresholds::default();
    let steps = SINCE_MAX_STEPS as u64 + 100;
    let early = spiked(steps, 50);
    assert_eq!(
        alerts_since(&early, &t, Some(0)),
        vec![],
        "beyond the limit"
    );
    let late = spiked(steps, steps - SINCE_MAX_STEPS as u64 + 1);
    assert_eq!(
        alerts_since(&late, &t, Some(0)).len(),
        1,
        "the window's oldest judged step"
    );
}
