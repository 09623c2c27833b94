//! `rlctl doctor` on a staged site: a real venv whose editable install (a .pth file, as pip
//! writes one) points at the checkout, imported through the singularity stand-in.

use crate::common::{Sandbox, stdout, test_profile};
use std::path::Path;
use std::process::Command;

/// A site as the login node would have it: sandbox image folder, venv, checkout, caches.
fn staged(sandbox: &Sandbox) {
    let root = sandbox.root();
    std::fs::write(
        sandbox.presets().join("clusters/test.toml"),
        test_profile(root, "singularity").replace(
            "ray_tmp_root = \"/tmp\"",
            "ray_tmp_root = \"/tmp\"\nmin_free_gib = 1",
        ),
    )
    .unwrap();
    std::fs::create_dir_all(root.join("image")).unwrap();
    let package = root.join("skyrl/skyrl-train/skyrl_train");
    std::fs::create_dir_all(&package).unwrap();
    std::fs::write(package.join("__init__.py"), "").unwrap();
    let status = Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(root.join("venv"))
        .status()
        .unwrap();
    assert!(status.success());
    point_editable_install_at(root, &root.join("skyrl/skyrl-train"));
}

fn point_editable_install_at(root: &Path, checkout: &Path) {
    let site = Command::new(root.join("venv/bin/python"))
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ])
        .output()
        .unwrap();
    let site = String::from_utf8(site.stdout).unwrap();
    std::fs::write(
        Path::new(site.trim()).join("__editable__.skyrl_train.pth"),
        format!("{}\n", checkout.display()),
    )
    .unwrap();
}

fn doctor(sandbox: &Sandbox) -> (bool, String) {
    let output = sandbox.rlctl().arg("doctor").output().unwrap();
    (
        output.status.success(),
        stdout(&output).replace(&sandbox.root().display().to_string(), "[ROOT]"),
    )
}

#[test]
fn a_healthy_site_passes_and_each_line_says_what_it_checked() {
    let sandbox = Sandbox::new();
    staged(&sandbox);
    let (ok, text) = doctor(&sandbox);
    assert!(ok, "{text}");
    let statuses: Vec<(&str, &str)> = text
        .lines()
        .map(|l| {
            (
                l.split_whitespace().next().unwrap(),
                l.get(9..29).unwrap().trim(),
            )
        })
        .collect();
    assert_eq!(
        statuses,
        [
            ("ok", "container binary"),
            ("ok", "container image"),
            ("ok", "venv python"),
            ("ok", "SkyRL checkout"),
            ("ok", "trainer import"),
            ("ok", "host gcc"),
            ("ok", "HF cache"),
            ("ok", "data folder"),
            ("ok", "checkpoint space"),
        ]
    );
    assert!(
        text.contains("imports from `[ROOT]/skyrl/skyrl-train/skyrl_train/__init__.py`"),
        "{text}"
    );
}

/// The job's run.sh imports the trainer with PYTHONPATH set to the checkout, so an editable
/// install left pointing at an old checkout does not matter to it: doctor imports the same way
/// and says the site is fine, as the jobs would find it.
#[test]
fn doctor_imports_the_trainer_as_the_job_does() {
    let sandbox = Sandbox::new();
    staged(&sandbox);
    point_editable_install_at(
        sandbox.root(),
        &sandbox.root().join("old-checkout/skyrl-train"),
    );
    let (ok, text) = doctor(&sandbox);
    assert!(ok, "{text}");
    assert!(
        text.contains("ok       trainer import       imports from `[ROOT]/skyrl/skyrl-train/skyrl_train/__init__.py`"),
        "{text}"
    );
}

/// A checkout the job could not import either (a dependency missing from the venv) is a
/// problem, with the command that installs it.
#[test]
fn a_trainer_the_job_cannot_import_is_caught_with_the_install_command() {
    let sandbox = Sandbox::new();
    staged(&sandbox);
    std::fs::write(
        sandbox
            .root()
            .join("skyrl/skyrl-train/skyrl_train/__init__.py"),
        "import torch_not_installed_here\n",
    )
    .unwrap();
    let (ok, text) = doctor(&sandbox);
    assert!(!ok);
    let line = text.lines().find(|l| l.contains("trainer import")).unwrap();
    assert_eq!(
        line,
        "problem  trainer import       skyrl_train does not import as the job imports it \
         (PYTHONPATH=[ROOT]/skyrl/skyrl-train) (ModuleNotFoundError: No module named \
         'torch_not_installed_here'): install the checkout and its dependencies into the venv: \
         `cd [ROOT]/skyrl/skyrl-train && VIRTUAL_ENV=[ROOT]/venv uv pip install -e .`"
    );
}

#[test]
fn a_sif_image_is_not_a_sandbox() {
    let sandbox = Sandbox::new();
    staged(&sandbox);
    std::fs::remove_dir(sandbox.root().join("image")).unwrap();
    std::fs::write(sandbox.root().join("image"), b"SIF").unwrap();
    let (ok, text) = doctor(&sandbox);
    assert!(!ok);
    assert!(
        text.contains("problem  container image      `[ROOT]/image` is an image file"),
        "{text}"
    );
}
