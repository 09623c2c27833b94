//! Every step judged: `watch --once` and `tend` in cron each keep the last train step they
//! judged next to the log, so a grad-norm spike between two looks is reported once, by the
//! look after it, naming its step, and not again.

use crate::common::{Sandbox, ok, stdout};
use std::io::Write;
use std::path::PathBuf;
use std::process::Output;

/// The canary launched (job 1001) and running, with its log.
fn running_canary(sandbox: &Sandbox) -> PathBuf {
    ok(sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--", "trainer.max_steps=30"]));
    sandbox.queue("1001|gsm8k-canary|RUNNING\n");
    sandbox
        .root()
        .join("work/runs/gsm8k-canary/gsm8k-canary/001/gsm8k-canary_1001.out")
}

/// Appends train steps `steps` to the log: healthy, but for a grad norm 100 times the others'
/// at step 15.
fn append(log: &PathBuf, steps: std::ops::RangeInclusive<u64>) {
    let mut file = (std::fs::OpenOptions::new().create(true).append(true))
        .open(log)
        .unwrap();
    for n in steps {
        let grad = if n == 15 { 50.0 } else { 0.5 };
        writeln!(
            file,
            "WANDB_MIRROR kind=train step={n} metrics={{\"policy/policy_entropy\": 0.6, \
             \"policy/raw_grad_norm\": {grad}, \"timing/step\": 40.0}}"
        )
        .unwrap();
    }
}

/// `rlctl args` three times: on steps 1..10, after steps 11..25 (the spike at 15) were
/// appended, and again; each look's output and exit code.
fn three_looks(args: &[&str]) -> Vec<(String, Option<i32>)> {
    let sandbox = Sandbox::new();
    let log = running_canary(&sandbox);
    let look = || {
        let out: Output = sandbox.rlctl().args(args).output().unwrap();
        (stdout(&out), out.status.code())
    };
    append(&log, 1..=10);
    let first = look();
    append(&log, 11..=25);
    vec![first, look(), look()]
}

#[test]
fn watch_once_reports_a_spike_between_two_looks_once_naming_its_step() {
    let looks = three_looks(&["watch", "gsm8k-canary", "--once"]);
    let [
        (before, before_code),
        (after, after_code),
        (again, again_code),
    ] = &looks[..]
    else {
        unreachable!()
    };
    assert_eq!(*before_code, Some(0), "{before}");
    assert!(!before.contains("ALERT"), "{before}");
    assert_eq!(*after_code, Some(1), "{after}");
    assert!(
        after.contains("ALERT [grad-spike] grad norm spiked to 50 at step 15"),
        "{after}"
    );
    assert_eq!(after.matches("ALERT").count(), 1, "{after}");
    assert_eq!(*again_code, Some(0), "{again}");
    assert!(!again.contains("ALERT"), "{again}");
}

#[test]
fn tend_reports_a_spike_between_two_passes_once_naming_its_step() {
    let looks = three_looks(&["tend"]);
    let [
        (before, before_code),
        (after, after_code),
        (again, again_code),
    ] = &looks[..]
    else {
        unreachable!()
    };
    assert_eq!(*before_code, Some(0), "{before}");
    assert!(!before.contains("ALERT"), "{before}");
    assert_eq!(*after_code, Some(1), "{after}");
    assert!(
        after.contains(
            "gsm8k-canary job 1001: ALERT [grad-spike] grad norm spiked to 50 at step 15"
        ),
        "{after}"
    );
    assert_eq!(after.matches("ALERT").count(), 1, "{after}");
    assert_eq!(*again_code, Some(0), "{again}");
    assert!(!again.contains("ALERT"), "{again}");
}

#[test]
fn tend_and_watch_keep_their_own_watermark_and_a_garbled_one_is_no_look() {
    let sandbox = Sandbox::new();
    let log = running_canary(&sandbox);
    append(&log, 1..=10);
    for args in [&["tend"][..], &["watch", "gsm8k-canary", "--once"]] {
        ok(sandbox.rlctl().args(args));
    }
    append(&log, 11..=25);
    // watch's look does not hide the spike from tend's next pass.
    let watch = sandbox
        .rlctl()
        .args(["watch", "gsm8k-canary", "--once"])
        .output()
        .unwrap();
    assert_eq!(watch.status.code(), Some(1), "{}", stdout(&watch));
    let tend = sandbox.rlctl().arg("tend").output().unwrap();
    assert!(stdout(&tend).contains("at step 15"), "{}", stdout(&tend));
    // A watermark that is not a step is none: the latest step alone is judged, no panic.
    let seen = log.with_file_name(".gsm8k-canary_1001.out.seen-watch");
    std::fs::write(&seen, "garbage\n").unwrap();
    let watch = ok(sandbox.rlctl().args(["watch", "gsm8k-canary", "--once"]));
    assert!(!stdout(&watch).contains("ALERT"), "{}", stdout(&watch));
    assert_eq!(std::fs::read_to_string(&seen).unwrap().trim(), "25");
}
