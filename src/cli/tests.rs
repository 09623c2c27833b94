//! The logic the per-command argument structs own, from real command lines.

use super::*;
use clap::CommandFactory;

fn parse(words: &[&str]) -> Command {
    let line = std::iter::once("rlctl").chain(words.iter().copied());
    Cli::try_parse_from(line).expect("the line parses").command
}

#[test]
fn the_command_line_passes_claps_own_checks() {
    Cli::command().debug_assert();
}

#[test]
fn watch_thresholds_are_the_defaults_with_the_flags_given_in_their_place() {
    let Command::Watch(args) = parse(&["watch", "r", "--entropy-ratio", "0.5"]) else {
        panic!("not watch");
    };
    let expected = Thresholds {
        entropy_min_ratio: 0.5,
        ..Thresholds::default()
    };
    assert_eq!(args.thresholds(), expected);
    let line = [
        "watch",
        "r",
        "--entropy-floor",
        "-1",
        "--grad-spike",
        "9",
        "--reward-stall-steps",
        "7",
    ];
    let Command::Watch(args) = parse(&line) else {
        panic!("not watch");
    };
    let t = args.thresholds();
    assert_eq!(
        (t.entropy_floor, t.grad_spike_factor, t.reward_stall_steps),
        (-1.0, 9.0, 7)
    );
    assert_eq!(t.entropy_min_ratio, Thresholds::default().entropy_min_ratio);
}

#[test]
fn stage_mode_follows_dry_run_or_status() {
    let mode = |flags: &[&str]| {
        let line: Vec<&str> = ["stage", "gsm8k-canary"]
            .iter()
            .chain(flags)
            .copied()
            .collect();
        let Command::Stage(args) = parse(&line) else {
            panic!("not stage");
        };
        args.mode()
    };
    assert_eq!(mode(&[]), StageMode::Start);
    assert_eq!(mode(&["--dry-run"]), StageMode::DryRun);
    assert_eq!(mode(&["--status"]), StageMode::Status);
}

#[test]
fn stage_plans_with_default_flags_and_its_overrides() {
    let Command::Stage(args) = parse(&["stage", "p", "--allow", "off-schema", "--", "a.b=1"])
    else {
        panic!("not stage");
    };
    let plan = args.plan();
    assert_eq!(plan.overrides, ["a.b=1"]);
    assert!(plan.allow.is_empty() && plan.nodes.is_none() && !plan.until_done);
}

#[test]
fn tend_sync_takes_the_wandb_flags() {
    let line = [
        "tend",
        "--wandb",
        "/opt/wandb",
        "--wandb-timeout",
        "5",
        "--wandb-budget",
        "50",
    ];
    let Command::Tend(args) = parse(&line) else {
        panic!("not tend");
    };
    let sync = args.sync();
    assert_eq!(sync.program, "/opt/wandb");
    assert_eq!(sync.per_call, Duration::from_secs(5));
    assert_eq!(sync.budget, Duration::from_secs(50));
}

#[test]
fn a_resubmission_repeats_the_plan_flags_and_overrides_and_resumes() {
    let line = [
        "launch",
        "gsm8k-canary",
        "--chain",
        "4",
        "--dry-run",
        "--qos",
        "boost_qos_dbg",
        "--time",
        "00:20:00",
        "--allow",
        "off-schema",
        "--wipe",
        "--",
        "trainer.epochs=2",
        "x=a b",
    ];
    let Command::Launch(args) = parse(&line) else {
        panic!("not launch");
    };
    assert_eq!(
        args.resubmission(2),
        "rlctl launch gsm8k-canary --qos boost_qos_dbg --time 00:20:00 --allow off-schema \
         --resume latest --chain 2 -- trainer.epochs=2 'x=a b'"
    );
    assert!(!args.resubmission(1).contains("--chain"));
}
