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
