//! Issue 33's smaller wrong answers, each as the user met it: a resubmitted log SLURM never
//! writes, a status that drops runs, a status of a long run that held every job's knobs and
//! steps, an echoed 200 KB line, a forged summary line, a wipe through a link, a sync that
//! outlives the login node.

use crate::common::{Sandbox, ok, save_whole, stdout};
use std::path::PathBuf;

/// The ledger's records, in order.
fn records(sandbox: &Sandbox) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(sandbox.root().join("work/runs/ledger.jsonl")).unwrap();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_resubmitted_run_named_with_its_job_ids_digits_records_the_log_slurm_writes() {
    let sandbox = Sandbox::new();
    // The fake sbatch's first job is 1001: the name holds the id's digits before the id itself.
    ok(sandbox.rlctl().args([
        "launch",
        "gsm8k-canary",
        "--job-name",
        "lr1001",
        "--",
        "trainer.max_steps=30",
        "trainer.ckpt_interval=5",
    ]));
    let ckpt = sandbox
        .root()
        .join("work/checkpoints/gsm8k-canary/lr1001/ckpt");
    save_whole(&ckpt, 10);
    sandbox.sacct("1001|TIMEOUT|0:0");
    let pass = sandbox.rlctl().arg("tend").output().unwrap();
    assert!(pass.status.success(), "{}", stdout(&pass));
    let records = records(&sandbox);
    let last = records.last().unwrap();
    assert_eq!(last["job_id"], "1002", "{}", stdout(&pass));
    // SLURM expands `%x_%j.out` for job 1002 named lr1001.
    let log = PathBuf::from(last["log"].as_str().unwrap());
    assert_eq!(log.file_name().unwrap(), "lr1001_1002.out");
    // Where it writes, as a later `--wipe` judges what the run's jobs wrote.
    assert_eq!(last["ckpt_resolved"], ckpt.to_str().unwrap());
    assert_eq!(
        log.parent().unwrap(),
        PathBuf::from(last["run_dir"].as_str().unwrap())
    );
}

#[test]
fn one_unreadable_log_leaves_every_other_runs_row_in_status() {
    let sandbox = Sandbox::new();
    for name in ["first", "second", "third"] {
        ok(sandbox
            .rlctl()
            .args(["launch", "gsm8k-canary", "--job-name", name]));
    }
    sandbox.queue("1001|first|RUNNING\n1002|second|RUNNING\n1003|third|RUNNING\n");
    let logs: Vec<PathBuf> = (records(&sandbox).iter())
        .map(|r| PathBuf::from(r["log"].as_str().unwrap()))
        .collect();
    for log in [&logs[0], &logs[2]] {
        std::fs::write(log, "rlctl: slot 1 of job 1001 started\n").unwrap();
    }
    // A log rlctl cannot read (tests run as root, where a mode would not stop a read).
    std::fs::create_dir_all(&logs[1]).unwrap();
    let out = sandbox.rlctl().arg("status").output().unwrap();
    let text = stdout(&out);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{text}{}",
        crate::common::stderr(&out)
    );
    for (name, id) in [("first", "1001"), ("third", "1003")] {
        let row = (text.lines())
            .find(|l| l.starts_with(&format!("gsm8k-canary/{name} ")))
            .unwrap_or_else(|| panic!("no row for {name}:\n{text}"));
        assert!(row.contains(id) && row.contains("RUNNING"), "{row}");
        assert!(!row.contains("unreadable"), "{row}");
    }
    let row = (text.lines())
        .find(|l| l.starts_with("gsm8k-canary/second "))
        .unwrap_or_else(|| panic!("no row for second:\n{text}"));
    let shown = logs[1].to_str().unwrap();
    assert!(
        row.contains("RUNNING, log unreadable: ") && row.contains(shown),
        "{row}"
    );
    let said = crate::common::stderr(&out);
    assert!(said.contains("gsm8k-canary/second"), "{said}");
    // The JSON printer carries the same rows and the same verdict.
    let out = sandbox.rlctl().args(["status", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let rows: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let rows = &rows["runs"];
    assert_eq!(rows.as_array().unwrap().len(), 3);
    assert!(rows[1]["unreadable"].as_str().unwrap().contains(shown));
}

/// Records `jobs` more submissions of the launched run `name` (as `tend` resubmits one), job
/// ids from `base`, each job's log with two train steps; returns the run's target.
fn long_run(sandbox: &Sandbox, name: &str, base: u64, jobs: u64) -> String {
    let path = sandbox.root().join("work/runs/ledger.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let first: serde_json::Value = (text.lines())
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|r| r["job_name"] == name)
        .unwrap();
    let run_dir = PathBuf::from(first["run_dir"].as_str().unwrap());
    let mut ledger = text.clone();
    for i in 0..jobs {
        let id = base + i;
        let log = run_dir.join(format!("{name}_{id}.out"));
        let steps: String = [2 * i + 1, 2 * i + 2]
            .iter()
            .map(|s| {
                format!(
                    "WANDB_MIRROR kind=train step={s} metrics={{\"timing/step\": 41.5, \
                     \"policy/policy_entropy\": 0.5, \"reward/avg_raw_reward\": 0.25}}\n"
                )
            })
            .collect();
        std::fs::write(&log, steps).unwrap();
        let mut r = first.clone();
        r["job_id"] = id.to_string().into();
        r["log"] = log.to_str().unwrap().into();
        r["attempt"] = (i + 2).into();
        ledger.push_str(&serde_json::to_string(&r).unwrap());
        ledger.push('\n');
    }
    std::fs::write(&path, ledger).unwrap();
    format!("gsm8k-canary/{name}")
}
/// The peak RSS in KB of `status TARGET --json` (by `/usr/bin/time`), and its rows.
fn status_rss(sandbox: &Sandbox, target: &str) -> (f64, serde_json::Value) {
    let rss = sandbox.root().join("rss");
    let rlctl = sandbox.rlctl();
    let mut timed = std::process::Command::new("/usr/bin/time");
    timed
        .args(["-f", "%M", "-o"])
        .arg(&rss)
        .arg(rlctl.get_program());
    for (k, v) in rlctl.get_envs() {
        match v {
            Some(v) => timed.env(k, v),
            None => timed.env_remove(k),
        };
    }
    let out = ok(timed.args(["status", target, "--json"]));
    let kb = (std::fs::read_to_string(&rss).unwrap().lines())
        .filter_map(|l| l.trim().parse().ok())
        .next_back()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    (kb, doc["runs"].clone())
}

#[test]
fn status_of_a_run_of_thousands_of_jobs_holds_little_per_job() {
    let sandbox = Sandbox::new();
    // Every job ended and none is in the queue but the last: the run is read, not sealed.
    for name in ["short", "long"] {
        ok(sandbox
            .rlctl()
            .args(["launch", "gsm8k-canary", "--job-name", name]));
    }
    let short = long_run(&sandbox, "short", 20_000_000, 300);
    let long = long_run(&sandbox, "long", 30_000_000, 3_000);
    sandbox.queue("30002999|long|RUNNING\n20000299|short|RUNNING\n");
    sandbox.sacct("");
    let (small, rows) = status_rss(&sandbox, &short);
    assert_eq!(rows[0]["step"], 600, "{rows}");
    let (big, rows) = status_rss(&sandbox, &long);
    assert_eq!(rows[0]["step"], 6_000, "{rows}");
    assert_eq!(rows[0]["attempt"], 3_001, "{rows}");
    // A job's record and its log's place cost about a kilobyte; its knobs (kilobytes) are the
    // run's once and its steps are not held. It was 13 KB a job.
    let per_job = (big - small) / 2_700.0;
    assert!(
        per_job < 4.0,
        "{per_job:.1} KB per job ({small} KB, then {big} KB)"
    );
}

#[test]
fn a_200_kb_toml_line_is_said_as_an_excerpt_around_its_error() {
    let sandbox = Sandbox::new();
    let long = format!("description = \"{}\" oops\n", "x".repeat(200_000));
    let runs = sandbox.presets().join("runs");
    std::fs::create_dir_all(&runs).unwrap();
    std::fs::write(runs.join("pasted.toml"), format!("[job]\n{long}")).unwrap();
    let profile = sandbox.presets().join("clusters/test.toml");
    let good = std::fs::read_to_string(&profile).unwrap();
    for (file, args) in [
        (runs.join("pasted.toml"), ["launch", "pasted", "--dry-run"]),
        (profile.clone(), ["launch", "gsm8k-canary", "--dry-run"]),
    ] {
        if file == profile {
            std::fs::write(&profile, format!("{long}{good}")).unwrap();
        }
        let out = sandbox.rlctl().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        let said = crate::common::stderr(&out);
        assert!(said.len() < 2_000, "{} bytes said", said.len());
        let line = if file == profile { 1 } else { 2 };
        for words in [
            file.to_str().unwrap().to_owned(),
            format!("TOML parse error at line {line}, column 200018"),
            format!("{line} | …{}\" oops\n", "x".repeat(58)),
            format!("(line {line} is 200021 bytes: 199957 before and 0 after this excerpt"),
            "expected newline".to_owned(),
        ] {
            assert!(said.contains(&words), "{words:?} not in:\n{said}");
        }
    }
}

/// A STAND-IN for W&B's CLI (`wandb sync DIR`), which would upload: it records each call's
/// folder (a line, escaped by `printf %q`) in $WANDB_CALLS, takes $WANDB_STANDIN_SECONDS (0
/// unless set) as a slow W&B server would, and fails for a folder whose name holds `fail`.
const WANDB_STANDIN: &str = r#"#!/bin/bash
# STAND-IN for wandb's CLI, for rlctl's tests: uploads nothing.
dir="${*: -1}"
printf '%q\n' "$dir" >> "$WANDB_CALLS"
sleep "${WANDB_STANDIN_SECONDS:-0}"
if [[ "$dir" == *fail* ]]; then
  echo "wandb: ERROR could not reach api.wandb.ai" >&2
  exit 1
fi
"#;

/// An offline W&B run named `name` of the run whose checkpoint folder is `folder`, as W&B writes
/// one under `WANDB_DIR`, with something logged.
fn offline_run(folder: &std::path::Path, name: &str) -> PathBuf {
    let dir = folder.join("wandb/wandb").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("run-x.wandb"), b"logged").unwrap();
    dir
}

#[test]
fn a_folder_named_with_a_newline_is_one_escaped_line_of_tends_summary() {
    let sandbox = Sandbox::new();
    let root = sandbox.root();
    crate::common::write_exec(&root.join("bin/wandb"), WANDB_STANDIN);
    for name in ["canary", "crashed"] {
        ok(sandbox
            .rlctl()
            .args(["launch", "gsm8k-canary", "--job-name", name]));
    }
    let forged = "wandb sync: 9 synced, 0 unchanged, 0 failed";
    let canary = root.join("work/checkpoints/gsm8k-canary/canary");
    let dir = offline_run(
        &canary,
        &format!("offline-run-20260101_100000-fail\n{forged}"),
    );
    // The crashed job's last error line carries a carriage return, a colour code and a bell.
    let logs: Vec<PathBuf> = (records(&sandbox).iter())
        .map(|r| PathBuf::from(r["log"].as_str().unwrap()))
        .collect();
    std::fs::write(
        &logs[1],
        "RuntimeError: boom\r\x1b[2K\x07gsm8k-canary/canary job 1001: COMPLETED\n",
    )
    .unwrap();
    sandbox.sacct("1001|COMPLETED|0:0\n1002|FAILED|1:0");
    let out = sandbox
        .rlctl()
        .args(["tend", "--sync-wandb"])
        .env("WANDB_CALLS", root.join("wandb-calls"))
        .output()
        .unwrap();
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    // One line per run and per sync, every control character shown as its escape.
    let shown = dir.to_str().unwrap().replace('\n', "\\n");
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines.contains(
            &format!(
                "wandb sync: gsm8k-canary/canary: {shown}: `wandb sync` failed (exit status: 1) \
             wandb: ERROR could not reach api.wandb.ai"
            )
            .as_str()
        ),
        "{text}"
    );
    let crashed = (lines.iter())
        .find(|l| l.starts_with("gsm8k-canary/crashed job 1002: FAILED"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        // Colour codes are dropped from an error line; what is left is shown escaped.
        crashed.contains("RuntimeError: boom\\r\\u{7}gsm8k-canary/canary job 1001: COMPLETED"),
        "{crashed}"
    );
    assert!(!text.contains(['\r', '\x1b', '\x07']), "{text:?}");
    assert!(!lines.contains(&forged), "{text}");
    assert_eq!(
        (lines.iter())
            .filter(|l| l.starts_with("wandb sync: "))
            .count(),
        2,
        "{text}"
    );
}

#[test]
fn a_wipe_through_a_link_into_a_folder_no_record_of_the_run_names_is_refused() {
    let sandbox = Sandbox::new();
    let root = sandbox.root().join("work/checkpoints");
    // Another preset's checkpoints, which no ledger record names (its ledger is elsewhere, or
    // it was run by hand), and a folder outside the checkpoint root.
    let theirs = root.join("math-longcot/math-longcot");
    let outside = sandbox.root().join("scratch/kept");
    for folder in [&theirs, &outside] {
        std::fs::create_dir_all(folder.join("ckpt/global_step_5")).unwrap();
    }
    let preset = root.join("gsm8k-canary");
    std::fs::create_dir_all(&preset).unwrap();
    for (name, target, whose) in [
        (
            "mine",
            &theirs,
            "it is `math-longcot/math-longcot/ckpt` under the checkpoint root, the folder of \
             another preset, grid or run"
                .to_owned(),
        ),
        (
            "kept",
            &outside,
            format!("it is outside the checkpoint root `{}`", root.display()),
        ),
    ] {
        let link = preset.join(name);
        std::os::unix::fs::symlink(target, &link).unwrap();
        let out = sandbox
            .rlctl()
            .args(["launch", "gsm8k-canary", "--job-name", name, "--wipe"])
            .output()
            .unwrap();
        let said = crate::common::stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{said}");
        let wanted = format!(
            "[resume] --wipe would delete the checkpoints in `{}`, which `{}` reaches through the \
             link `{}`: no job of gsm8k-canary/{name} wrote there ({whose}); point the link at \
             this run's own folder or remove it (`rm {}`), or launch without --wipe",
            target.join("ckpt").display(),
            link.join("ckpt").display(),
            link.display(),
            link.display(),
        );
        assert!(said.contains(&wanted), "{wanted}\nnot in:\n{said}");
        assert!(target.join("ckpt/global_step_5").is_dir());
    }
    assert_eq!(sandbox.sbatch_calls(), 0);
    // The run's own folder, with no link on the way, is wiped as asked.
    std::fs::create_dir_all(preset.join("own/ckpt/global_step_5")).unwrap();
    ok(sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--job-name", "own", "--wipe"]));
    assert_eq!(sandbox.sbatch_calls(), 1);
}

#[test]
fn tend_with_a_slow_wandb_ends_within_a_login_nodes_100_s_and_names_the_runs_left() {
    let sandbox = Sandbox::new();
    let root = sandbox.root();
    crate::common::write_exec(&root.join("bin/wandb"), WANDB_STANDIN);
    for name in ["a", "b", "c"] {
        ok(sandbox
            .rlctl()
            .args(["launch", "gsm8k-canary", "--job-name", name]));
        let folder = root.join("work/checkpoints/gsm8k-canary").join(name);
        offline_run(&folder, "offline-run-20260101_100000-abcd");
    }
    sandbox.sacct("1001|COMPLETED|0:0\n1002|COMPLETED|0:0\n1003|COMPLETED|0:0");
    // A W&B that takes 40 s an upload: three would take 120 s, and Leonardo's login node kills
    // a process after about 100 s, before it says anything.
    let started = std::time::Instant::now();
    let out = sandbox
        .rlctl()
        .args(["tend", "--sync-wandb"])
        .env("WANDB_CALLS", root.join("wandb-calls"))
        .env("WANDB_STANDIN_SECONDS", "40")
        .output()
        .unwrap();
    let took = started.elapsed();
    let text = stdout(&out);
    assert!(
        took < std::time::Duration::from_secs(90),
        "{took:?}\n{text}"
    );
    // Cut short by the pass's budget is no failure: the next pass goes on from there.
    assert!(
        out.status.success(),
        "{text}{}",
        crate::common::stderr(&out)
    );
    assert!(
        text.contains(
            "wandb sync: 1 synced, 0 unchanged, 0 failed, 2 left for the next pass (its 60 s \
             budget, --wandb-budget, spent): gsm8k-canary/b, gsm8k-canary/c\n"
        ),
        "{text}"
    );
}
