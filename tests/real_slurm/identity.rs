//! Run identity on the real cluster: a chain is one run for `status`, `cancel` and `clean`,
//! and two launches of one run started at once submit exactly one job.

use super::{Cluster, Site, job_field, job_ids, stderr, stdout, wait_for};
use std::time::{Duration, Instant};

/// Waits until SLURM runs the job.
fn running(cluster: &Cluster, id: &str) {
    let start = Instant::now();
    while job_field(cluster, id, "JobState") != "RUNNING" {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "job {id} never ran"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

pub fn a_chain_is_one_run_for_status_cancel_and_clean(cluster: &Cluster) {
    let site = Site::new(cluster);
    let out = site
        .rlctl()
        .env("RLCTL_STANDIN_STEP_SECONDS", "60")
        .args(["launch", "gsm8k-canary", "--chain", "3"])
        // A chain must save once per slot (the `slots` check).
        .args(["--", "trainer.ckpt_interval=1"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let jobs: Vec<String> = job_ids(&stdout(&out)).into_iter().map(|j| j.1).collect();
    assert_eq!(jobs.len(), 3, "{}", stdout(&out));
    running(cluster, &jobs[0]);

    // One row: the running link, with its place in the chain.
    let status = site.rlctl().arg("status").output().unwrap();
    let text = stdout(&status);
    // The header, the run's row, and the totals line.
    assert_eq!(text.lines().count(), 3, "{text}");
    assert!(
        text.lines().nth(2).unwrap().starts_with("1 run: 1 running"),
        "{text}"
    );
    let row = text.lines().nth(1).unwrap();
    assert!(
        row.contains(&jobs[0]) && row.contains("RUNNING link 1/3"),
        "{text}"
    );

    // The later links resume from the folder: clean leaves it.
    let clean = site
        .rlctl()
        .args(["clean", "gsm8k-canary", "--yes"])
        .output()
        .unwrap();
    assert!(clean.status.success(), "{}", stderr(&clean));
    assert!(
        stdout(&clean).contains("is still queued or running; its folder stays"),
        "{}",
        stdout(&clean)
    );

    // Every link goes, in one scancel: none starts after the running one ends.
    let cancel = site
        .rlctl()
        .args(["cancel", "gsm8k-canary"])
        .output()
        .unwrap();
    assert!(cancel.status.success(), "{}", stderr(&cancel));
    for id in &jobs {
        assert!(
            stdout(&cancel).contains(&format!("job {id}")),
            "{}",
            stdout(&cancel)
        );
        assert_eq!(
            wait_for(cluster, id, Duration::from_secs(60)).0,
            "CANCELLED"
        );
    }
    let status = site.rlctl().arg("status").output().unwrap();
    assert!(stdout(&status).contains("CANCELLED"), "{}", stdout(&status));
}

pub fn two_launches_at_once_submit_one_job(cluster: &Cluster) {
    let site = Site::new(cluster);
    let children: Vec<_> = (0..2)
        .map(|_| {
            site.rlctl()
                .env("RLCTL_STANDIN_STEP_SECONDS", "60")
                .args(["launch", "gsm8k-canary"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outputs: Vec<_> = (children.into_iter())
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    let ok: Vec<_> = outputs.iter().filter(|o| o.status.success()).collect();
    assert_eq!(
        ok.len(),
        1,
        "{:?}",
        outputs.iter().map(stderr).collect::<Vec<_>>()
    );
    let id = job_ids(&stdout(ok[0])).remove(0).1;
    let refused = outputs.iter().find(|o| !o.status.success()).unwrap();
    assert!(
        stderr(refused).contains(&format!("gsm8k-canary is already queued as job {id}")),
        "{}",
        stderr(refused)
    );
    let ledger = std::fs::read_to_string(site.path().join("work/rlctl/runs/ledger.jsonl")).unwrap();
    assert_eq!(ledger.lines().count(), 1, "{ledger}");
    let cancel = site
        .rlctl()
        .args(["cancel", "gsm8k-canary"])
        .output()
        .unwrap();
    assert!(cancel.status.success(), "{}", stderr(&cancel));
    assert_eq!(
        wait_for(cluster, &id, Duration::from_secs(60)).0,
        "CANCELLED"
    );
}
