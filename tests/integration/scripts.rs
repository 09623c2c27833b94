//! Rendered scripts are real shell: every one passes `bash -n` and `shellcheck`, and running
//! the wrapper with bash hands the trainer exactly the plan's arguments, passes its exit
//! status through and leaves a log from which `rlctl status` tells how the job ended.

use crate::common::{Sandbox, check_script, ok, rlctl, stdout, test_profile, write_exec};
use rlctl::preset::Library;
use std::path::Path;
use std::process::Command;

fn every_target() -> Vec<String> {
    let library = Library::load(None).unwrap();
    let mut names: Vec<String> = library.preset_names().map(str::to_owned).collect();
    for grid in library.grid_names() {
        for cell in &library.grid(grid).unwrap().cells {
            names.push(format!("{grid}/{}", cell.name));
        }
    }
    names
}

#[test]
fn every_rendered_script_passes_bash_n_and_shellcheck() {
    let out = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for name in every_target() {
        let dir = out.path().join(name.replace('/', "__"));
        ok(rlctl().args(["render", &name, "--out"]).arg(&dir));
        for script in ["sbatch.sh", "run.sh"] {
            check_script(&dir.join(script));
            checked += 1;
        }
    }
    assert_eq!(checked, 2 * (6 + 20 + 18 + 15 + 13));
}

#[test]
fn scripts_for_both_container_runtimes_pass_shellcheck() {
    let sandbox = Sandbox::new();
    let shim_profile = test_profile(sandbox.root(), "singularity");
    std::fs::write(sandbox.presets().join("clusters/shim.toml"), shim_profile).unwrap();
    // One node, and several: Ray's processes get HOME and the compiler in either runtime;
    // `--until-done` adds the USR1 trap and the requeue to both.
    for (cluster, target, until_done) in [
        ("test", "gsm8k-canary", false),
        ("shim", "gsm8k-canary", false),
        ("test", "gsm8k-multinode", false),
        ("shim", "gsm8k-multinode", false),
        ("test", "gsm8k-canary", true),
        ("shim", "gsm8k-multinode", true),
    ] {
        let dir = sandbox
            .root()
            .join(format!("work/render-{cluster}-{target}-{until_done}"));
        let mut cmd = sandbox.rlctl();
        cmd.args(["--cluster", cluster, "render", target]);
        if until_done {
            cmd.arg("--until-done");
        }
        ok(cmd
            .arg("--out")
            .arg(&dir)
            .args(["--", "trainer.run_name=\"it's $(a) `b`\""])
            // W&B's run id, read at each start, joins the container's environment.
            .arg("trainer.logger=wandb")
            .env("WANDB_API_KEY", "not-a-key"));
        let text = std::fs::read_to_string(dir.join("sbatch.sh")).unwrap();
        assert_eq!(text.contains("trap on_usr1 USR1"), until_done);
        assert!(text.contains("\"WANDB_RUN_ID=$wandb_run_id\""), "{text}");
        check_script(&dir.join("sbatch.sh"));
        check_script(&dir.join("run.sh"));
    }
}

/// Prepares what the rendered job expects on a node: a venv whose python is a stand-in that
/// records its argv (NUL-separated) and environment, then exits with $STUB_EXIT.
fn fake_node(root: &Path) {
    std::fs::create_dir_all(root.join("venv/bin")).unwrap();
    std::fs::create_dir_all(root.join("skyrl/skyrl-train/skyrl_train")).unwrap();
    std::fs::write(root.join("skyrl/skyrl-train/skyrl_train/__init__.py"), "").unwrap();
    std::fs::create_dir_all(root.join("image")).unwrap();
    // A stand-in for the venv's python: the run script's import check (`python - ...`) runs in
    // the real python3; the trainer's call records what it got and exits with $STUB_EXIT.
    write_exec(
        &root.join("venv/bin/python"),
        "#!/bin/bash\nif [ \"$1\" = - ]; then exec python3 \"$@\"; fi\n\
         mkdir -p \"$RAY_TMPDIR/session_latest\"\n\
         printf '%s\\0' \"$@\" > \"$STUB_OUT/argv\"\nenv > \"$STUB_OUT/env\"\npwd > \"$STUB_OUT/pwd\"\nexit \"${STUB_EXIT:-0}\"\n",
    );
}

/// What a job run by bash left behind: its exit code, the trainer's argv, environment and
/// working folder, and the state `rlctl status` then reads from the job's log.
struct Ran {
    code: i32,
    argv: Vec<String>,
    env: String,
    pwd: String,
    state: String,
}

/// Launches gsm8k-canary, then runs the submitted wrapper with bash as SLURM would: with the
/// job's id in `SLURM_JOB_ID` and its output in the job's log.
fn run_job(sandbox: &Sandbox, cluster: &str, exit: &str) -> Ran {
    let launch = ok(sandbox.rlctl().args([
        "--cluster",
        cluster,
        "launch",
        "gsm8k-canary",
        "--",
        "trainer.run_name=\"a b;c\"",
    ]));
    let job = 1000 + sandbox.sbatch_calls();
    assert!(
        stdout(&launch).contains(&format!("job {job}")),
        "{}",
        stdout(&launch)
    );
    let script = sandbox.last_script();
    // SLURM's `%x_%j.out`, in the run folder.
    let log_path = script.with_file_name(format!("gsm8k-canary_{job}.out"));
    let log = std::fs::File::create(&log_path).unwrap();
    let out = tempfile::tempdir().unwrap();
    let status = Command::new("bash")
        .arg(&script)
        .env("STUB_OUT", out.path())
        .env("STUB_EXIT", exit)
        .env("SLURM_JOB_ID", job.to_string())
        .env("RAY_TMPDIR", "/a/very/long/leaked/path")
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .status()
        .unwrap();
    let argv_text = std::fs::read_to_string(out.path().join("argv")).unwrap();
    let argv: Vec<String> = argv_text
        .split_terminator('\0')
        .map(str::to_owned)
        .collect();
    let env = std::fs::read_to_string(out.path().join("env")).unwrap();
    let pwd = std::fs::read_to_string(out.path().join("pwd")).unwrap();
    // SLURM no longer knows the job (no sacct here, and the queue is empty): only the log can
    // tell how it ended.
    let states = stdout(&ok(sandbox
        .rlctl()
        .args(["status", "--json", &job.to_string()])
        .env("RLCTL_SACCT", "/nonexistent/sacct")));
    let states: serde_json::Value = serde_json::from_str(&states).unwrap();
    let states = &states["runs"];
    assert_eq!(states[0]["source"], "log", "{states}");
    Ran {
        code: status.code().unwrap(),
        argv,
        env,
        pwd,
        state: states[0]["state"].as_str().unwrap().to_owned(),
    }
}

fn check_job(cluster: &str) {
    let sandbox = Sandbox::new();
    if cluster == "shim" {
        let profile = test_profile(sandbox.root(), "singularity");
        std::fs::write(sandbox.presets().join("clusters/shim.toml"), profile).unwrap();
    }
    fake_node(sandbox.root());
    let Ran {
        code,
        argv,
        env,
        pwd,
        state,
    } = run_job(&sandbox, cluster, "3");
    assert_eq!(code, 3, "the job must exit with the trainer's status");
    let ray_tmp = env
        .lines()
        .find_map(|l| l.strip_prefix("RAY_TMPDIR="))
        .unwrap();
    assert!(
        !Path::new(ray_tmp).exists(),
        "a one-node job leaves no Ray temp dir behind: {ray_tmp}"
    );
    assert_eq!(
        state, "FAILED",
        "`rlctl status` must read the failure from the log"
    );
    assert_eq!(argv[0], "-m");
    assert_eq!(argv[1], "skyrl_train.entrypoints.main_base");
    assert!(
        argv.contains(&"trainer.run_name=\"a b;c\"".to_owned()),
        "{argv:?}"
    );
    // Decided by the job at run time, after the rendered overrides.
    assert_eq!(argv.last().unwrap(), "trainer.resume_mode=null");
    assert_eq!(
        argv[argv.len() - 2],
        format!(
            "trainer.export_path={}/work/checkpoints/gsm8k-canary/gsm8k-canary/export",
            sandbox.root().display()
        )
    );
    for line in [
        "HF_HUB_OFFLINE=1",
        "TRANSFORMERS_OFFLINE=1",
        "WANDB_MODE=offline",
    ] {
        assert!(
            env.lines().any(|l| l == line),
            "{line} missing from the trainer's environment"
        );
    }
    assert!(
        env.lines()
            .any(|l| l == format!("HOME={}/scratch/home", sandbox.root().display()))
    );
    let ray_tmp = env
        .lines()
        .find_map(|l| l.strip_prefix("RAY_TMPDIR="))
        .unwrap();
    assert!(
        ray_tmp.starts_with("/tmp/r"),
        "a leaked RAY_TMPDIR reached the trainer: {ray_tmp}"
    );
    assert_eq!(
        pwd.trim(),
        format!("{}/skyrl/skyrl-train", sandbox.root().display())
    );
    assert!(
        sandbox
            .root()
            .join("work/checkpoints/gsm8k-canary/gsm8k-canary/ckpt")
            .is_dir()
    );

    let ran = run_job(&sandbox, cluster, "0");
    assert_eq!(ran.code, 0);
    assert_eq!(ran.state, "COMPLETED");
}

#[test]
fn the_job_runs_the_trainer_directly_and_exits_with_its_status() {
    check_job("test");
}

#[test]
fn the_job_runs_the_trainer_through_the_singularity_shim() {
    check_job("shim");
}

/// The test cluster's profile must keep Ray on loopback: the head's address comes from the
/// node's own 127.0.1.N (`hostname --ip-address`), and every process's HTTP goes to a closed
/// local port. A rendered multi-node job that lacks either would reach outside the machine.
#[test]
fn a_local_multi_node_job_keeps_ray_on_loopback() {
    let root = tempfile::tempdir().unwrap();
    let out = ok(rlctl()
        .env(
            "RLCTL_PRESETS",
            concat!(env!("CARGO_MANIFEST_DIR"), "/tests/cluster/presets"),
        )
        .env("RLCTL_LOCAL_ROOT", root.path())
        .env("RLCTL_REPO", env!("CARGO_MANIFEST_DIR"))
        .args(["--cluster", "local", "render", "gsm8k-multinode"]));
    let text = stdout(&out);
    assert!(
        text.contains("--overlap hostname --ip-address"),
        "the head address must be the node's own loopback"
    );
    for line in [
        "export http_proxy=http://127.0.0.1:9",
        "export https_proxy=http://127.0.0.1:9",
        "export HTTP_PROXY=http://127.0.0.1:9",
        "export HTTPS_PROXY=http://127.0.0.1:9",
        "export no_proxy=localhost,127.0.0.0/8",
        "export NO_PROXY=localhost,127.0.0.0/8",
        "export RAY_USAGE_STATS_REPORT_URL=http://127.0.0.1:9/",
    ] {
        assert!(text.lines().any(|l| l == line), "missing `{line}`");
    }
    // Exported before the first Ray process starts.
    let first_export = text.find("export http_proxy").unwrap();
    assert!(first_export < text.find("ray.scripts.scripts").unwrap());
}

#[test]
fn a_trainer_that_would_import_from_outside_the_checkout_is_not_started() {
    let sandbox = Sandbox::new();
    fake_node(sandbox.root());
    // The checkout lost its package; a stale copy sits in the venv's site-packages.
    std::fs::remove_dir_all(sandbox.root().join("skyrl/skyrl-train/skyrl_train")).unwrap();
    let stale = sandbox.root().join("venv/lib/site-packages/skyrl_train");
    std::fs::create_dir_all(&stale).unwrap();
    std::fs::write(stale.join("__init__.py"), "").unwrap();
    // This venv's python has its site-packages on sys.path after PYTHONPATH, as a venv does.
    write_exec(
        &sandbox.root().join("venv/bin/python"),
        &format!(
            "#!/bin/bash\nif [ \"$1\" = - ]; then PYTHONPATH=\"$PYTHONPATH:{}\" exec python3 \"$@\"; fi\n\
             printf '%s\\0' \"$@\" > \"$STUB_OUT/argv\"\n",
            stale.parent().unwrap().display()
        ),
    );
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    let script = sandbox.sbatch_argv(1).last().unwrap().clone();
    let out = tempfile::tempdir().unwrap();
    let output = Command::new("bash")
        .arg(&script)
        .env("STUB_OUT", out.path())
        .env("SLURM_JOB_ID", "1001")
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{log}");
    assert!(
        log.contains(&format!(
            "rlctl: skyrl_train.entrypoints.main_base would import from {}",
            stale.join("__init__.py").display()
        )),
        "{log}"
    );
    assert!(
        !out.path().join("argv").exists(),
        "the trainer must not start"
    );
}

/// `render --out DIR` renders a run whose folder is DIR: submitted by hand, the wrapper runs
/// DIR/run.sh and SLURM writes its log into DIR, and nothing lands under the run root.
#[test]
fn a_wrapper_rendered_into_a_folder_runs_and_logs_there() {
    let sandbox = Sandbox::new();
    fake_node(sandbox.root());
    // A relative folder: the wrapper must not depend on where sbatch is called from.
    ok(sandbox.rlctl().current_dir(sandbox.root()).args([
        "render",
        "gsm8k-canary",
        "--out",
        "by-hand/./x/../job",
    ]));
    let dir = sandbox.root().join("by-hand/job");
    let script = std::fs::read_to_string(dir.join("sbatch.sh")).unwrap();
    let log_pattern = script
        .lines()
        .find_map(|l| l.strip_prefix("#SBATCH --output="))
        .unwrap();
    assert_eq!(
        log_pattern,
        format!("{}/%x_%j.out", dir.display()),
        "{script}"
    );
    assert!(
        script
            .lines()
            .any(|l| l == format!("run_dir={}", dir.display())),
        "{script}"
    );
    // Run it as SLURM would, its output in the log `#SBATCH --output` names.
    let log_path = dir.join("gsm8k-canary_4242.out");
    let log = std::fs::File::create(&log_path).unwrap();
    let out = tempfile::tempdir().unwrap();
    let status = Command::new("bash")
        .arg(dir.join("sbatch.sh"))
        .current_dir(out.path())
        .env("STUB_OUT", out.path())
        .env("SLURM_JOB_ID", "4242")
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .status()
        .unwrap();
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert!(status.success(), "{log}");
    assert!(
        log.contains("rlctl: skyrl_train.entrypoints.main_base exited with status 0"),
        "DIR/run.sh must have run:\n{log}"
    );
    assert!(
        out.path().join("argv").exists(),
        "the trainer never started"
    );
    assert!(
        !sandbox.root().join("work/runs/gsm8k-canary").exists(),
        "render --out must not use a run folder under the run root"
    );
}
