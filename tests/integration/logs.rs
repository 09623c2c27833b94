//! `rlctl logs` as a researcher on a login node reads a log of gigabytes: its last lines, its
//! path for a pager, its last traceback, and what it gains while the job runs.

use crate::common::{Sandbox, ok, recorded_logs, stderr, stdout};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// A sandbox with gsm8k-canary launched (job 1001) and its log holding `text`.
fn launched_with_log(text: &str) -> (Sandbox, PathBuf) {
    let sandbox = Sandbox::new();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    let log = recorded_logs(&sandbox)["gsm8k-canary"].clone();
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    std::fs::write(&log, text).unwrap();
    (sandbox, log)
}

#[test]
fn logs_tail_prints_only_the_last_lines_of_a_large_log() {
    // 40 MiB of lines, the last one without its newline.
    let mut text: String = (0..40_000)
        .map(|i| format!("line {i:06} {}\n", "x".repeat(1024)))
        .collect();
    text.push_str("the end");
    let (sandbox, _) = launched_with_log(&text);
    let start = Instant::now();
    let out = stdout(&ok(sandbox.rlctl().args([
        "logs",
        "gsm8k-canary",
        "--tail",
        "3",
    ])));
    let x = "x".repeat(1024);
    assert_eq!(
        out,
        format!("line 039998 {x}\nline 039999 {x}\nthe end"),
        "the last three lines"
    );
    assert!(start.elapsed() < Duration::from_secs(10));
    let out = stdout(&ok(sandbox.rlctl().args([
        "logs",
        "gsm8k-canary",
        "-n",
        "1",
    ])));
    assert_eq!(out, "the end");
}

#[test]
fn logs_path_prints_only_the_log_path() {
    let (sandbox, log) = launched_with_log("noise\n");
    let output = ok(sandbox.rlctl().args(["logs", "gsm8k-canary", "--path"]));
    assert_eq!(stdout(&output), format!("{}\n", log.display()));
    assert_eq!(stderr(&output), "");

    // A grid: every cell's log that exists; a cell not started yet is said on stderr.
    let sandbox = Sandbox::new();
    ok(sandbox.rlctl().args(["grid", "tbs128"]));
    ok(sandbox.rlctl().args(["grid", "tbs64"]));
    let logs = recorded_logs(&sandbox);
    let started = (logs.values())
        .find(|l| l.display().to_string().contains("tbs128"))
        .unwrap();
    std::fs::create_dir_all(started.parent().unwrap()).unwrap();
    std::fs::write(started, "noise\n").unwrap();
    let output = ok(sandbox.rlctl().args(["logs", "gsm8k-throughput", "--path"]));
    assert_eq!(stdout(&output), format!("{}\n", started.display()));
    assert!(
        stderr(&output).contains("gsm8k-throughput/tbs64 (job 1002) has no log at"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn logs_errors_prints_the_last_traceback_of_the_worker_that_raised_it() {
    let text = "Traceback (most recent call last):\n  File \"old.py\", line 1\nKeyError: 'old'\n\
        step 5 reward 0.4\n\
        (TrainWorker pid=77) Traceback (most recent call last):\n\
        (TrainWorker pid=77)   File \"trainer.py\", line 9, in step\n\
        (vLLMEngine pid=78) INFO throughput 1200 tok/s\n\
        (TrainWorker pid=77)     loss.backward()\n\
        (TrainWorker pid=77) torch.OutOfMemoryError: CUDA out of memory\n\
        (vLLMEngine pid=78) INFO shutting down\n\
        rlctl: ray job exited with status 1\n";
    let (sandbox, _) = launched_with_log(text);
    let out = stdout(&ok(sandbox.rlctl().args([
        "logs",
        "gsm8k-canary",
        "--errors",
    ])));
    assert_eq!(
        out,
        "(TrainWorker pid=77) Traceback (most recent call last):\n\
         (TrainWorker pid=77)   File \"trainer.py\", line 9, in step\n\
         (TrainWorker pid=77)     loss.backward()\n\
         (TrainWorker pid=77) torch.OutOfMemoryError: CUDA out of memory\n"
    );

    // No traceback: the last lines that read like errors, by the rule `tend` reports with.
    let (sandbox, log) =
        launched_with_log("INFO fine\nNCCL error: unhandled system error\nINFO more\n");
    let out = stdout(&ok(sandbox.rlctl().args([
        "logs",
        "gsm8k-canary",
        "--errors",
    ])));
    assert_eq!(out, "NCCL error: unhandled system error\n");

    // Nothing: said on stderr, and not an error.
    std::fs::write(&log, "INFO all good\n").unwrap();
    let output = ok(sandbox.rlctl().args(["logs", "gsm8k-canary", "--errors"]));
    assert_eq!(stdout(&output), "");
    assert!(
        stderr(&output).contains("no traceback or error line in the last 4 MiB of"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn logs_follow_starts_from_the_last_ten_lines_and_ends_quietly_when_the_reader_goes() {
    let text: String = (0..100).map(|i| format!("line {i}\n")).collect();
    let (sandbox, log) = launched_with_log(&text);
    sandbox.queue("1001|gsm8k-canary|RUNNING|boost_qos_dbg\n");
    let mut follow = sandbox
        .rlctl()
        .args(["logs", "gsm8k-canary", "-f"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut reader = BufReader::new(follow.stdout.take().unwrap());
    let mut read_line = || {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        line
    };
    let first: Vec<String> = (0..10).map(|_| read_line()).collect();
    let want: Vec<String> = (90..100).map(|i| format!("line {i}\n")).collect();
    assert_eq!(first, want, "the last ten lines first");
    let mut file = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    file.write_all(b"step 1 written after\n").unwrap();
    assert_eq!(read_line(), "step 1 written after\n");
    // The reader goes (`| head`): the next write ends rlctl quietly.
    drop(reader);
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        file.write_all(b"more\n").unwrap();
        if let Some(status) = follow.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "logs -f did not end");
        std::thread::sleep(Duration::from_millis(200));
    };
    let output = follow.wait_with_output().unwrap();
    assert_eq!(status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stderr(&output), "", "a closed pipe ends quietly");
}
