//! Upstream SkyRL on the real cluster: the canary, a grid cell and a two-node run, each a real
//! job on the stand-in upstream checkout (tests/standin/upstream_checkout.py), whose entry module
//! parses its whole command line with the `skyrl` wheel's own `from_cli_overrides` first.

use super::{Cluster, REPO, Site, job_field, launched, log_of, wait_for};
use std::process::Command;
use std::time::{Duration, Instant};

pub fn the_canary_a_cell_and_a_two_node_run_complete_on_an_upstream_checkout(cluster: &Cluster) {
    let site = Site::new(cluster);
    let checkout = site.path().join("upstream-skyrl");
    let status = Command::new("python3")
        .arg(format!("{REPO}/tests/standin/upstream_checkout.py"))
        .arg(&checkout)
        .status()
        .unwrap();
    assert!(status.success());
    site.profile_variant(
        "local",
        "skyrl = \"${REPO}/tests/standin/MarinSkyRL\"",
        "skyrl = \"${ROOT}/upstream-skyrl\"",
    );
    let profile = site.path().join("presets/clusters/local.toml");
    let text = std::fs::read_to_string(&profile).unwrap();
    // A watchdog with teeth: a job whose steps rlctl could not read would be called stalled
    // 20 s after its start-up allowance (2 x 10 s) and five expected steps.
    std::fs::write(
        &profile,
        text.replace(
            "schema = \"marinskyrl-a559688\"",
            "schema = \"skyrl-0.4.0\"",
        ) + "\n[watch]\nstall_floor_s = 20\n",
    )
    .unwrap();
    let rlctl = || {
        let mut cmd = site.rlctl();
        cmd.env("RLCTL_PRESETS", site.path().join("presets"));
        cmd
    };
    // All three at once: each waits on its own job, none on a fixed sleep. The canary logs
    // through upstream's console logger, the cell through W&B (offline): either way rlctl's
    // progress callback prints every step.
    let canary = launched(
        rlctl()
            .env("RLCTL_STANDIN_STEP_SECONDS", "4")
            .args(["launch", "gsm8k-canary", "--"])
            .args(["trainer.max_steps=24", "trainer.logger=console"]),
    );
    let cell = launched(
        rlctl()
            .env("RLCTL_STANDIN_STEP_SECONDS", "4")
            // The job logs offline; launch asks for a key only so that `tend --sync-wandb` can
            // upload later.
            .env("WANDB_API_KEY", "not-a-key")
            .args(["grid", "gsm8k-accuracy/lr3e-7", "--"])
            .args(["trainer.max_steps=24", "trainer.logger=wandb"]),
    );
    let two_nodes = launched(rlctl().args(["launch", "gsm8k-multinode"]));
    // tend at a cron's cadence (sped up) while they run: nothing is cancelled, and status
    // shows the canary's steps as they come.
    let ended = |id: &str| {
        !matches!(
            job_field(cluster, id, "JobState").as_str(),
            "PENDING" | "RUNNING" | "CONFIGURING" | "COMPLETING" | ""
        )
    };
    let start = Instant::now();
    let mut seen_running_at = 0;
    while !(ended(&canary) && ended(&cell)) {
        assert!(
            start.elapsed() < Duration::from_secs(400),
            "the upstream runs never ended"
        );
        let tend = rlctl().arg("tend").output().unwrap();
        let said = super::stdout(&tend);
        assert!(
            tend.status.success() && !said.contains("stalled") && !said.contains("cancel"),
            "tend judged a healthy upstream run: {said}{}",
            super::stderr(&tend)
        );
        let status = rlctl().args(["status", "--json"]).output().unwrap();
        let rows: serde_json::Value =
            serde_json::from_slice(&status.stdout).unwrap_or(serde_json::Value::Null);
        for row in rows["runs"].as_array().into_iter().flatten() {
            assert!(
                row.get("stall").is_none() && row.get("progress_unknown").is_none(),
                "{row}"
            );
            if row["job_id"] == canary.as_str() && row["state"] == "RUNNING" {
                seen_running_at = seen_running_at.max(row["step"].as_u64().unwrap_or(0));
            }
        }
        std::thread::sleep(Duration::from_secs(3));
    }
    assert!(
        seen_running_at >= 2,
        "status never showed the running upstream canary's steps (at most {seen_running_at})"
    );
    let runs = [
        (&canary, "gsm8k-canary", "gsm8k-canary", 24),
        (&cell, "gsm8k-accuracy", "lr3e-7", 24),
        (&two_nodes, "gsm8k-multinode", "gsm8k-multinode", 3),
    ];
    for (id, group, member, last) in runs {
        let (state, code) = wait_for(cluster, id, Duration::from_secs(240));
        // SLURM's `%x_%j.out`: the job's name (`grid.cell` for a cell) and id.
        let folder = site.run_dir(group, member, "001");
        let log = (std::fs::read_dir(&folder).unwrap().flatten())
            .find(|e| {
                e.file_name()
                    .to_string_lossy()
                    .ends_with(&format!("_{id}.out"))
            })
            .map(|e| std::fs::read_to_string(e.path()).unwrap())
            .unwrap_or_else(|| format!("no log of job {id} in {}", folder.display()));
        assert_eq!(
            (state.as_str(), code.as_str()),
            ("COMPLETED", "0:0"),
            "{log}"
        );
        assert!(!log.contains("CHECK FAILED"), "{log}");
        assert!(
            log.contains("rlctl: skyrl.train.entrypoints.main_base exited with status 0"),
            "{log}"
        );
        assert!(
            log.contains(&format!("WANDB_MIRROR kind=train step={last} ")),
            "{log}"
        );
        // Every step, by the run's name, as `metrics` reads them.
        let name = if group == member {
            group.to_owned()
        } else {
            format!("{group}/{member}")
        };
        let metrics = rlctl().args(["metrics", &name, "--json"]).output().unwrap();
        let read: serde_json::Value = serde_json::from_slice(&metrics.stdout).unwrap();
        let steps: Vec<u64> = (read["train"].as_array().unwrap().iter())
            .map(|s| s["step"].as_u64().unwrap())
            .collect();
        let ran = steps.last().copied().unwrap_or(0).max(last);
        assert_eq!(steps, (1..=ran).collect::<Vec<u64>>(), "{name}: {read}");
    }
    assert_eq!(job_field(cluster, &two_nodes, "NumNodes"), "2");
    let log = log_of(
        &site,
        "gsm8k-multinode",
        "gsm8k-multinode",
        "001",
        &two_nodes,
    );
    assert!(log.contains("rlctl: Ray is up: 2 nodes, 8 GPUs"), "{log}");
}
