//! Nothing lost: what the follow-up commands say when something went wrong, through the binary.
//! Accounting that does not answer is bounded and said, a state is never guessed, a dead run is
//! a problem with its reason, impossible thresholds are refused, a chain cut short names its
//! links and how to add the rest, and a Ray step that dies leaves a line in the job's log.

use crate::common::recorded_logs;
use crate::common::stand_ins;
use crate::common::{Sandbox, ok, plan_of, stderr, stdout, test_profile, write_exec};
use rlctl::plan::PlanOptions;
use rlctl::preset::Library;
use rlctl::render::render;
use std::process::Command;
use std::time::{Duration, Instant};

/// `status --json` as (target, state, source) triples.
fn states(output: &std::process::Output) -> Vec<(String, String, String)> {
    let json: serde_json::Value = serde_json::from_str(&stdout(output)).unwrap();
    (json["runs"].as_array().unwrap().iter())
        .map(|r| {
            let field = |k: &str| r[k].as_str().unwrap().to_owned();
            (field("target"), field("state"), field("source"))
        })
        .collect()
}

#[test]
fn status_bounds_a_hanging_sacct_says_so_and_never_guesses_a_state() {
    let sandbox = Sandbox::new();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    ok(sandbox.rlctl().args(["launch", "math-longcot"]));
    let logs = recorded_logs(&sandbox);
    // Out of time: SLURM's own line. Cut short: no line says how it ended.
    std::fs::write(
        &logs["gsm8k-canary"],
        "step 1\nslurmstepd: error: *** JOB 1001 ON lrdn0001 CANCELLED AT 2026-01-01T10:00:00 DUE TO TIME LIMIT ***\n",
    )
    .unwrap();
    std::fs::write(&logs["math-longcot"], "starting\nsome vLLM noise\n").unwrap();
    // slurmdbd unreachable: sacct hangs (the real one retries for most of a minute).
    let sacct = sandbox.root().join("bin/sacct-hangs");
    write_exec(&sacct, "#!/bin/bash\nexec sleep 120\n");
    let start = Instant::now();
    let output = ok(sandbox
        .rlctl()
        .args(["status", "--json"])
        .env("RLCTL_SACCT", &sacct));
    let took = start.elapsed();
    assert!(took < Duration::from_secs(20), "status took {took:?}");
    let err = stderr(&output);
    assert!(
        err.contains("SLURM accounting is unreachable")
            && err.contains("did not answer within 10 s")
            && err.contains("sacctmgr ping"),
        "{err}"
    );
    assert_eq!(err.matches("unreachable").count(), 1, "said once: {err}");
    assert!(
        err.contains(
            "; ended jobs' states come from their logs, `unknown` where the log does not say: \
             check slurmdbd (`sacctmgr ping`), or pass --sacct PATH\n"
        ),
        "one sentence, no runs of spaces: {err}"
    );
    let mut got = states(&output);
    got.sort();
    assert_eq!(
        got,
        [
            ("gsm8k-canary".into(), "TIMEOUT".into(), "log".into()),
            ("math-longcot".into(), "unknown".into(), "log".into()),
        ]
    );
    // A plain cancellation is CANCELLED; a missing sacct is said too.
    std::fs::write(
        &logs["gsm8k-canary"],
        "slurmstepd: error: *** JOB 1001 ON lrdn0001 CANCELLED AT 2026-01-01T10:00:00 ***\n",
    )
    .unwrap();
    let output = ok(sandbox
        .rlctl()
        .args(["status", "--json", "gsm8k-canary"])
        .env("RLCTL_SACCT", "/nonexistent/sacct"));
    assert!(stderr(&output).contains("unreachable (cannot run `/nonexistent/sacct`"));
    assert_eq!(states(&output)[0].1, "CANCELLED");
}

#[test]
fn tend_says_unreachable_accounting_once_across_its_runs_grid_and_report() {
    let sandbox = Sandbox::new();
    ok(sandbox.rlctl().args(["grid", "--all", "gsm8k-throughput"]));
    // Every cell ended: the pass asks SLURM of its runs, of the grid, and for the grid's report.
    sandbox.queue("");
    let output = sandbox
        .rlctl()
        .arg("tend")
        .env("RLCTL_SACCT", "/nonexistent/sacct")
        .output()
        .unwrap();
    let err = stderr(&output);
    assert!(
        err.contains(
            "rlctl: warning: SLURM accounting is unreachable (cannot run `/nonexistent/sacct`"
        ),
        "{err}"
    );
    assert_eq!(err.matches("unreachable").count(), 1, "said once: {err}");
    assert!(
        stdout(&output).contains("every cell has ended; its report is in"),
        "{}",
        stdout(&output)
    );
}

#[test]
fn the_state_a_long_log_ends_with_is_read_from_its_end() {
    let sandbox = Sandbox::new();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    let log = &recorded_logs(&sandbox)["gsm8k-canary"];
    // 3 MB of vLLM noise with an old wrapper line at its start, then the job's own last line.
    let noise = "INFO 11-30 10:23:45 [metrics.py:455] Avg prompt throughput: 1.5 tokens/s\n";
    let mut text = String::from("rlctl: job 1001 finished with status 3\n");
    text.push_str(&noise.repeat(3_000_000 / noise.len()));
    text.push_str("rlctl: job 1001 finished with status 0\n");
    std::fs::write(log, &text).unwrap();
    let status = |sandbox: &Sandbox| {
        let output = ok(sandbox
            .rlctl()
            .args(["status", "--json", "gsm8k-canary"])
            .env("RLCTL_SACCT", "/nonexistent/sacct"));
        states(&output).remove(0)
    };
    assert_eq!(
        status(&sandbox),
        ("gsm8k-canary".into(), "COMPLETED".into(), "log".into())
    );
    // Without its last line: only the end of a log is read, and a line 3 MB before it is not
    // how the job ended.
    std::fs::write(
        log,
        &text[..text.len() - "rlctl: job 1001 finished with status 0\n".len()],
    )
    .unwrap();
    assert_eq!(
        status(&sandbox),
        ("gsm8k-canary".into(), "unknown".into(), "log".into())
    );
}

/// A cell with 25 steps whose log has 5 of them (40 s each) and then a traceback.
fn failing_cell(sandbox: &Sandbox) -> std::path::PathBuf {
    ok(sandbox.rlctl().args(["grid", "gsm8k-throughput/tbs128"]));
    let log = recorded_logs(sandbox)["gsm8k-throughput/tbs128"].clone();
    let mut text = String::new();
    for step in 1..=5 {
        text.push_str(&format!(
            "WANDB_MIRROR kind=train step={step} metrics={{\"timing/step\": 40.0, \"policy/policy_entropy\": 0.5}}\n"
        ));
    }
    text.push_str("Traceback (most recent call last):\n  File \"x.py\", line 1\n");
    text.push_str(
        "\x1b[36m(skyrl_entrypoint pid=7)\x1b[0m torch.OutOfMemoryError: CUDA out of memory\n",
    );
    text.push_str("rlctl: job 1001 finished with status 1\n");
    std::fs::write(&log, text).unwrap();
    log
}

#[test]
fn watch_once_fails_a_dead_run_with_its_reason_and_no_eta() {
    let sandbox = Sandbox::new();
    let log = failing_cell(&sandbox);
    let queue = sandbox.root().join("sbatch-calls/queue");
    // While it runs: an ETA, exit 0.
    std::fs::write(&queue, "1001|gsm8k-throughput.tbs128|RUNNING\n").unwrap();
    let running = ok(sandbox.rlctl().args(["watch", "tbs128", "--once"]));
    assert!(stdout(&running).contains("ETA"), "{}", stdout(&running));
    // Dead, as sacct says: exit 1, the state, sacct's exit code, the last error line, no ETA.
    std::fs::write(&queue, "").unwrap();
    let sacct = sandbox.root().join("bin/sacct-failed");
    write_exec(&sacct, "#!/bin/bash\necho '1001|FAILED|1:0'\n");
    for (sacct, state, code) in [
        (sacct.to_str().unwrap(), "FAILED", " (exit code 1:0)"),
        ("/nonexistent/sacct", "FAILED", ""),
    ] {
        let output = sandbox
            .rlctl()
            .args(["watch", "tbs128", "--once"])
            .env("RLCTL_SACCT", sacct)
            .output()
            .unwrap();
        let (out, err) = (stdout(&output), stderr(&output));
        assert_eq!(output.status.code(), Some(1), "{out}\n{err}");
        assert!(!out.contains("ETA"), "{out}");
        assert!(out.contains(state), "{out}");
        assert!(
            out.contains(
                "last error in the log: (skyrl_entrypoint pid=7) torch.OutOfMemoryError: CUDA out of memory"
            ),
            "{out}"
        );
        let expected = format!(
            "gsm8k-throughput/tbs128 job 1001 ended {state}{code}; its last error line is above: read {}",
            log.display()
        );
        assert!(err.contains(&expected), "{err}");
        // It saved no checkpoint: the hint offers none.
        assert!(
            err.contains(
                "start it again from step 0 with `rlctl grid gsm8k-throughput/tbs128`, as it saved no checkpoint"
            ),
            "{err}"
        );
    }
    // Out of time, by SLURM's own line: dead too.
    std::fs::write(
        &log,
        "slurmstepd: error: *** JOB 1001 ON n1 CANCELLED AT 2026-01-01T10:00:00 DUE TO TIME LIMIT ***\n",
    )
    .unwrap();
    let output = sandbox
        .rlctl()
        .args(["watch", "tbs128", "--once"])
        .env("RLCTL_SACCT", "/nonexistent/sacct")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(stdout(&output).contains("DUE TO TIME LIMIT ***"));
    assert!(stderr(&output).contains("ended TIMEOUT; its last error line is above"));
    // A log without an error line says so.
    std::fs::write(
        &log,
        "slurmstepd: *** JOB 1001 CANCELLED AT 2026-01-01T10:00:00 ***\n",
    )
    .unwrap();
    let output = sandbox
        .rlctl()
        .args(["watch", "tbs128", "--once"])
        .env("RLCTL_SACCT", "/nonexistent/sacct")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("ended CANCELLED; its log has no error line"));
}

#[test]
fn impossible_watch_thresholds_are_refused_naming_the_flag() {
    let sandbox = Sandbox::new();
    for (args, flag) in [
        (&["--entropy-floor", "-1"][..], "--entropy-floor"),
        (&["--entropy-floor", "NaN"], "--entropy-floor"),
        (&["--entropy-ratio", "0"], "--entropy-ratio"),
        (&["--entropy-ratio", "1.5"], "--entropy-ratio"),
        (&["--grad-spike", "inf"], "--grad-spike"),
        (&["--grad-spike", "-3"], "--grad-spike"),
        (&["--reward-stall-steps", "0"], "--reward-stall-steps"),
    ] {
        let output = sandbox
            .rlctl()
            .args(["watch", "anything", "--once"])
            .args(args)
            .output()
            .unwrap();
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(&format!("invalid {flag} `")) && err.contains("give e.g."),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn a_chain_cut_short_names_its_links_and_how_to_add_the_rest() {
    let sandbox = Sandbox::new();
    let output = sandbox
        .rlctl()
        .args([
            "launch",
            "gsm8k-canary",
            "--chain",
            "3",
            "--time",
            "00:20:00",
        ])
        // A chain must save once per slot (the `slots` check).
        .args(["--", "trainer.epochs=2", "trainer.ckpt_interval=20"])
        .env("FAKE_SBATCH_FAIL_AT", "2")
        .output()
        .unwrap();
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(
        err.contains("link 2 of 3 was not submitted: sbatch failed: `sbatch"),
        "{err}"
    );
    assert!(
        err.contains("link 1 (job 1001) is queued; links 2 to 3 are missing."),
        "{err}"
    );
    assert!(
        err.contains(
            "Once job 1001 has ended, submit the rest on the same checkpoint folder:\n  \
             rlctl launch gsm8k-canary --time 00:20:00 --resume latest --chain 2 -- trainer.epochs=2 \
             trainer.ckpt_interval=20\n\
             or `scancel 1001` and launch the whole chain again"
        ),
        "{err}"
    );
    assert!(!err.contains("cell"), "{err}");
    // The first link failing: nothing queued.
    let output = sandbox
        .rlctl()
        .args(["launch", "math-longcot", "--chain", "2"])
        .env("FAKE_SBATCH_FAIL_AT", "1")
        .output()
        .unwrap();
    assert!(
        stderr(&output).contains("link 1 of 2 was not submitted, and no link of the chain was"),
        "{}",
        stderr(&output)
    );
}

/// The venv's python on a two-node job: the head's `ray start` blocks until its step ends; a
/// worker's dies at once with status 5; the trainer takes a second.
const RAY_PYTHON: &str = r#"#!/bin/bash
if [ "$1" = - ]; then echo checkout; exit 0; fi
if [ "$2" = ray.scripts.scripts ]; then
  case "$3 $4" in
    "start --head") echo $$ > "$STUB_DIR/head.pid"; exec sleep 60 ;;
    start*) exit 5 ;;
    status*) echo ' 0.0/8.0 GPU' ;;
    stop*) kill "$(cat "$STUB_DIR/head.pid")" 2>/dev/null || true ;;
  esac
  exit 0
fi
sleep 1
"#;

#[test]
fn a_ray_worker_that_dies_before_the_trainer_leaves_a_line_in_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("presets/clusters")).unwrap();
    std::fs::write(
        root.join("presets/clusters/test.toml"),
        test_profile(root, "none"),
    )
    .unwrap();
    let library = Library::load(Some(root.join("presets").to_str().unwrap().into())).unwrap();
    let cluster = library.cluster("test").unwrap();
    let plan = plan_of(
        &library,
        &cluster,
        "gsm8k-multinode",
        &PlanOptions::default(),
        &[],
    )
    .unwrap();
    std::fs::create_dir_all(&plan.paths.run_dir).unwrap();
    for file in render(&plan).unwrap() {
        std::fs::write(&file.path, &file.text).unwrap();
    }
    std::fs::create_dir_all(&plan.paths.trainer_dir).unwrap();
    std::fs::create_dir_all(plan.paths.venv_python.parent().unwrap()).unwrap();
    write_exec(plan.paths.venv_python.as_std_path(), RAY_PYTHON);
    let bin = stand_ins(root);
    let output = Command::new("/bin/bash")
        .arg(plan.paths.sbatch_script.as_str())
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .env("STUB_DIR", root)
        .env("PWNED", root.join("pwned"))
        .env("SLURM_JOB_ID", "4243")
        .env("SLURM_JOB_NODELIST", "n[1-2]")
        .env("SLURM_JOB_NUM_NODES", "2")
        .output()
        .unwrap();
    let err = stderr(&output);
    assert!(output.status.success(), "{err}");
    assert!(
        err.contains("rlctl: Ray worker 1 on n2 ended (status 5) before the trainer"),
        "{err}"
    );
    assert!(!err.contains("Ray head on"), "{err}");
}

#[test]
fn logs_follow_prints_a_log_cut_shorter_or_replaced_again_from_its_start() {
    use std::io::Read;
    use std::process::Stdio;
    let sandbox = Sandbox::new();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    let log = recorded_logs(&sandbox)["gsm8k-canary"].clone();
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    std::fs::write(&log, "first a\nfirst b\n").unwrap();
    let queue = sandbox.root().join("sbatch-calls/queue");
    std::fs::write(&queue, "1001|gsm8k-canary|RUNNING|boost_qos_dbg\n").unwrap();
    let mut follow = sandbox
        .rlctl()
        .args(["logs", "gsm8k-canary", "--follow"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let mut stdout = follow.stdout.take().unwrap();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut printed = String::new();
    let mut wait_for = |text: &str| {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !printed.ends_with(text) {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(chunk) => printed.push_str(&String::from_utf8_lossy(&chunk)),
                Err(_) => panic!("waited for {text:?}; printed so far: {printed:?}"),
            }
        }
    };
    wait_for("first a\nfirst b\n");
    // Cut shorter than what was printed (a user's `> log`, a site's log rotation).
    std::fs::write(&log, "again\n").unwrap();
    wait_for("first b\nagain\n");
    // Replaced by another file, longer than what was printed of the first.
    let other = log.with_extension("new");
    std::fs::write(&other, "a new file, longer than the last one\n").unwrap();
    std::fs::rename(&other, &log).unwrap();
    wait_for("again\na new file, longer than the last one\n");
    std::fs::write(&queue, "").unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = follow.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "logs --follow did not end with the job"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut err = String::new();
    follow
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(status.success(), "{err}");
    assert_eq!(
        printed,
        "first a\nfirst b\nagain\na new file, longer than the last one\n"
    );
    assert!(
        err.contains("was cut shorter since it was last read: printing it again from its start")
            && err.contains("was replaced since it was last read"),
        "{err}"
    );
}

/// The folder the job's log goes into comes from two places, the profile's `storage.run_root`
/// and `render --out`; both are refused by one rule with one reason, which names every character
/// SLURM's `--output` cannot carry and the fix.
#[test]
fn a_log_folder_sbatch_cannot_name_is_refused_alike_from_the_profile_and_from_render_out() {
    let reason = "SLURM's --output cannot carry spaces, quotes, `\\`, `$`, `%` or backticks; choose a folder without them";
    let sandbox = Sandbox::new();
    let out = sandbox.root().join("work/a b");
    let from_out = crate::common::fails(
        sandbox
            .rlctl()
            .args(["render", "gsm8k-canary", "--out"])
            .arg(&out),
    );
    assert!(
        from_out.contains(&format!("run folder `{}`: ", out.display())),
        "{from_out}"
    );
    assert!(from_out.contains(reason), "{from_out}");

    let profile = test_profile(sandbox.root(), "none");
    let benign = "run_root = \"${ROOT}/work/runs\"";
    assert!(profile.contains(benign));
    std::fs::write(
        sandbox.presets().join("clusters/spaced.toml"),
        profile.replacen(benign, "run_root = \"${ROOT}/work/my runs\"", 1),
    )
    .unwrap();
    let from_profile = crate::common::fails(sandbox.rlctl().args([
        "--cluster",
        "spaced",
        "render",
        "gsm8k-canary",
    ]));
    assert!(
        from_profile.contains("storage.run_root = `"),
        "{from_profile}"
    );
    assert!(from_profile.contains(reason), "{from_profile}");
}
