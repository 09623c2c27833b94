//! The shipped cluster profiles (Leonardo, JUPITER, JUWELS Booster): every preset and grid cell
//! on each either renders into scripts that pass `bash -n` and shellcheck, or is refused with the
//! fix; and the checks a profile's hardware and file systems add, refused before the queue.

use crate::common::findings::{assert_found, findings_in, fired};
use crate::common::{Sandbox, check_script, ok, rlctl, staged, stderr, stdout, test_profile};
use serde_json::Value;
use std::collections::BTreeMap;

const SHIPPED: [&str; 3] = ["leonardo", "jupiter", "juwels-booster"];

/// `check --all --json` on a shipped profile: each target's problems (empty: it passes).
fn verdicts(cluster: &str) -> BTreeMap<String, Vec<String>> {
    let output = rlctl()
        .args(["--cluster", cluster, "check", "--all", "--json"])
        .output()
        .unwrap();
    let doc: Value = serde_json::from_str(&stdout(&output))
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(&output), stderr(&output)));
    (doc["rows"].as_array().unwrap().iter())
        .map(|row| {
            let problems = (row["problems"].as_array().unwrap().iter())
                .map(|p| p.as_str().unwrap().to_owned())
                .collect();
            (row["target"].as_str().unwrap().to_owned(), problems)
        })
        .collect()
}

/// What a shipped profile refuses of a target, by the words of the fix its refusal must carry.
/// Leonardo takes every target; the JSC profiles run the debug QOS's targets (the canary, the
/// throughput grid) in `normal`, which stands for it; JUPITER's 12 h QOS is shorter than
/// opd-qwen3's 23:59, and JUWELS Booster's 40 GB cards do not hold the 32B teacher at TP2.
fn expected_refusal(cluster: &str, target: &str) -> Option<&'static str> {
    let teacher_32b_tp2 = (target.starts_with("opd-qwen3")
        || target.starts_with("opd-speed-convergence/")
        || target.starts_with("opd-throughput/"))
        && !target.ends_with("teacher-tp4")
        && !target.ends_with("teacher8b");
    match cluster {
        "leonardo" => None,
        "jupiter" if target == "opd-qwen3" => Some(
            "--time 23:59:00 is over its 12:00:00 limit; no QOS of this cluster allows it: shorten --time and chain jobs",
        ),
        "juwels-booster" if teacher_32b_tp2 => {
            Some("set `teacher.inference_engine_tensor_parallel_size=4`")
        }
        _ => None,
    }
}

#[test]
fn every_target_on_every_shipped_profile_renders_clean_or_is_refused_with_its_fix() {
    let out = tempfile::tempdir().unwrap();
    for cluster in SHIPPED {
        let verdicts = verdicts(cluster);
        assert!(verdicts.len() >= 70, "{cluster}: {verdicts:?}");
        let expected: BTreeMap<&str, &str> = (verdicts.keys())
            .filter_map(|t| Some((t.as_str(), expected_refusal(cluster, t)?)))
            .collect();
        let got: Vec<&str> = (verdicts.iter())
            .filter(|(_, p)| !p.is_empty())
            .map(|(t, _)| t.as_str())
            .collect();
        assert_eq!(
            got,
            expected.keys().copied().collect::<Vec<_>>(),
            "{cluster}: {verdicts:#?}"
        );
        for (target, problems) in &verdicts {
            if let Some(fix) = expected.get(target.as_str()) {
                assert!(
                    problems.iter().any(|p| p.contains(fix)),
                    "{cluster} {target}: {problems:?} should say {fix:?}"
                );
                continue;
            }
            // Leonardo's scripts are linted by the scripts module; these are the new profiles'.
            if cluster == "leonardo" {
                continue;
            }
            let dir = out.path().join(cluster).join(target.replace('/', "__"));
            ok(rlctl()
                .args(["--cluster", cluster, "render", target, "--out"])
                .arg(&dir));
            check_script(&dir.join("sbatch.sh"));
            check_script(&dir.join("run.sh"));
        }
        let counts = (verdicts.len() - expected.len(), expected.len());
        let want = match cluster {
            "leonardo" => (72, 0),
            "jupiter" => (71, 1),
            _ => (45, 27),
        };
        assert_eq!(counts, want, "{cluster}: (ok, refused)");
    }
}

/// The multi-node wrapper as JUPITER and JUWELS Booster get it: the GPU request form, the
/// module, apptainer with a .sif, the head's address and the IPv4-only variables.
#[test]
fn the_new_profiles_render_their_own_wrappers() {
    for cluster in ["jupiter", "juwels-booster"] {
        let output = ok(rlctl().args([
            "--cluster",
            cluster,
            "launch",
            "gsm8k-multinode",
            "--dry-run",
        ]));
        insta::assert_snapshot!(format!("gsm8k-multinode-on-{cluster}"), stdout(&output));
    }
}

/// A sandbox whose `test` profile is the shipped test profile with `edit` applied to its text
/// and `more` appended.
fn sandbox_with(edit: &[(&str, &str)], more: &str) -> Sandbox {
    let sandbox = staged();
    let mut text = test_profile(sandbox.root(), "none");
    for (from, to) in edit {
        assert!(text.contains(from), "{from}");
        text = text.replace(from, to);
    }
    text.push_str(more);
    std::fs::write(sandbox.presets().join("clusters/test.toml"), text).unwrap();
    sandbox
}

#[test]
fn a_folder_compute_nodes_do_not_mount_is_refused_before_the_queue() {
    // As on JUPITER: the nodes mount `e`, not `p`; the venv in `e` is a link into `p`
    // (dangling here: where it points need not exist for the job to fail on it).
    let sandbox = sandbox_with(
        &[
            ("venv = \"${ROOT}/venv\"", "venv = \"${ROOT}/e/venv\""),
            (
                "ray_tmp_root = \"/tmp\"",
                "ray_tmp_root = \"/tmp\"\ncompute_visible = [\"${ROOT}/work\", \"${ROOT}/scratch\", \"${ROOT}/skyrl\", \"${ROOT}/e\"]",
            ),
        ],
        "",
    );
    let root = sandbox.root();
    std::fs::create_dir_all(root.join("e")).unwrap();
    std::os::unix::fs::symlink(root.join("p/venv"), root.join("e/venv")).unwrap();
    let error = crate::common::fails(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    assert!(error.contains("[visible] software.venv"), "{error}");
    assert!(
        error.contains(&format!("(a link to `{}/p/venv`)", root.display())),
        "{error}"
    );
    assert!(error.contains("storage.compute_visible"), "{error}");
    assert_eq!(sandbox.sbatch_calls(), 0, "nothing reached the queue");
    // The run folder (the job's working folder and log) outside them, as `/p` would be.
    let sandbox = sandbox_with(
        &[
            (
                "run_root = \"${ROOT}/work/runs\"",
                "run_root = \"${ROOT}/work/p/runs\"",
            ),
            (
                "ray_tmp_root = \"/tmp\"",
                "ray_tmp_root = \"/tmp\"\ncompute_visible = [\"${ROOT}/work/e\", \"${ROOT}/work/data\", \"${ROOT}/work/hub\", \"${ROOT}/work/checkpoints\", \"${ROOT}/scratch\", \"${ROOT}/skyrl\", \"${ROOT}/venv\"]",
            ),
        ],
        "",
    );
    let error = crate::common::fails(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    assert!(
        error.contains("[visible] the run folder (the job's working folder and its --output log)"),
        "{error}"
    );
    assert!(!error.contains("[visible] software.venv"), "{error}");
    assert_eq!(sandbox.sbatch_calls(), 0);
    // All under them: the job starts in its run folder, not wherever sbatch was called.
    let sandbox = sandbox_with(
        &[(
            "ray_tmp_root = \"/tmp\"",
            "ray_tmp_root = \"/tmp\"\ncompute_visible = [\"${ROOT}\"]",
        )],
        "",
    );
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    let script = std::fs::read_to_string(sandbox.last_script()).unwrap();
    let run_dir = sandbox
        .last_script()
        .parent()
        .unwrap()
        .display()
        .to_string();
    assert!(
        script.contains(&format!("#SBATCH --chdir={run_dir}\n")),
        "{script}"
    );
}

#[test]
fn the_profiles_reservation_reaches_the_sbatch_header_and_none_leaves_no_line() {
    let header = |sandbox: &Sandbox| {
        ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
        let script = std::fs::read_to_string(sandbox.last_script()).unwrap();
        let end = script.find("\n#\n").expect("the header ends");
        script[..end].to_owned()
    };
    let sandbox = sandbox_with(
        &[(
            "partition = \"boost_usr_prod\"",
            "partition = \"boost_usr_prod\"\nreservation = \"s_tra_rl\"",
        )],
        "",
    );
    let with = header(&sandbox);
    assert!(with.contains("\n#SBATCH --mem="), "{with}");
    assert!(
        with.contains("\n#SBATCH --reservation=s_tra_rl\n"),
        "{with}"
    );
    let without = header(&sandbox_with(&[], ""));
    assert!(!without.contains("--reservation"), "{without}");
    assert!(!without.contains("--chdir"), "{without}");
}

/// The first bytes of an ELF executable for `e_machine` (62: x86-64, 183: AArch64).
fn elf_header(e_machine: u16) -> Vec<u8> {
    let mut header = b"\x7fELF\x02\x01\x01".to_vec();
    header.resize(16, 0);
    header.extend(2u16.to_le_bytes()); // e_type: an executable
    header.extend(e_machine.to_le_bytes());
    header.resize(64, 0);
    header
}

#[test]
fn an_x86_venv_on_an_arm_profile_is_refused() {
    let sandbox = sandbox_with(
        &[(
            "interconnect = \"lo\"",
            "interconnect = \"lo\"\narch = \"aarch64\"",
        )],
        "",
    );
    let root = sandbox.root();
    std::fs::create_dir_all(root.join("venv/bin")).unwrap();
    std::fs::write(root.join("venv/bin/python3.12"), elf_header(62)).unwrap();
    // The venv's python is a link, as venvs make it: the file it names is read.
    std::os::unix::fs::symlink("python3.12", root.join("venv/bin/python")).unwrap();
    let found = sandbox.findings(&["check", "gsm8k-canary"], 1);
    assert_found(&found, "problem", "arch", &[]);
    let error = crate::common::fails(sandbox.rlctl().args(["check", "gsm8k-canary"]));
    assert!(
        error.contains("is built for x86_64 but test's compute nodes are aarch64"),
        "{error}"
    );
    // An Arm build passes.
    std::fs::write(root.join("venv/bin/python3.12"), elf_header(183)).unwrap();
    assert!(!fired(
        &sandbox.findings(&["check", "gsm8k-canary"], 0),
        "arch"
    ));
    // And an Arm build on an x86 profile is refused the other way round.
    let x86 = sandbox_with(&[], "");
    let root = x86.root();
    std::fs::create_dir_all(root.join("venv/bin")).unwrap();
    std::fs::write(root.join("venv/bin/python"), elf_header(183)).unwrap();
    let error = crate::common::fails(x86.rlctl().args(["check", "gsm8k-canary"]));
    assert!(
        error.contains("is built for aarch64 but test's compute nodes are x86_64"),
        "{error}"
    );
}

#[test]
fn a_run_that_outlasts_its_checkpoint_folders_purge_window_is_refused() {
    // 100 epochs of the canary: 10,000 steps at its reference 9.58 s/step, about 27 h.
    let long = ["check", "gsm8k-canary", "--", "trainer.epochs=100"];
    let purged = |days: u32| {
        sandbox_with(
            &[],
            &format!("\n[[storage.purge]]\npath = \"${{ROOT}}/work\"\ndays = {days}\n"),
        )
    };
    let sandbox = purged(1);
    let found = sandbox.findings(&long, 1);
    assert_found(&found, "problem", "purge", &[]);
    let error = crate::common::fails(sandbox.rlctl().args(long));
    assert!(
        error.contains("which deletes files older than 1 days"),
        "{error}"
    );
    // The canary's own 100 steps fit the day.
    assert!(!fired(
        &sandbox.findings(&["check", "gsm8k-canary"], 0),
        "purge"
    ));
    // A window longer than the run lets it through.
    let sandbox = purged(40);
    assert!(!fired(&sandbox.findings(&long, 0), "purge"));
}

#[test]
fn a_32b_teacher_at_tp2_is_refused_on_40_gb_cards_naming_tp4() {
    let check = |cluster: &str, more: &[&str]| {
        let mut cmd = rlctl();
        cmd.args(["--cluster", cluster, "check", "opd-qwen3", "--json", "--"]);
        cmd.args(more).output().unwrap()
    };
    let output = check("juwels-booster", &[]);
    let error = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{error}");
    let found = findings_in(&output);
    let tp = "teacher.inference_engine_tensor_parallel_size";
    assert_found(&found, "problem", "gpu", &[tp]);
    let gpu = found.iter().find(|f| f.code == "gpu").unwrap();
    assert!(gpu.message.contains("at tensor-parallel size 2"), "{gpu:?}");
    assert!(gpu.message.contains(&format!("`{tp}=4`")), "{gpu:?}");
    // TP4 fits there; TP2 fits Leonardo's 64 GB cards and JUPITER's 96 GB ones.
    let tp4 = format!("{tp}=4");
    let output = check("juwels-booster", &[&tp4]);
    assert!(!fired(&findings_in(&output), "gpu"), "{}", stdout(&output));
    for cluster in ["leonardo", "jupiter"] {
        let output = check(cluster, &[]);
        assert!(
            !fired(&findings_in(&output), "gpu"),
            "{cluster}: {}",
            stdout(&output)
        );
    }
}

#[test]
fn profile_values_are_checked_when_it_loads() {
    for (edit, more, says) in [
        (
            (
                "runtime = \"none\"",
                "runtime = \"apptainer\"\nprogram = \"apptainer\"\nimage = \"${ROOT}/x.sif\"\nimage_kind = \"sandbox\"",
            ),
            "",
            "is a .sif file, but container.image_kind = \"sandbox\"",
        ),
        (
            (
                "runtime = \"none\"",
                "runtime = \"apptainer\"\nprogram = \"apptainer\"\nimage = \"${ROOT}/x.sif\"\nmodules = [\"Apptainer; rm -rf ~\"]",
            ),
            "",
            "is not a module name",
        ),
        (
            (
                "runtime = \"none\"",
                "runtime = \"none\"\noverlays = [\"${ROOT}/o.img\"]",
            ),
            "",
            "container.overlays need a container",
        ),
        (
            (
                "interconnect = \"lo\"",
                "interconnect = \"lo\"\narch = \"arm64\"",
            ),
            "",
            "arm64",
        ),
        (
            (
                "partition = \"boost_usr_prod\"",
                "partition = \"boost_usr_prod\"\ngpu_request = \"gpus-per-task\"",
            ),
            "",
            "gpus-per-task",
        ),
        (
            (
                "partition = \"boost_usr_prod\"",
                "partition = \"boost_usr_prod\"\nreservation = \"dev booster\"",
            ),
            "",
            "slurm.reservation",
        ),
        (
            (
                "ray_tmp_root = \"/tmp\"",
                "ray_tmp_root = \"/tmp\"\ncompute_visible = [\"e/scratch\"]",
            ),
            "",
            "storage.compute_visible = `e/scratch` must be an absolute path",
        ),
        (
            (
                "interconnect = \"lo\"",
                "interconnect = \"lo\"\ncpus_per_task = 0",
            ),
            "",
            "node.cpus_per_task = 0",
        ),
        (
            ("gpus = 4", "gpus = 4"),
            "\n[network]\nhead_address = \"hostname_suffix\"\n",
            "needs network.hostname_suffix",
        ),
        (
            ("gpus = 4", "gpus = 4"),
            "\n[[storage.purge]]\npath = \"${ROOT}/scratch\"\ndays = 0\n",
            "days = 0 would delete files at once",
        ),
    ] {
        let sandbox = sandbox_with(&[edit], more);
        let error = crate::common::fails(sandbox.rlctl().args(["check", "gsm8k-canary"]));
        assert!(error.contains(says), "{edit:?} {more:?}: {error}");
    }
}

#[test]
fn a_12_hour_qos_takes_a_14_hour_run_in_two_slots() {
    // opd-qwen3 is ~14 h at its reference speed: on JUPITER's 12 h QOS, two slots.
    let jupiter = ["--cluster", "jupiter"];
    let output = ok(rlctl()
        .args(jupiter)
        .args(["check", "opd-qwen3", "--time", "12:00:00"]));
    assert!(
        stderr(&output)
            .contains("needs 2 slot(s) of 12h00m, and the plan has 1: launch with --chain 2"),
        "{}",
        stderr(&output)
    );
    let output = ok(rlctl().args(jupiter).args([
        "check",
        "opd-qwen3",
        "--time",
        "12:00:00",
        "--chain",
        "2",
    ]));
    assert!(!stderr(&output).contains("[slots]"), "{}", stderr(&output));
}

#[test]
fn doctor_judges_a_sif_image_and_its_overlays_as_files() {
    let apptainer = "runtime = \"apptainer\"\nprogram = \"apptainer\"\nmodules = [\"Apptainer\"]\n\
                     image = \"${ROOT}/images/run.sif\"\noverlays = [\"${ROOT}/images/extra.img\"]\nbinds = [\"${ROOT}\"]";
    let sandbox = sandbox_with(&[("runtime = \"none\"", apptainer)], "");
    let root = sandbox.root();
    // A bare program name is looked up on PATH (the sandbox's bin comes first).
    crate::common::write_exec(&root.join("bin/apptainer"), "#!/bin/sh\nexit 1\n");
    std::fs::create_dir_all(root.join("images")).unwrap();
    std::fs::write(root.join("images/run.sif"), "SIF").unwrap();
    let output = sandbox.rlctl().arg("doctor").output().unwrap();
    let report = stdout(&output);
    assert!(report.contains("`apptainer` on PATH"), "{report}");
    assert!(report.contains("run.sif` is a .sif image"), "{report}");
    assert!(
        report.contains(
            "extra.img` is not a file: build the overlay there or fix container.overlays"
        ),
        "{report}"
    );
    // A folder where the profile expects a .sif is named for what it is.
    std::fs::remove_file(root.join("images/run.sif")).unwrap();
    std::fs::create_dir_all(root.join("images/run.sif")).unwrap();
    let report = stdout(&sandbox.rlctl().arg("doctor").output().unwrap());
    assert!(
        report.contains("run.sif` is a directory; this profile runs a .sif image file"),
        "{report}"
    );
}
