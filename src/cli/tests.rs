//! The logic the per-command argument structs own, from real command lines.

use super::*;
use crate::plan::ask::{Ask, Verb};
use crate::runs::alerts::Thresholds;
use clap::CommandFactory;
use std::time::Duration;

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

/// The words a shell makes of `line`: the printed command split as the user's shell splits it.
fn shell_words(line: &str) -> Vec<String> {
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("printf '%s\\0' {line}"))
        .output()
        .expect("sh runs");
    assert!(out.status.success(), "{line}");
    let text = String::from_utf8(out.stdout).expect("utf-8");
    text.split_terminator('\0').map(str::to_owned).collect()
}

/// What a printed command asks, parsed back by rlctl's own parser.
fn asked(line: &str) -> Ask {
    let words = shell_words(line);
    let cli = Cli::try_parse_from(&words).unwrap_or_else(|e| panic!("{line}: {e}"));
    match cli.command {
        Command::Launch(args) => args.ask(),
        Command::Grid(args) => args.ask(),
        other => panic!("{line}: not launch or grid: {other:?}"),
    }
}

#[test]
fn a_printed_command_parses_back_into_the_same_ask() {
    let lines: [&[&str]; 5] = [
        &[
            "launch",
            "gsm8k-canary",
            "--chain",
            "4",
            "--dry-run",
            "--qos",
            "boost_qos_dbg",
            "--time",
            "1-00:20:00",
            "--allow",
            "off-schema",
            "--allow",
            "gpu-mem-above-ceiling",
            "--job-name",
            "two",
            "--nodes",
            "2",
            "--until-done",
            "--max-slots",
            "3",
            "--resume",
            "latest",
            "--",
            "trainer.epochs=2",
            "x=a b",
            "+n.k='it''s'",
            "~t.u",
        ],
        &["launch", "gsm8k-canary", "--until-done"],
        &[
            "grid", "g/c", "--as", "c-v2", "--resume", "latest", "--", "a.b=$(x)",
        ],
        &[
            "grid",
            "--all",
            "g",
            "--skip",
            "c",
            "--skip",
            "d",
            "--until-done",
            "--max-slots",
            "2",
        ],
        &["grid", "c"],
    ];
    for line in lines {
        let words: Vec<&str> = std::iter::once("rlctl")
            .chain(line.iter().copied())
            .collect();
        let ask = asked(&crate::util::quote::sh_join(&words));
        let printed = ask.command();
        assert_eq!(asked(&printed), ask, "{printed}");
        // Nothing asked is lost on the way.
        for flag in ["--until-done", "--job-name", "--skip", "--as", "--nodes"] {
            assert_eq!(
                printed.contains(flag),
                line.contains(&flag),
                "{flag}: {printed}"
            );
        }
        // `--until-done` always with its slots, the default ones said.
        let slots = printed.contains("--until-done --max-slots ");
        assert_eq!(slots, line.contains(&"--until-done"), "{printed}");
    }
}

#[test]
fn the_rest_of_a_chain_resumes_with_every_flag_and_override() {
    let line = [
        "launch",
        "gsm8k-canary",
        "--chain",
        "4",
        "--until-done",
        "--max-slots",
        "4",
        "--",
        "trainer.epochs=2",
    ];
    let Command::Launch(args) = parse(&line) else {
        panic!("not launch");
    };
    let rest = Ask {
        resume: crate::plan::Resume::Latest,
        chain: Some(2),
        ..args.ask()
    };
    assert_eq!(
        rest.command(),
        "rlctl launch gsm8k-canary --until-done --max-slots 4 --resume latest --chain 2 -- trainer.epochs=2"
    );
    assert_eq!(asked(&rest.command()), rest);
}

/// A name as rlctl validates names (presets, cells, job names, QOS): what a printed command holds.
fn a_name() -> impl proptest::strategy::Strategy<Value = String> {
    "[a-z0-9_][a-z0-9_.-]{0,11}"
}

/// Any ask `launch` or `grid` can print back: every flag, each with a value clap takes.
fn an_ask() -> impl proptest::strategy::Strategy<Value = Ask> {
    use crate::check::Allow;
    use crate::plan::{MAX_CHAIN, MAX_MAX_SLOTS, Resume};
    use crate::preset::walltime::Walltime;
    use proptest::collection::vec;
    use proptest::option::of;
    use proptest::prelude::*;
    let verb = prop_oneof![
        (a_name(), 1..=MAX_CHAIN).prop_map(|(preset, k)| (Verb::Launch { preset }, Some(k), None)),
        (a_name(), of(a_name())).prop_map(|(cell, as_cell)| (Verb::Grid { cell }, None, as_cell)),
        a_name().prop_map(|grid| (Verb::GridAll { grid }, None, None)),
    ];
    let time = (1u64..=365 * 86400).prop_map(|s| {
        let text = format!(
            "{}-{:02}:{:02}:{:02}",
            s / 86400,
            s / 3600 % 24,
            s / 60 % 60,
            s % 60
        );
        text.parse::<Walltime>().expect("a wall time")
    });
    let flags = (
        of(1u32..=64),
        of(a_name()),
        of(time),
        of(a_name()),
        (any::<bool>(), any::<bool>()),
        of(1..=MAX_MAX_SLOTS),
        vec(0..Allow::ALL.len(), 0..3),
        vec(a_name(), 0..3),
        vec("[^\0]{0,12}", 0..3),
    );
    (verb, flags).prop_map(|((verb, chain, as_cell), flags)| {
        let (nodes, qos, time, job_name, (latest, wipe), until_done, allow, skip, overrides) =
            flags;
        let grid_all = matches!(verb, Verb::GridAll { .. });
        Ask {
            nodes,
            qos,
            time,
            job_name,
            resume: if latest {
                Resume::Latest
            } else {
                Resume::Fresh
            },
            // A resume never wipes: the printer leaves `--wipe` out of one.
            wipe: wipe && !latest,
            until_done,
            chain,
            as_cell,
            skip: if grid_all { skip } else { Vec::new() },
            allow: allow.iter().map(|&i| Allow::ALL[i].1.to_owned()).collect(),
            overrides,
            ..Ask::bare(verb)
        }
    })
}

proptest::proptest! {
    /// Every flag of a plan is written back by one printer: whatever `launch` or `grid` prints for
    /// the user to run, rlctl's own parser reads back into the same ask, every flag kept.
    #[test]
    fn every_printed_ask_parses_back_into_itself(ask in an_ask()) {
        let cli = Cli::try_parse_from(ask.words()).map_err(|e| {
            proptest::test_runner::TestCaseError::fail(format!("{}: {e}", ask.command()))
        })?;
        let parsed = match cli.command {
            Command::Launch(args) => args.ask(),
            Command::Grid(args) => args.ask(),
            other => panic!("not launch or grid: {other:?}"),
        };
        proptest::prop_assert_eq!(parsed, ask);
    }
}

#[test]
fn a_wipe_is_written_back_with_a_fresh_start_and_never_with_a_resume() {
    let Command::Launch(args) = parse(&["launch", "p", "--wipe", "--chain", "3"]) else {
        panic!("not launch");
    };
    assert_eq!(args.ask().command(), "rlctl launch p --wipe --chain 3");
    let rest = Ask {
        resume: crate::plan::Resume::Latest,
        chain: Some(2),
        ..args.ask()
    };
    assert_eq!(rest.command(), "rlctl launch p --resume latest --chain 2");
}
