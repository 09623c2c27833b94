//! The phase clock: the rendered Ray wrapper, run by bash with stand-ins for `srun`, `scontrol`,
//! Ray's CLI and the trainer, writes its phases in order to `<run_dir>/phases/<job>.tsv`;
//! `status` shows a job's start-up phase; an `--until-done` slot ends right after a save when
//! the next save would end past its limit; `estimate` takes its start-up from recorded phases.

use crate::common::{Sandbox, lines_of, ok, slurm_slot, stdout, write_exec};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Stands in for the venv's python. It answers run.sh's import check; plays Ray's CLI (`start`
/// blocks like `--block` until its step ends; `status` shows all 8 GPUs); as the trainer it
/// prints what SkyRL and MarinSkyRL print (the weight-sync line once the engines are ready, one
/// `WANDB_MIRROR` line a step) and saves after every step as SkyRL does: `global_step_N/policy/`
/// first, `trainer_state.pt`, then the pointer last. A step takes 2 s, a save 3 s.
const PYTHON: &str = r#"#!/bin/bash
if [ "$1" = - ]; then echo checkout; exit 0; fi
if [ "$2" = ray.scripts.scripts ]; then
  case "$3" in
    start) trap 'kill $! 2>/dev/null; exit 0' TERM; sleep 120 & wait; exit 0 ;;
    status) echo ' 0.0/8.0 GPU' ;;
  esac
  exit 0
fi
echo "stand-in trainer started"
sleep "$STARTUP_SECONDS"
echo "(skyrl_entrypoint pid=7) Initialized weight sync state for policy model and inference engines."
step=0
while :; do
  sleep 2
  step=$((step + 1))
  echo "(skyrl_entrypoint pid=7) WANDB_MIRROR kind=train step=$step metrics={\"timing/step\": 2.0}"
  mkdir -p "$CKPT/global_step_$step/policy"
  sleep 3
  echo state > "$CKPT/global_step_$step/trainer_state.pt"
  printf '%s' "$step" > "$CKPT/latest_ckpt_global_step.txt"
done
"#;

struct Job {
    id: String,
    script: PathBuf,
    log: PathBuf,
    bin: PathBuf,
    ckpt: PathBuf,
}

impl Job {
    fn phases(&self) -> PathBuf {
        self.script
            .with_file_name("phases")
            .join(format!("{}.tsv", self.id))
    }

    /// The phases file's lines as (seconds, phase, detail).
    fn marks(&self) -> Vec<(i64, String, String)> {
        lines_of(&self.phases())
            .iter()
            .map(|l| {
                let f: Vec<&str> = l.split('\t').collect();
                assert_eq!(f.len(), 3, "`{l}`: three fields");
                (f[0].parse().unwrap(), f[1].to_owned(), f[2].to_owned())
            })
            .collect()
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

/// SLURM's commands as the job sees them: `srun` runs its command here, `scontrol` lists the
/// job's two nodes and records a requeue.
fn slurm_standins(root: &Path) -> PathBuf {
    let bin = root.join("slurm-bin");
    std::fs::create_dir_all(&bin).unwrap();
    write_exec(
        &bin.join("srun"),
        "#!/bin/bash\nwhile [[ \"$1\" == -* ]]; do [ \"$1\" = -w ] && shift; shift; done\nexec \"$@\"\n",
    );
    write_exec(
        &bin.join("scontrol"),
        "#!/bin/bash\ncase \"$1\" in\n  show) printf 'n1\\nn2\\n' ;;\n  *) echo \"$*\" >> \"$STUB_DIR/calls\" ;;\nesac\n",
    );
    bin
}

/// Launches gsm8k-multinode `--until-done --max-slots 2` through the fake sbatch.
fn launch(sandbox: &Sandbox) -> Job {
    let root = sandbox.root();
    let profile = root.join("presets/clusters/test.toml");
    let text = std::fs::read_to_string(&profile).unwrap();
    let ray_tmp = root.join("raytmp");
    std::fs::create_dir_all(&ray_tmp).unwrap();
    let edited = text.replace(
        "ray_tmp_root = \"/tmp\"",
        &format!("ray_tmp_root = \"{}\"", ray_tmp.display()),
    );
    std::fs::write(&profile, edited).unwrap();
    std::fs::create_dir_all(root.join("venv/bin")).unwrap();
    write_exec(&root.join("venv/bin/python"), PYTHON);
    std::fs::create_dir_all(root.join("skyrl/skyrl-train")).unwrap();
    ok(sandbox.rlctl().args([
        "launch",
        "gsm8k-multinode",
        "--until-done",
        "--max-slots",
        "2",
    ]));
    let id = (1000 + sandbox.sbatch_calls()).to_string();
    let script = sandbox.last_script();
    let text = std::fs::read_to_string(&script).unwrap();
    let ckpt = text
        .lines()
        .find_map(|l| l.strip_prefix("ckpt_path="))
        .unwrap()
        .trim_matches('\'');
    Job {
        log: script.with_file_name(format!("gsm8k-multinode_{id}.out")),
        ckpt: PathBuf::from(ckpt),
        script,
        id,
        bin: slurm_standins(root),
    }
}

/// The `--signal=B:USR1@N` grace of the rendered wrapper.
fn grace_s(job: &Job) -> u64 {
    let text = std::fs::read_to_string(&job.script).unwrap();
    let line = text.lines().find(|l| l.contains("USR1@")).unwrap();
    line.rsplit('@').next().unwrap().parse().unwrap()
}

fn now_s() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Starts the job's first slot as SLURM would, SLURM's end of the job `end` (Unix seconds).
fn start(sandbox: &Sandbox, job: &Job, startup_s: u32, end: u64) -> std::process::Child {
    slurm_slot(&job.script, &job.log, &job.id, 0)
        .env(
            "PATH",
            format!("{}:{}", job.bin.display(), std::env::var("PATH").unwrap()),
        )
        .env("STUB_DIR", sandbox.root())
        .env("STARTUP_SECONDS", startup_s.to_string())
        .env("CKPT", &job.ckpt)
        .env("SLURM_JOB_NODELIST", "n[1-2]")
        .env("SLURM_JOB_NUM_NODES", "2")
        .env("SLURM_JOB_END_TIME", end.to_string())
        .spawn()
        .unwrap()
}

#[test]
fn a_slot_writes_its_phases_in_order_shows_its_start_up_and_ends_after_a_save_that_fits() {
    let sandbox = Sandbox::new();
    let job = launch(&sandbox);
    sandbox.queue(&format!("{}|gsm8k-multinode|RUNNING\n", job.id));
    // Three saves (one every 5 s after a 10 s start-up) fit before SLURM's end less the grace;
    // a fourth would not.
    let started = now_s();
    let end = started + grace_s(&job) + 27;
    let mut slot = start(&sandbox, &job, 8, end);

    // In start-up, `status` shows the phase the job is in.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !job.marks().iter().any(|m| m.1 == "container") {
        assert!(
            Instant::now() < deadline,
            "no container phase:\n{}",
            job.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = stdout(&ok(sandbox.rlctl().args(["status", &job.id])));
    assert!(out.contains("RUNNING, starting: container up "), "{out}");
    let json: serde_json::Value = serde_json::from_str(&stdout(&ok(sandbox
        .rlctl()
        .args(["status", "--json", &job.id]))))
    .unwrap();
    assert_eq!(json["runs"][0]["starting"]["phase"], "container", "{json}");
    let out = sandbox
        .rlctl()
        .args(["watch", "gsm8k-multinode", "--once"])
        .output()
        .unwrap();
    assert!(
        stdout(&out).contains("\n  starting: container up "),
        "{}",
        stdout(&out)
    );

    let status = slot.wait().unwrap();
    let log = job.log();
    assert_eq!(status.code(), Some(0), "{log}");
    let marks = job.marks();
    let phases: Vec<&str> = marks.iter().map(|m| m.1.as_str()).collect();
    let shown = format!("{marks:?}\n{log}");
    // Start-up in order, then saves begun and ended in pairs, the early stop, the exit.
    assert_eq!(
        phases[..6],
        [
            "slot",
            "ray_head",
            "ray_worker",
            "container",
            "engines",
            "first_step"
        ],
        "{shown}"
    );
    assert_eq!(marks[2].2, "1", "worker 1: {shown}");
    let saves = &marks[6..marks.len() - 2];
    assert!(saves.len() >= 4, "two saves at least: {shown}");
    for (i, pair) in saves.chunks(2).enumerate() {
        let n = (i + 1).to_string();
        assert_eq!(
            (pair[0].1.as_str(), pair[0].2.as_str()),
            ("save_begun", n.as_str()),
            "{shown}"
        );
        assert_eq!(
            (pair[1].1.as_str(), pair[1].2.as_str()),
            ("save_ended", n.as_str()),
            "{shown}"
        );
    }
    let last_save = saves.last().unwrap();
    let (stop, exit) = (&marks[marks.len() - 2], &marks[marks.len() - 1]);
    assert_eq!(
        (stop.1.as_str(), &stop.2),
        ("stop", &last_save.2),
        "{shown}"
    );
    assert_eq!(exit.1, "exit", "{shown}");
    assert!(
        marks.windows(2).all(|w| w[0].0 <= w[1].0),
        "in time order: {shown}"
    );
    // The slot's last save ended before SLURM's end less the grace, and the slot went no
    // further: no save begun after it, the trainer stopped, the job requeued.
    assert!(last_save.0 as u64 <= end - grace_s(&job), "{shown}");
    assert!(
        log.contains(&format!(
            "rlctl: ending slot 1 after step {}'s save: the next would end about",
            last_save.2
        )),
        "{log}"
    );
    assert!(
        log.contains("rlctl: slot 1 is out of time: stopping the trainer"),
        "{log}"
    );
    assert_eq!(
        lines_of(&sandbox.root().join("calls")),
        [format!("requeue {}", job.id)],
        "{log}"
    );
    // The whole checkpoint the next slot resumes from is the last save's.
    let pointer = std::fs::read_to_string(job.ckpt.join("latest_ckpt_global_step.txt")).unwrap();
    assert_eq!(pointer, last_save.2, "{shown}");

    // Measured now: the next estimate of the preset takes its start-up from this job's phases.
    let out = stdout(&ok(sandbox.rlctl().args([
        "estimate",
        "gsm8k-multinode",
        "--json",
    ])));
    let e: serde_json::Value = serde_json::from_str(&out).unwrap();
    let first_step = marks[5].0 - marks[0].0;
    assert_eq!(e["startup_s"], serde_json::json!(first_step as f64), "{e}");
    assert_eq!(
        e["startup_from"],
        format!("p95 of recorded job(s) {} (same model and nodes)", job.id),
        "{e}"
    );
    assert!(e["save_s"].as_f64().is_some_and(|s| s >= 1.0), "{e}");
}
