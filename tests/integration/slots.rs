//! The job decides its resume mode at run time, slot by slot: the rendered wrapper is run with
//! bash on a fake node around the stand-in trainer, as SLURM would start it the first time and
//! again after a requeue (`SLURM_RESTART_COUNT`). No slot may rewrite a checkpoint.

use crate::common::standin_node;
use crate::common::{Sandbox, ok, slurm_slot, stdout, write_exec};
use std::path::PathBuf;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

struct Job {
    script: PathBuf,
    log: PathBuf,
    ckpt: PathBuf,
}

fn launch(sandbox: &Sandbox, extra: &[&str]) -> Job {
    let mut args = vec!["launch", "gsm8k-canary"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--", "trainer.max_steps=4", "trainer.ckpt_interval=2"]);
    let out = ok(sandbox.rlctl().args(&args));
    assert!(stdout(&out).contains("job "), "{}", stdout(&out));
    let script = sandbox.last_script();
    Job {
        log: script.with_file_name("slots.out"),
        script,
        ckpt: sandbox
            .root()
            .join("work/checkpoints/gsm8k-canary/gsm8k-canary/ckpt"),
    }
}

/// Starts one slot: SLURM's restart count, and the log opened for appending as
/// `--open-mode=append` does.
fn start_slot(job: &Job, restarts: u32, step_seconds: &str) -> Child {
    slot_command(job, restarts, step_seconds).spawn().unwrap()
}

fn slot_command(job: &Job, restarts: u32, step_seconds: &str) -> Command {
    let mut cmd = slurm_slot(&job.script, &job.log, "4242", restarts);
    cmd.env("RLCTL_STANDIN_STEP_SECONDS", step_seconds);
    cmd
}

fn wait_for_save(job: &Job, slot: &mut Child, step: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !saves(job).iter().any(|s| s == step) {
        assert!(Instant::now() < deadline, "{step} never saved");
        assert!(slot.try_wait().unwrap().is_none(), "the slot ended early");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn saves(job: &Job) -> Vec<String> {
    std::fs::read_to_string(job.ckpt.join("standin_saves.log"))
        .unwrap_or_default()
        .lines()
        .map(|l| l.split(' ').next().unwrap().to_owned())
        .collect()
}

#[test]
fn a_requeued_slot_resumes_and_rewrites_no_checkpoint() {
    let sandbox = Sandbox::new();
    standin_node(sandbox.root());
    let job = launch(&sandbox, &[]);

    // Slot 1: fresh; stopped (like a node failure) once step 2 is saved and step 3 underway.
    let mut first = start_slot(&job, 0, "0.4");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !saves(&job).contains(&"step=2".to_owned()) {
        assert!(Instant::now() < deadline, "slot 1 never saved step 2");
        assert!(first.try_wait().unwrap().is_none(), "slot 1 ended early");
        std::thread::sleep(Duration::from_millis(50));
    }
    // The whole process group, as SLURM kills a job's processes.
    let group = format!("-{}", first.id());
    ok(Command::new("kill").args(["-KILL", "--", &group]));
    first.wait().unwrap();
    assert_eq!(saves(&job), ["step=2"]);

    // Slot 2 (SLURM restarted the job): resumes from step 2, saves step 4 only.
    let second = start_slot(&job, 1, "0").wait_with_output().unwrap();
    assert!(second.status.success());
    assert_eq!(
        saves(&job),
        ["step=2", "step=4"],
        "a checkpoint was rewritten"
    );
    let log = std::fs::read_to_string(&job.log).unwrap();
    assert!(log.contains("rlctl: slot 1 of job 4242 started"), "{log}");
    assert!(log.contains("rlctl: slot 2 of job 4242 started"), "{log}");
    assert!(log.contains("trainer.resume_mode=null (slot 1"), "{log}");
    assert!(log.contains("trainer.resume_mode=latest (slot 2"), "{log}");
    assert!(log.contains("Resuming from checkpoint"), "{log}");

    // Slot 3 finds the run complete: the trainer is not started, the job succeeds.
    let third = start_slot(&job, 2, "0").wait_with_output().unwrap();
    assert!(third.status.success());
    assert_eq!(saves(&job), ["step=2", "step=4"]);
    let log = std::fs::read_to_string(&job.log).unwrap();
    assert!(log.contains("the run is complete: step 4 of 4"), "{log}");
    assert!(
        log.ends_with("rlctl: job 4242 finished with status 0\n"),
        "{log}"
    );
}

#[test]
fn a_fresh_first_slot_never_starts_over_checkpoints() {
    let sandbox = Sandbox::new();
    standin_node(sandbox.root());
    let job = launch(&sandbox, &[]);
    // Written after the launch's own check, e.g. by another job on the same folder.
    std::fs::create_dir_all(job.ckpt.join("global_step_2")).unwrap();
    let out = start_slot(&job, 0, "0").wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let log = std::fs::read_to_string(&job.log).unwrap();
    assert!(
        log.contains("refusing a fresh start over the 1 checkpoints"),
        "{log}"
    );
    assert!(saves(&job).is_empty());
    assert!(job.ckpt.join("global_step_2").is_dir());
}

#[test]
fn a_wipe_happens_in_the_first_slot_only() {
    let sandbox = Sandbox::new();
    standin_node(sandbox.root());
    let first = launch(&sandbox, &[]);
    assert!(start_slot(&first, 0, "0").wait().unwrap().success());
    assert_eq!(saves(&first), ["step=2", "step=4"]);
    let job = launch(&sandbox, &["--wipe"]);
    // A requeued slot of the --wipe launch keeps the checkpoints, and finds the run complete.
    assert!(start_slot(&job, 1, "0").wait().unwrap().success());
    assert!(job.ckpt.join("global_step_4").is_dir());
    assert_eq!(saves(&job), ["step=2", "step=4"]);
    // Its first slot wipes, then trains from step 1.
    assert!(start_slot(&job, 0, "0").wait().unwrap().success());
    assert_eq!(saves(&job), ["step=2", "step=4", "step=2", "step=4"]);
}

/// `--until-done`: on SLURM's USR1 the wrapper stops the trainer and requeues its own job, and
/// says so instead of the finished line; the last allowed slot leaves the trainer running (SLURM
/// ends it at the limit: TIMEOUT, for `tend`); a trainer that fails by itself is never requeued.
#[test]
fn until_done_stops_the_trainer_and_requeues_the_job_on_usr1() {
    let sandbox = Sandbox::new();
    standin_node(sandbox.root());
    let job = launch(&sandbox, &["--until-done", "--max-slots", "2"]);
    let script = std::fs::read_to_string(&job.script).unwrap();
    assert!(script.contains("\n#SBATCH --requeue\n"), "{script}");
    assert!(script.contains("\n#SBATCH --signal=B:USR1@"), "{script}");
    let (path, calls) = scontrol_standin(&sandbox);
    let usr1 = |slot: &Child| {
        ok(Command::new("kill").args(["-USR1", &slot.id().to_string()]));
    };

    let mut first = slot_command(&job, 0, "0.4")
        .env("PATH", &path)
        .spawn()
        .unwrap();
    wait_for_save(&job, &mut first, "step=2");
    usr1(&first);
    let out = first.wait_with_output().unwrap();
    assert!(out.status.success());
    let log = std::fs::read_to_string(&job.log).unwrap();
    assert!(
        log.contains("slot 1 is out of time: stopping the trainer"),
        "{log}"
    );
    assert!(
        log.contains(
            "rlctl: requeueing job 4242: slot 1 of at most 2 ends here; slot 2 resumes the run"
        ),
        "{log}"
    );
    assert!(!log.contains("finished with status"), "{log}");
    assert_eq!(std::fs::read_to_string(&calls).unwrap(), "requeue 4242\n");
    assert_eq!(saves(&job), ["step=2"], "the trainer went on after USR1");

    // Slot 2 of 2 resumes, and out of time it keeps its trainer: the trainer saves its last
    // step after USR1, and the slot ends with the trainer's own status, not USR1's 138.
    let mut second = slot_command(&job, 1, "1")
        .env("PATH", &path)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    // The trainer's first line of slot 2: by then the wrapper's USR1 trap is set.
    while !std::fs::read_to_string(&job.log)
        .unwrap()
        .contains("Resuming from checkpoint")
    {
        assert!(Instant::now() < deadline, "slot 2's trainer never started");
        assert!(second.try_wait().unwrap().is_none(), "slot 2 ended early");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(saves(&job), ["step=2"], "USR1 must come before step 4");
    usr1(&second);
    let status = second.wait().unwrap();
    let log = std::fs::read_to_string(&job.log).unwrap();
    assert_eq!(status.code(), Some(0), "{log}");
    assert!(
        log.contains(
            "rlctl: slot 2 of 2 is out of time: SLURM ends it at its time limit (TIMEOUT); \
             `rlctl tend` or `launch --resume latest` continues it"
        ),
        "{log}"
    );
    assert!(!log.contains("slot 2 is out of time: stopping"), "{log}");
    assert_eq!(saves(&job), ["step=2", "step=4"], "the trainer was stopped");
    assert!(
        log.ends_with("rlctl: job 4242 finished with status 0\n"),
        "{log}"
    );
    assert_eq!(std::fs::read_to_string(&calls).unwrap(), "requeue 4242\n");
}

/// `scontrol` as the job sees it, first on the returned PATH: it records the calls it gets in
/// the returned file.
fn scontrol_standin(sandbox: &Sandbox) -> (String, PathBuf) {
    let bin = sandbox.root().join("slurm-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let calls = sandbox.root().join("scontrol-calls");
    write_exec(
        &bin.join("scontrol"),
        &format!("#!/bin/bash\necho \"$*\" >> {}\n", calls.display()),
    );
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    (path, calls)
}

/// A trainer that fails by itself under `--until-done`: FAILED with its status, no requeue.
#[test]
fn until_done_never_requeues_a_trainer_that_fails_by_itself() {
    let sandbox = Sandbox::new();
    standin_node(sandbox.root());
    let job = launch(&sandbox, &["--until-done", "--max-slots", "2"]);
    let (path, calls) = scontrol_standin(&sandbox);
    let failed = slot_command(&job, 0, "0")
        .env("PATH", &path)
        .env("RLCTL_STANDIN_EXIT", "3")
        .status()
        .unwrap();
    assert_eq!(failed.code(), Some(3));
    assert!(!calls.exists(), "scontrol was called");
    let log = std::fs::read_to_string(&job.log).unwrap();
    assert!(
        log.ends_with("rlctl: job 4242 finished with status 3\n"),
        "{log}"
    );
}

/// `rlctl tend` on a run whose trainer crashed: reported with its last error line, exit 1, and
/// nothing submitted; a second pass says the same (idempotent).
#[test]
fn tend_reports_a_crash_and_does_not_resubmit_it() {
    let sandbox = Sandbox::new();
    standin_node(sandbox.root());
    let job = launch(&sandbox, &[]);
    let id = 1000 + sandbox.sbatch_calls();
    let log = job.script.with_file_name(format!("gsm8k-canary_{id}.out"));
    let job = Job { log, ..job };
    let mut slot = slot_command(&job, 0, "0");
    slot.env("SLURM_JOB_ID", id.to_string())
        .env("RLCTL_STANDIN_EXIT", "3");
    assert_eq!(slot.status().unwrap().code(), Some(3));
    let calls = sandbox.sbatch_calls();
    for _ in 0..2 {
        let out = sandbox
            .rlctl()
            .arg("tend")
            .env("RLCTL_SACCT", "/nonexistent/sacct")
            .output()
            .unwrap();
        let text = stdout(&out);
        assert_eq!(out.status.code(), Some(1), "{text}");
        assert!(
            text.contains(&format!("gsm8k-canary job {id}: FAILED")),
            "{text}"
        );
        assert!(
            text.contains(
                "not resubmitted: rlctl: skyrl_train.entrypoints.main_base exited with status 3"
            ),
            "{text}"
        );
        assert!(
            text.contains("tend: 1 runs, 0 resumed, 1 need a look"),
            "{text}"
        );
        assert_eq!(sandbox.sbatch_calls(), calls);
    }
}

#[test]
fn no_pointer_over_whole_steps_resumes_from_the_newest_not_from_step_0() {
    let sandbox = Sandbox::new();
    standin_node(sandbox.root());
    let ckpt = sandbox
        .root()
        .join("work/checkpoints/gsm8k-canary/gsm8k-canary/ckpt");
    // Whole 40 and 50, on the canary's 4 GPUs, and no pointer: SkyRL alone starts from step 0.
    crate::common::whole_step(&ckpt, 40, 4);
    crate::common::whole_step(&ckpt, 50, 4);
    let args = [
        "launch",
        "gsm8k-canary",
        "--resume",
        "latest",
        "--",
        "trainer.max_steps=52",
        "trainer.ckpt_interval=10",
    ];
    let out = ok(sandbox.rlctl().args(args));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("[resume-pointer] resumes from step 50, the newest whole checkpoint in"),
        "{said}"
    );
    let script = sandbox.last_script();
    let job = Job {
        log: script.with_file_name("slots.out"),
        script,
        ckpt,
    };
    let slot = start_slot(&job, 0, "0").wait_with_output().unwrap();
    let log = std::fs::read_to_string(&job.log).unwrap();
    assert!(slot.status.success(), "{log}");
    assert!(
        log.contains(
            "rlctl: latest_ckpt_global_step.txt is missing: it now names step 50, the newest whole checkpoint"
        ),
        "{log}"
    );
    assert!(log.contains("Resuming from checkpoint"), "{log}");
    assert!(log.contains("global_step_50"), "{log}");
    assert_eq!(saves(&job), ["step=52"], "{log}");
}

#[test]
fn an_empty_pointer_is_repaired_and_step_folders_none_whole_stop_the_job() {
    let sandbox = Sandbox::new();
    standin_node(sandbox.root());
    let job = launch(&sandbox, &["--resume", "latest"]);
    // Killed between opening the pointer and writing it, after a whole step 2.
    crate::common::whole_step(&job.ckpt, 2, 1);
    std::fs::write(job.ckpt.join("latest_ckpt_global_step.txt"), "").unwrap();
    let slot = start_slot(&job, 0, "0").wait_with_output().unwrap();
    let log = std::fs::read_to_string(&job.log).unwrap();
    assert!(slot.status.success(), "{log}");
    assert!(
        log.contains("rlctl: latest_ckpt_global_step.txt is empty: it now names step 2"),
        "{log}"
    );
    assert_eq!(saves(&job), ["step=4"], "{log}");

    // Step folders, none of them whole: the job stops before the trainer, never from step 0.
    let mut job = launch(&sandbox, &["--resume", "latest", "--job-name", "canary-2"]);
    job.ckpt = (sandbox.root()).join("work/checkpoints/gsm8k-canary/canary-2/ckpt");
    std::fs::create_dir_all(job.ckpt.join("global_step_2/policy")).unwrap();
    std::fs::write(job.ckpt.join("latest_ckpt_global_step.txt"), "2").unwrap();
    let slot = start_slot(&job, 0, "0").wait_with_output().unwrap();
    let log = std::fs::read_to_string(&job.log).unwrap();
    assert_eq!(slot.status.code(), Some(1), "{log}");
    assert!(
        log.contains("rlctl: not starting the trainer:")
            && log.contains("holds no whole checkpoint"),
        "{log}"
    );
    assert!(saves(&job).is_empty(), "{log}");
}
