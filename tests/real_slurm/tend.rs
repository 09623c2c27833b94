//! `tend` on the real cluster: it judges the link that runs (a diverging one cancels its whole
//! chain), and leaves a run that timed out without a checkpoint for a person.

use super::{Cluster, Site, job_field, job_ids, launched, sacct_comes_to, stdout, wait_for};
use std::time::{Duration, Instant};

pub fn a_diverging_running_link_cancels_its_whole_chain(cluster: &Cluster) {
    let site = Site::new(cluster);
    let out = site
        .rlctl()
        .env("RLCTL_STANDIN_STEP_SECONDS", "2")
        .env("RLCTL_STANDIN_DIVERGE_AT", "3")
        .args(["launch", "gsm8k-canary", "--chain", "3"])
        .args(["--", "trainer.max_steps=40", "trainer.ckpt_interval=2"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", super::stderr(&out));
    let jobs: Vec<String> = job_ids(&stdout(&out))
        .into_iter()
        .map(|(_, id)| id)
        .collect();
    assert_eq!(jobs.len(), 3, "{}", stdout(&out));
    let log = site
        .run_dir("gsm8k-canary", "gsm8k-canary", "001")
        .join(format!("gsm8k-canary_{}.out", jobs[0]));
    let start = Instant::now();
    while !std::fs::read_to_string(&log)
        .unwrap_or_default()
        .contains("kind=train step=3 ")
    {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "link 1 never reached step 3: {}",
            job_field(cluster, &jobs[0], "JobState")
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let tend = site
        .rlctl()
        .args(["tend", "--cancel-on-alert"])
        .output()
        .unwrap();
    let text = stdout(&tend);
    assert_eq!(tend.status.code(), Some(1), "{text}");
    assert!(
        text.contains(&format!("gsm8k-canary job {}: ALERT [diverged]", jobs[0])),
        "the running link is judged: {text}"
    );
    assert!(
        text.contains(&format!("(cancelled jobs {})", jobs.join(", "))),
        "{text}"
    );
    for id in &jobs {
        assert_eq!(
            wait_for(cluster, id, Duration::from_secs(60)).0,
            "CANCELLED"
        );
    }
}

pub fn a_timeout_without_a_checkpoint_is_left_for_a_person(cluster: &Cluster) {
    let site = Site::new(cluster);
    // One-minute slot, 30 steps of 5 s, a checkpoint every 100 steps: none is ever saved.
    let id = launched(
        site.rlctl()
            .env("RLCTL_STANDIN_STEP_SECONDS", "5")
            .args(["launch", "gsm8k-canary", "--time", "00:01:00"])
            .args(["--", "trainer.max_steps=30", "trainer.ckpt_interval=100"]),
    );
    let (state, _) = wait_for(cluster, &id, Duration::from_secs(300));
    assert_eq!(state, "TIMEOUT");
    sacct_comes_to(cluster, &id, &["-o", "State"], "TIMEOUT");
    for _ in 0..2 {
        let tend = site.rlctl().arg("tend").output().unwrap();
        let text = stdout(&tend);
        assert_eq!(tend.status.code(), Some(1), "{text}");
        assert!(
            text.contains(&format!(
                "gsm8k-canary job {id}: TIMEOUT, and no checkpoint was saved in `"
            )) && text.contains("not resubmitted"),
            "{text}"
        );
    }
    let queue = cluster
        .client("squeue")
        .args(["-h", "-o", "%i"])
        .output()
        .unwrap();
    assert_eq!(stdout(&queue).trim(), "", "tend submitted a job");
}
