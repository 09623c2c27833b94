//! No queued job without a record: rlctl killed between sbatch and its record leaves an intent
//! that the next command records; a ledger that cannot be appended to is refused before sbatch;
//! a command waiting on the run root's lock says whose, and gives up with exit 2.

use crate::common::{Sandbox, ok, stderr, stdout, write_exec};

/// A fake sbatch that queues its job as a controller would (its script as squeue's `%o`), and
/// then kills its parent rlctl outright, before rlctl can write the job's record.
fn killing_sbatch(sandbox: &Sandbox) {
    let fake = sandbox.root().join("bin/sbatch");
    std::fs::rename(&fake, sandbox.root().join("bin/sbatch-real")).unwrap();
    write_exec(
        &fake,
        "#!/bin/bash\nscript=\"${*: -1}\"\n\
         name=$(sed -n 's/^#SBATCH --job-name=//p' \"$script\")\n\
         id=$(\"$(dirname \"$0\")/sbatch-real\" \"$@\") || exit 1\n\
         echo \"$id|$name|PENDING|boost_qos_dbg||$script\" >> \"$FAKE_SBATCH_DIR/queue\"\n\
         kill -9 $PPID\necho \"$id\"\n",
    );
}

#[test]
fn a_job_queued_by_a_killed_launch_is_recorded_by_the_next_command_and_tended() {
    let sandbox = Sandbox::new();
    killing_sbatch(&sandbox);
    let out = sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        None,
        "rlctl was killed: {}",
        stderr(&out)
    );
    let ledger = sandbox.root().join("work/runs/ledger.jsonl");
    assert!(
        std::fs::read_to_string(&ledger)
            .unwrap_or_default()
            .is_empty()
    );
    let intents = sandbox.root().join("work/runs/.intents");
    assert_eq!(std::fs::read_dir(&intents).unwrap().count(), 1);

    let out = ok(sandbox.rlctl().arg("status"));
    assert!(
        stderr(&out).contains("job 1001 of gsm8k-canary was queued without a record"),
        "{}",
        stderr(&out)
    );
    assert!(stdout(&out).contains("1001"), "{}", stdout(&out));
    let text = std::fs::read_to_string(&ledger).unwrap();
    let record: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(record["job_id"], "1001");
    assert!(
        record["log"].as_str().unwrap().ends_with("_1001.out"),
        "{record}"
    );
    assert_eq!(std::fs::read_dir(&intents).unwrap().count(), 0);
    let run_dir = record["run_dir"].as_str().unwrap();
    assert!(
        std::path::Path::new(run_dir)
            .join("submission.toml")
            .is_file()
    );

    // Recorded once: the next command finds nothing to reconcile, and tend tends the job.
    sandbox.queue("");
    sandbox.sacct("1001|FAILED|1:0|60|node=1");
    let out = sandbox.rlctl().arg("tend").output().unwrap();
    assert!(stdout(&out).contains("1001"), "{}", stdout(&out));
    assert!(
        !stderr(&out).contains("without a record"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read_to_string(&ledger).unwrap().lines().count(), 1);
}

/// `cmd` (an rlctl of the sandbox) as a user whom file permissions stop: the tests may run as
/// root, so root runs it without the capabilities that override them.
fn without_override(cmd: &std::process::Command) -> std::process::Command {
    let mut as_user = std::process::Command::new("setpriv");
    as_user.args(["--bounding-set=-dac_override,-dac_read_search", "--"]);
    as_user.arg(cmd.get_program());
    for (key, value) in cmd.get_envs() {
        match value {
            Some(value) => as_user.env(key, value),
            None => as_user.env_remove(key),
        };
    }
    as_user
}

#[test]
fn a_ledger_that_cannot_be_appended_to_is_refused_before_sbatch() {
    let sandbox = Sandbox::new();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    // Another user's ledger on a shared run root: readable, not writable.
    let ledger = sandbox.root().join("work/runs/ledger.jsonl");
    let before = std::fs::read_to_string(&ledger).unwrap();
    std::fs::set_permissions(&ledger, std::os::unix::fs::PermissionsExt::from_mode(0o444)).unwrap();
    let out = without_override(&sandbox.rlctl())
        .args(["launch", "gsm8k-canary", "--job-name", "other"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("`{}`", ledger.display())), "{err}");
    assert!(
        err.contains("cannot be appended to") && err.contains("chmod g+w"),
        "{err}"
    );
    assert_eq!(sandbox.sbatch_calls(), 1, "sbatch was called again");
    assert_eq!(std::fs::read_to_string(&ledger).unwrap(), before);
}

#[test]
fn a_command_waiting_on_the_lock_says_whose_and_gives_up_with_exit_2() {
    let sandbox = Sandbox::new();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    // A squeue that hangs for a while: the tend that asks it holds the run root's lock.
    let squeue = sandbox.root().join("bin/squeue");
    write_exec(&squeue, "#!/bin/bash\nsleep 8\n");
    let mut holder = (sandbox.rlctl().arg("tend"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let note = sandbox.root().join("work/runs/.turn-holder");
    let start = std::time::Instant::now();
    while !note.exists() && start.elapsed().as_secs() < 10 {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = (sandbox.rlctl().env("RLCTL_LOCK_WAIT_S", "3"))
        .arg("tend")
        .output()
        .unwrap();
    let _ = holder.wait();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let held = format!("held by pid {} (", holder.id());
    assert!(
        err.contains(&format!("waiting for the run root's lock {held}")),
        "{err}"
    );
    assert_eq!(err.matches("rlctl: waiting for").count(), 1, "{err}");
    assert!(
        err.contains("gave up after 3 s") && err.contains("work/runs"),
        "{err}"
    );
}

/// A stand-in sacct that logs its argv to `sbatch-calls/sacct` and, asked by job name (for the
/// `SubmitLine` field), prints `by_name`, or fails as a site without accounting does when
/// `by_name` is `None`; asked by job id, it answers nothing.
fn accounting(sandbox: &Sandbox, by_name: Option<&str>) {
    let answer = match by_name {
        Some(lines) => format!("printf '%s\\n' '{lines}'"),
        None => "echo 'sacct: error: Slurm accounting storage is disabled' >&2; exit 1".to_owned(),
    };
    write_exec(
        &sandbox.root().join("bin/sacct"),
        &format!(
            "#!/bin/bash\necho \"$*\" >> \"$FAKE_SBATCH_DIR/sacct\"\n\
             case \"$*\" in *SubmitLine*) {answer} ;; esac\n"
        ),
    );
}

/// A launch killed between sbatch and its record, whose job then left the queue: its intent,
/// made older than the 10 minutes a queued job needs to show, and its record's run folder.
fn ended_unrecorded(sandbox: &Sandbox) -> (std::path::PathBuf, String) {
    killing_sbatch(sandbox);
    let out = sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        None,
        "rlctl was killed: {}",
        stderr(&out)
    );
    sandbox.queue("");
    let intents = sandbox.root().join("work/runs/.intents");
    let path = std::fs::read_dir(&intents)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mut kept: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let written = kept["written_unix"].as_i64().unwrap();
    kept["written_unix"] = (written - 700).into();
    std::fs::write(&path, kept.to_string()).unwrap();
    let run_dir = kept["record"]["run_dir"].as_str().unwrap().to_owned();
    (path, run_dir)
}

fn ledger_lines(sandbox: &Sandbox) -> usize {
    std::fs::read_to_string(sandbox.root().join("work/runs/ledger.jsonl"))
        .unwrap_or_default()
        .lines()
        .count()
}

#[test]
fn a_job_that_ended_before_the_next_command_is_recorded_from_accounting() {
    let sandbox = Sandbox::new();
    let (intent, run_dir) = ended_unrecorded(&sandbox);
    // Accounting cannot tell: the intent is said and kept, nothing is recorded or dropped.
    accounting(&sandbox, None);
    let out = ok(sandbox.rlctl().arg("status"));
    assert!(
        stderr(&out).contains("accounting cannot tell whether it ran (")
            && stderr(&out).contains("accounting storage is disabled"),
        "{}",
        stderr(&out)
    );
    assert!(intent.is_file());
    assert_eq!(ledger_lines(&sandbox), 0);
    // Accounting saw the job of that run folder's sbatch.sh run and end: it is recorded.
    let line = format!("1001|gsm8k-canary|COMPLETED|sbatch --parsable {run_dir}/sbatch.sh");
    accounting(&sandbox, Some(&line));
    let out = ok(sandbox.rlctl().arg("status"));
    assert!(
        stderr(&out)
            .contains("job 1001 of gsm8k-canary ran and ended (COMPLETED) without a record"),
        "{}",
        stderr(&out)
    );
    assert!(!intent.exists());
    let text = std::fs::read_to_string(sandbox.root().join("work/runs/ledger.jsonl")).unwrap();
    let record: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(record["job_id"], "1001");
    // One sacct call by the job's name, asking for the submit line.
    let calls = std::fs::read_to_string(sandbox.root().join("sbatch-calls/sacct")).unwrap();
    let by_name: Vec<&str> = calls.lines().filter(|l| l.contains("SubmitLine")).collect();
    assert_eq!(by_name.len(), 2, "{calls}");
    assert!(by_name[1].contains("--name gsm8k-canary"), "{calls}");
}

#[test]
fn an_intent_accounting_holds_no_job_of_is_dropped_as_never_queued() {
    let sandbox = Sandbox::new();
    let (intent, _) = ended_unrecorded(&sandbox);
    // Another run's job of the same name, from another folder, is not this intent's.
    accounting(
        &sandbox,
        Some("999|gsm8k-canary|FAILED|sbatch --parsable /elsewhere/sbatch.sh"),
    );
    let out = ok(sandbox.rlctl().arg("status"));
    assert!(
        stderr(&out)
            .contains("neither the queue nor accounting holds a job of it: it was never queued"),
        "{}",
        stderr(&out)
    );
    assert!(!intent.exists());
    assert_eq!(ledger_lines(&sandbox), 0);
}
