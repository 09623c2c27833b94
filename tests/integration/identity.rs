//! A run is identified by its resolved checkpoint folder: at most one live job per folder,
//! whatever the job names, symlinks followed (dangling ones too); and every command that takes
//! a run acts on all its jobs (chain links, several job names of one preset).

use crate::common::{Sandbox, fails, lines_of, ok, stderr, stdout, write_exec};
use std::path::Path;

fn queue(sandbox: &Sandbox, lines: &str) {
    std::fs::write(sandbox.root().join("sbatch-calls/queue"), lines).unwrap();
}

/// A stand-in scancel first on PATH: records its argv, one call per line.
fn fake_scancel(sandbox: &Sandbox) {
    write_exec(
        &sandbox.root().join("bin/scancel"),
        "#!/bin/bash\necho \"$*\" >> \"$FAKE_SBATCH_DIR/scancel\"\n",
    );
}

fn scancel_calls(sandbox: &Sandbox) -> Vec<String> {
    lines_of(&sandbox.root().join("sbatch-calls/scancel"))
}

fn root(sandbox: &Sandbox) -> String {
    sandbox.root().display().to_string()
}

#[test]
fn a_second_job_name_on_a_live_cells_folder_is_refused() {
    let sandbox = Sandbox::new();
    ok(sandbox.rlctl().args(["grid", "tbs128"]));
    queue(&sandbox, "1001|gsm8k-throughput.tbs128|RUNNING\n");
    let err = fails(
        sandbox
            .rlctl()
            .args(["grid", "tbs128", "--job-name", "retry"]),
    );
    assert_eq!(
        err.replace(&root(&sandbox), "[ROOT]"),
        "rlctl: error: gsm8k-throughput/tbs128 is already queued as job 1001 (RUNNING) under the job name \
         `gsm8k-throughput.tbs128`, and a second job would write to its checkpoint folder: wait for it, \
         `scancel 1001`, or run it as a new cell with --as NEW_CELL\n"
    );
    assert_eq!(sandbox.sbatch_calls(), 1);
}

#[test]
fn a_symlinked_folder_is_the_folder_it_points_to() {
    let sandbox = Sandbox::new();
    let grid = sandbox.root().join("work/checkpoints/gsm8k-throughput");
    std::fs::create_dir_all(grid.join("tbs128")).unwrap();
    std::os::unix::fs::symlink(grid.join("tbs128"), grid.join("tbs64")).unwrap();
    ok(sandbox.rlctl().args(["grid", "tbs128"]));
    queue(&sandbox, "1001|gsm8k-throughput.tbs128|PENDING\n");
    let err = fails(sandbox.rlctl().args(["grid", "tbs64"]));
    assert!(
        err.contains(&format!(
            "gsm8k-throughput/tbs64: its checkpoint folder resolves to `{}`, which job 1001 (PENDING) of \
             gsm8k-throughput/tbs128 uses",
            grid.join("tbs128").display()
        )),
        "{err}"
    );
    // A grid skips the cell and chains on the job that holds its folder.
    let out = stdout(&ok(sandbox.rlctl().args([
        "grid",
        "--all",
        "gsm8k-throughput",
    ])));
    assert!(
        out.contains(
            "gsm8k-throughput/tbs64: its checkpoint folder is in use by job 1001 (PENDING) of \
             gsm8k-throughput/tbs128; skipped\n"
        ),
        "{out}"
    );
    assert_eq!(
        sandbox.sbatch_calls(),
        17,
        "tbs128 is recorded, tbs64 shares it"
    );
}

#[test]
fn a_dangling_link_to_scratch_fails_the_write_path_check() {
    let sandbox = Sandbox::new();
    let preset = sandbox.root().join("work/checkpoints/gsm8k-canary");
    std::fs::create_dir_all(&preset).unwrap();
    std::os::unix::fs::symlink(
        sandbox.root().join("scratch/not-there"),
        preset.join("gsm8k-canary"),
    )
    .unwrap();
    let err = fails(
        sandbox
            .rlctl()
            .args(["launch", "gsm8k-canary", "--dry-run"]),
    );
    assert!(
        err.contains(&format!(
            "resolves to `{}/scratch/not-there/ckpt`, which is on scratch",
            root(&sandbox)
        )),
        "{err}"
    );
    assert_eq!(sandbox.sbatch_calls(), 0);
}

#[test]
fn the_wipe_note_names_the_resolved_folder() {
    let sandbox = Sandbox::new();
    let other = sandbox.root().join("work/checkpoints/elsewhere/ckpt");
    std::fs::create_dir_all(&other).unwrap();
    let preset = sandbox.root().join("work/checkpoints/gsm8k-canary");
    std::fs::create_dir_all(&preset).unwrap();
    std::os::unix::fs::symlink(other.parent().unwrap(), preset.join("gsm8k-canary")).unwrap();
    // The run's own folder, on purpose elsewhere: its first job wrote there.
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    std::fs::create_dir_all(other.join("global_step_5")).unwrap();
    let output = ok(sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--wipe", "--dry-run"]));
    assert!(
        stderr(&output).replace(&root(&sandbox), "[ROOT]").contains(
            "--wipe: the job will delete global_step_5 (and latest_ckpt_global_step.txt) in \
             `[ROOT]/work/checkpoints/elsewhere/ckpt` (reached through \
             `[ROOT]/work/checkpoints/gsm8k-canary/gsm8k-canary/ckpt`) before it starts"
        ),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_preset_and_a_grid_of_one_name_are_refused_at_load() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.presets().join("grids")).unwrap();
    std::fs::write(
        sandbox.presets().join("grids/gsm8k-canary.toml"),
        "description = \"a grid named like a preset\"\nbase = \"gsm8k-canary\"\n\n[[cells]]\nname = \"retry\"\n\
         description = \"x\"\n",
    )
    .unwrap();
    let err = fails(sandbox.rlctl().arg("list"));
    assert!(
        err.contains(
            "`gsm8k-canary` names both a run preset (presets/runs/gsm8k-canary.toml (embedded)) and a grid: their \
             runs and cells would share the folders `<checkpoint_root>/gsm8k-canary/...`"
        ),
        "{err}"
    );
}

#[test]
fn two_job_names_of_one_preset_are_two_runs() {
    let sandbox = Sandbox::new();
    fake_scancel(&sandbox);
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    let out = stdout(&ok(sandbox.rlctl().args([
        "launch",
        "gsm8k-canary",
        "--job-name",
        "canary-b",
    ])));
    assert!(
        out.starts_with("gsm8k-canary/canary-b: job 1002\n"),
        "{out}"
    );
    queue(
        &sandbox,
        "1001|gsm8k-canary|RUNNING\n1002|canary-b|RUNNING\n",
    );
    let status = stdout(&ok(sandbox.rlctl().arg("status")));
    assert!(status.contains("\ngsm8k-canary "), "{status}");
    assert!(status.contains("\ngsm8k-canary/canary-b "), "{status}");
    for name in ["canary-b", "gsm8k-canary/canary-b"] {
        let one = stdout(&ok(sandbox.rlctl().args(["status", name])));
        assert_eq!(one.lines().count(), 3, "a row and the totals: {one}");
        assert!(one.contains("1002"), "{one}");
    }
    ok(sandbox.rlctl().args(["cancel", "canary-b"]));
    assert_eq!(scancel_calls(&sandbox), ["1002"]);
    // The preset's name is both its runs.
    ok(sandbox.rlctl().args(["cancel", "gsm8k-canary", "--yes"]));
    assert_eq!(scancel_calls(&sandbox)[1], "1001 1002");
}

#[test]
fn a_chain_is_one_run_for_status_cancel_and_clean() {
    let sandbox = Sandbox::new();
    fake_scancel(&sandbox);
    ok(sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--chain", "3"])
        .args(["--", "trainer.ckpt_interval=20"]));
    queue(
        &sandbox,
        "1001|gsm8k-canary|RUNNING\n1002|gsm8k-canary|PENDING\n1003|gsm8k-canary|PENDING\n",
    );
    let status = stdout(&ok(sandbox.rlctl().arg("status")));
    assert_eq!(
        status.lines().count(),
        3,
        "one row per run, and the totals:\n{status}"
    );
    assert!(status.contains("1001"), "{status}");
    assert!(status.contains("RUNNING link 1/3"), "{status}");
    let json = stdout(&ok(sandbox.rlctl().args(["status", "--json"])));
    assert!(json.contains("\"link\": \"1/3\""), "{json}");

    // Only the last link is left: clean keeps the folder it will resume from.
    let ckpt = sandbox
        .root()
        .join("work/checkpoints/gsm8k-canary/gsm8k-canary");
    std::fs::create_dir_all(ckpt.join("ckpt/global_step_5")).unwrap();
    queue(&sandbox, "1003|gsm8k-canary|PENDING\n");
    let clean = stdout(&ok(sandbox.rlctl().args([
        "clean",
        "gsm8k-canary",
        "--yes",
    ])));
    assert!(
        clean.contains("gsm8k-canary: job 1003 is still queued or running; its folder stays"),
        "{clean}"
    );
    assert!(ckpt.join("ckpt/global_step_5").is_dir());
    let status = stdout(&ok(sandbox.rlctl().arg("status")));
    assert!(status.contains("PENDING link 3/3"), "{status}");

    queue(
        &sandbox,
        "1001|gsm8k-canary|RUNNING\n1002|gsm8k-canary|PENDING\n1003|gsm8k-canary|PENDING\n",
    );
    let out = stdout(&ok(sandbox.rlctl().args(["cancel", "gsm8k-canary"])));
    assert_eq!(scancel_calls(&sandbox), ["1001 1002 1003"], "{out}");
}

#[test]
fn clean_keeps_a_folder_another_runs_live_job_uses() {
    let sandbox = Sandbox::new();
    ok(sandbox.rlctl().args(["grid", "tbs128"]));
    ok(sandbox.rlctl().args(["grid", "tbs64"]));
    let grid = sandbox.root().join("work/checkpoints/gsm8k-throughput");
    std::fs::create_dir_all(grid.join("tbs128/ckpt")).unwrap();
    std::fs::remove_dir_all(grid.join("tbs64")).ok();
    std::os::unix::fs::symlink(grid.join("tbs128"), grid.join("tbs64")).unwrap();
    queue(&sandbox, "1001|gsm8k-throughput.tbs128|RUNNING\n");
    let clean = stdout(&ok(sandbox.rlctl().args(["clean", "tbs64", "--yes"])));
    assert!(
        clean.contains(
            "gsm8k-throughput/tbs64: job 1001 of gsm8k-throughput/tbs128 is still queued or running"
        ),
        "{clean}"
    );
    assert!(grid.join("tbs128/ckpt").is_dir());
}

#[test]
fn two_launches_at_once_submit_one_job() {
    let sandbox = Sandbox::new();
    // sbatch that puts its job in the queue squeue reads, slowly, as a real controller would.
    let fake = sandbox.root().join("bin/sbatch");
    std::fs::rename(&fake, sandbox.root().join("bin/sbatch-real")).unwrap();
    write_exec(
        &fake,
        "#!/bin/bash\nsleep 0.5\nid=$(\"$(dirname \"$0\")/sbatch-real\" \"$@\") || exit 1\n\
         echo \"$id|gsm8k-canary|PENDING\" >> \"$FAKE_SBATCH_DIR/queue\"\necho \"$id\"\n",
    );
    let children: Vec<_> = (0..2)
        .map(|_| {
            sandbox
                .rlctl()
                .args(["launch", "gsm8k-canary"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outputs: Vec<_> = children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    let succeeded = outputs.iter().filter(|o| o.status.success()).count();
    assert_eq!(
        succeeded,
        1,
        "{:?}",
        outputs.iter().map(stderr).collect::<Vec<_>>()
    );
    assert_eq!(sandbox.sbatch_calls(), 1);
    let refused = outputs.iter().find(|o| !o.status.success()).unwrap();
    assert!(
        stderr(refused).contains("gsm8k-canary is already queued as job 1001 (PENDING)"),
        "{}",
        stderr(refused)
    );
    assert!(Path::new(&sandbox.root().join("work/runs/ledger.jsonl")).is_file());
}

#[test]
fn logs_of_a_chain_read_the_running_link() {
    let sandbox = Sandbox::new();
    ok(sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--chain", "2"])
        .args(["--", "trainer.ckpt_interval=20"]));
    queue(
        &sandbox,
        "1001|gsm8k-canary|RUNNING\n1002|gsm8k-canary|PENDING\n",
    );
    std::fs::write(
        sandbox
            .root()
            .join("work/runs/gsm8k-canary/gsm8k-canary/001/gsm8k-canary_1001.out"),
        "link one at work\n",
    )
    .unwrap();
    let out = stdout(&ok(sandbox.rlctl().args(["logs", "gsm8k-canary"])));
    assert_eq!(out, "link one at work\n");
}

#[test]
fn one_job_name_on_two_folders_is_two_runs() {
    let sandbox = Sandbox::new();
    ok(sandbox
        .rlctl()
        .args(["grid", "tbs128", "--job-name", "retry"]));
    queue(&sandbox, "1001|retry|RUNNING\n");
    let out = stdout(&ok(sandbox.rlctl().args([
        "launch",
        "gsm8k-canary",
        "--job-name",
        "retry",
    ])));
    assert!(out.starts_with("gsm8k-canary/retry: job 1002\n"), "{out}");
}

#[test]
fn clean_asks_again_after_the_answer_and_keeps_a_folder_queued_meanwhile() {
    let sandbox = Sandbox::new();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    let ckpt = sandbox
        .root()
        .join("work/checkpoints/gsm8k-canary/gsm8k-canary/ckpt");
    std::fs::create_dir_all(ckpt.join("global_step_5")).unwrap();
    // The first look at the queue finds nothing; by the second, cron's `tend` has queued the
    // run's next attempt (job 1001's folder, under another id the ledger knows).
    let calls = sandbox.root().join("squeue-calls");
    write_exec(
        &sandbox.root().join("bin/squeue"),
        &format!(
            "#!/bin/bash\necho x >> {calls}\n[ \"$(wc -l < {calls})\" -gt 1 ] && echo '1001|gsm8k-canary|PENDING'\ntrue\n",
            calls = calls.display()
        ),
    );
    let clean = stdout(&ok(sandbox.rlctl().args([
        "clean",
        "gsm8k-canary",
        "--yes",
    ])));
    assert!(
        clean.contains("gsm8k-canary: job 1001 is still queued or running; its folder stays"),
        "{clean}"
    );
    assert!(!clean.contains("removed"), "{clean}");
    assert!(ckpt.join("global_step_5").is_dir());
    assert_eq!(lines_of(&calls).len(), 2);
}

#[test]
fn a_wipe_through_a_link_into_another_recorded_runs_folder_is_refused() {
    let sandbox = Sandbox::new();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    let preset = sandbox.root().join("work/checkpoints/gsm8k-canary");
    std::fs::create_dir_all(preset.join("gsm8k-canary/ckpt/global_step_5")).unwrap();
    std::os::unix::fs::symlink(preset.join("gsm8k-canary"), preset.join("other")).unwrap();
    let output = sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--job-name", "other", "--wipe"])
        .output()
        .unwrap();
    let text = stderr(&output).replace(&root(&sandbox), "[ROOT]");
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(
        text.contains(
            "[resume] --wipe would delete the checkpoints of gsm8k-canary (job 1001): \
             `[ROOT]/work/checkpoints/gsm8k-canary/other/ckpt` resolves to \
             `[ROOT]/work/checkpoints/gsm8k-canary/gsm8k-canary/ckpt`, which is that run's folder \
             `[ROOT]/work/checkpoints/gsm8k-canary/gsm8k-canary`; remove the link, or launch without --wipe"
        ),
        "{text}"
    );
    assert_eq!(sandbox.sbatch_calls(), 1);
    assert!(preset.join("gsm8k-canary/ckpt/global_step_5").is_dir());
}

#[test]
fn a_profile_whose_roots_nest_is_refused_when_it_loads() {
    for (runs, checkpoints) in [
        ("work/checkpoints/runs", "work/checkpoints"),
        ("work/runs", "work/runs/checkpoints"),
        ("work/same", "work/same"),
    ] {
        let sandbox = Sandbox::new();
        let profile = sandbox.presets().join("clusters/test.toml");
        let text = std::fs::read_to_string(&profile)
            .unwrap()
            .replace(
                "${ROOT}/work/checkpoints\"",
                &format!("${{ROOT}}/{checkpoints}\""),
            )
            .replace("${ROOT}/work/runs\"", &format!("${{ROOT}}/{runs}\""));
        std::fs::write(&profile, text).unwrap();
        let output = sandbox
            .rlctl()
            .args(["launch", "gsm8k-canary", "--dry-run"])
            .output()
            .unwrap();
        let text = stderr(&output).replace(&root(&sandbox), "[ROOT]");
        assert_eq!(output.status.code(), Some(2), "{text}");
        assert!(
            text.contains(&format!(
                "storage.checkpoint_root = `[ROOT]/{checkpoints}` and storage.run_root = `[ROOT]/{runs}` nest"
            )) && text.contains("give them sibling folders"),
            "{text}"
        );
    }
}

#[test]
fn render_out_onto_a_recorded_run_folder_is_refused() {
    let sandbox = Sandbox::new();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    let run_dir = sandbox
        .root()
        .join("work/runs/gsm8k-canary/gsm8k-canary/001");
    let before = std::fs::read_to_string(run_dir.join("run.sh")).unwrap();
    let output = sandbox
        .rlctl()
        .args(["render", "gsm8k-canary", "--out"])
        .arg(&run_dir)
        .args(["--", "trainer.epochs=3"])
        .output()
        .unwrap();
    let text = stderr(&output).replace(&root(&sandbox), "[ROOT]");
    assert_eq!(output.status.code(), Some(2), "{text}");
    assert!(
        text.contains(
            "is the run folder of job 1001 of gsm8k-canary, whose job reads its scripts from there; \
             render into another folder"
        ),
        "{text}"
    );
    assert_eq!(
        std::fs::read_to_string(run_dir.join("run.sh")).unwrap(),
        before
    );
}

#[test]
fn an_empty_squeue_answer_is_checked_against_accounting_before_a_submission() {
    let sandbox = Sandbox::new();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    // squeue lists nothing (a controller that lost its state, a wrapper that swallowed the
    // answer), while accounting says the job runs: nothing is submitted beside it.
    sandbox.sacct("1001|RUNNING|0:0");
    let err = fails(
        sandbox
            .rlctl()
            .args(["launch", "gsm8k-canary", "--resume", "latest"]),
    );
    assert!(
        err.contains("1001") && err.contains("RUNNING by accounting, though squeue listed no job"),
        "{err}"
    );
    assert_eq!(sandbox.sbatch_calls(), 1);
    // Accounting says it ended: squeue's empty answer was the truth, and the launch goes on.
    sandbox.sacct("1001|COMPLETED|0:0");
    ok(sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--resume", "latest"]));
    assert_eq!(sandbox.sbatch_calls(), 2);
}
