//! One history per run: the rendered wrappers of a run's jobs run by bash around the stand-in
//! trainer, as SLURM would start them (a `--chain 2` whose first link timed out past its
//! checkpoint; a grid cell that timed out and `tend` resumed). `metrics`, `status` and `report`
//! read every job's steps joined, the job that resumed winning the steps it trained again.

use crate::common::{Sandbox, ok, recorded_logs, slurm_slot, standin_node, stdout};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The knobs of every run here: 20 steps, a checkpoint every 10.
const KNOBS: [&str; 2] = ["trainer.max_steps=20", "trainer.ckpt_interval=10"];

/// The ledger's records of a run, oldest first: (job id, log, run folder's `sbatch.sh`).
fn jobs(sandbox: &Sandbox, target: &str) -> Vec<(String, PathBuf, PathBuf)> {
    let ledger = std::fs::read_to_string(sandbox.root().join("work/runs/ledger.jsonl")).unwrap();
    (ledger.lines())
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|r| r["target"] == target)
        .map(|r| {
            let field = |name: &str| r[name].as_str().unwrap().to_owned();
            let run_dir = PathBuf::from(field("run_dir"));
            (
                field("job_id"),
                PathBuf::from(field("log")),
                run_dir.join("sbatch.sh"),
            )
        })
        .collect()
}

/// Runs job `id`'s wrapper until its log shows train step `step`, then kills its process group
/// as SLURM kills a job at its time limit. The trainer prints a NaN policy loss from step 11
/// on: what tells its steps from a later job's.
fn run_until(script: &Path, log: &Path, id: &str, step: u64) {
    let mut slot = slurm_slot(script, log, id, 0)
        .env("RLCTL_STANDIN_STEP_SECONDS", "0.3")
        .env("RLCTL_STANDIN_DIVERGE_AT", "11")
        .spawn()
        .unwrap();
    let line = format!("kind=train step={step} metrics=");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !std::fs::read_to_string(log)
        .unwrap_or_default()
        .contains(&line)
    {
        assert!(Instant::now() < deadline, "step {step} never logged");
        assert!(slot.try_wait().unwrap().is_none(), "the job ended early");
        std::thread::sleep(Duration::from_millis(50));
    }
    let group = format!("-{}", slot.id());
    ok(Command::new("kill").args(["-KILL", "--", &group]));
    slot.wait().unwrap();
}

/// Runs job `id`'s wrapper to its end; it resumes from the newest checkpoint.
fn run_to_end(script: &Path, log: &Path, id: &str) {
    let out = slurm_slot(script, log, id, 0).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        std::fs::read_to_string(log).unwrap()
    );
    let text = std::fs::read_to_string(log).unwrap();
    assert!(text.contains("Resuming from checkpoint"), "{text}");
}

/// The train steps `metrics --json` shows of `run`: each step's number and whether it has a
/// policy loss (only the first job's steps from 11 on do).
fn train_steps(sandbox: &Sandbox, run: &str) -> Vec<(u64, bool)> {
    let out = ok(sandbox.rlctl().args(["metrics", run, "--json"]));
    let series: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    (series["train"].as_array().unwrap().iter())
        .map(|s| {
            let loss = s["metrics"].get("policy/policy_loss").is_some();
            (s["step"].as_u64().unwrap(), loss)
        })
        .collect()
}

fn status(sandbox: &Sandbox) -> serde_json::Value {
    let out = ok(sandbox.rlctl().args(["status", "--json"]));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    doc["runs"].clone()
}

#[test]
fn a_chain_is_one_history_in_metrics_and_status_the_resumed_link_winning() {
    let sandbox = Sandbox::new();
    standin_node(sandbox.root());
    ok(sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--chain", "2", "--"])
        .args(KNOBS));
    let links = jobs(&sandbox, "gsm8k-canary");
    assert_eq!(links.len(), 2, "{links:?}");
    let [(first, log1, script1), (second, log2, script2)] = [&links[0], &links[1]];

    // Link 1 saves step 10, logs 11 and 12, and runs out of time.
    run_until(script1, log1, first, 12);
    sandbox.queue(&format!("{second}|gsm8k-canary|PENDING\n"));
    sandbox.sacct(&format!("{first}|TIMEOUT|0:0"));
    // Link 2 waits: the run is where link 1 left it, and link 2 is its second job.
    let row = &status(&sandbox)[0];
    assert_eq!(row["job_id"], second.as_str(), "{row}");
    assert!(row["step"].as_u64().unwrap() >= 12, "{row}");
    assert_eq!(row["attempt"], 2, "{row}");
    assert_eq!(
        row.get("resumed_from"),
        None,
        "not known before it logs: {row}"
    );

    // Link 2 resumes from step 10 and trains 11..20 again.
    run_to_end(script2, log2, second);
    sandbox.queue("");
    sandbox.sacct(&format!("{first}|TIMEOUT|0:0\n{second}|COMPLETED|0:0"));
    let steps = train_steps(&sandbox, "gsm8k-canary");
    let numbers: Vec<u64> = steps.iter().map(|s| s.0).collect();
    assert_eq!(
        numbers,
        (1..=20).collect::<Vec<_>>(),
        "every step once, in order"
    );
    assert!(
        steps.iter().all(|(_, loss)| !loss),
        "steps 11 and 12 are link 2's, not link 1's: {steps:?}"
    );
    let row = &status(&sandbox)[0];
    assert_eq!(
        (
            &row["step"],
            &row["total"],
            &row["resumed_from"],
            &row["attempt"]
        ),
        (&20.into(), &20.into(), &10.into(), &2.into()),
        "{row}"
    );
    let table = stdout(&ok(sandbox.rlctl().arg("status")));
    assert!(table.contains("20/20 (from 10)"), "{table}");
    let frame = stdout(&ok(sandbox.rlctl().args([
        "watch",
        "gsm8k-canary",
        "--once",
    ])));
    assert!(frame.contains("step 20/20"), "{frame}");
    assert!(
        frame.contains("attempt 2 of the run, resumed from step 10"),
        "{frame}"
    );
}

#[test]
fn a_grid_cell_resumed_after_a_timeout_shows_its_whole_curve_in_the_report() {
    let sandbox = Sandbox::new();
    standin_node(sandbox.root());
    std::fs::create_dir_all(sandbox.presets().join("grids")).unwrap();
    std::fs::write(
        sandbox.presets().join("grids/long.toml"),
        "description = \"one cell\"\nbase = \"gsm8k-canary\"\n\
         [[cells]]\nname = \"slow\"\ndescription = \"20 steps\"\n\
         knobs = { \"trainer.max_steps\" = 20, \"trainer.ckpt_interval\" = 10 }\n",
    )
    .unwrap();
    ok(sandbox.rlctl().args(["grid", "--all", "long"]));
    let first = jobs(&sandbox, "long/slow").remove(0);
    run_until(&first.2, &first.1, &first.0, 12);
    sandbox.sacct(&format!("{}|TIMEOUT|0:0", first.0));
    let tended = stdout(&ok(sandbox.rlctl().arg("tend")));
    assert!(tended.contains("from step 10"), "{tended}");
    let second = jobs(&sandbox, "long/slow").remove(1);
    assert_eq!(recorded_logs(&sandbox)["long/slow"], second.1);
    run_to_end(&second.2, &second.1, &second.0);
    sandbox.sacct(&format!(
        "{}|TIMEOUT|0:0\n{}|COMPLETED|0:0",
        first.0, second.0
    ));

    let dir = sandbox.root().join("report");
    let md = stdout(&ok(sandbox
        .rlctl()
        .args(["report", "long", "--out"])
        .arg(&dir)));
    let svg = std::fs::read_to_string(dir.join("long-reward.svg")).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    // The cell's line: the polyline with the most points (a legend swatch has two).
    let points = (doc.descendants())
        .filter(|n| n.has_tag_name("polyline"))
        .filter_map(|n| n.attribute("points"))
        .map(|p| p.split_whitespace().count())
        .max();
    assert_eq!(points, Some(20), "steps 1..20, not link 2's 11..20:\n{md}");
    assert_eq!(
        train_steps(&sandbox, "long/slow").len(),
        20,
        "metrics of the cell: its whole history"
    );
}
