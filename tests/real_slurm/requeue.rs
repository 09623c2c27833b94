//! Requeues on the real cluster: SLURM starts the same job again, and the job must resume from
//! its own checkpoints and rewrite none of them.

use super::{
    Cluster, Site, assert_ray_gone, job_field, launched, log_of, sacct_comes_to, wait_for,
};
use std::collections::BTreeMap;
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
        format!("rlctl: requeueing job {id}: slot 1 of at most 10 ends here; slot 2 resumes"),
        "slot 1 is out of time: stopping the trainer".to_owned(),
        "WANDB_MIRROR kind=train step=14 ".to_owned(),
        format!("rlctl: job {id} finished with status 0"),
    ] {
        assert!(log.contains(&needle), "{needle} missing from\n{log}");
    }
}

pub fn a_crashing_trainer_is_not_requeued(cluster: &Cluster) {
    let site = Site::new(cluster);
    // A checkpoint within each slot, as `--until-done` requires (the canary saves none).
    let id = launched(site.rlctl().env("RLCTL_STANDIN_EXIT", "3").args([
        "launch",
        "gsm8k-canary",
        "--until-done",
        "--",
        "trainer.ckpt_interval=2",
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

/// The last slot `--max-slots` allows keeps its trainer when USR1 comes: SLURM ends the job at
/// its limit, accounting says TIMEOUT (not FAILED), and `tend` resumes it as its next attempt.
pub fn until_done_s_last_slot_times_out_and_tend_resumes_it(cluster: &Cluster) {
    let site = Site::new(cluster);
    // One slot of a minute (USR1 15 s before its end), 30 steps of 5 s: never enough.
    let id = launched(
        site.rlctl()
            .env("RLCTL_STANDIN_STEP_SECONDS", "5")
            .args(["launch", "gsm8k-canary", "--until-done", "--max-slots", "1"])
            .args(["--time", "00:01:00"])
            .args(["--", "trainer.max_steps=30", "trainer.ckpt_interval=1"]),
    );
    let (state, _) = wait_for(cluster, &id, Duration::from_secs(240));
    let run_dir = site.run_dir("gsm8k-canary", "gsm8k-canary", "001");
    let log = std::fs::read_to_string(run_dir.join(format!("gsm8k-canary_{id}.out"))).unwrap();
    assert_eq!(state, "TIMEOUT", "{log}");
    assert_eq!(job_field(cluster, &id, "Restarts"), "0");
    let said = "rlctl: slot 1 of 1 is out of time: SLURM ends it at its time limit (TIMEOUT); \
                `rlctl tend` or `launch --resume latest` continues it";
    let (_, after) = log
        .split_once(said)
        .unwrap_or_else(|| panic!("`{said}` missing from\n{log}"));
    assert!(
        after.contains("WANDB_MIRROR kind=train step="),
        "the trainer was stopped at USR1:\n{log}"
    );
    assert!(!log.contains("finished with status"), "{log}");
    assert!(!log.contains("requeueing"), "{log}");
    assert!(log.contains("DUE TO TIME LIMIT"), "{log}");
    // Accounting agrees.
    sacct_comes_to(cluster, &id, &["-o", "State"], "TIMEOUT");
    let status = site
        .rlctl()
        .args(["status", "gsm8k-canary"])
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&status.stdout).into_owned();
    assert!(
        table
            .lines()
            .any(|l| l.contains(&id) && l.contains("TIMEOUT")),
        "{table}"
    );
    let tend = site.rlctl().arg("tend").output().unwrap();
    let text = String::from_utf8_lossy(&tend.stdout).into_owned();
    assert!(tend.status.success(), "{text}");
    let next = text
        .split(&format!("gsm8k-canary job {id}: TIMEOUT; resumed as job "))
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("tend did not resume it: {text}"))
        .to_owned();
    // The next attempt resumes from the checkpoints; it has no need to run to the end here.
    let start = Instant::now();
    let next_log = site
        .run_dir("gsm8k-canary", "gsm8k-canary", "002")
        .join(format!("gsm8k-canary_{next}.out"));
    while !std::fs::read_to_string(&next_log)
        .unwrap_or_default()
        .contains("trainer.resume_mode=latest (slot 1")
    {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "attempt 2 (job {next}) did not resume: {}",
            job_field(cluster, &next, "JobState")
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    let cancel = cluster.client("scancel").arg(&next).output().unwrap();
    assert!(cancel.status.success());
    wait_for(cluster, &next, Duration::from_secs(60));
}

/// Brings a killed slurmd back however the test ends, and cancels the test's job if the test
/// failed, so that the tests after it find both nodes in service and free.
struct Revive<'a> {
    cluster: &'a Cluster,
    node: &'static str,
    job: String,
}

impl Drop for Revive<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let _ = self.cluster.client("scancel").arg(&self.job).status();
        }
        if self.cluster.slurmd_pid(self.node).is_none()
            && let Err(why) = self.cluster.restart_slurmd(self.node)
        {
            eprintln!("{why}");
        }
    }
}

/// The modification time of every `global_step_*` folder in `ckpt`.
fn step_mtimes(ckpt: &std::path::Path) -> BTreeMap<String, std::time::SystemTime> {
    std::fs::read_dir(ckpt)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("global_step_"))
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            (name, e.metadata().unwrap().modified().unwrap())
        })
        .collect()
}

/// A node of a two-node `--until-done` run fails (its slurmd is killed): SLURM marks the node
/// down and, the job being requeueable, requeues it (NODE_FAIL in accounting); once the node is
/// back, the same job id resumes from its checkpoints on both nodes and reaches its last step,
/// rewriting no checkpoint and leaving no Ray process behind.
pub fn a_node_failure_under_a_two_node_until_done_run_requeues_it_and_it_finishes(
    cluster: &Cluster,
) {
    let site = Site::new(cluster);
    // 30 steps of 4 s: the trainer is still going when SLURM notices the dead node (up to
    // SlurmdTimeout plus a ping interval, 80 s, after the kill).
    let id = launched(
        site.rlctl()
            .env("RLCTL_STANDIN_STEP_SECONDS", "4")
            .args(["launch", "gsm8k-multinode", "--until-done"])
            .args(["--", "trainer.max_steps=30", "trainer.ckpt_interval=2"]),
    );
    let log = || log_of(&site, "gsm8k-multinode", "gsm8k-multinode", "001", &id);
    let ckpt = site
        .path()
        .join("work/rlctl/checkpoints/gsm8k-multinode/gsm8k-multinode/ckpt");
    let start = Instant::now();
    while !saves(&ckpt).iter().any(|l| l.starts_with("step=2 ")) {
        assert!(
            start.elapsed() < Duration::from_secs(180),
            "no checkpoint of step 2 ({}):\n{}",
            job_field(cluster, &id, "JobState"),
            log()
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    assert_eq!(job_field(cluster, &id, "NodeList"), "n[1-2]");

    let _revive = Revive {
        cluster,
        node: "n2",
        job: id.clone(),
    };
    cluster.kill_slurmd("n2");
    let killed = Instant::now();
    // SLURM finds the node dead and requeues the job (`--until-done` submits with --requeue).
    loop {
        let restarts = job_field(cluster, &id, "Restarts");
        let state = job_field(cluster, &id, "JobState");
        if restarts != "0" {
            break;
        }
        assert!(
            !["COMPLETED", "FAILED", "NODE_FAIL", "CANCELLED"].contains(&state.as_str()),
            "job {id} ended {state} instead of being requeued (n2: {}):\n{}",
            cluster.node_state("n2"),
            log()
        );
        assert!(
            killed.elapsed() < Duration::from_secs(150),
            "job {id} still {state}, n2 {}, {:?} after the kill",
            cluster.node_state("n2"),
            killed.elapsed()
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    let noticed = killed.elapsed();
    let n2 = cluster.node_state("n2");
    assert!(n2.starts_with("down"), "n2 is {n2} after the requeue");
    // The first slot's processes on n1 end within KillWait; only then are the checkpoints
    // it wrote final.
    let start = Instant::now();
    while log().matches("rlctl: tearing Ray down").count() < 1 {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "slot 1 never tore Ray down:\n{}",
            log()
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    std::thread::sleep(Duration::from_secs(2));
    let before = step_mtimes(&ckpt);
    assert!(before.contains_key("global_step_2"), "{before:?}");
    cluster.restart_slurmd("n2").unwrap();

    let (state, code) = wait_for(cluster, &id, Duration::from_secs(600));
    let text = log();
    assert_eq!(
        (state.as_str(), code.as_str()),
        ("COMPLETED", "0:0"),
        "{text}"
    );
    assert_eq!(job_field(cluster, &id, "Restarts"), "1", "{text}");
    for needle in [
        format!("rlctl: slot 2 of job {id} started"),
        "trainer.resume_mode=latest (slot 2".to_owned(),
        "Resuming from checkpoint".to_owned(),
        "WANDB_MIRROR kind=train step=30 ".to_owned(),
        format!("rlctl: job {id} finished with status 0"),
    ] {
        assert!(text.contains(&needle), "{needle} missing from\n{text}");
    }
    assert_eq!(
        text.matches("rlctl: Ray is up: 2 nodes, 8 GPUs").count(),
        2,
        "each slot brings up Ray on both nodes:\n{text}"
    );
    // Every checkpoint written once, in order, the later ones by the second slot.
    let saved = saves(&ckpt);
    let steps: Vec<String> = saved
        .iter()
        .map(|l| l.split(' ').next().unwrap().to_owned())
        .collect();
    let want: Vec<String> = (1..=15).map(|n| format!("step={}", 2 * n)).collect();
    assert_eq!(steps, want, "every checkpoint written once: {saved:?}");
    assert!(saved[0].ends_with("restart=0"), "{saved:?}");
    assert!(saved[14].ends_with("restart=1"), "{saved:?}");
    let after = step_mtimes(&ckpt);
    for (step, mtime) in &before {
        assert_eq!(after.get(step), Some(mtime), "{step} was rewritten");
    }
    // Accounting keeps the failed attempt and the one that completed (records arrive
    // asynchronously: poll).
    sacct_comes_to(cluster, &id, &["-D", "-o", "State"], "NODE_FAIL\nCOMPLETED");
    assert_ray_gone(&id);
    // Both nodes free again for the tests after this one.
    let start = Instant::now();
    while cluster.node_state("n1") != "idle" || cluster.node_state("n2") != "idle" {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "n1 {}, n2 {}",
            cluster.node_state("n1"),
            cluster.node_state("n2")
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    println!(
        "  (node failure noticed {noticed:?} after the kill; job done {:?} after it)",
        killed.elapsed()
    );
}
