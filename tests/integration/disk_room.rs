//! Disk before the queue: a launch whose checkpoint filesystem cannot hold one save is refused
//! with its figures (a real small filesystem: tmpfs, mounted here), one that cannot hold all it
//! keeps is warned; and a job that failed without saying why in its log is told by SLURM's
//! accounting (a stand-in sacct), a likely full disk named.

use crate::common::{Sandbox, recorded_logs, stderr, stdout};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A tmpfs of `size` over `dir`, unmounted however the test ends.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Tmpfs {
        std::fs::create_dir_all(dir).unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "mount: {}", stderr(&out));
        Tmpfs(dir.to_owned())
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

fn checkpoints(sandbox: &Sandbox) -> PathBuf {
    sandbox.root().join("work/checkpoints")
}

/// The canary for 30 steps, saving every 5, with `extra` flags and knobs.
fn launch(sandbox: &Sandbox, flags: &[&str], knobs: &[&str]) -> Output {
    sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary"])
        .args(flags)
        .args(["--", "trainer.max_steps=30", "trainer.ckpt_interval=5"])
        .args(knobs)
        .output()
        .unwrap()
}

fn disk_room_lines(output: &Output) -> Vec<String> {
    (stderr(output).lines())
        .filter(|l| l.contains("[disk-room]"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_launch_onto_a_full_checkpoint_filesystem_is_refused_with_its_figures() {
    let sandbox = Sandbox::new();
    let _disk = Tmpfs::mount(&checkpoints(&sandbox), "1m");
    let output = launch(&sandbox, &[], &[]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert_eq!(sandbox.sbatch_calls(), 0, "a refused plan submits nothing");
    let lines = disk_room_lines(&output);
    let [line] = lines.as_slice() else {
        panic!("{err}")
    };
    // Qwen2.5-1.5B's published 1.54B parameters: fp32 weights and two fp32 Adam moments are
    // 12 bytes each, 18.5 GB (17.3 GiB) a save, and the small files.
    let root = checkpoints(&sandbox).display().to_string();
    for part in [
        "[disk-room] one checkpoint of this plan needs about 17.",
        " GiB (policy: 1.54B parameters from its config.json",
        "4 B each + 8 B of Adam moments",
        &format!(
            "but the filesystem of `{root}` has 1.0 MiB free: the job would fail at its first save"
        ),
        "free space there, keep fewer checkpoints (a smaller `trainer.max_ckpts_to_keep`), or point the profile's storage.checkpoint_root",
    ] {
        assert!(line.contains(part), "{part:?} not in {line}");
    }
    // Named, it is a warning: the user knows better (a stand-in trainer, a quota elsewhere).
    let output = launch(&sandbox, &["--allow", "disk-room"], &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stderr(&output).contains("rlctl: warning: [disk-room] one checkpoint"));
    assert_eq!(sandbox.sbatch_calls(), 1);
}

#[test]
fn room_for_one_save_but_not_all_it_keeps_is_a_warning_that_names_the_fix() {
    let sandbox = Sandbox::new();
    // A tmpfs reserves nothing: 40 GiB is only its limit.
    let _disk = Tmpfs::mount(&checkpoints(&sandbox), "40g");
    // Six saves kept (30 steps, one every 5, -1 keeps all): about 104 GiB.
    let output = launch(&sandbox, &[], &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let lines = disk_room_lines(&output);
    let [line] = lines.as_slice() else {
        panic!("{}", stderr(&output))
    };
    assert!(
        line.starts_with(
            "rlctl: warning: [disk-room] the checkpoints this plan keeps need about 10"
        ),
        "{line}"
    );
    assert!(
        line.contains("`trainer.max_ckpts_to_keep=-1` keeps all 6 saves of the run"),
        "{line}"
    );
    assert!(line.contains("has 40.0 GiB free"), "{line}");
    assert!(
        line.contains("keep fewer checkpoints (`trainer.max_ckpts_to_keep=1` fits)"),
        "{line}"
    );
    // Keeping one: two steps at once (the new one is whole before the old one goes) fit.
    let sandbox = Sandbox::new();
    let _disk = Tmpfs::mount(&checkpoints(&sandbox), "40g");
    let output = launch(&sandbox, &[], &["trainer.max_ckpts_to_keep=1"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(disk_room_lines(&output), Vec::<String>::new());
}

#[test]
fn a_model_of_unknown_size_is_said_skipped_never_passed_silently() {
    let sandbox = Sandbox::new();
    let model = sandbox.root().join("work/models/my-finetune");
    std::fs::create_dir_all(&model).unwrap();
    let output = sandbox
        .rlctl()
        .args(["check", "gsm8k-canary", "--"])
        .arg(format!("trainer.policy.model.path={}", model.display()))
        .output()
        .unwrap();
    assert!(
        stderr(&output).contains(
            "skipped: [disk-room] the policy's model size is unknown (no config.json in the HF cache, no size in its name)"
        ),
        "{}",
        stderr(&output)
    );
}

/// The canary launched, and its job ended as `sacct` says, its log as `log` (none: `None`).
fn ended(sandbox: &Sandbox, sacct: &str, log: Option<&str>) -> PathBuf {
    let output = launch(sandbox, &[], &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    sandbox.sacct(sacct);
    let path = recorded_logs(sandbox)["gsm8k-canary"].clone();
    if let Some(text) = log {
        std::fs::write(&path, text).unwrap();
    }
    path
}

fn run(sandbox: &Sandbox, args: &[&str]) -> Output {
    sandbox.rlctl().args(args).output().unwrap()
}

#[test]
fn a_failed_job_without_a_log_is_told_by_slurm_and_a_full_disk_named() {
    let sandbox = Sandbox::new();
    let log = ended(&sandbox, "1001|FAILED|0:53|0:0|None", None);
    // The checkpoint filesystem full by now, as when the job failed at once.
    let _disk = Tmpfs::mount(&checkpoints(&sandbox), "1m");
    let says = "SLURM says FAILED, exit code 0:53 (status:signal)";
    let full = format!(
        ". Likely a full disk: the filesystem of `{}` has 1.0 MiB free now: free space where the trainer wrote",
        checkpoints(&sandbox).display()
    );
    let output = run(&sandbox, &["logs", "gsm8k-canary", "--errors"]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "gsm8k-canary (job 1001) ended and left no log at `{}`: {says}{full}",
            log.display()
        )),
        "{err}"
    );
    let output = run(&sandbox, &["tend"]);
    let out = stdout(&output);
    assert!(
        out.contains(&format!(
            "gsm8k-canary job 1001: FAILED ({}), not resubmitted: it left no log; {says}{full}",
            log.display()
        )),
        "{out}"
    );
    let output = run(&sandbox, &["watch", "gsm8k-canary", "--once"]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "ended FAILED (exit code 0:53); its log `{}` does not exist (no such file); {says}{full}",
            log.display()
        )),
        "{err}"
    );
}

#[test]
fn a_log_without_an_error_line_is_completed_by_slurms_reason() {
    let sandbox = Sandbox::new();
    ended(
        &sandbox,
        "1001|FAILED|0:0|1:0|NonZeroExitCode",
        Some("starting the trainer\n"),
    );
    let says = "SLURM says FAILED, exit code 0:0 (status:signal), derived exit code 1:0 (its steps'), reason: NonZeroExitCode";
    let output = run(&sandbox, &["logs", "gsm8k-canary", "--errors"]);
    assert!(output.status.success());
    let err = stderr(&output);
    assert!(
        err.contains("no traceback or error line in the last 4 MiB of "),
        "{err}"
    );
    assert!(err.contains(says), "{err}");
    // The sandbox's disk has room: no full disk is named.
    assert!(!err.contains("full disk"), "{err}");
    let out = stdout(&run(&sandbox, &["tend"]));
    assert!(
        out.contains(&format!(
            "not resubmitted: no error line in the log; {says}"
        )),
        "{out}"
    );
    let err = stderr(&run(&sandbox, &["watch", "gsm8k-canary", "--once"]));
    assert!(
        err.contains(&format!("its log has no error line; {says}")),
        "{err}"
    );
    // A job that still runs, or finished, is not explained.
    sandbox.sacct("1001|COMPLETED|0:0|0:0|None");
    let err = stderr(&run(&sandbox, &["logs", "gsm8k-canary", "--errors"]));
    assert!(!err.contains("SLURM says"), "{err}");
}

#[test]
fn an_error_line_that_says_the_disk_is_full_is_named_by_watch_too() {
    let sandbox = Sandbox::new();
    ended(
        &sandbox,
        "1001|FAILED|1:0",
        Some("OSError: [Errno 28] No space left on device: '/ckpt/global_step_5'\n"),
    );
    let err = stderr(&run(&sandbox, &["watch", "gsm8k-canary", "--once"]));
    assert!(
        err.contains("its last error line is above: read ")
            && err.contains(". A full disk or a spent quota: free space where the trainer wrote"),
        "{err}"
    );
    let out = stdout(&run(&sandbox, &["tend"]));
    assert!(out.contains("No space left on device"), "{out}");
    assert!(out.contains(". A full disk or a spent quota"), "{out}");
}

#[test]
fn a_critic_doubles_a_save_and_lora_trains_no_moments() {
    let sandbox = Sandbox::new();
    let _disk = Tmpfs::mount(&checkpoints(&sandbox), "1m");
    let needs = |knobs: &[&str]| {
        let output = sandbox
            .rlctl()
            .args(["check", "gsm8k-canary", "--"])
            .args(knobs)
            .output()
            .unwrap();
        let lines = disk_room_lines(&output);
        let [line] = lines.as_slice() else {
            panic!("{}", stderr(&output))
        };
        line.split("needs about ").nth(1).unwrap().to_owned()
    };
    assert!(needs(&[]).starts_with("17.3 GiB (policy: 1.54B"));
    let critic = needs(&["trainer.critic.model.path=Qwen/Qwen2.5-1.5B-Instruct"]);
    assert!(critic.starts_with("34.6 GiB (policy: 1.54B"), "{critic}");
    assert!(critic.contains("; critic: 1.54B parameters"), "{critic}");
    // LoRA: the whole model's fp32 state dict, no moments worth counting.
    let lora = needs(&["trainer.policy.model.lora.rank=8"]);
    assert!(lora.starts_with("5.8 GiB (policy: 1.54B"), "{lora}");
    assert!(!lora.contains("Adam"), "{lora}");
}
