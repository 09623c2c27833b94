//! The exit status contract, the same for every command: 0 all good, 1 the command ran and
//! found something wrong, 2 it could not do its job; a closed pipe ends quietly with 0.

use crate::common::{Sandbox, rlctl, stderr};
use std::io::Read;
use std::process::Stdio;

fn status(cmd: &mut std::process::Command) -> (i32, String) {
    let output = cmd.output().unwrap();
    (output.status.code().unwrap(), stderr(&output))
}

#[test]
fn preflight_problems_exit_1() {
    let (code, err) = status(rlctl().args([
        "check",
        "gsm8k-canary",
        "--",
        "trainer.train_batch_size=100",
    ]));
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("preflight found 1 problem"), "{err}");
}

#[test]
fn a_command_that_cannot_do_its_job_exits_2() {
    let (code, err) = status(rlctl().args(["launch", "gsm8k-canry", "--dry-run"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("did you mean `gsm8k-canary`?"), "{err}");

    let (code, err) = status(rlctl().args(["launch", "--no-such-flag"]));
    assert_eq!(code, 2, "usage errors: {err}");

    let sandbox = Sandbox::new();
    let (code, err) = status(sandbox.rlctl().args(["status", "never-launched"]));
    assert_eq!(code, 2, "{err}");

    let (code, err) =
        status(
            sandbox
                .rlctl()
                .args(["launch", "gsm8k-canary", "--sbatch", "/nonexistent/sbatch"]),
        );
    assert_eq!(code, 2, "a SLURM program that cannot run: {err}");
}

#[test]
fn doctor_problems_exit_1() {
    let sandbox = Sandbox::new();
    // The sandbox stages no container, venv or checkout: doctor runs and finds problems.
    let (code, err) = status(sandbox.rlctl().arg("doctor"));
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("doctor found"), "{err}");
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
