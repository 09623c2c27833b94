//! `rlctl tend` left to cron: it judges the job that runs, resumes only what can resume and
//! make progress, leaves finished and checkpoint-less runs alone, reports one broken run and
//! goes on, and beside another pass or a launch never puts two jobs on one folder.

use crate::common::{Sandbox, lines_of, ok, save_whole, stdout, whole_step, write_exec};
use std::path::PathBuf;
use std::process::{Output, Stdio};

/// The canary's checkpoint folder, as SkyRL writes it (`trainer.ckpt_path`).
fn ckpt(sandbox: &Sandbox, member: &str) -> PathBuf {
    sandbox
        .root()
        .join("work/checkpoints/gsm8k-canary")
        .join(member)
        .join("ckpt")
}

/// A checkpoint of `step`, saved as SkyRL saves it: the whole step's folder, then the pointer.
fn save(sandbox: &Sandbox, member: &str, step: u64) {
    save_whole(&ckpt(sandbox, member), step);
}

/// Launches the canary for 30 steps, saving every 5.
fn launch(sandbox: &Sandbox, extra: &[&str]) {
    ok(sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary"])
        .args(extra)
        .args(["--", "trainer.max_steps=30", "trainer.ckpt_interval=5"]));
}

fn tend(sandbox: &Sandbox, args: &[&str]) -> Output {
    sandbox.rlctl().arg("tend").args(args).output().unwrap()
}

fn queue_lines(sandbox: &Sandbox) -> Vec<String> {
    lines_of(&sandbox.root().join("sbatch-calls/queue"))
}

#[test]
fn two_passes_at_once_resume_a_timed_out_run_once() {
    let sandbox = Sandbox::new();
    launch(&sandbox, &[]);
    save(&sandbox, "gsm8k-canary", 10);
    sandbox.sacct("1001|TIMEOUT|0:0");
    sandbox.queueing_sbatch(0.5);
    let passes: Vec<_> = (0..3)
        .map(|_| {
            (sandbox.rlctl().arg("tend"))
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outputs: Vec<Output> = passes
        .into_iter()
        .map(|p| p.wait_with_output().unwrap())
        .collect();
    let texts: Vec<String> = outputs.iter().map(stdout).collect();
    assert!(outputs.iter().all(|o| o.status.success()), "{texts:?}");
    let resumed = texts
        .iter()
        .filter(|t| t.contains("resumed as job"))
        .count();
    assert_eq!(resumed, 1, "{texts:?}");
    assert_eq!(sandbox.sbatch_calls(), 2, "{texts:?}");
    assert_eq!(queue_lines(&sandbox).len(), 1, "{texts:?}");
    assert!(
        texts.iter().any(|t| t.contains(
            "gsm8k-canary job 1001: TIMEOUT; resumed as job 1002 (attempt 2, from step 10)"
        )),
        "{texts:?}"
    );
}

#[test]
fn a_pass_and_a_launch_resume_latest_at_once_queue_one_job() {
    let sandbox = Sandbox::new();
    launch(&sandbox, &[]);
    save(&sandbox, "gsm8k-canary", 10);
    sandbox.sacct("1001|TIMEOUT|0:0");
    // Wider than a launch takes to resolve and check its plan.
    sandbox.queueing_sbatch(2.0);
    let spawn = |cmd: &mut std::process::Command| {
        cmd.stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let pass = spawn(sandbox.rlctl().arg("tend"));
    // The launch starts while the pass's sbatch is still answering.
    let next = sandbox
        .root()
        .join("work/runs/gsm8k-canary/gsm8k-canary/002");
    let start = std::time::Instant::now();
    while !next.exists() {
        assert!(start.elapsed().as_secs() < 30, "tend made no run folder");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let launch = spawn(
        sandbox
            .rlctl()
            .args(["launch", "gsm8k-canary", "--resume", "latest"])
            .args(["--", "trainer.max_steps=30", "trainer.ckpt_interval=5"]),
    );
    let (pass, launch) = (
        pass.wait_with_output().unwrap(),
        launch.wait_with_output().unwrap(),
    );
    let said = format!(
        "tend: {}\nlaunch: {}{}",
        stdout(&pass),
        stdout(&launch),
        crate::common::stderr(&launch)
    );
    assert_eq!(sandbox.sbatch_calls(), 2, "{said}");
    assert_eq!(queue_lines(&sandbox).len(), 1, "{said}");
    assert!(pass.status.success(), "{said}");
}

#[test]
fn a_run_that_saved_no_checkpoint_is_left_for_a_person() {
    let sandbox = Sandbox::new();
    launch(&sandbox, &[]);
    sandbox.sacct("1001|TIMEOUT|0:0");
    for _ in 0..2 {
        let out = tend(&sandbox, &[]);
        let text = stdout(&out);
        assert_eq!(out.status.code(), Some(1), "{text}");
        assert!(
            text.contains("gsm8k-canary job 1001: TIMEOUT, and no checkpoint was saved in `"),
            "{text}"
        );
        assert!(text.contains("not resubmitted"), "{text}");
        assert!(
            text.contains("tend: 1 runs, 0 resumed, 1 need a look"),
            "{text}"
        );
    }
    assert_eq!(sandbox.sbatch_calls(), 1);
}

#[test]
fn a_finished_run_is_read_from_the_pointer_skyrl_writes_and_left_alone() {
    let sandbox = Sandbox::new();
    launch(&sandbox, &[]);
    // Out of time just after its last save.
    save(&sandbox, "gsm8k-canary", 30);
    sandbox.sacct("1001|TIMEOUT|0:0");
    let out = tend(&sandbox, &[]);
    assert!(out.status.success(), "{}", stdout(&out));
    assert_eq!(stdout(&out), "tend: 1 runs, 0 resumed, 0 need a look\n");
    assert_eq!(sandbox.sbatch_calls(), 1);
}

/// One pass over a run that ran out of time: its output, every line of it.
fn timed_out_pass(sandbox: &Sandbox) -> String {
    sandbox.sacct("1001|TIMEOUT|0:0");
    let out = tend(sandbox, &[]);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}");
    text
}

#[test]
fn an_empty_pointer_over_whole_steps_resumes_from_the_newest_whole_step() {
    let sandbox = Sandbox::new();
    launch(&sandbox, &[]);
    let ckpt = ckpt(&sandbox, "gsm8k-canary");
    // Killed between opening the pointer and writing it: whole 10 and 20, an empty pointer.
    whole_step(&ckpt, 10, 4);
    whole_step(&ckpt, 20, 4);
    std::fs::write(ckpt.join("latest_ckpt_global_step.txt"), "").unwrap();
    assert_eq!(
        timed_out_pass(&sandbox),
        "gsm8k-canary job 1001: TIMEOUT; resumed as job 1002 (attempt 2, from step 20); \
         `latest_ckpt_global_step.txt` is empty: the job makes it name step 20, the newest whole \
         checkpoint\ntend: 1 runs, 1 resumed, 0 need a look\n"
    );
    // tend writes nothing into the folder: the job repairs the pointer at its start.
    assert_eq!(
        std::fs::read_to_string(ckpt.join("latest_ckpt_global_step.txt")).unwrap(),
        ""
    );
}

#[test]
fn a_pointer_naming_a_step_with_a_rank_missing_resumes_from_the_newest_whole_step() {
    let sandbox = Sandbox::new();
    launch(&sandbox, &[]);
    let ckpt = ckpt(&sandbox, "gsm8k-canary");
    save(&sandbox, "gsm8k-canary", 15);
    save(&sandbox, "gsm8k-canary", 20);
    std::fs::remove_file(ckpt.join("global_step_20/policy/model_world_size_4_rank_3.pt")).unwrap();
    std::fs::remove_file(ckpt.join("global_step_20/policy/optim_world_size_4_rank_3.pt")).unwrap();
    let text = timed_out_pass(&sandbox);
    assert!(
        text.contains(
            "TIMEOUT; resumed as job 1002 (attempt 2, from step 15); `latest_ckpt_global_step.txt` names \
             step 20, which is not whole (no policy/model_world_size_4_rank_3.pt)"
        ),
        "{text}"
    );
}

#[test]
fn a_pointer_past_max_steps_over_an_unfinished_run_is_not_finished() {
    let sandbox = Sandbox::new();
    launch(&sandbox, &[]);
    let ckpt = ckpt(&sandbox, "gsm8k-canary");
    // The run (30 steps) is at step 12; the pointer names a step no folder holds.
    save(&sandbox, "gsm8k-canary", 12);
    std::fs::write(ckpt.join("latest_ckpt_global_step.txt"), "120").unwrap();
    let text = timed_out_pass(&sandbox);
    assert!(
        text.contains(
            "TIMEOUT; resumed as job 1002 (attempt 2, from step 12); `latest_ckpt_global_step.txt` names \
             step 120, which has no folder: the job makes it name step 12"
        ),
        "{text}"
    );
    assert_eq!(sandbox.sbatch_calls(), 2);
}

#[test]
fn step_folders_none_whole_are_left_for_a_person_never_restarted_from_step_0() {
    let sandbox = Sandbox::new();
    launch(&sandbox, &[]);
    let ckpt = ckpt(&sandbox, "gsm8k-canary");
    std::fs::create_dir_all(ckpt.join("global_step_5/policy")).unwrap();
    std::fs::write(ckpt.join("latest_ckpt_global_step.txt"), "").unwrap();
    sandbox.sacct("1001|TIMEOUT|0:0");
    let out = tend(&sandbox, &[]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains(
            "gsm8k-canary job 1001: TIMEOUT; not resubmitted: `[ROOT]/work/checkpoints/gsm8k-canary/gsm8k-canary/ckpt` \
             holds global_step_5 and none is a whole checkpoint"
                .replace("[ROOT]", &sandbox.root().display().to_string())
                .as_str()
        ),
        "{text}"
    );
    assert_eq!(sandbox.sbatch_calls(), 1);
}

#[test]
fn a_run_that_makes_no_progress_is_resumed_once_then_left_for_a_person() {
    let sandbox = Sandbox::new();
    launch(&sandbox, &[]);
    save(&sandbox, "gsm8k-canary", 10);
    sandbox.sacct("1001|TIMEOUT|0:0");
    let first = stdout(&ok(sandbox.rlctl().arg("tend")));
    assert!(
        first.contains("resumed as job 1002 (attempt 2, from step 10)"),
        "{first}"
    );
    // Attempt 2 timed out too, and saved nothing later.
    sandbox.sacct("1001|TIMEOUT|0:0\n1002|TIMEOUT|0:0");
    let out = tend(&sandbox, &[]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains(
            "gsm8k-canary job 1002: TIMEOUT again at step 10: attempt 2 resumed from step 10 and saved no \
             later checkpoint; not resubmitted"
        ),
        "{text}"
    );
    assert_eq!(sandbox.sbatch_calls(), 2);
    // With progress, the next attempt goes in, and status says which attempt the run is at.
    save(&sandbox, "gsm8k-canary", 15);
    let third = stdout(&ok(sandbox.rlctl().arg("tend")));
    assert!(
        third.contains("resumed as job 1003 (attempt 3, from step 15)"),
        "{third}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&ok(sandbox.rlctl().args(["status", "--json"])))).unwrap();
    assert_eq!(json["runs"][0]["attempt"], 3, "{json}");
}

#[test]
fn chain_links_and_earlier_launches_are_not_attempts() {
    let sandbox = Sandbox::new();
    launch(&sandbox, &["--chain", "3"]);
    save(&sandbox, "gsm8k-canary", 10);
    sandbox.sacct("1001|COMPLETED|0:0\n1002|COMPLETED|0:0\n1003|TIMEOUT|0:0");
    let text = stdout(&ok(sandbox.rlctl().args(["tend", "--max-attempts", "1"])));
    assert!(
        text.contains(
            "gsm8k-canary job 1003: TIMEOUT; resumed as job 1004 (attempt 2, from step 10)"
        ),
        "{text}"
    );
    // Attempt 2 is the last --max-attempts 1 allows.
    save(&sandbox, "gsm8k-canary", 15);
    sandbox.sacct("1003|TIMEOUT|0:0\n1004|TIMEOUT|0:0");
    let out = tend(&sandbox, &["--max-attempts", "1"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains(
            "gsm8k-canary job 1004: TIMEOUT at attempt 2; not resubmitted (--max-attempts 1)"
        ),
        "{}",
        stdout(&out)
    );
}

#[test]
fn the_running_link_of_a_chain_is_judged_and_an_alert_cancels_every_live_link() {
    let sandbox = Sandbox::new();
    sandbox.scancel();
    launch(&sandbox, &["--chain", "3"]);
    sandbox
        .queue("1001|gsm8k-canary|RUNNING\n1002|gsm8k-canary|PENDING\n1003|gsm8k-canary|PENDING\n");
    let log = sandbox
        .root()
        .join("work/runs/gsm8k-canary/gsm8k-canary/001/gsm8k-canary_1001.out");
    let steps: String = (1..=4)
        .map(|n| {
            let loss = if n == 4 {
                "NaN".to_owned()
            } else {
                "0.5".to_owned()
            };
            format!("WANDB_MIRROR kind=train step={n} metrics={{\"policy/policy_loss\": {loss}}}\n")
        })
        .collect();
    std::fs::write(&log, steps).unwrap();
    let out = tend(&sandbox, &["--cancel-on-alert"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("gsm8k-canary job 1001: ALERT [diverged]"),
        "{text}"
    );
    assert!(text.contains("(cancelled jobs 1001, 1002, 1003)"), "{text}");
    assert_eq!(
        lines_of(&sandbox.root().join("sbatch-calls/scancel")),
        ["1001 1002 1003"]
    );
}

#[test]
fn one_broken_run_is_reported_and_the_pass_goes_on_leaving_nothing_half_made() {
    let sandbox = Sandbox::new();
    launch(&sandbox, &[]);
    launch(&sandbox, &["--job-name", "other"]);
    save(&sandbox, "gsm8k-canary", 10);
    save(&sandbox, "other", 10);
    sandbox.sacct("1001|TIMEOUT|0:0\n1002|TIMEOUT|0:0");
    let broken = sandbox.root().join("work/runs/gsm8k-canary/gsm8k-canary");
    std::fs::remove_file(broken.join("001/run.sh")).unwrap();
    let out = tend(&sandbox, &[]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("gsm8k-canary job 1001: could not be tended: cannot read `"),
        "{text}"
    );
    assert!(
        text.contains("gsm8k-canary/other job 1002: TIMEOUT; resumed as job 1003"),
        "{text}"
    );
    assert!(
        text.contains("tend: 2 runs, 1 resumed, 1 need a look"),
        "{text}"
    );
    let folders: Vec<_> = std::fs::read_dir(&broken)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(folders, ["001"], "a half-made run folder was left");
}

#[test]
fn a_resubmission_whose_sbatch_may_have_queued_keeps_its_run_folder_and_intent() {
    let sandbox = Sandbox::new();
    launch(&sandbox, &[]);
    save(&sandbox, "gsm8k-canary", 10);
    sandbox.sacct("1001|TIMEOUT|0:0");
    // sbatch answers without a job id: the job may be queued, from the new folder's script.
    write_exec(
        &sandbox.root().join("bin/sbatch"),
        "#!/bin/bash\necho 'sbatch: slurmctld busy, retrying'\n",
    );
    let out = tend(&sandbox, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let runs = sandbox.root().join("work/runs/gsm8k-canary/gsm8k-canary");
    let mut folders: Vec<_> = std::fs::read_dir(&runs)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    folders.sort();
    assert_eq!(folders, ["001", "002"], "{}", stdout(&out));
    assert!(runs.join("002/sbatch.sh").is_file());
    let intents = sandbox.root().join("work/runs/.intents");
    let intent = std::fs::read_dir(&intents)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let kept: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(intent).unwrap()).unwrap();
    assert_eq!(
        kept["record"]["run_dir"].as_str().unwrap(),
        runs.join("002").to_str().unwrap()
    );
}
