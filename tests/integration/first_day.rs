//! A newcomer's first day without surprises (issue 38): each friction found by trying rlctl as
//! a new user would, held here against the real binary.

use crate::common::{Sandbox, fails, ok, recorded_logs, staged, stderr, stdout};

/// `status --watch --once`, as the docs pair them: one table, then the exit.
#[test]
fn status_watch_once_draws_once_and_exits() {
    let sandbox = Sandbox::new();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    sandbox.queue("1001|gsm8k-canary|PENDING|boost_qos_dbg\n");
    let output = sandbox
        .rlctl()
        .args(["status", "--watch", "--once"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("gsm8k-canary"),
        "{}",
        stdout(&output)
    );
}

/// `init` without its flags names all of them in one message, not one per try.
#[test]
fn init_names_every_missing_flag_at_once() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("clusters")).unwrap();
    let err = fails(
        crate::common::rlctl()
            .args(["init", "leonardo", "--presets"])
            .arg(dir.path())
            .env_remove("WORK")
            .env_remove("FAST")
            .env_remove("SCRATCH"),
    );
    assert!(err.contains("3 things to fix, all at once:"), "{err}");
    for flag in [
        "pass --account ACCOUNT",
        "pass --work DIR",
        "pass --scratch DIR",
    ] {
        assert!(err.contains(flag), "{flag}: {err}");
    }
    assert_eq!(err.matches("rlctl: error").count(), 1, "{err}");
}

/// Each command that queues or ends something says what to run next, on stderr; stdout and
/// `--json` are as they were, and a dry run says nothing of the kind.
#[test]
fn commands_that_queue_or_end_say_the_next_command() {
    let sandbox = Sandbox::new();
    sandbox.scancel();
    let dry = ok(sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--dry-run"]));
    assert!(!stderr(&dry).contains("next:"), "{}", stderr(&dry));
    let launched = ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    assert!(
        stderr(&launched).contains(
            "next: `rlctl watch gsm8k-canary` follows it; `rlctl status gsm8k-canary` lists its jobs"
        ),
        "{}",
        stderr(&launched)
    );
    assert!(!stdout(&launched).contains("next:"));
    let cell = ok(sandbox
        .rlctl()
        .args(["grid", "gsm8k-throughput/tbs64", "--json"]));
    assert!(!stderr(&cell).contains("next:"), "{}", stderr(&cell));
    serde_json::from_str::<serde_json::Value>(&stdout(&cell)).unwrap();
    let cell = ok(sandbox.rlctl().args(["grid", "gsm8k-throughput/tbs128"]));
    assert!(
        stderr(&cell).contains("next: `rlctl watch gsm8k-throughput/tbs128`"),
        "{}",
        stderr(&cell)
    );
    sandbox.queue("1001|gsm8k-canary|RUNNING|boost_qos_dbg\n");
    let cancelled = ok(sandbox.rlctl().args(["cancel", "gsm8k-canary"]));
    assert!(
        stderr(&cancelled).contains("next: `rlctl status gsm8k-canary` shows them end"),
        "{}",
        stderr(&cancelled)
    );
    let retired = ok(sandbox.rlctl().args(["retire", "gsm8k-canary", "--yes"]));
    assert!(
        stderr(&retired).contains("next: `rlctl launch gsm8k-canary` runs it afresh"),
        "{}",
        stderr(&retired)
    );
    let retired = ok(sandbox
        .rlctl()
        .args(["retire", "gsm8k-throughput/tbs128", "--yes"]));
    assert!(
        stderr(&retired).contains("next: `rlctl grid gsm8k-throughput/tbs128` runs it afresh"),
        "{}",
        stderr(&retired)
    );
}

/// A log's colour codes (vLLM's, Ray's) do not reach a pipe unless asked for.
#[test]
fn logs_into_a_pipe_are_plain_text() {
    let sandbox = Sandbox::new();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    let log = recorded_logs(&sandbox)["gsm8k-canary"].clone();
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    let coloured = "\x1b[32mINFO\x1b[0m step 1\n\x1b[1;31mERROR\x1b[0m oom\n";
    std::fs::write(&log, coloured).unwrap();
    let plain = stdout(&ok(sandbox.rlctl().args(["logs", "gsm8k-canary"])));
    assert_eq!(plain, "INFO step 1\nERROR oom\n");
    let tail = stdout(&ok(sandbox.rlctl().args([
        "logs",
        "gsm8k-canary",
        "--tail",
        "1",
    ])));
    assert_eq!(tail, "ERROR oom\n");
    let kept = stdout(&ok(sandbox.rlctl().args([
        "logs",
        "gsm8k-canary",
        "--color",
        "always",
    ])));
    assert_eq!(kept, coloured);
}

/// Two jobs of one run, named by their ids, are two columns told apart.
#[test]
fn diff_of_two_jobs_labels_each_column_by_its_job() {
    let sandbox = Sandbox::new();
    ok(sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--chain", "2"])
        .args(["--", "trainer.ckpt_interval=20"]));
    let out = stdout(&ok(sandbox.rlctl().args(["diff", "1001", "1002"])));
    assert!(
        out.contains("gsm8k-canary (job 1001) and gsm8k-canary (job 1002) set all"),
        "{out}"
    );
    assert!(
        (out.lines()).any(|l| l.contains("(job 1001)") && l.contains("(job 1002)")),
        "{out}"
    );
}

/// `check` refuses a model `stage --status` calls incomplete: one verdict, said alike.
#[test]
fn check_refuses_a_model_stage_calls_incomplete() {
    let sandbox = Sandbox::new();
    let snapshot = sandbox
        .root()
        .join("work/hub/models--Qwen--Qwen2.5-1.5B-Instruct/snapshots/0123abcd");
    for file in ["tokenizer_config.json", "tokenizer.model"] {
        std::fs::remove_file(snapshot.join(file)).unwrap();
    }
    let output = sandbox
        .rlctl()
        .args(["check", "gsm8k-canary"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let incomplete = "incomplete: no tokenizer_config.json, tokenizer.json";
    assert!(stderr(&output).contains(incomplete), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("rlctl stage gsm8k-canary"),
        "{}",
        stderr(&output)
    );
    let status = sandbox
        .rlctl()
        .args(["stage", "gsm8k-canary", "--status"])
        .output()
        .unwrap();
    assert!(stdout(&status).contains(incomplete), "{}", stdout(&status));
}

/// The canary's whole epoch (233 steps) outlasts its 30-minute debug QOS by rlctl's own
/// estimate: the warning gives the whole fix to copy, and that fix passes.
#[test]
fn the_canary_warning_gives_the_whole_fix_and_the_fix_passes() {
    let sandbox = staged();
    let err = stderr(&ok(sandbox.rlctl().args([
        "launch",
        "gsm8k-canary",
        "--dry-run",
    ])));
    let fix = "launch with --chain 2 -- trainer.ckpt_interval=162";
    assert!(err.contains(fix), "{err}");
    assert_eq!(err.matches("[slots]").count(), 1, "said once: {err}");
    let fixed = ok(sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--dry-run", "--chain", "2"])
        .args(["--", "trainer.ckpt_interval=162"]));
    assert!(!stderr(&fixed).contains("[slots]"), "{}", stderr(&fixed));
}

/// A grid's warnings name their cell, in `check --all` too, and come together.
#[test]
fn grid_warnings_name_their_cell_and_come_together() {
    let sandbox = Sandbox::new();
    let output = sandbox
        .rlctl()
        .args(["check", "--all", "gsm8k-throughput"])
        .output()
        .unwrap();
    let err = stderr(&output);
    let slots: Vec<&str> = err.lines().filter(|l| l.contains("[slots]")).collect();
    assert!(slots.len() >= 2, "{err}");
    for line in &slots {
        assert!(
            line.starts_with("rlctl: warning: gsm8k-throughput/combo_"),
            "{line}"
        );
    }
    let dry = stderr(&ok(sandbox.rlctl().args([
        "grid",
        "--all",
        "gsm8k-throughput",
        "--dry-run",
    ])));
    let kinds: Vec<&str> = (dry.lines())
        .filter_map(|l| l.strip_prefix("rlctl: "))
        .filter_map(|l| l.split(':').next())
        .filter(|k| ["warning", "note", "skipped"].contains(k))
        .collect();
    let mut grouped = kinds.clone();
    grouped.dedup();
    let mut unique = grouped.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(grouped.len(), unique.len(), "each kind together: {dry}");
}

/// A job ended by `rlctl cancel` ends `watch` plainly (exit 0), saying how to continue; one
/// cancelled by someone else is still reported as a run that died.
#[test]
fn your_own_cancel_does_not_end_watch_with_an_error() {
    let sandbox = Sandbox::new();
    sandbox.scancel();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    sandbox.queue("1001|gsm8k-canary|RUNNING|boost_qos_dbg\n");
    ok(sandbox.rlctl().args(["cancel", "gsm8k-canary"]));
    sandbox.sacct("1001|CANCELLED by 0|0:15");
    let output = sandbox
        .rlctl()
        .args(["watch", "gsm8k-canary", "--once"])
        .output()
        .unwrap();
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{err}");
    assert!(
        err.contains("ended CANCELLED, as `rlctl cancel` asked; to "),
        "{err}"
    );
    assert!(!err.contains("error"), "{err}");
    // The same end without rlctl's cancel (an admin's scancel) is a run that died.
    ok(sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--job-name", "other"]));
    sandbox.sacct("1001|CANCELLED by 0|0:15\n1002|CANCELLED by 0|0:15");
    let output = sandbox
        .rlctl()
        .args(["watch", "gsm8k-canary/other", "--once"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let err = stderr(&output);
    assert!(
        err.contains("rlctl: error:") && err.contains("job 1002 ended CANCELLED"),
        "{err}"
    );
}
