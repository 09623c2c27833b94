//! The exit status contract, the same for every command: 0 all good, 1 the command ran and
//! found something wrong, 2 it could not do its job; a closed pipe ends quietly with 0.

use crate::common::{Sandbox, expect, rlctl};
use std::io::Read;
use std::process::Stdio;

#[test]
fn preflight_problems_exit_1() {
    expect([
        "check",
        "gsm8k-canary",
        "--",
        "trainer.train_batch_size=100",
    ])
    .status(1)
    .stderr_has("preflight found 1 problem")
    .run();
}

#[test]
fn a_command_that_cannot_do_its_job_exits_2() {
    expect(["launch", "gsm8k-canry", "--dry-run"])
        .status(2)
        .stderr_has("did you mean `gsm8k-canary`?")
        .run();
    // A usage error.
    expect(["launch", "--no-such-flag"]).status(2).run();

    let sandbox = Sandbox::new();
    sandbox.expect(["status", "never-launched"]).status(2).run();
    // A SLURM program that cannot run.
    sandbox
        .expect(["launch", "gsm8k-canary", "--sbatch", "/nonexistent/sbatch"])
        .status(2)
        .stdout("")
        .run();
}

#[test]
fn doctor_problems_exit_1() {
    // The sandbox stages no container, venv or checkout: doctor runs and finds problems.
    Sandbox::new()
        .expect(["doctor"])
        .status(1)
        .stderr_has("doctor found")
        .run();
}

#[test]
fn a_reader_that_goes_away_ends_rlctl_quietly_with_0() {
    // Far more than a pipe buffer: every cell of a grid, dry-run.
    let mut child = rlctl()
        .args(["grid", "--all", "gsm8k-accuracy", "--dry-run"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    child
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut first)
        .unwrap();
    drop(child.stdout.take());
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let code = child.wait().unwrap().code();
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("error"), "{err}");
}
