//! `rlctl init --discover` on the real cluster: the draft comes from the real sinfo, scontrol
//! and sacctmgr (tests/cluster/up.sh's slurm.conf and accounting), and, with what only this
//! stand-in site needs filled in (as tests/cluster/presets/clusters/local.toml has it), the
//! canary runs on it to COMPLETED.

use super::{Cluster, REPO, Site, launched, log_of, stderr, stdout, wait_for};
use std::time::Duration;

pub fn init_discover_drafts_the_real_cluster_and_a_launch_on_it_completes(cluster: &Cluster) {
    let site = Site::new(cluster);
    let root = site.path().to_str().unwrap().to_owned();
    let presets = site.path().join("presets");
    let rlctl = || {
        let mut cmd = site.rlctl();
        cmd.env("RLCTL_PRESETS", &presets)
            .env("RLCTL_CLUSTER", "local2")
            .env("USER", "root");
        for var in [
            "RLCTL_SINFO",
            "RLCTL_SCONTROL",
            "RLCTL_SACCTMGR",
            "RLCTL_DISCOVER_ROOT",
        ] {
            cmd.env_remove(var);
        }
        cmd
    };
    let out = rlctl()
        .args(["init", "local2", "--discover", "--account", "rlctl_test"])
        .args([
            "--work",
            &format!("{root}/work"),
            "--scratch",
            &format!("{root}/scratch"),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("a draft of partition boost_usr_prod with "),
        "{}",
        stdout(&out)
    );
    let file = presets.join("clusters/local2.toml");
    let text = std::fs::read_to_string(&file).unwrap();

    // What up.sh configured, as the real programs said it.
    let lines: Vec<&str> = text.lines().collect();
    let discovered = |value: &str| {
        let at = lines.iter().position(|l| *l == value);
        let at = at.unwrap_or_else(|| panic!("no `{value}` in:\n{text}"));
        assert!(
            lines[at - 1].starts_with("# discovered: "),
            "`{value}` is not marked discovered:\n{text}"
        );
    };
    for value in [
        "partition = \"boost_usr_prod\"",
        "gpus = 4",
        "cpus = 32",
        "mem = \"494000M\"",
        &format!("arch = \"{}\"", std::env::consts::ARCH),
        "name = \"normal\"",
        "max_wall = \"23:59:00\"",
        "name = \"boost_qos_dbg\"",
        "max_wall = \"00:30:00\"",
    ] {
        discovered(value);
    }
    let dbg = text
        .split("[[slurm.qos]]")
        .find(|t| t.contains("name = \"boost_qos_dbg\""))
        .unwrap();
    assert!(dbg.contains("MaxTRES=node=2\nmax_nodes = 2\n"), "{dbg}");

    // What only this stand-in site needs (local.toml): the stand-in container, trainer and
    // venv, loopback networking, and the staged HF cache's place.
    let mut doc: toml_edit::DocumentMut = text.parse().unwrap();
    doc["slurm"]["startup_s"] = toml_edit::value(10);
    doc["node"]["interconnect"] = toml_edit::value("lo");
    doc["storage"]["hf_home"] = toml_edit::value(format!("{root}/work/hub"));
    doc["software"]["skyrl"] = toml_edit::value(format!("{REPO}/tests/standin/MarinSkyRL"));
    doc["software"]["venv"] = toml_edit::value(format!("{root}/venv"));
    doc["software"]["gcc_bin"] = toml_edit::value("/usr/bin");
    doc["software"]["schema"] = toml_edit::value("marinskyrl-a559688");
    let container = doc["container"].as_table_mut().unwrap();
    container.clear();
    container["runtime"] = toml_edit::value("singularity");
    container["program"] = toml_edit::value(format!("{REPO}/tests/cluster/singularity-shim"));
    container["image"] = toml_edit::value(format!("{root}/image"));
    container["image_kind"] = toml_edit::value("sandbox");
    let mut binds = toml_edit::Array::new();
    binds.push(root.as_str());
    binds.push(REPO);
    container["binds"] = toml_edit::value(binds);
    doc["network"]["head_address"] = toml_edit::value("hostname");
    doc["network"]["block_egress"] = toml_edit::value(true);
    doc["network"]["ray_timeout_s"] = toml_edit::value(60);
    doc["env"] = toml_edit::table();
    doc["env"]["PYTHONDONTWRITEBYTECODE"] = toml_edit::value("1");
    doc["env"]["AUTOSCALER_UPDATE_INTERVAL_S"] = toml_edit::value("1");
    std::fs::write(&file, doc.to_string()).unwrap();

    let id = launched(rlctl().args(["launch", "gsm8k-canary"]));
    let (state, code) = wait_for(cluster, &id, Duration::from_secs(180));
    let log = log_of(&site, "gsm8k-canary", "gsm8k-canary", "001", &id);
    assert_eq!(
        (state.as_str(), code.as_str()),
        ("COMPLETED", "0:0"),
        "{log}"
    );
    assert!(log.contains("WANDB_MIRROR kind=train step=3 "), "{log}");
    assert!(
        log.contains(&format!("rlctl: job {id} finished with status 0")),
        "{log}"
    );
}
