//! Requeues on the real cluster: SLURM starts the same job again, and the job must resume from
//! its own checkpoints and rewrite none of them.

use super::{Cluster, Site, job_field, launched, wait_for};
use std::time::{Duration, Instant};

/// The steps the stand-in saved, in order (`step=N job=J restart=R` lines).
fn saves(ckpt: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(ckpt.join("standin_saves.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

pub fn scontrol_requeue_of_a_running_launch_resumes_and_rewrites_no_checkpoint(cluster: &Cluster) {
    let site = Site::new(cluster);
    let id = launched(
        site.rlctl()
            .env("RLCTL_STANDIN_STEP_SECONDS", "2")
            .args(["launch", "gsm8k-canary", "--"])
            .args(["trainer.max_steps=6", "trainer.ckpt_interval=2"]),
    );
    let ckpt = site
        .path()
        .join("work/rlctl/checkpoints/gsm8k-canary/gsm8k-canary/ckpt");
    let start = Instant::now();
    while !saves(&ckpt).iter().any(|l| l.starts_with("step=2 ")) {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no checkpoint of step 2: {}",
            job_field(cluster, &id, "JobState")
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // As an admin (or SLURM after a node failure) would: the job goes back to the queue and
    // SLURM starts the same sbatch.sh again.
    let requeue = cluster
        .client("scontrol")
        .args(["requeue", &id])
        .output()
        .unwrap();
    assert!(
        requeue.status.success(),
        "{}",
        String::from_utf8_lossy(&requeue.stderr)
    );
    let (state, _) = wait_for(cluster, &id, Duration::from_secs(420));
    assert_eq!(state, "COMPLETED");
    assert_eq!(job_field(cluster, &id, "Restarts"), "1");

    let saved = saves(&ckpt);
    let steps: Vec<&str> = saved.iter().map(|l| l.split(' ').next().unwrap()).collect();
    assert_eq!(
        steps,
        ["step=2", "step=4", "step=6"],
        "every checkpoint written once: {saved:?}"
    );
    assert!(saved[0].ends_with("restart=0"), "{saved:?}");
    assert!(saved[2].ends_with("restart=1"), "{saved:?}");
    // One log for both slots (--open-mode=append), the first slot's lines kept.
    let run_dir = site.run_dir("gsm8k-canary", "gsm8k-canary", "001");
    let log = std::fs::read_to_string(run_dir.join(format!("gsm8k-canary_{id}.out"))).unwrap();
    for needle in [
        &format!("rlctl: slot 1 of job {id} started") as &str,
        &format!("rlctl: slot 2 of job {id} started"),
        "trainer.resume_mode=null (slot 1",
        "trainer.resume_mode=latest (slot 2",
        "Resuming from checkpoint",
        "WANDB_MIRROR kind=train step=1 ",
        "WANDB_MIRROR kind=train step=6 ",
    ] {
        assert!(log.contains(needle), "{needle} missing from\n{log}");
    }
}

pub fn until_done_reaches_the_last_step_in_two_slots_under_one_job_id(cluster: &Cluster) {
    let site = Site::new(cluster);
    // One-minute slots (USR1 15 s before the end), 14 steps of 5 s: at least two slots.
    let id = launched(
        site.rlctl()
            .env("RLCTL_STANDIN_STEP_SECONDS", "5")
            .args([
                "launch",
                "gsm8k-canary",
                "--until-done",
                "--time",
                "00:01:00",
            ])
            .args(["--", "trainer.max_steps=14", "trainer.ckpt_interval=1"]),
    );
    let (state, _) = wait_for(cluster, &id, Duration::from_secs(900));
    assert_eq!(state, "COMPLETED");
    let restarts: u32 = job_field(cluster, &id, "Restarts").parse().unwrap();
    assert!(restarts >= 1, "one slot was enough: {restarts}");
    let ckpt = site
        .path()
        .join("work/rlctl/checkpoints/gsm8k-canary/gsm8k-canary/ckpt");
    let saved = saves(&ckpt);
    let steps: Vec<String> = saved
        .iter()
        .map(|l| l.split(' ').next().unwrap().to_owned())
        .collect();
    let want: Vec<String> = (1..=14).map(|n| format!("step={n}")).collect();
    assert_eq!(steps, want, "every step saved once, in order: {saved:?}");
    assert!(saved.iter().all(|l| l.contains(&format!("job={id} "))));
    let run_dir = site.run_dir("gsm8k-canary", "gsm8k-canary", "001");
    let log = std::fs::read_to_string(run_dir.join(format!("gsm8k-canary_{id}.out"))).unwrap();
    for needle in [
        format!("rlctl: slot 2 of job {id} started"),
        format!("rlctl: requeueing job {id}: slot 2"),
        "slot 1 is out of time: stopping the trainer".to_owned(),
        "WANDB_MIRROR kind=train step=14 ".to_owned(),
        format!("rlctl: job {id} finished with status 0"),
    ] {
        assert!(log.contains(&needle), "{needle} missing from\n{log}");
    }
}

pub fn a_crashing_trainer_is_not_requeued(cluster: &Cluster) {
    let site = Site::new(cluster);
    let id = launched(site.rlctl().env("RLCTL_STANDIN_EXIT", "3").args([
        "launch",
        "gsm8k-canary",
        "--until-done",
    ]));
    let (state, code) = wait_for(cluster, &id, Duration::from_secs(120));
    assert_eq!((state.as_str(), code.as_str()), ("FAILED", "3:0"));
    assert_eq!(job_field(cluster, &id, "Restarts"), "0");
    let tend = site.rlctl().arg("tend").output().unwrap();
    let text = String::from_utf8_lossy(&tend.stdout);
    assert_eq!(tend.status.code(), Some(1), "{text}");
    assert!(
        text.contains(&format!("gsm8k-canary job {id}: FAILED"))
            && text.contains("not resubmitted"),
        "{text}"
    );
}

pub fn a_timed_out_run_is_brought_to_its_end_by_tend(cluster: &Cluster) {
    let site = Site::new(cluster);
    // One-minute slots without --until-done, 30 steps of 5 s: SLURM times it out.
    let mut id = launched(
        site.rlctl()
            .env("RLCTL_STANDIN_STEP_SECONDS", "5")
            .args(["launch", "gsm8k-canary", "--time", "00:01:00"])
            .args(["--", "trainer.max_steps=30", "trainer.ckpt_interval=1"]),
    );
    let mut resubmitted = 0;
    loop {
        let (state, _) = wait_for(cluster, &id, Duration::from_secs(300));
        let tend = site.rlctl().arg("tend").output().unwrap();
        let text = String::from_utf8_lossy(&tend.stdout).into_owned();
        if state == "COMPLETED" {
            assert!(tend.status.success(), "{text}");
            assert!(!text.contains("resumed as job"), "{text}");
            break;
        }
        assert_eq!(state, "TIMEOUT", "{text}");
        assert!(tend.status.success(), "{text}");
        id = text
            .split("resumed as job ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("tend did not resubmit: {text}"))
            .to_owned();
        resubmitted += 1;
        assert!(resubmitted <= 3, "{text}");
        // A second pass right away submits nothing more: the next attempt is queued.
        let again = site.rlctl().arg("tend").output().unwrap();
        assert!(
            !String::from_utf8_lossy(&again.stdout).contains("resumed as job"),
            "tend is not idempotent"
        );
    }
    assert!(resubmitted >= 1);
    let ckpt = site
        .path()
        .join("work/rlctl/checkpoints/gsm8k-canary/gsm8k-canary/ckpt");
    let steps: Vec<String> = saves(&ckpt)
        .iter()
        .map(|l| l.split(' ').next().unwrap().to_owned())
        .collect();
    let want: Vec<String> = (1..=30).map(|n| format!("step={n}")).collect();
    assert_eq!(steps, want, "every step saved once, in order");
}
