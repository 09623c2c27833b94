//! `--until-done` on several nodes: the rendered Ray wrapper run by bash with stand-ins for
//! `srun`, `scontrol` and Ray's CLI, sent SLURM's USR1. A slot that requeues the job tears Ray
//! down before it asks for the requeue, logs that it requeued and not the finished line, so that
//! `status` never reads it as the end of the run; the last slot keeps its trainer to the limit.

use crate::common::{Sandbox, lines_of, ok, slurm_slot, stdout, write_exec};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// The venv's python: answers the run script's import check; plays Ray's CLI (`start` blocks
/// like `--block` until its step is ended, which it records; `status` shows all 8 GPUs); as the
/// trainer it says it started, then takes $TRAINER_SECONDS.
const PYTHON: &str = r#"#!/bin/bash
if [ "$1" = - ]; then echo checkout; exit 0; fi
if [ "$2" = ray.scripts.scripts ]; then
  case "$3" in
    start)
      # The head starts first: a new list for each slot.
      if [ "$4" = --head ]; then echo $$ > "$STUB_DIR/ray.pids"; else echo $$ >> "$STUB_DIR/ray.pids"; fi
      trap 'kill $! 2>/dev/null; echo "ray ended" >> "$STUB_DIR/calls"; exit 0' TERM
      sleep 60 &
      wait
      exit 0 ;;
    status) echo ' 0.0/8.0 GPU' ;;
    stop) echo "ray stop" >> "$STUB_DIR/calls" ;;
  esac
  exit 0
fi
echo "stand-in trainer started"
exec sleep "$TRAINER_SECONDS"
"#;

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

struct Job {
    id: String,
    script: PathBuf,
    log: PathBuf,
    bin: PathBuf,
}

/// Launches gsm8k-multinode with `--until-done --max-slots 2` through the fake sbatch, on a
/// node whose venv python is [`PYTHON`].
fn launch(sandbox: &Sandbox) -> Job {
    let root = sandbox.root();
    // Ray's temp dirs in the sandbox: /tmp/r<job id> is every sandbox's, as job ids repeat.
    let profile = root.join("presets/clusters/test.toml");
    let text = std::fs::read_to_string(&profile).unwrap();
    let ray_tmp = root.join("raytmp");
    std::fs::create_dir_all(&ray_tmp).unwrap();
    let edited = text.replace(
        "ray_tmp_root = \"/tmp\"",
        &format!("ray_tmp_root = \"{}\"", ray_tmp.display()),
    );
    assert_ne!(edited, text);
    std::fs::write(&profile, edited).unwrap();
    std::fs::create_dir_all(root.join("venv/bin")).unwrap();
    write_exec(&root.join("venv/bin/python"), PYTHON);
    std::fs::create_dir_all(root.join("skyrl/skyrl-train")).unwrap();
    let out = ok(sandbox.rlctl().args([
        "launch",
        "gsm8k-multinode",
        "--until-done",
        "--max-slots",
        "2",
    ]));
    let id = (1000 + sandbox.sbatch_calls()).to_string();
    assert!(
        stdout(&out).contains(&format!("job {id}")),
        "{}",
        stdout(&out)
    );
    let script = sandbox.last_script();
    Job {
        log: script.with_file_name(format!("gsm8k-multinode_{id}.out")),
        script,
        id,
        bin: slurm_standins(root),
    }
}

/// Starts slot `restarts + 1` of the job as SLURM would, its output appended to the job's log.
fn start_slot(sandbox: &Sandbox, job: &Job, restarts: u32, trainer_seconds: &str) -> Child {
    slurm_slot(&job.script, &job.log, &job.id, restarts)
        .env(
            "PATH",
            format!("{}:{}", job.bin.display(), std::env::var("PATH").unwrap()),
        )
        .env("STUB_DIR", sandbox.root())
        .env("TRAINER_SECONDS", trainer_seconds)
        .env("SLURM_JOB_NODELIST", "n[1-2]")
        .env("SLURM_JOB_NUM_NODES", "2")
        .spawn()
        .unwrap()
}

fn log(job: &Job) -> String {
    std::fs::read_to_string(&job.log).unwrap_or_default()
}

/// Waits for the `n`-th start of the stand-in trainer: by then the wrapper's USR1 trap is set.
fn wait_for_trainer(job: &Job, slot: &mut Child, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while log(job).matches("stand-in trainer started").count() < n {
        assert!(Instant::now() < deadline, "the trainer never started");
        assert!(
            slot.try_wait().unwrap().is_none(),
            "the slot ended early:\n{}",
            log(job)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn usr1(slot: &Child) {
    ok(Command::new("kill").args(["-USR1", &slot.id().to_string()]));
}

/// What `rlctl status` reads from the log alone (no queue, no accounting).
fn state_from_log(sandbox: &Sandbox, job: &Job) -> String {
    let out = ok(sandbox
        .rlctl()
        .args(["status", "--json", &job.id])
        .env("RLCTL_SACCT", "/nonexistent/sacct"));
    let states: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let states = &states["runs"];
    assert_eq!(states[0]["source"], "log", "{states}");
    states[0]["state"].as_str().unwrap().to_owned()
}

fn calls(sandbox: &Sandbox) -> Vec<String> {
    lines_of(&sandbox.root().join("calls"))
}

#[test]
fn a_ray_slot_out_of_time_tears_ray_down_then_requeues_and_is_not_finished() {
    let sandbox = Sandbox::new();
    let job = launch(&sandbox);

    let mut first = start_slot(&sandbox, &job, 0, "60");
    wait_for_trainer(&job, &mut first, 1);
    usr1(&first);
    let status = first.wait().unwrap();
    let text = log(&job);
    assert_eq!(status.code(), Some(0), "{text}");
    for line in [
        "rlctl: slot 1 is out of time: stopping the trainer".to_owned(),
        "rlctl: tearing Ray down before the requeue (status 143)".to_owned(),
        format!(
            "rlctl: requeueing job {}: slot 1 of at most 2 ends here; slot 2 resumes the run",
            job.id
        ),
    ] {
        assert!(text.lines().any(|l| l == line), "`{line}` missing:\n{text}");
    }
    assert!(!text.contains("finished with status"), "{text}");
    // The job's own Ray steps ended on both nodes (never `ray stop`, which would end another
    // job's Ray on a shared node), and only then the requeue (which ends every step of the job).
    assert_eq!(
        calls(&sandbox),
        ["ray ended", "ray ended", &format!("requeue {}", job.id)],
        "{text}"
    );
    assert_eq!(
        state_from_log(&sandbox, &job),
        "unknown",
        "a slot that requeued the job is not its end"
    );

    // Slot 2 of 2: out of time, it keeps the trainer, which here ends by itself in the grace.
    let mut second = start_slot(&sandbox, &job, 1, "2");
    wait_for_trainer(&job, &mut second, 2);
    usr1(&second);
    let status = second.wait().unwrap();
    let text = log(&job);
    assert_eq!(status.code(), Some(0), "{text}");
    assert!(
        text.contains(
            "rlctl: slot 2 of 2 is out of time: SLURM ends it at its time limit (TIMEOUT)"
        ),
        "{text}"
    );
    assert!(!text.contains("slot 2 is out of time: stopping"), "{text}");
    assert!(
        text.ends_with(&format!("rlctl: job {} finished with status 0\n", job.id)),
        "{text}"
    );
    assert_eq!(calls(&sandbox).len(), 5, "no second requeue: {text}");
    assert_eq!(state_from_log(&sandbox, &job), "COMPLETED");
}

/// A log written before a requeue said so (rlctl until now printed the finished line, status 0,
/// when a Ray slot requeued its job): only the last slot tells how the job ended.
#[test]
fn status_reads_only_the_last_slot_of_a_log() {
    let sandbox = Sandbox::new();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    let id = 1000 + sandbox.sbatch_calls();
    let script = PathBuf::from(sandbox.sbatch_argv(1).last().unwrap().clone());
    let log = script.with_file_name(format!("gsm8k-canary_{id}.out"));
    let slot = |n: u32| format!("rlctl: slot {n} of job {id} started 2026-01-01T10:00:00Z on n1\n");
    let old_requeue = format!(
        "{}rlctl: requeueing job {id}: slot 2 of at most 3 resumes the run\n\
         rlctl: job {id} finished with status 0\n",
        slot(1)
    );
    let state = |text: &str| {
        std::fs::write(&log, text).unwrap();
        let out = ok(sandbox
            .rlctl()
            .args(["status", "--json", &id.to_string()])
            .env("RLCTL_SACCT", "/nonexistent/sacct"));
        let states: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        states["runs"][0]["state"].as_str().unwrap().to_owned()
    };
    let timeout = format!(
        "slurmstepd: error: *** JOB {id} ON n1 CANCELLED AT 2026-01-01T11:00:00 DUE TO TIME LIMIT ***\n"
    );
    assert_eq!(
        state(&format!("{old_requeue}{}{timeout}", slot(2))),
        "TIMEOUT"
    );
    assert_eq!(
        state(&format!("{old_requeue}{}WANDB_MIRROR step=9\n", slot(2))),
        "unknown",
        "the second slot is cut short: nothing says how the job ended"
    );
    assert_eq!(
        state(&format!(
            "{old_requeue}{}rlctl: job {id} finished with status 3\n",
            slot(2)
        )),
        "FAILED"
    );
    // SLURM's line for a node that failed under the job (as the real cluster writes it), which
    // `tend` resumes; the slot SLURM then started again decides.
    let node_fail = format!(
        "slurmstepd-n1: error: *** JOB {id} ON n1 CANCELLED AT 2026-01-01T10:30:00 DUE TO NODE \
         FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***\n"
    );
    assert_eq!(state(&format!("{}{node_fail}", slot(1))), "NODE_FAIL");
    assert_eq!(
        state(&format!(
            "{}{node_fail}{}rlctl: job {id} finished with status 0\n",
            slot(1),
            slot(2)
        )),
        "COMPLETED"
    );
    // slurmstepd's words for a preempted job (`DUE TO PREEMPTION`), which `tend` resumes too.
    let preempted = format!(
        "slurmstepd: error: *** JOB {id} ON n1 CANCELLED AT 2026-01-01T10:30:00 DUE TO PREEMPTION ***\n"
    );
    assert_eq!(state(&format!("{}{preempted}", slot(1))), "PREEMPTED");
    // One slot, as before: its own lines.
    assert_eq!(state(&format!("{}{timeout}", slot(1))), "TIMEOUT");
    assert_eq!(
        state(&format!(
            "{}rlctl: job {id} finished with status 0\n",
            slot(1)
        )),
        "COMPLETED"
    );
}
