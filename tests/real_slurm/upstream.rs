//! Upstream SkyRL on the real cluster: the canary, a grid cell and a two-node run, each a real
//! job on the stand-in upstream checkout (tests/standin/upstream_checkout.py), whose entry module
//! parses its whole command line with the `skyrl` wheel's own `from_cli_overrides` first.

use super::{Cluster, REPO, Site, job_field, launched, log_of, wait_for};
use std::process::Command;
use std::time::Duration;

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
    std::fs::write(
        &profile,
        text.replace(
            "schema = \"marinskyrl-a559688\"",
            "schema = \"skyrl-0.4.0\"",
        ),
    )
    .unwrap();
    let rlctl = || {
        let mut cmd = site.rlctl();
        cmd.env("RLCTL_PRESETS", site.path().join("presets"));
        cmd
    };
    // All three at once: each waits on its own job, none on a fixed sleep.
    let canary = launched(rlctl().args(["launch", "gsm8k-canary"]));
    let cell =
        launched(rlctl().args(["grid", "gsm8k-accuracy/lr3e-7", "--", "trainer.max_steps=2"]));
    let two_nodes = launched(rlctl().args(["launch", "gsm8k-multinode"]));
    let runs = [
        (&canary, "gsm8k-canary", "gsm8k-canary", 3),
        (&cell, "gsm8k-accuracy", "lr3e-7", 2),
        (&two_nodes, "gsm8k-multinode", "gsm8k-multinode", 3),
    ];
    for (id, group, member, last) in runs {
        let (state, code) = wait_for(cluster, id, Duration::from_secs(240));
        let log = log_of(&site, group, member, "001", id);
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
