//! Whose account a submission runs on (the shipped profile is its author's: refused until
//! `rlctl init` writes yours), and `check` judging exactly what `launch` and `grid` judge.

use crate::common::staged;
use crate::common::{Sandbox, ok, stderr, stdout};

const SHIPPED: &str = "account AIFAC_5C0_290, folders of /leonardo_work/AIFAC_5C0_290/bfeuer00";

fn on_leonardo(sandbox: &Sandbox, args: &[&str]) -> std::process::Output {
    (sandbox.rlctl().args(["--cluster", "leonardo"]).args(args))
        .output()
        .unwrap()
}

#[test]
fn the_shipped_profile_submits_nothing_until_init_writes_yours() {
    let sandbox = Sandbox::new();
    let presets = sandbox.presets();
    let init = format!(
        "`rlctl init leonardo --account ACCOUNT --presets {}`",
        presets.display()
    );
    for args in [
        &["launch", "gsm8k-canary"][..],
        &["grid", "--all", "gsm8k-accuracy"],
        &["grid", "gsm8k-accuracy/lr1e-6"],
        &["tend"],
    ] {
        let output = on_leonardo(&sandbox, args);
        let err = stderr(&output);
        // It could not do its job: there is no profile of the user's to do it on.
        assert_eq!(output.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("on the cluster profile `leonardo`, the embedded default: it names account AIFAC_5C0_290"),
            "{args:?}: {err}"
        );
        assert!(err.contains(&init), "{args:?}: {err}");
        assert_eq!(sandbox.sbatch_calls(), 0, "{args:?}");
    }
    // A copy of the shipped file, word for word, is still its author's.
    let copy = presets.join("clusters/leonardo.toml");
    std::fs::write(&copy, include_str!("../../presets/clusters/leonardo.toml")).unwrap();
    let output = on_leonardo(&sandbox, &["launch", "gsm8k-canary"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert_eq!(sandbox.sbatch_calls(), 0);
    // The profile init writes is the user's: it submits, on the user's account.
    let mine = sandbox.root().join("mine");
    ok(sandbox
        .rlctl()
        .args(["init", "leonardo", "--force", "--account", "proj_me"])
        .arg("--work")
        .arg(mine.join("work"))
        .arg("--scratch")
        .arg(mine.join("scratch")));
    let output = on_leonardo(&sandbox, &["launch", "gsm8k-canary"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        !stderr(&output).contains("not yours"),
        "{}",
        stderr(&output)
    );
    assert_eq!(sandbox.sbatch_calls(), 1);
    let script = std::fs::read_to_string(sandbox.last_script()).unwrap();
    assert!(script.contains("#SBATCH --account=proj_me"), "{script}");
}

#[test]
fn a_look_on_the_shipped_profile_says_whose_account_and_folders_it_shows() {
    let sandbox = Sandbox::new();
    let note = format!(
        "rlctl: note: profile leonardo: the embedded default ({SHIPPED}), not yours; run `rlctl init leonardo --account ACCOUNT --presets {}`\n",
        sandbox.presets().display()
    );
    for args in [
        &["launch", "gsm8k-canary", "--dry-run"][..],
        &["grid", "--all", "gsm8k-accuracy", "--dry-run"],
        &["check", "gsm8k-canary"],
    ] {
        let output = on_leonardo(&sandbox, args);
        assert!(output.status.success(), "{args:?}: {}", stderr(&output));
        assert!(
            stderr(&output).starts_with(&note),
            "{args:?}: {}",
            stderr(&output)
        );
    }
    assert_eq!(sandbox.sbatch_calls(), 0);
    // The user's own profile says nothing of the kind.
    let output = ok(sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--dry-run"]));
    assert!(
        !stderr(&output).contains("not yours"),
        "{}",
        stderr(&output)
    );
}

/// A finished canary's log at `secs` per step.
fn log_at(secs: &[f64]) -> String {
    let mut log = String::new();
    for (i, s) in secs.iter().enumerate() {
        log.push_str(&format!(
            "WANDB_MIRROR kind=train step={} metrics={{\"timing/step\": {s}}}\n",
            i + 1
        ));
    }
    log
}

#[test]
fn check_warns_and_refuses_as_launch_does() {
    let sandbox = staged();
    // 233 steps at the reference speed need 2 slots of 30 minutes: launch warns, so does check.
    let warning = "warning: [slots] the estimated wall";
    let launched = ok(sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--dry-run"]));
    assert!(stderr(&launched).contains(warning), "{}", stderr(&launched));
    let checked = ok(sandbox.rlctl().args(["check", "gsm8k-canary"]));
    assert!(stderr(&checked).contains(warning), "{}", stderr(&checked));
    assert!(stderr(&checked).contains("needs 2 slot(s) of 30m00s"));
    // `--chain` counts as it does for launch: two slots, each saving a checkpoint.
    let found = sandbox.findings(
        &[
            "check",
            "gsm8k-canary",
            "--chain",
            "2",
            "--",
            "trainer.ckpt_interval=100",
        ],
        0,
    );
    assert!(
        !crate::common::findings::fired(&found, "slots"),
        "{found:#?}"
    );
    // Once a run of these knobs is measured, launch refuses; check refuses the same, exit 1.
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    let logs = crate::common::recorded_logs(&sandbox);
    let log = &logs["gsm8k-canary"];
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    std::fs::write(log, log_at(&[60.0, 7.0, 8.0, 12.0])).unwrap();
    let refusal = |args: &[&str]| {
        let output = sandbox.rlctl().args(args).output().unwrap();
        assert_eq!(
            output.status.code(),
            Some(1),
            "{args:?}: {}",
            stderr(&output)
        );
        let err = stderr(&output);
        let at = err
            .find("[slots]")
            .unwrap_or_else(|| panic!("{args:?}: {err}"));
        err[at..].to_owned()
    };
    assert_eq!(
        refusal(&["check", "gsm8k-canary"]),
        refusal(&["launch", "gsm8k-canary", "--dry-run"])
    );
    assert_eq!(sandbox.sbatch_calls(), 1);
}

#[test]
fn check_all_shows_recorded_cells_as_recorded() {
    let sandbox = staged();
    ok(sandbox.rlctl().args(["grid", "gsm8k-accuracy/lr1e-6"]));
    // `grid --all` leaves the recorded cell alone, and so does `check --all`: its checkpoints
    // are its own, no problem of a launch to come.
    let output = sandbox
        .rlctl()
        .args(["check", "--all", "gsm8k-accuracy"])
        .output()
        .unwrap();
    let out = stdout(&output);
    let line = (out.lines())
        .find(|l| l.starts_with("gsm8k-accuracy/lr1e-6 "))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        line.ends_with("recorded (job 1001; `rlctl status gsm8k-accuracy/lr1e-6`)"),
        "{out}"
    );
    assert!(out.contains(", 1 recorded, "), "{out}");
}
