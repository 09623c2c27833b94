//! What rlctl writes, when nobody reads it or the input is hostile: a closed or full stderr
//! or stdout ends a command quietly with its own status (never a panic's 101), `logs` streams a
//! log in constant memory, echoed input is clipped, TAB completion writes nothing into the
//! prompt, a missing log is said as such, and a suggested `--time` is one `--time` takes.

use crate::common::recorded_logs;
use crate::common::{Sandbox, ok, stderr, stdout};
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

/// The exit code of `cmd` run with its stderr (`stderr`), whatever it is.
fn code_with_stderr(cmd: &mut Command, stderr: Stdio) -> Option<i32> {
    cmd.stdout(Stdio::null())
        .stderr(stderr)
        .status()
        .unwrap()
        .code()
}

/// A pipe whose reading end is already closed: every write to it fails with EPIPE.
fn closed_pipe() -> Stdio {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    writer.into()
}

/// The same command run in bash with its stderr closed (`exec 2>&-`).
fn code_with_stderr_closed(sandbox: &Sandbox, args: &[&str]) -> Option<i32> {
    let cmd = sandbox.rlctl();
    let mut bash = Command::new("bash");
    bash.args(["-c", "exec 2>&-; exec \"$@\"", "bash", crate::common::BIN])
        .args(args)
        .stdout(Stdio::null());
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => bash.env(k, v),
            None => bash.env_remove(k),
        };
    }
    bash.status().unwrap().code()
}

#[test]
fn a_closed_or_full_stderr_ends_with_the_commands_own_status() {
    let sandbox = Sandbox::new();
    let cases: [(&[&str], i32); 4] = [
        // Writes a note and the estimate on stderr, then succeeds.
        (&["launch", "gsm8k-canary", "--dry-run"], 0),
        // Preflight problems: its error goes to stderr.
        (
            &[
                "check",
                "gsm8k-canary",
                "--",
                "trainer.train_batch_size=100",
            ],
            1,
        ),
        (&["launch", "no-such-preset"], 2),
        (&["status", "no-such-run"], 2),
    ];
    for (args, code) in cases {
        let full = Stdio::from(File::create("/dev/full").unwrap());
        assert_eq!(
            code_with_stderr(sandbox.rlctl().args(args), full),
            Some(code),
            "stderr on /dev/full: {args:?}"
        );
        assert_eq!(
            code_with_stderr(sandbox.rlctl().args(args), closed_pipe()),
            Some(code),
            "stderr a closed pipe: {args:?}"
        );
        assert_eq!(
            code_with_stderr_closed(&sandbox, args),
            Some(code),
            "stderr closed: {args:?}"
        );
    }
    // A warning on the way (a torn ledger line) changes nothing either.
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    let ledger = sandbox.root().join("work/runs/ledger.jsonl");
    let mut file = File::options().append(true).open(&ledger).unwrap();
    file.write_all(b"{\"torn\n").unwrap();
    let listed = sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--dry-run"])
        .stdout(Stdio::null())
        .stderr(closed_pipe())
        .status()
        .unwrap();
    assert_eq!(listed.code(), Some(0));
}

#[test]
fn a_closed_stdout_ends_quietly_with_0() {
    let sandbox = Sandbox::new();
    for args in [
        &["launch", "gsm8k-canary", "--dry-run"][..],
        &["list"],
        &["show", "gsm8k-canary"],
    ] {
        let output = sandbox
            .rlctl()
            .args(args)
            .stdout(closed_pipe())
            .output()
            .unwrap();
        assert_eq!(
            output.status.code(),
            Some(0),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(!stderr(&output).contains("error"), "{}", stderr(&output));
    }
}

/// The peak resident memory of a running process, in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn logs_streams_a_large_log_and_ends_quietly_when_the_reader_goes() {
    let sandbox = Sandbox::new();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    let log = recorded_logs(&sandbox)["gsm8k-canary"].clone();
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    // 96 MiB of numbered lines.
    let mut out = std::io::BufWriter::new(File::create(&log).unwrap());
    let line = format!("{}\n", "x".repeat(1000));
    for i in 0..96 * 1024 {
        write!(out, "line {i:06} {line}").unwrap();
    }
    out.flush().unwrap();
    drop(out);
    let mut logs = sandbox
        .rlctl()
        .args(["logs", "gsm8k-canary"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut reader = BufReader::new(logs.stdout.take().unwrap());
    let mut first = String::new();
    reader.read_line(&mut first).unwrap();
    assert!(first.starts_with("line 000000 xxx"), "{first:?}");
    // Blocked on the full pipe now: what it holds is what it read ahead.
    std::thread::sleep(std::time::Duration::from_millis(300));
    let peak = peak_rss_kib(logs.id());
    drop(reader);
    let output = logs.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stderr(&output), "", "a closed pipe ends quietly");
    assert!(
        peak < 40 * 1024,
        "rlctl logs held {peak} KiB while printing a 96 MiB log"
    );
}

#[test]
fn huge_inputs_are_echoed_clipped() {
    let sandbox = Sandbox::new();
    // The most one argument may hold on Linux is 128 KiB.
    let huge = "x".repeat(100_000);
    let cases = [
        vec!["launch".to_owned(), huge.clone()],
        vec!["status".to_owned(), huge.clone()],
        vec![
            "check".to_owned(),
            "gsm8k-canary".to_owned(),
            "--".to_owned(),
            format!("trainer.{huge}=1"),
        ],
        vec![
            "check".to_owned(),
            "gsm8k-canary".to_owned(),
            "--".to_owned(),
            format!("trainer.epochs={huge}"),
        ],
        vec![
            "check".to_owned(),
            "gsm8k-canary".to_owned(),
            "--".to_owned(),
            format!("trainer.epochs={huge},1"),
        ],
        vec![
            "launch".to_owned(),
            "gsm8k-canary".to_owned(),
            "--time".to_owned(),
            huge.clone(),
        ],
    ];
    for args in cases {
        let output = sandbox.rlctl().args(&args).output().unwrap();
        let err = stderr(&output);
        assert!(!output.status.success());
        assert!(
            err.len() < 2000 && err.contains("… (100"),
            "{} bytes for {}: {}",
            err.len(),
            &args[..args.len() - 1].join(" "),
            err.replace(&"x".repeat(100), "x…")
        );
    }
}

#[test]
fn completion_writes_nothing_into_the_prompt() {
    let sandbox = Sandbox::new();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    let ledger = sandbox.root().join("work/runs/ledger.jsonl");
    let mut file = File::options().append(true).open(&ledger).unwrap();
    file.write_all(b"not a record\n{\"torn\": \n").unwrap();
    // Without completion the torn lines are warned about.
    let warned = stderr(&ok(sandbox.rlctl().args([
        "launch",
        "gsm8k-canary",
        "--dry-run",
    ])));
    assert!(warned.contains("not a ledger record"), "{warned}");

    let script = stdout(&ok(sandbox.rlctl().args(["completions", "bash"])));
    let driver = format!(
        "source /dev/stdin <<'EOF'\n{script}\nEOF\n\
         COMP_WORDS=(rlctl status g); COMP_CWORD=2; COMP_LINE=\"${{COMP_WORDS[*]}}\"; COMP_POINT=${{#COMP_LINE}}\n\
         _clap_complete_rlctl rlctl g status\n\
         printf '%s\\n' \"${{COMPREPLY[@]}}\"\n"
    );
    let cmd = sandbox.rlctl();
    let mut bash = Command::new("bash");
    bash.args(["--norc", "--noprofile", "-c", &driver]);
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => bash.env(k, v),
            None => bash.env_remove(k),
        };
    }
    let output = bash.output().unwrap();
    assert!(output.status.success());
    assert_eq!(stderr(&output), "", "completion wrote into the prompt");
    assert_eq!(stdout(&output), "gsm8k-canary\n");
}

#[test]
fn a_missing_log_is_said_to_be_missing() {
    let sandbox = Sandbox::new();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    let log = recorded_logs(&sandbox)["gsm8k-canary"].clone();
    assert!(!log.exists());
    let said = format!(
        "gsm8k-canary (job 1001) has no log at `{}` (no such file): the job may not have started yet",
        log.display()
    );
    for args in [&["metrics", "gsm8k-canary"][..], &["logs", "gsm8k-canary"]] {
        let output = sandbox.rlctl().args(args).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&output).contains(&said),
            "{args:?}: {}",
            stderr(&output)
        );
    }
    // Not queued, not accounted: watch shows the frame, then says the log is missing.
    let output = sandbox
        .rlctl()
        .args(["watch", "gsm8k-canary", "--once"])
        .output()
        .unwrap();
    assert!(stdout(&output).contains(&said), "{}", stdout(&output));
    assert!(!output.status.success());
    // A path to a log that is not there is not an unknown run.
    let gone = sandbox.root().join("gone/slurm-1.out");
    let output = sandbox.rlctl().arg("metrics").arg(&gone).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr(&output),
        format!(
            "rlctl: error: cannot read `{}`: No such file or directory (os error 2)\n",
            gone.display()
        )
    );
}

#[test]
fn a_suggested_time_is_one_time_takes() {
    let sandbox = Sandbox::new();
    crate::common::write_parquet(&sandbox.root().join("work/data/gsm8k/train.parquet"), 7473);
    // A run of some 3 days at the reference speed, on 30-minute slots.
    let output = sandbox
        .rlctl()
        .args([
            "launch",
            "gsm8k-canary",
            "--dry-run",
            "--",
            "trainer.epochs=120",
        ])
        .output()
        .unwrap();
    let err = stderr(&output);
    let time = err
        .split("(--time ")
        .nth(1)
        .and_then(|rest| rest.split(',').next())
        .unwrap_or_else(|| panic!("no --time suggested: {err}"));
    // Past a chain's 100 links, the slots come from one job that requeues itself.
    let slots = err
        .split("launch with ")
        .nth(1)
        .and_then(|rest| rest.split(" (and").next())
        .unwrap_or_else(|| panic!("no slots suggested: {err}"));
    assert!(slots.starts_with("--until-done --max-slots "), "{err}");
    let mut flags: Vec<&str> = slots.split(' ').collect();
    flags.extend(["--", "trainer.epochs=120"]);
    let again = sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--dry-run"])
        .args(&flags)
        .output()
        .unwrap();
    assert!(
        !stderr(&again).contains("invalid value"),
        "{}",
        stderr(&again)
    );
    assert!(
        time.contains('-'),
        "more than a day is written with days: {time}"
    );
    let output = sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--dry-run", "--time", time])
        .output()
        .unwrap();
    assert!(
        !stderr(&output).contains("not a wall time"),
        "--time {time}: {}",
        stderr(&output)
    );
}
