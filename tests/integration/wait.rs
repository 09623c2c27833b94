//! `rlctl wait`: blocks until runs reach their end, their start or a step, one line (or one
//! NDJSON event) per change; exit 0 reached, 1 a run ended otherwise, 2 could not tell. SLURM is
//! a stand-in squeue whose queue changes from one call to the next as a real one's does between
//! rounds, and a stand-in sacct that says what accounting would and records what it was asked.

use crate::common::{
    Sandbox, lines_of, ok, recorded_logs, slurm_slot, standin_node, stderr, stdout, write_exec,
};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A run of 20 steps, so that a step and a total are known.
const KNOBS: [&str; 2] = ["trainer.max_steps=20", "trainer.ckpt_interval=10"];

/// A stand-in squeue: its N-th call prints `rounds[N-1]` (the last one for every later call) as
/// `squeue --format=%i|%j|%T|%q|%r` would, or fails as squeue does when slurmctld does not answer
/// where that round is `FAIL`; it counts its calls in `sbatch-calls/squeue-calls`.
fn scripted_squeue(sandbox: &Sandbox, rounds: &[&str]) {
    let dir = sandbox.root().join("sbatch-calls");
    for (i, queue) in rounds.iter().enumerate() {
        std::fs::write(dir.join(format!("queue.{}", i + 1)), queue).unwrap();
    }
    std::fs::write(dir.join("queue.last"), rounds.last().unwrap()).unwrap();
    write_exec(
        &sandbox.root().join("bin/squeue"),
        "#!/bin/bash\ndir=\"$FAKE_SBATCH_DIR\"\n\
         n=$(( $(cat \"$dir/squeue-calls\" 2>/dev/null || echo 0) + 1 ))\necho \"$n\" > \"$dir/squeue-calls\"\n\
         f=\"$dir/queue.$n\"; [ -f \"$f\" ] || f=\"$dir/queue.last\"\n\
         if [ \"$(cat \"$f\")\" = FAIL ]; then\n\
         echo 'squeue: error: slurm_load_jobs error: Socket timed out on send/recv operation' >&2; exit 1\nfi\n\
         cat \"$f\"\n",
    );
}

/// A stand-in sacct that prints `lines` (`id|state|exit code`) whatever it is asked, and
/// records the argv of each call, one a line, in `sbatch-calls/sacct-calls`.
fn recording_sacct(sandbox: &Sandbox, lines: &str) {
    let text: String = lines.lines().map(|l| format!("echo '{l}'\n")).collect();
    write_exec(
        &sandbox.root().join("bin/sacct"),
        &format!("#!/bin/bash\necho \"$*\" >> \"$FAKE_SBATCH_DIR/sacct-calls\"\n{text}"),
    );
}

fn squeue_calls(sandbox: &Sandbox) -> usize {
    let count = sandbox.root().join("sbatch-calls/squeue-calls");
    std::fs::read_to_string(count).map_or(0, |t| t.trim().parse().unwrap())
}

/// A train step line per entropy value, as MarinSkyRL's trainer prints them, 40 s each.
fn steps(entropy: &[f64]) -> String {
    (entropy.iter().enumerate())
        .map(|(i, e)| {
            format!(
                "WANDB_MIRROR kind=train step={} metrics={{\"timing/step\": 40.0, \
                 \"reward/avg_raw_reward\": 0.5, \"policy/policy_entropy\": {e}}}\n",
                i + 1
            )
        })
        .collect()
}

/// The canary launched as job 1001, its log holding three healthy steps.
fn canary() -> Sandbox {
    let sandbox = Sandbox::new();
    ok(sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--"])
        .args(KNOBS));
    let log = &recorded_logs(&sandbox)["gsm8k-canary"];
    std::fs::write(log, steps(&[0.6, 0.58, 0.57])).unwrap();
    sandbox
}

/// `rlctl wait ARGS`, a look every 50 ms.
fn wait(sandbox: &Sandbox, args: &[&str]) -> Output {
    (sandbox.rlctl())
        .arg("wait")
        .args(args)
        .env("RLCTL_WAIT_INTERVAL", "50ms")
        .output()
        .unwrap()
}

/// The NDJSON events of `out`, each checked to carry `schema_version` 1.
fn events(out: &Output) -> Vec<serde_json::Value> {
    let text = stdout(out);
    (text.lines())
        .map(|line| {
            let event: serde_json::Value = serde_json::from_str(line).unwrap();
            assert_eq!(event["schema_version"], 1, "{line}");
            event
        })
        .collect()
}

#[test]
fn a_run_that_completes_is_reached_each_change_said_once() {
    let sandbox = canary();
    scripted_squeue(
        &sandbox,
        &[
            "1001|gsm8k-canary|PENDING|boost_qos_dbg|Priority\n",
            "1001|gsm8k-canary|PENDING|boost_qos_dbg|Priority\n",
            "1001|gsm8k-canary|RUNNING|boost_qos_dbg\n",
            "",
        ],
    );
    recording_sacct(&sandbox, "1001|COMPLETED|0:0");
    let out = wait(&sandbox, &["gsm8k-canary"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "three changes and the outcome: {text}");
    let said = |i: usize, what: &str| {
        assert!(
            lines[i].ends_with(what) && lines[i].contains(" UTC "),
            "{i}: {text}"
        )
    };
    said(0, "gsm8k-canary: job 1001 PENDING (Priority), step 3/20");
    said(1, "gsm8k-canary: job 1001 RUNNING, step 3/20");
    said(2, "gsm8k-canary: job 1001 COMPLETED, step 3/20");
    assert!(
        lines[3].contains("reached: 1 of 1 run at COMPLETED after ")
            && lines[3].ends_with("(4 rounds)"),
        "{text}"
    );
    assert_eq!(squeue_calls(&sandbox), 4, "one squeue a round");
}

#[test]
fn a_run_that_fails_ends_the_wait_with_1_and_says_where_to_look() {
    let sandbox = canary();
    scripted_squeue(&sandbox, &["1001|gsm8k-canary|RUNNING|boost_qos_dbg\n", ""]);
    recording_sacct(&sandbox, "1001|FAILED|1:0");
    let out = wait(&sandbox, &["gsm8k-canary"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let text = stdout(&out);
    assert!(
        text.contains("gsm8k-canary: job 1001 FAILED, step 3/20"),
        "{text}"
    );
    assert!(text.contains(" missed: 0 of 1 run at COMPLETED"), "{text}");
    let err = stderr(&out);
    assert!(
        err.contains(
            "gsm8k-canary (job 1001) ended FAILED (exit code 1:0) at step 3/20, before COMPLETED: \
             `rlctl logs gsm8k-canary --errors` says why"
        ),
        "{err}"
    );
}

#[test]
fn a_collapsing_run_ends_the_wait_with_1_while_it_still_runs() {
    let sandbox = canary();
    let log = &recorded_logs(&sandbox)["gsm8k-canary"];
    std::fs::write(log, steps(&[0.6, 0.41, 0.22, 0.09, 0.05, 0.03])).unwrap();
    scripted_squeue(&sandbox, &["1001|gsm8k-canary|RUNNING|boost_qos_dbg\n"]);
    let out = wait(&sandbox, &["gsm8k-canary"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("raised entropy-collapse at step 6/20"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_timeout_passing_first_is_exit_2_naming_where_each_run_is() {
    let sandbox = canary();
    scripted_squeue(
        &sandbox,
        &["1001|gsm8k-canary|PENDING|boost_qos_dbg|Resources\n"],
    );
    let start = Instant::now();
    let out = (sandbox.rlctl())
        .args(["wait", "gsm8k-canary", "--timeout", "1s", "--json"])
        .env("RLCTL_WAIT_INTERVAL", "300ms")
        .output()
        .unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    let events = events(&out);
    assert_eq!(events.len(), 2, "one change, then the outcome: {events:?}");
    let outcome = &events[1];
    assert_eq!(
        (&outcome["event"], &outcome["verdict"], &outcome["exit"]),
        (&"outcome".into(), &"timeout".into(), &2.into()),
        "{outcome}"
    );
    assert!(outcome["waited_s"].as_f64().unwrap() >= 1.0, "{outcome}");
    let rounds = outcome["rounds"].as_u64().unwrap();
    assert!(
        (4..=6).contains(&rounds),
        "a look every 300 ms for 1 s: {rounds}"
    );
    assert_eq!(outcome["runs"][0]["standing"], "waiting", "{outcome}");
    let err = stderr(&out);
    assert!(
        err.contains("the runs did not reach COMPLETED within 1s: gsm8k-canary: job 1001 PENDING (Resources), step 3/20"),
        "{err}"
    );
    // A bad duration is refused, naming the forms it takes.
    let out = wait(&sandbox, &["gsm8k-canary", "--timeout", "10 minutes"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("write e.g. 90s, 10m, 2h"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn several_runs_cost_one_squeue_a_round_and_sacct_only_for_jobs_that_left_the_queue() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.presets().join("grids")).unwrap();
    let mut grid = "description = \"three cells\"\nbase = \"gsm8k-canary\"\n".to_owned();
    for cell in ["a", "b", "c"] {
        grid.push_str(&format!(
            "[[cells]]\nname = \"{cell}\"\ndescription = \"{cell}\"\n\
             knobs = {{ \"trainer.max_steps\" = 20 }}\n"
        ));
    }
    std::fs::write(sandbox.presets().join("grids/tiny.toml"), grid).unwrap();
    ok(sandbox.rlctl().args(["grid", "--all", "tiny"]));
    for log in recorded_logs(&sandbox).values() {
        std::fs::write(log, steps(&[0.6, 0.58])).unwrap();
    }
    let row = |id: u32, cell: &str| format!("{id}|tiny-{cell}|RUNNING|boost_qos_dbg\n");
    let (a, b, c) = (row(1001, "a"), row(1002, "b"), row(1003, "c"));
    scripted_squeue(
        &sandbox,
        &[&format!("{a}{b}{c}"), &format!("{b}{c}"), &c, ""],
    );
    recording_sacct(
        &sandbox,
        "1001|COMPLETED|0:0\n1002|COMPLETED|0:0\n1003|COMPLETED|0:0",
    );
    let out = wait(&sandbox, &["tiny", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let events = events(&out);
    let outcome = events.last().unwrap();
    assert_eq!(outcome["verdict"], "reached", "{outcome}");
    assert_eq!(outcome["rounds"], 4, "{outcome}");
    assert_eq!(
        squeue_calls(&sandbox),
        4,
        "one squeue a round for three runs"
    );
    let asked: Vec<String> = lines_of(&sandbox.root().join("sbatch-calls/sacct-calls"))
        .iter()
        .map(|argv| {
            let words: Vec<&str> = argv.split_whitespace().collect();
            let j = words.iter().position(|w| *w == "-j").unwrap();
            words[j + 1].to_owned()
        })
        .collect();
    assert_eq!(
        asked,
        ["1001", "1002", "1003"],
        "no sacct while all three ran, then each job once, as it left"
    );
    let changes: Vec<(&str, &str)> = (events.iter())
        .filter(|e| e["event"] == "change")
        .map(|e| (e["run"].as_str().unwrap(), e["state"].as_str().unwrap()))
        .collect();
    assert_eq!(
        changes,
        [
            ("tiny/a", "RUNNING"),
            ("tiny/b", "RUNNING"),
            ("tiny/c", "RUNNING"),
            ("tiny/a", "COMPLETED"),
            ("tiny/b", "COMPLETED"),
            ("tiny/c", "COMPLETED"),
        ]
    );
    assert!(
        (outcome["runs"].as_array().unwrap().iter()).all(|r| r["standing"] == "reached"),
        "{outcome}"
    );
}

#[test]
fn a_step_is_waited_for_on_the_trainers_own_log_lines() {
    let sandbox = Sandbox::new();
    standin_node(sandbox.root());
    ok(sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--"])
        .args(KNOBS));
    let log = recorded_logs(&sandbox)["gsm8k-canary"].clone();
    scripted_squeue(&sandbox, &["1001|gsm8k-canary|RUNNING|boost_qos_dbg\n"]);
    // Already running: `--until running` is reached at the first look.
    let out = wait(&sandbox, &["gsm8k-canary", "--until", "running"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The job's wrapper runs the stand-in trainer, a step every 0.3 s.
    let mut slot = slurm_slot(&sandbox.last_script(), &log, "1001", 0)
        .env("RLCTL_STANDIN_STEP_SECONDS", "0.3")
        .spawn()
        .unwrap();
    let out = wait(&sandbox, &["gsm8k-canary", "--step", "4", "--json"]);
    let group = format!("-{}", slot.id());
    ok(Command::new("kill").args(["-KILL", "--", &group]));
    slot.wait().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let events = events(&out);
    let steps: Vec<u64> = (events.iter())
        .filter(|e| e["event"] == "change")
        .map(|e| e["step"].as_u64().unwrap())
        .collect();
    assert!(steps.windows(2).all(|w| w[0] < w[1]), "{steps:?}");
    let outcome = events.last().unwrap();
    assert_eq!(
        (&outcome["verdict"], &outcome["until"]),
        (&"reached".into(), &"step 4".into())
    );
    let step = outcome["runs"][0]["step"].as_u64().unwrap();
    assert!((4..20).contains(&step), "{outcome}");
    // A step past the run's last is refused before any wait.
    let out = wait(&sandbox, &["gsm8k-canary", "--step", "21"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("gsm8k-canary trains 20 steps (trainer.max_steps), so it never logs step 21: give at most 20"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn an_unknown_run_is_exit_2_and_a_closed_pipe_ends_quietly_with_0() {
    let sandbox = canary();
    scripted_squeue(&sandbox, &["1001|gsm8k-canary|PENDING|boost_qos_dbg\n"]);
    let out = wait(&sandbox, &["gsm8k-canary", "gsm8k-canry"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("unknown recorded run `gsm8k-canry`"),
        "{}",
        stderr(&out)
    );
    assert_eq!(squeue_calls(&sandbox), 0, "SLURM is not asked of a typo");
    // The reader goes before the wait ends: its last line finds the pipe closed.
    let mut child = (sandbox.rlctl())
        .args(["wait", "gsm8k-canary", "--timeout", "1s"])
        .env("RLCTL_WAIT_INTERVAL", "100ms")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "", "quietly");
}

#[test]
fn a_squeue_hiccup_is_waited_through_and_one_at_the_first_look_is_exit_2() {
    let sandbox = canary();
    let pending = "1001|gsm8k-canary|PENDING|boost_qos_dbg\n";
    scripted_squeue(&sandbox, &[pending, "FAIL", "FAIL", ""]);
    recording_sacct(&sandbox, "1001|COMPLETED|0:0");
    let out = wait(&sandbox, &["gsm8k-canary"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(
        err.matches("asking again in the next round").count(),
        2,
        "{err}"
    );
    assert!(err.contains("Socket timed out"), "{err}");
    let sandbox = canary();
    scripted_squeue(&sandbox, &["FAIL"]);
    let out = wait(&sandbox, &["gsm8k-canary", "--json"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        squeue_calls(&sandbox),
        1,
        "a SLURM that never answered is not waited on"
    );
    let outcome = events(&out).pop().unwrap();
    assert_eq!(outcome["verdict"], "unknown", "{outcome}");
    assert!(
        outcome["why"].as_str().unwrap().contains("squeue failed"),
        "{outcome}"
    );
}
