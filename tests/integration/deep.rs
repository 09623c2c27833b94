//! `--deep`: the plan judged by the checkout's own hydra composition and `validate_cfg`, run by
//! the real rlctl through the local cluster profile (tests/cluster/presets/clusters/local.toml:
//! the singularity stand-in tests/cluster/singularity-shim, which checks singularity's
//! arguments and runs the command on this machine). No SLURM: the deep check runs on the login
//! node.
//!
//! The checkout is real: its `skyrl-train/skyrl_train` is the skyrl-train 0.3.1 package from
//! PyPI (tests/setup.sh installs it), linked, or copied where a test edits it. What is NOT real
//! is the venv's GPU stack: torch, vllm, transformers, ray's placement groups, flash_attn and the
//! rest are gigabytes and need GPUs, and the deep check only imports them. The site's
//! `venv/bin/python` is a shell script that puts tests/gpu_stack_standin/ first on PYTHONPATH
//! and runs python3; that folder's sitecustomize.py installs the stand-ins
//! (gpu_stack_standin.py says what each one is and why it is enough, and tests/skyrl_oracle.py
//! uses the same file). Everything else is the real thing: hydra, omegaconf, SkyRL's config
//! YAMLs, its entrypoint module and its validate_cfg.

use crate::common::{rlctl, stage_offline_files, stderr, stdout, write_exec};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const REPO: &str = env!("CARGO_MANIFEST_DIR");
const SETUP: &str = "run `bash tests/setup.sh` (it installs hydra-core, omegaconf and skyrl-train==0.3.1 from PyPI)";

/// A login node's site under a temp dir: staged models and data, the image folder, the venv
/// (python3 with the GPU stack's stand-ins) and a checkout of the real skyrl-train 0.3.1.
struct Site {
    root: tempfile::TempDir,
}

impl Site {
    fn new() -> Site {
        let root = tempfile::Builder::new()
            .prefix("rlctl-deep-")
            .tempdir()
            .unwrap();
        let r = root.path();
        stage_offline_files(r);
        std::fs::create_dir_all(r.join("image")).unwrap();
        std::fs::create_dir_all(r.join("venv/bin")).unwrap();
        write_exec(
            &r.join("venv/bin/python"),
            &format!(
                "#!/bin/sh\n# STAND-IN venv: python3 with the GPU stack's stand-ins first on its path.\n\
                 PYTHONPATH={REPO}/tests/gpu_stack_standin${{PYTHONPATH:+:$PYTHONPATH}} exec {} \"$@\"\n",
                python3()
            ),
        );
        std::fs::create_dir_all(r.join("checkout/skyrl-train")).unwrap();
        std::os::unix::fs::symlink(
            skyrl_train_package(),
            r.join("checkout/skyrl-train/skyrl_train"),
        )
        .unwrap();
        let site = Site { root };
        site.profile("", "");
        site
    }

    fn path(&self) -> &Path {
        self.root.path()
    }

    /// The site's `local` profile: the repository's, on this site's checkout, with `from`
    /// replaced by `to` (nothing when `from` is empty) and `extra` appended.
    fn profile_with(&self, from: &str, to: &str, extra: &str) {
        let local =
            std::fs::read_to_string(format!("{REPO}/tests/cluster/presets/clusters/local.toml"))
                .unwrap();
        let checkout = "skyrl = \"${REPO}/tests/standin/MarinSkyRL\"";
        assert!(local.contains(checkout) && local.contains(from));
        let mut text = local.replace(checkout, "skyrl = \"${ROOT}/checkout\"");
        if !from.is_empty() {
            text = text.replace(from, to);
        }
        text.push_str(extra);
        let dir = self.path().join("presets/clusters");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("local.toml"), text).unwrap();
    }

    fn profile(&self, from: &str, to: &str) {
        self.profile_with(from, to, "");
    }

    /// rlctl on the site's `local` profile.
    fn rlctl(&self) -> Command {
        let mut cmd = rlctl();
        cmd.env("RLCTL_PRESETS", self.path().join("presets"))
            .env("RLCTL_CLUSTER", "local")
            .env("RLCTL_LOCAL_ROOT", self.path())
            .env("RLCTL_REPO", REPO)
            .env_remove("SINGULARITY_SHIM_LOG")
            // Only the profile decides it, as on a login node.
            .env_remove("PYTHONDONTWRITEBYTECODE");
        cmd
    }

    fn run(&self, args: &[&str]) -> Output {
        self.rlctl().args(args).output().unwrap()
    }

    /// Output with the site's folder written `<ROOT>`.
    fn text(&self, text: &str) -> String {
        text.replace(&self.path().display().to_string(), "<ROOT>")
    }

    /// Replaces the checkout's linked package with a copy, to edit.
    fn copy_package(&self) -> PathBuf {
        let package = self.path().join("checkout/skyrl-train/skyrl_train");
        std::fs::remove_file(&package).unwrap();
        let status = Command::new("cp")
            .arg("-r")
            .arg(skyrl_train_package())
            .arg(&package)
            .status()
            .unwrap();
        assert!(status.success());
        package
    }
}

fn python3() -> String {
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 runs");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// The installed skyrl-train 0.3.1's package folder; the test fails, saying how to install
/// it, when it is not there.
fn skyrl_train_package() -> PathBuf {
    let out = Command::new("python3")
        .args([
            "-c",
            "import importlib.metadata as m, importlib.util as u, os; \
             assert m.version('skyrl-train') == '0.3.1'; \
             print(os.path.dirname(u.find_spec('skyrl_train').origin))",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "skyrl-train 0.3.1 is missing: {SETUP}"
    );
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

/// The problem line of a failed preflight, the site's folder as `<ROOT>`.
fn refused(site: &Site, output: &Output) -> String {
    assert_eq!(output.status.code(), Some(1), "{}", stderr(output));
    assert_eq!(stdout(output), "");
    let text = site.text(&stderr(output));
    let (_, problems) = text
        .split_once("nothing was written or submitted:\n")
        .unwrap_or_else(|| panic!("not a preflight failure:\n{text}"));
    problems.trim().to_owned()
}

#[test]
fn a_good_plan_passes_and_says_skyrl_judged_it() {
    let site = Site::new();
    let out = site.run(&["check", "gsm8k-canary", "--deep"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "gsm8k-canary: every preflight check passed, SkyRL's own validate_cfg included\n"
    );
    assert_eq!(
        site.text(&stderr(&out)),
        "rlctl: note: [skyrl-deep] SkyRL's own config and validate_cfg in `<ROOT>/checkout/skyrl-train` accept the plan\n"
    );
    // Nothing written into the checkout: no __pycache__, no hydra outputs folder.
    let written: Vec<_> = std::fs::read_dir(site.path().join("checkout/skyrl-train"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(written, ["skyrl_train"]);
}

#[test]
fn without_a_container_the_venv_runs_in_the_checkout() {
    // runtime = "none": the job runs `env VARS...` in the checkout's folder, and so does the check.
    let site = Site::new();
    site.profile("runtime = \"singularity\"", "runtime = \"none\"");
    let log = site.path().join("shim.log");
    let ok = site
        .rlctl()
        .env("SINGULARITY_SHIM_LOG", &log)
        .args(["check", "gsm8k-canary", "--deep"])
        .output()
        .unwrap();
    assert!(ok.status.success(), "{}", stderr(&ok));
    assert!(!log.exists(), "the container program ran with runtime none");
    let out = site.run(&[
        "check",
        "gsm8k-canary",
        "--deep",
        "--",
        "trainer.algorithm.advantage_estimator=rloo_n",
    ]);
    assert!(
        refused(&site, &out).starts_with("[skyrl-deep] SkyRL refuses the plan: "),
        "{}",
        stderr(&out)
    );
}

#[test]
fn skyrl_refuses_what_the_mirror_accepts_with_its_own_message() {
    // rlctl mirrors MarinSkyRL a559688, which registers `rloo_n`; skyrl-train 0.3.1 does not.
    let site = Site::new();
    let overrides = ["--", "trainer.algorithm.advantage_estimator=rloo_n"];
    let mirror = site.run(&[&["check", "gsm8k-canary"][..], &overrides].concat());
    assert!(mirror.status.success(), "{}", stderr(&mirror));
    let out = site.run(&[&["check", "gsm8k-canary", "--deep"][..], &overrides].concat());
    assert_eq!(
        refused(&site, &out),
        "[skyrl-deep] SkyRL refuses the plan: AssertionError: invalid advantage_estimator: rloo_n. Must be one of \
         ['reinforce++', 'rloo', 'gae', 'grpo']; this is SkyRL's own validate_cfg in `<ROOT>/checkout/skyrl-train`; \
         change the knob or the checkout"
    );
}

#[test]
fn an_edited_checkout_is_judged_by_its_own_rules() {
    let site = Site::new();
    let package = site.copy_package();
    let utils = package.join("utils/utils.py");
    // Without the profile's PYTHONDONTWRITEBYTECODE, the check must still write nothing here.
    site.profile("PYTHONDONTWRITEBYTECODE = \"1\"", "");
    let status = Command::new("find")
        .arg(&package)
        .args([
            "-name",
            "__pycache__",
            "-prune",
            "-exec",
            "rm",
            "-rf",
            "{}",
            "+",
        ])
        .status()
        .unwrap();
    assert!(status.success());
    let source = std::fs::read_to_string(&utils).unwrap();
    let head = "def validate_cfg(cfg: DictConfig):\n";
    assert!(source.contains(head));
    let rule = "    assert cfg.trainer.epochs <= 1, f\"this checkout trains one epoch at most, not {cfg.trainer.epochs}\"\n";
    std::fs::write(&utils, source.replacen(head, &format!("{head}{rule}"), 1)).unwrap();
    let ok = site.run(&["check", "gsm8k-canary", "--deep"]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    let out = site.run(&["check", "gsm8k-canary", "--deep", "--", "trainer.epochs=2"]);
    assert_eq!(
        refused(&site, &out),
        "[skyrl-deep] SkyRL refuses the plan: AssertionError: this checkout trains one epoch at most, not 2; \
         this is SkyRL's own validate_cfg in `<ROOT>/checkout/skyrl-train`; change the knob or the checkout"
    );
    let cached = Command::new("find")
        .arg(site.path().join("checkout"))
        .args(["-name", "__pycache__"])
        .output()
        .unwrap();
    assert_eq!(
        stdout(&cached),
        "",
        "the deep check wrote into the checkout"
    );
}

/// An entrypoint of the checkout's own, as MarinSkyRL's examples are: it registers an advantage
/// estimator on import, its `@hydra.main` names a config folder next to it (relative) and a
/// config of its own, and it imports a `validate_cfg` of its own that adds a rule to SkyRL's.
const CUSTOM_ENTRYPOINT: &str = r#"import hydra
from skyrl_train.utils.ppo_utils import register_advantage_estimator
from skyrl_train.utils.utils import validate_cfg as skyrl_validate_cfg


@register_advantage_estimator("halved_grpo")
def halved_grpo(**kwargs):
    raise NotImplementedError("never called by validate_cfg")


def validate_cfg(cfg):
    skyrl_validate_cfg(cfg)
    if cfg.trainer.epochs > cfg.my_exp.max_epochs:
        raise ValueError(f"my_exp trains at most {cfg.my_exp.max_epochs} epochs")


@hydra.main(config_path="conf", config_name="my_exp", version_base=None)
def main(cfg):
    validate_cfg(cfg)


if __name__ == "__main__":
    main()
"#;

#[test]
fn the_entrypoint_registers_and_names_its_own_config_and_validate_cfg() {
    let site = Site::new();
    let exp = site.path().join("checkout/skyrl-train/my_exp");
    std::fs::create_dir_all(exp.join("conf")).unwrap();
    std::fs::write(exp.join("__init__.py"), "").unwrap();
    std::fs::write(exp.join("main.py"), CUSTOM_ENTRYPOINT).unwrap();
    let config = skyrl_train_package().join("config");
    std::fs::write(
        exp.join("conf/my_exp.yaml"),
        format!(
            "defaults:\n  - ppo_base_config\n  - _self_\nhydra:\n  searchpath:\n    - file://{}\nmy_exp:\n  max_epochs: 2\n",
            config.display()
        ),
    )
    .unwrap();
    let runs = site.path().join("presets/runs");
    std::fs::create_dir_all(&runs).unwrap();
    std::fs::write(
        runs.join("my-exp.toml"),
        "description = \"the canary through an entrypoint of the checkout's own\"\nextends = \"gsm8k-canary\"\n\
         entrypoint = \"my_exp.main\"\n\n[knobs]\n\"trainer.algorithm.advantage_estimator\" = \"halved_grpo\"\n",
    )
    .unwrap();
    // 0.3.1's validate_cfg refuses an estimator its registry lacks: this one is the entrypoint's.
    let ok = site.run(&["check", "my-exp", "--deep", "--", "trainer.epochs=2"]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    let out = site.run(&["check", "my-exp", "--deep", "--", "trainer.epochs=3"]);
    assert_eq!(
        refused(&site, &out),
        "[skyrl-deep] SkyRL refuses the plan: ValueError: my_exp trains at most 2 epochs; this is SkyRL's own \
         validate_cfg in `<ROOT>/checkout/skyrl-train`; change the knob or the checkout"
    );
}

#[test]
fn an_entrypoint_that_does_not_import_is_reported_as_such() {
    let site = Site::new();
    let runs = site.path().join("presets/runs");
    std::fs::create_dir_all(&runs).unwrap();
    std::fs::write(
        runs.join("moved.toml"),
        "description = \"the canary through an entrypoint the checkout does not have\"\n\
         extends = \"gsm8k-canary\"\nentrypoint = \"skyrl_train.entrypoints.main_moved\"\n",
    )
    .unwrap();
    let out = site.run(&["check", "moved", "--deep"]);
    assert_eq!(
        refused(&site, &out),
        "[skyrl-deep] `skyrl_train.entrypoints.main_moved` does not import with the venv's python: \
         ModuleNotFoundError: No module named 'skyrl_train.entrypoints.main_moved'; fix the checkout \
         `<ROOT>/checkout/skyrl-train` or the venv `<ROOT>/venv/bin/python` (rlctl doctor)"
    );
}

#[test]
fn a_hydra_composition_error_is_reported_as_such() {
    // The schema check would refuse the key first; allowed, only hydra itself is left to judge.
    let site = Site::new();
    let out = site.run(&[
        "check",
        "gsm8k-canary",
        "--deep",
        "--allow",
        "off-schema",
        "--",
        "trainer.no_such_knob=1",
    ]);
    assert_eq!(
        refused(&site, &out),
        "[skyrl-deep] hydra cannot compose the config of `skyrl_train.entrypoints.main_base` with these overrides: \
         ConfigCompositionException: Could not override 'trainer.no_such_knob'. To append to your config use \
         +trainer.no_such_knob=1; this is the config of the checkout `<ROOT>/checkout/skyrl-train`; change the \
         override or the checkout"
    );
}

#[test]
fn the_deep_check_waits_for_the_mirror() {
    // A plan the checks in rlctl refuse is not also sent to SkyRL: its problems are the mirror's.
    let site = Site::new();
    write_exec(
        &site.path().join("venv/bin/python"),
        "#!/bin/sh\necho called >> \"$RLCTL_LOCAL_ROOT/calls\"\nexit 3\n",
    );
    let out = site.run(&[
        "check",
        "gsm8k-canary",
        "--deep",
        "--",
        "trainer.train_batch_size=100",
    ]);
    assert!(refused(&site, &out).starts_with("[skyrl-rules] "));
    assert!(!site.path().join("calls").exists());
}

#[test]
fn it_runs_the_jobs_own_container_command() {
    // The argv singularity receives is the rendered wrapper's `container` array, then the
    // venv's python with the script, the entrypoint and run.sh's overrides, in run.sh's order.
    let site = Site::new();
    let log = site.path().join("shim.log");
    let out = site
        .rlctl()
        .env("SINGULARITY_SHIM_LOG", &log)
        .args(["check", "gsm8k-canary", "--deep", "--", "trainer.epochs=1"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let logged: Vec<String> =
        serde_json::from_str(std::fs::read_to_string(&log).unwrap().trim()).unwrap();
    let rendered = site.path().join("rendered");
    let status = site
        .rlctl()
        .args(["render", "gsm8k-canary", "--out"])
        .arg(&rendered)
        .args(["--", "trainer.epochs=1"])
        .status()
        .unwrap();
    assert!(status.success());
    let container = bash_array(&rendered.join("sbatch.sh"), "container");
    let mut overrides = bash_array(&rendered.join("run.sh"), "overrides");
    overrides.push("trainer.resume_mode=null".to_owned());
    let python = site.path().join("venv/bin/python").display().to_string();
    assert_eq!(logged[..container.len() - 1], container[1..]);
    let after = &logged[container.len() - 1..];
    assert_eq!(after[0], python);
    assert_eq!(after[1], "-c");
    assert_eq!(after[2], include_str!("../../src/check/deep.py"));
    assert_eq!(after[3], "skyrl_train.entrypoints.main_base");
    assert_eq!(after[4..], overrides[..]);
}

/// The words of the bash array `name` as a rendered script defines it.
fn bash_array(script: &Path, name: &str) -> Vec<String> {
    let text = std::fs::read_to_string(script).unwrap();
    let start = text.find(&format!("\n{name}=(")).unwrap() + 1;
    let end = start + text[start..].find("\n)").unwrap() + 2;
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "run_dir=/run; {}\nprintf '%s\\0' \"${{{name}[@]}}\"",
            &text[start..end]
        ))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    String::from_utf8(out.stdout)
        .unwrap()
        .split_terminator('\0')
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_profile_makes_it_the_default_and_no_deep_skips_it() {
    let site = Site::new();
    site.profile_with("", "", "\n[check]\ndeep = true\n");
    let bad = ["--", "trainer.algorithm.advantage_estimator=rloo_n"];
    let out = site.run(&[&["check", "gsm8k-canary"][..], &bad].concat());
    assert!(refused(&site, &out).starts_with(
        "[skyrl-deep] SkyRL refuses the plan: AssertionError: invalid advantage_estimator: rloo_n."
    ));
    let skipped = site.run(&[&["check", "gsm8k-canary", "--no-deep"][..], &bad].concat());
    assert!(skipped.status.success(), "{}", stderr(&skipped));
    assert_eq!(
        stdout(&skipped),
        "gsm8k-canary: every preflight check passed\n"
    );
    // The last of --deep and --no-deep wins.
    let last = site.run(&[&["check", "gsm8k-canary", "--deep", "--no-deep"][..], &bad].concat());
    assert!(last.status.success(), "{}", stderr(&last));
    // launch and grid refuse before anything is written or submitted.
    for command in [
        &["launch", "gsm8k-canary", "--dry-run"][..],
        &["grid", "tbs128", "--dry-run"],
    ] {
        let out = site.run(&[command, &bad[..]].concat());
        assert!(refused(&site, &out).starts_with("[skyrl-deep] "));
        assert!(!site.path().join("work/rlctl/runs").exists());
    }
}

#[test]
fn launch_and_grid_take_deep() {
    let site = Site::new();
    let ok = site.run(&["launch", "gsm8k-canary", "--dry-run", "--deep"]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    assert!(
        stderr(&ok).contains("rlctl: note: [skyrl-deep] SkyRL's own config and validate_cfg in")
    );
    // The grids set `trainer.max_steps`, a key of MarinSkyRL's config that skyrl-train 0.3.1's
    // lacks: the key list rlctl checks against is the fork's, the checkout here is 0.3.1.
    let cell = site.run(&["grid", "tbs128", "--dry-run", "--deep"]);
    assert_eq!(
        refused(&site, &cell),
        "[skyrl-deep] hydra cannot compose the config of `skyrl_train.entrypoints.main_base` with these overrides: \
         ConfigCompositionException: Could not override 'trainer.max_steps'. To append to your config use \
         +trainer.max_steps=25; this is the config of the checkout `<ROOT>/checkout/skyrl-train`; change the \
         override or the checkout"
    );
}

#[test]
fn check_all_asks_skyrl_once_per_plan_the_mirror_passes() {
    // A venv whose python counts its calls and answers as the script does: quick for 18 cells.
    let site = Site::new();
    write_exec(
        &site.path().join("venv/bin/python"),
        "#!/bin/sh\necho \"$3\" >> \"$RLCTL_LOCAL_ROOT/calls\"\n\
         for a in \"$@\"; do case \"$a\" in trainer.train_batch_size=64)\n\
         echo '{\"ok\": false, \"stage\": \"validate\", \"error\": \"AssertionError: not 64\"}'; exit 0;; esac; done\n\
         echo 'INFO noise first'\necho '{\"ok\": true, \"stage\": \"validate\", \"error\": null}'\n",
    );
    let out = site.run(&["check", "--all", "gsm8k-throughput", "--deep"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = site.text(&stdout(&out));
    let calls = std::fs::read_to_string(site.path().join("calls")).unwrap();
    assert_eq!(calls.lines().count(), 18, "{calls}");
    assert!(
        calls
            .lines()
            .all(|l| l == "skyrl_train.entrypoints.main_base")
    );
    let refused: Vec<(&str, &str)> = (text.lines())
        .filter(|l| l.contains("problem:"))
        .map(|l| l.split_once(' ').map(|(n, v)| (n, v.trim_start())).unwrap())
        .collect();
    assert_eq!(
        refused,
        [(
            "gsm8k-throughput/tbs64",
            "1 problem: [skyrl-deep] SkyRL refuses the plan: AssertionError: not 64; this is SkyRL's own \
             validate_cfg in `<ROOT>/checkout/skyrl-train`; change the knob or the checkout"
        )],
        "{text}"
    );
    assert!(
        text.ends_with("18 checked of gsm8k-throughput: 17 ok, 1 with problems\n"),
        "{text}"
    );
}

#[test]
fn a_missing_container_program_or_venv_says_what_to_fix() {
    let site = Site::new();
    site.profile(
        "program = \"${REPO}/tests/cluster/singularity-shim\"",
        "program = \"${ROOT}/no/singularity\"",
    );
    let out = site.run(&["check", "gsm8k-canary", "--deep"]);
    assert_eq!(
        refused(&site, &out),
        "[skyrl-deep] the deep check could not run: the container program `<ROOT>/no/singularity` does not exist on \
         this machine: fix `container.program` in the cluster profile, or check without --deep"
    );
    site.profile("", "");
    std::fs::remove_file(site.path().join("venv/bin/python")).unwrap();
    let out = site.run(&["check", "gsm8k-canary", "--deep"]);
    assert_eq!(
        refused(&site, &out),
        "[skyrl-deep] the deep check could not run: the venv's python `<ROOT>/venv/bin/python` does not exist on this \
         machine: create the venv (rlctl doctor shows how) or fix `software.venv` in the cluster profile"
    );
}

#[test]
fn a_crash_without_a_verdict_is_reported_with_what_it_said() {
    let site = Site::new();
    write_exec(
        &site.path().join("venv/bin/python"),
        "#!/bin/sh\necho 'Fatal Python error: Segmentation fault' >&2\nexit 139\n",
    );
    let out = site.run(&["check", "gsm8k-canary", "--deep"]);
    assert_eq!(
        refused(&site, &out),
        format!(
            "[skyrl-deep] the deep check could not run: `{REPO}/tests/cluster/singularity-shim` ended (exit status: 139) \
             without a verdict; it said: Fatal Python error: Segmentation fault: run `rlctl doctor` to check the \
             container and the venv"
        )
    );
}

#[test]
fn a_check_over_its_time_is_killed_with_its_children() {
    let site = Site::new();
    site.profile_with("", "", "\n[check]\ndeep_timeout_s = 1\n");
    write_exec(
        &site.path().join("venv/bin/python"),
        "#!/bin/sh\nsleep 60 &\necho $! > \"$RLCTL_LOCAL_ROOT/child\"\nwait\n",
    );
    let start = std::time::Instant::now();
    let out = site.run(&["check", "gsm8k-canary", "--deep"]);
    assert!(start.elapsed().as_secs() < 10);
    assert_eq!(
        refused(&site, &out),
        "[skyrl-deep] the deep check could not run: it did not finish within 1 s (torch's imports are slow on a busy \
         Lustre): raise `[check] deep_timeout_s` in the cluster profile, or check without --deep"
    );
    let child = std::fs::read_to_string(site.path().join("child")).unwrap();
    assert!(
        crate::common::gone_soon(&child),
        "the check's sleep {} outlived it",
        child.trim()
    );
}

#[test]
fn the_verdict_is_taken_when_the_python_exits_though_a_child_holds_its_stdout() {
    let site = Site::new();
    site.profile_with("", "", "\n[check]\ndeep_timeout_s = 120\n");
    // The venv's python leaves a process behind on its stdout (as a Ray or vLLM helper may),
    // prints its verdict and exits.
    write_exec(
        &site.path().join("venv/bin/python"),
        "#!/bin/sh\nsleep 300 &\necho $! > \"$RLCTL_LOCAL_ROOT/child\"\n\
         echo '{\"ok\": false, \"stage\": \"validate\", \"error\": \"AssertionError: no\"}'\nexit 0\n",
    );
    let start = std::time::Instant::now();
    let out = site.run(&["check", "gsm8k-canary", "--deep"]);
    let took = start.elapsed().as_secs();
    assert!(
        took < 10,
        "the check waited {took} s after its python exited"
    );
    assert_eq!(
        refused(&site, &out),
        "[skyrl-deep] SkyRL refuses the plan: AssertionError: no; this is SkyRL's own validate_cfg in \
         `<ROOT>/checkout/skyrl-train`; change the knob or the checkout"
    );
    let child = std::fs::read_to_string(site.path().join("child")).unwrap();
    assert!(
        crate::common::gone_soon(&child),
        "the check's sleep {} outlived it",
        child.trim()
    );
}
