//! One W&B run per run: the rendered wrapper is run with bash around the stand-in trainer, which
//! calls the real `wandb` package in offline mode as SkyRL's tracking does. Every slot and chain
//! link of a run continues the W&B run whose id is kept beside its checkpoints; a fresh start
//! (`--wipe`) begins a new one. Nothing leaves the machine: W&B is offline, and its base URL is a
//! closed loopback port.

use crate::common::standin_node;
use crate::common::{Sandbox, ok, slurm_slot, stdout, write_exec};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// A node with the stand-in trainer, whose venv python is the python3 the tests find (the one
/// tests/setup.sh installs `wandb` into), named by its full path: the run script puts the
/// compiler's folder, /usr/bin here, first on PATH.
fn wandb_node(sandbox: &Sandbox) {
    standin_node(sandbox.root());
    let python = ok(Command::new("python3").args(["-c", "import sys; print(sys.executable)"]));
    let python = stdout(&python).trim().to_owned();
    write_exec(
        &sandbox.root().join("venv/bin/python"),
        &format!("#!/bin/bash\nexec {python} \"$@\"\n"),
    );
}

/// The run's checkpoint folder in the sandbox (gsm8k-canary's).
fn run_folder(sandbox: &Sandbox) -> PathBuf {
    sandbox
        .root()
        .join("work/checkpoints/gsm8k-canary/gsm8k-canary")
}

/// Launches gsm8k-canary logging to W&B; returns the wrapper of each submitted job.
fn launch(sandbox: &Sandbox, extra: &[&str]) -> Vec<PathBuf> {
    let before = sandbox.sbatch_calls();
    let mut args = vec!["launch", "gsm8k-canary"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&[
        "--",
        "trainer.max_steps=4",
        "trainer.ckpt_interval=2",
        "trainer.logger=wandb",
        "trainer.project_name=rlctl_test",
    ]);
    // SkyRL's validate_cfg asks for a key even offline; nothing here uses it.
    let out = ok(sandbox
        .rlctl()
        .args(&args)
        .env("WANDB_API_KEY", "not-a-key"));
    assert!(stdout(&out).contains("job "), "{}", stdout(&out));
    (before + 1..=sandbox.sbatch_calls())
        .map(|n| PathBuf::from(sandbox.sbatch_argv(n).last().unwrap()))
        .collect()
}

/// One slot of `script`, W&B quiet and kept off the network.
fn slot(script: &Path, restarts: u32, step_seconds: &str) -> Command {
    let mut cmd = slurm_slot(script, &script.with_file_name("slot.out"), "4242", restarts);
    cmd.env("RLCTL_STANDIN_STEP_SECONDS", step_seconds)
        .env("WANDB_SILENT", "true")
        .env("WANDB_DISABLE_CODE", "true")
        .env("WANDB_DISABLE_GIT", "true")
        .env("WANDB_BASE_URL", "http://127.0.0.1:9")
        .env_remove("WANDB_API_KEY");
    cmd
}

fn log(script: &Path) -> String {
    std::fs::read_to_string(script.with_file_name("slot.out")).unwrap_or_default()
}

/// Runs a slot to its end, which must be a success.
fn run_slot(script: &Path, restarts: u32) {
    let status = slot(script, restarts, "0").status().unwrap();
    assert!(status.success(), "{}", log(script));
}

/// Runs a slot until step 2 is saved (the pointer names it), then kills it as SLURM ends a job (a node failure, the
/// time limit): the next slot resumes from step 2.
fn run_slot_until_step_2(script: &Path, restarts: u32, ckpt: &Path) {
    let mut child: Child = slot(script, restarts, "0.5").spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(90);
    // Saved once the pointer names it: the step's folder appears first, and a kill before the
    // pointer leaves step 2 unfinished (the next slot would then refuse to start over it).
    let saved = || {
        std::fs::read_to_string(ckpt.join("latest_ckpt_global_step.txt")).is_ok_and(|t| t == "2")
    };
    while !saved() {
        assert!(
            Instant::now() < deadline,
            "step 2 never saved:\n{}",
            log(script)
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "the slot ended early:\n{}",
            log(script)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let group = format!("-{}", child.id());
    ok(Command::new("kill").args(["-KILL", "--", &group]));
    child.wait().unwrap();
}

/// The run id of every offline W&B run under the run's folder (`offline-run-<time>-<id>`),
/// oldest first, wherever W&B put them below it.
fn offline_runs(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !entry.file_type().unwrap().is_dir() {
                continue;
            }
            if name.starts_with("offline-run-") {
                found.push(name);
            } else {
                stack.push(entry.path());
            }
        }
    }
    found.sort();
    (found.iter())
        .map(|name| name.rsplit('-').next().unwrap().to_owned())
        .collect()
}

fn saved_id(sandbox: &Sandbox) -> String {
    let file = run_folder(sandbox).join("wandb_run_id");
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let id = text.trim().to_owned();
    assert!(
        id.len() >= 8
            && id
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()),
        "a W&B run id is [a-z0-9]: {text:?}"
    );
    id
}

#[test]
fn the_links_of_a_chain_log_one_wandb_run_and_a_wipe_starts_another() {
    let sandbox = Sandbox::new();
    wandb_node(&sandbox);
    let folder = run_folder(&sandbox);
    let links = launch(&sandbox, &["--chain", "2"]);
    assert_eq!(links.len(), 2);

    run_slot_until_step_2(&links[0], 0, &folder.join("ckpt"));
    let id = saved_id(&sandbox);
    run_slot(&links[1], 0);
    assert!(
        log(&links[1]).contains("Resuming from checkpoint"),
        "{}",
        log(&links[1])
    );
    let runs = offline_runs(&folder.join("wandb"));
    assert_eq!(
        runs,
        [id.clone(), id.clone()],
        "one offline run per link, one id"
    );
    assert_eq!(saved_id(&sandbox), id);
    for script in &links {
        assert!(
            log(script).contains(&format!("W&B run {id} (offline)")),
            "{}",
            log(script)
        );
    }
    // Nothing in the checkout: W&B wrote only where the run keeps it.
    assert_eq!(
        offline_runs(&sandbox.root().join("skyrl")),
        Vec::<String>::new()
    );

    // A fresh start over the same folder is a new run, in W&B too.
    let wiped = launch(&sandbox, &["--wipe"]);
    run_slot(&wiped[0], 0);
    let new_id = saved_id(&sandbox);
    assert_ne!(new_id, id);
    assert_eq!(
        offline_runs(&folder.join("wandb")),
        [id.clone(), id, new_id]
    );
}

#[test]
fn a_requeued_slot_continues_the_wandb_run_of_the_first() {
    let sandbox = Sandbox::new();
    wandb_node(&sandbox);
    let folder = run_folder(&sandbox);
    let job = launch(&sandbox, &["--until-done", "--max-slots", "3"]);

    run_slot_until_step_2(&job[0], 0, &folder.join("ckpt"));
    let id = saved_id(&sandbox);
    run_slot(&job[0], 1);
    assert_eq!(saved_id(&sandbox), id);
    assert_eq!(offline_runs(&folder.join("wandb")), [id.clone(), id]);
    let text = log(&job[0]);
    assert!(
        text.contains("trainer.resume_mode=latest (slot 2"),
        "{text}"
    );
}

/// A STAND-IN for W&B's CLI (`wandb sync`), which would upload: it records each call's argv
/// in $WANDB_CALLS, fails for a folder matching $WANDB_STANDIN_FAIL, and for one matching
/// $WANDB_STANDIN_HANG hangs in a child of its own, whose pid it leaves in $WANDB_CALLS.hang.
const WANDB_STANDIN: &str = r#"#!/bin/bash
# STAND-IN for wandb's CLI, for rlctl's tests: uploads nothing.
echo "$*" >> "$WANDB_CALLS"
dir="${*: -1}"
if [ -n "${WANDB_STANDIN_FAIL:-}" ] && [[ "$dir" == *"$WANDB_STANDIN_FAIL"* ]]; then
  echo "wandb: Network error (ConnectionError), entering retry loop." >&2
  echo "wandb: ERROR could not reach api.wandb.ai" >&2
  exit 1
fi
if [ -n "${WANDB_STANDIN_HANG:-}" ] && [[ "$dir" == *"$WANDB_STANDIN_HANG"* ]]; then
  sleep 60 &
  echo $! > "$WANDB_CALLS.hang"
  wait
fi
echo "wandb: Syncing 1 run(s): $dir"
"#;

/// An offline W&B run of the run whose checkpoint folder is `folder`, as W&B writes it under
/// `WANDB_DIR` (`<dir>/wandb/offline-run-<time>-<id>/run-<id>.wandb`), with `bytes` logged.
fn offline_run(folder: &Path, time: &str, id: &str, bytes: usize) -> PathBuf {
    let dir = folder.join(format!("wandb/wandb/offline-run-{time}-{id}"));
    std::fs::create_dir_all(dir.join("files")).unwrap();
    std::fs::write(dir.join(format!("run-{id}.wandb")), vec![b'x'; bytes]).unwrap();
    dir
}

#[test]
fn tend_syncs_each_offline_run_that_grew_once_within_its_time_and_reports_failures() {
    let sandbox = Sandbox::new();
    let root = sandbox.root();
    write_exec(&root.join("bin/wandb"), WANDB_STANDIN);
    let calls = root.join("wandb-calls");
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    ok(sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--job-name", "other"]));
    sandbox.sacct("1001|COMPLETED|0:0\n1002|COMPLETED|0:0");
    let canary = root.join("work/checkpoints/gsm8k-canary/gsm8k-canary");
    let other = root.join("work/checkpoints/gsm8k-canary/other");
    // Two slots of the canary (one W&B run), one of the other run.
    let first = offline_run(&canary, "20260101_100000", "aaaa1111", 100);
    let second = offline_run(&canary, "20260101_110000", "aaaa1111", 100);
    let third = offline_run(&other, "20260101_100000", "bbbb2222", 100);
    let pass = |extra: &[&str], env: &[(&str, &str)]| {
        let mut cmd = sandbox.rlctl();
        cmd.args(["tend", "--sync-wandb"]).args(extra);
        cmd.env("WANDB_CALLS", &calls);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let started = Instant::now();
        let out = cmd.output().unwrap();
        (out, started.elapsed())
    };
    let calls_made = || crate::common::lines_of(&calls);
    let sync_of = |dir: &Path| format!("sync --include-synced {}", dir.display());

    let (out, _) = pass(&[], &[]);
    assert!(
        out.status.success(),
        "{}{}",
        stdout(&out),
        crate::common::stderr(&out)
    );
    assert_eq!(
        calls_made(),
        [sync_of(&first), sync_of(&second), sync_of(&third)]
    );
    assert!(
        stdout(&out).contains("wandb sync: 3 synced, 0 unchanged, 0 failed"),
        "{}",
        stdout(&out)
    );

    // Nothing new: no sync at all.
    let (out, _) = pass(&[], &[]);
    assert!(out.status.success(), "{}", stdout(&out));
    assert_eq!(calls_made().len(), 3);
    assert!(
        stdout(&out).contains("0 synced, 3 unchanged, 0 failed"),
        "{}",
        stdout(&out)
    );

    // Two runs logged more; the first sync fails, the pass goes on to the other.
    offline_run(&canary, "20260101_110000", "aaaa1111", 300);
    offline_run(&other, "20260101_100000", "bbbb2222", 300);
    let (out, _) = pass(&[], &[("WANDB_STANDIN_FAIL", "aaaa1111")]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert_eq!(calls_made()[3..], [sync_of(&second), sync_of(&third)]);
    assert!(
        text.contains(&format!(
            "wandb sync: gsm8k-canary: {}: `wandb sync` failed (exit status: 1) wandb: ERROR could not reach api.wandb.ai\n",
            second.display()
        )),
        "{text}"
    );
    assert!(text.contains("1 synced, 1 unchanged, 1 failed"), "{text}");
    assert!(
        crate::common::stderr(&out).contains("1 wandb sync failed"),
        "{}",
        crate::common::stderr(&out)
    );

    // The failed one is tried again; a hang is killed at the time limit, with what it started.
    let (out, took) = pass(
        &["--wandb-timeout", "1"],
        &[("WANDB_STANDIN_HANG", "aaaa1111")],
    );
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(took < Duration::from_secs(20), "{took:?}");
    assert!(
        text.contains(&format!(
            "wandb sync: gsm8k-canary: {}: `wandb sync` was killed after 1 s; the next pass tries again",
            second.display()
        )),
        "{text}"
    );
    let hung = std::fs::read_to_string(root.join("wandb-calls.hang")).unwrap();
    assert!(
        crate::common::gone_soon(&hung),
        "the hung sync's child {} outlived it",
        hung.trim()
    );

    // No budget left: it waits for the next pass, which is not a failure.
    let (out, _) = pass(&["--wandb-budget", "0"], &[]);
    assert!(out.status.success(), "{}", stdout(&out));
    assert!(
        stdout(&out).contains(
            "0 synced, 2 unchanged, 0 failed, 1 left for the next pass (its 0 s budget, \
             --wandb-budget, spent): gsm8k-canary\n"
        ),
        "{}",
        stdout(&out)
    );
    assert_eq!(calls_made().len(), 6);
}
