//! A run is resumed with its own knobs, and every command rlctl hands back to be run (watch's
//! hint, tend's advice, the rest of a chain, a changed cell's ways out) runs as printed: each is
//! taken from the output, split by a real shell, and run through the real binary.

use crate::common::{Sandbox, fails, ok, save_whole, stderr, stdout};
use std::path::PathBuf;
use std::process::Output;

/// The canary's checkpoint folder under job name `member`, as SkyRL writes it.
fn ckpt(sandbox: &Sandbox, member: &str) -> PathBuf {
    sandbox
        .root()
        .join("work/checkpoints/gsm8k-canary")
        .join(member)
        .join("ckpt")
}

/// Every ledger record, oldest first.
fn records(sandbox: &Sandbox) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(sandbox.root().join("work/runs/ledger.jsonl")).unwrap();
    (text.lines())
        .filter(|l| !l.starts_with("{\"retired\""))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The first backticked `rlctl ...` command after `phrase` in `text`.
fn command_after(text: &str, phrase: &str) -> String {
    let at = text
        .find(phrase)
        .unwrap_or_else(|| panic!("no `{phrase}` in:\n{text}"));
    let rest = &text[at + phrase.len()..];
    let start = rest.find("`rlctl ").expect("a command") + 1;
    let end = rest[start..].find('`').expect("its end") + start;
    rest[start..end].to_owned()
}

/// The rest of the line after `phrase` in `text`: a command printed on a line of its own.
fn line_after(text: &str, phrase: &str) -> String {
    let at = text
        .find(phrase)
        .unwrap_or_else(|| panic!("no `{phrase}` in:\n{text}"));
    let rest = &text[at + phrase.len()..];
    rest.lines().next().unwrap_or_default().to_owned()
}

/// `line` as the user's shell runs it: split by `sh`, `rlctl` replaced by the binary under test.
fn run_printed(sandbox: &Sandbox, line: &str) -> Output {
    let split = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("printf '%s\\0' {line}"))
        .output()
        .unwrap();
    let words: Vec<String> = (String::from_utf8(split.stdout).unwrap())
        .split_terminator('\0')
        .map(str::to_owned)
        .collect();
    assert_eq!(words[0], "rlctl", "{line}");
    sandbox.rlctl().args(&words[1..]).output().unwrap()
}

const KNOBS: [&str; 2] = ["trainer.max_steps=40", "trainer.ckpt_interval=5"];

fn knob<'a>(record: &'a serde_json::Value, key: &str) -> &'a str {
    record["knobs"][key].as_str().unwrap_or("(unset)")
}

#[test]
fn a_resume_without_overrides_keeps_the_knobs_the_run_was_launched_with() {
    let sandbox = Sandbox::new();
    ok(sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--"])
        .args(KNOBS));
    save_whole(&ckpt(&sandbox, "gsm8k-canary"), 5);
    // Job 1001 has left the queue (cancelled): the resume the guide and watch suggest.
    ok(sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--resume", "latest"]));
    let resumed = &records(&sandbox)[1];
    assert_eq!(knob(resumed, "trainer.max_steps"), "40");
    assert_eq!(knob(resumed, "trainer.ckpt_interval"), "5");
    let run = std::fs::read_to_string(sandbox.last_script().with_file_name("run.sh")).unwrap();
    for knob in KNOBS {
        assert!(run.contains(knob), "the trainer gets {knob}:\n{run}");
    }
    // The same knobs given again are no change.
    ok(sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--resume", "latest", "--"])
        .args(KNOBS));
    assert_eq!(sandbox.sbatch_calls(), 3);
}

#[test]
fn a_resume_with_other_knobs_is_refused_with_each_change_unless_asked_for() {
    let sandbox = Sandbox::new();
    ok(sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--"])
        .args(KNOBS));
    save_whole(&ckpt(&sandbox, "gsm8k-canary"), 5);
    let output = sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--resume", "latest", "--"])
        .args(["trainer.max_steps=80", "trainer.ckpt_interval=5"])
        .output()
        .unwrap();
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(
        err.contains("gsm8k-canary ran as job 1001 with other knobs (trainer.max_steps: 40 -> 80)"),
        "{err}"
    );
    assert!(err.contains("--change-knobs"), "{err}");
    assert_eq!(sandbox.sbatch_calls(), 1, "nothing submitted");
    // The resume it names runs, with the recorded knobs.
    let with_them = command_after(&err, "Resume it with them: ");
    assert_eq!(
        with_them,
        "rlctl launch gsm8k-canary --resume latest -- trainer.ckpt_interval=5 trainer.max_steps=40"
    );
    let again = run_printed(&sandbox, &with_them);
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(knob(&records(&sandbox)[1], "trainer.max_steps"), "40");
    // Asked for: resumed with the new knobs.
    ok(sandbox
        .rlctl()
        .args([
            "launch",
            "gsm8k-canary",
            "--resume",
            "latest",
            "--change-knobs",
        ])
        .args(["--", "trainer.max_steps=80", "trainer.ckpt_interval=5"]));
    assert_eq!(knob(&records(&sandbox)[2], "trainer.max_steps"), "80");
    // Asked for or not, a resume never changes what SkyRL cannot resume across: the GPU count
    // the checkpoint was saved by.
    let output = sandbox
        .rlctl()
        .args([
            "launch",
            "gsm8k-canary",
            "--resume",
            "latest",
            "--change-knobs",
        ])
        .args([
            "--nodes",
            "2",
            "--",
            "trainer.max_steps=80",
            "trainer.ckpt_interval=5",
        ])
        .output()
        .unwrap();
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(err.contains("[resume-world]"), "{err}");
    assert_eq!(sandbox.sbatch_calls(), 3, "nothing submitted");
}

/// The canary launched as `--job-name two --until-done --max-slots 3` with [`KNOBS`], having
/// saved step `saved`, ended FAILED as sacct says; `watch --once`'s refusal.
fn dead_two(sandbox: &Sandbox, saved: Option<u64>) -> String {
    ok(sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--job-name", "two"])
        .args(["--until-done", "--max-slots", "3", "--"])
        .args(KNOBS));
    if let Some(step) = saved {
        save_whole(&ckpt(sandbox, "two"), step);
    }
    sandbox.sacct("1001|FAILED|1:0");
    let output = sandbox
        .rlctl()
        .args(["watch", "gsm8k-canary/two", "--once"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    stderr(&output)
}

#[test]
fn watch_hints_a_resume_that_runs_as_printed_and_is_the_same_run() {
    let sandbox = Sandbox::new();
    let err = dead_two(&sandbox, Some(5));
    let hint = command_after(
        &err,
        "continue from step 5 (its newest whole checkpoint) with ",
    );
    assert_eq!(
        hint,
        "rlctl launch gsm8k-canary --job-name two --until-done --max-slots 3 --resume latest -- \
         trainer.ckpt_interval=5 trainer.max_steps=40"
    );
    let resumed = run_printed(&sandbox, &hint);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    // The same plan: target, job name, checkpoint folder, slots, knobs; a resume.
    let records = records(&sandbox);
    let (was, is) = (&records[0], &records[1]);
    for field in [
        "target",
        "job_name",
        "checkpoint_dir",
        "max_slots",
        "knobs",
        "nodes",
    ] {
        assert_eq!(was[field], is[field], "{field}");
    }
    // A resume: the wrapper never starts it as a first slot (which would start from step 0).
    let wrapper = std::fs::read_to_string(sandbox.last_script()).unwrap();
    assert!(wrapper.contains("\nfirst_slot=false\n"), "{wrapper}");
}

#[test]
fn a_hint_never_offers_a_checkpoint_the_run_did_not_save() {
    let sandbox = Sandbox::new();
    let err = dead_two(&sandbox, None);
    assert!(!err.contains("--resume latest"), "{err}");
    let fresh = command_after(&err, "fix the cause, then start it again from step 0 with ");
    assert_eq!(
        fresh,
        "rlctl launch gsm8k-canary --job-name two --until-done --max-slots 3 -- \
         trainer.ckpt_interval=5 trainer.max_steps=40"
    );
    // A step folder that is not whole: no command at all, and why.
    std::fs::create_dir_all(ckpt(&sandbox, "two").join("global_step_5")).unwrap();
    let output = sandbox
        .rlctl()
        .args(["watch", "gsm8k-canary/two", "--once"])
        .output()
        .unwrap();
    let err = stderr(&output);
    assert!(
        err.contains("fix the cause, then make its checkpoint folder safe to resume: `"),
        "{err}"
    );
    assert!(!err.contains("--resume latest"), "{err}");
    // What the hint started with runs as printed.
    std::fs::remove_dir(ckpt(&sandbox, "two").join("global_step_5")).unwrap();
    let again = run_printed(&sandbox, &fresh);
    assert!(again.status.success(), "{}", stderr(&again));
}

#[test]
fn tend_advises_a_command_of_the_run_itself_and_no_checkpoint_it_lacks() {
    let sandbox = Sandbox::new();
    ok(sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--job-name", "two", "--"])
        .args(KNOBS));
    sandbox.sacct("1001|TIMEOUT|0:0");
    let output = sandbox.rlctl().arg("tend").output().unwrap();
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(!text.contains("--resume latest"), "{text}");
    let advice = command_after(&text, "start it again from step 0 with that change: ");
    assert_eq!(
        advice,
        "rlctl launch gsm8k-canary --job-name two -- trainer.ckpt_interval=5 trainer.max_steps=40"
    );
    let again = run_printed(&sandbox, &advice);
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(records(&sandbox)[1]["job_name"], "two");
}

#[test]
fn the_rest_of_a_chain_cut_short_keeps_until_done_and_its_slots() {
    let sandbox = Sandbox::new();
    let output = sandbox
        .rlctl()
        .args([
            "launch",
            "gsm8k-canary",
            "--chain",
            "3",
            "--time",
            "00:20:00",
        ])
        .args(["--until-done", "--max-slots", "4"])
        .args(["--", "trainer.epochs=2", "trainer.ckpt_interval=20"])
        .env("FAKE_SBATCH_FAIL_AT", "2")
        .output()
        .unwrap();
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    let rest = line_after(&err, "submit the rest on the same checkpoint folder:\n  ");
    assert_eq!(
        rest,
        "rlctl launch gsm8k-canary --time 00:20:00 --until-done --max-slots 4 --resume latest \
         --chain 2 -- trainer.epochs=2 trainer.ckpt_interval=20"
    );
    let again = run_printed(&sandbox, &rest);
    assert!(again.status.success(), "{}", stderr(&again));
    let records = records(&sandbox);
    assert_eq!(records.len(), 3);
    for record in &records[1..] {
        assert_eq!(record["max_slots"], 4);
        assert_eq!(record["knobs"], records[0]["knobs"]);
        assert_eq!(record["checkpoint_dir"], records[0]["checkpoint_dir"]);
    }
}

#[test]
fn a_changed_cell_names_the_grid_command_as_asked_with_until_done() {
    let sandbox = Sandbox::new();
    ok(sandbox
        .rlctl()
        .args(["grid", "tbs128", "--", "trainer.epochs=2"]));
    // Saving every 10 steps: every cell's slot holds a checkpoint (the `slots` check).
    let all = [
        "grid",
        "--all",
        "gsm8k-throughput",
        "--until-done",
        "--max-slots",
        "2",
        "--",
        "trainer.ckpt_interval=10",
    ];
    let err = fails(sandbox.rlctl().args(all));
    let skip = command_after(&err, "or run the grid without it: ");
    assert_eq!(
        skip,
        "rlctl grid --all gsm8k-throughput --skip tbs128 --until-done --max-slots 2 -- \
         trainer.ckpt_interval=10"
    );
    let again = command_after(&err, "`rlctl retire gsm8k-throughput/tbs128` (");
    assert_eq!(
        again,
        "rlctl grid --all gsm8k-throughput --until-done --max-slots 2 -- trainer.ckpt_interval=10"
    );
    let as_new = command_after(&err, "run the change as a new cell, e.g. ");
    assert_eq!(
        as_new,
        "rlctl grid gsm8k-throughput/tbs128 --as tbs128-v2 --until-done --max-slots 2 -- \
         trainer.ckpt_interval=10"
    );
    ok(sandbox.rlctl().args(["retire", "gsm8k-throughput/tbs128"]));
    let rerun = run_printed(&sandbox, &again);
    assert!(rerun.status.success(), "{}", stderr(&rerun));
    let records = records(&sandbox);
    let tbs128: Vec<&serde_json::Value> = (records.iter())
        .filter(|r| r["target"] == "gsm8k-throughput/tbs128")
        .collect();
    assert_eq!(tbs128.len(), 2);
    assert_eq!(
        tbs128[1]["max_slots"], 2,
        "the rerun keeps the grid's --until-done"
    );
}

#[test]
fn a_cell_resumed_without_overrides_keeps_its_knobs_too() {
    let sandbox = Sandbox::new();
    ok(sandbox
        .rlctl()
        .args(["grid", "tbs128", "--", "trainer.epochs=2"]));
    let ckpt = sandbox
        .root()
        .join("work/checkpoints/gsm8k-throughput/tbs128/ckpt");
    save_whole(&ckpt, 5);
    ok(sandbox
        .rlctl()
        .args(["grid", "tbs128", "--resume", "latest"]));
    let records = records(&sandbox);
    assert_eq!(knob(&records[1], "trainer.epochs"), "2");
    assert_eq!(records[1]["knobs"], records[0]["knobs"]);
    // Other knobs are still the controlled grid's refusal, naming the cell's ways out.
    let err = fails(sandbox.rlctl().args([
        "grid",
        "tbs128",
        "--resume",
        "latest",
        "--",
        "trainer.epochs=3",
    ]));
    assert!(err.contains("trainer.epochs: 2 -> 3"), "{err}");
    assert!(
        err.contains("`rlctl grid gsm8k-throughput/tbs128 --as tbs128-v2 --resume latest -- trainer.epochs=3`"),
        "{err}"
    );
}
