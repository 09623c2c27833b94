//! The hang watchdog: a running job whose log gains no train step for max(5 × its median
//! s/step, `[watch] stall_floor_s`) is stalled; `status` and `watch` say so (no ETA), and `tend`
//! cancels it and resumes the run as its next attempt, queued after the hung job has ended.
//! Start-up counts from the slot's first line; a slow run is judged by its own pace.

use crate::common::{Sandbox, lines_of, ok, stage_teachers, stdout};
use std::path::PathBuf;
use std::process::Output;
use std::time::{Duration, SystemTime};

/// A sandbox whose profile calls a job stalled after a minute without a step (or 5 of its
/// median steps, when longer), with the canary launched for 30 steps (job 1001), running.
fn running() -> Sandbox {
    let sandbox = Sandbox::new();
    watch_table(&sandbox, "stall_floor_s = 60");
    sandbox.scancel();
    ok(sandbox.rlctl().args([
        "launch",
        "gsm8k-canary",
        "--",
        "trainer.max_steps=30",
        "trainer.ckpt_interval=5",
    ]));
    sandbox.queue("1001|gsm8k-canary|RUNNING\n");
    sandbox
}

fn watch_table(sandbox: &Sandbox, body: &str) {
    let profile = sandbox.presets().join("clusters/test.toml");
    let text = std::fs::read_to_string(&profile).unwrap();
    std::fs::write(&profile, format!("{text}\n[watch]\n{body}\n")).unwrap();
}

fn log(sandbox: &Sandbox, job: &str, folder: &str) -> PathBuf {
    sandbox
        .root()
        .join("work/runs/gsm8k-canary/gsm8k-canary")
        .join(folder)
        .join(format!("gsm8k-canary_{job}.out"))
}

/// The wrapper's slot-start line of a slot that started `ago` before now.
fn slot_line(slot: u32, job: &str, ago: Duration) -> String {
    let at = SystemTime::now() - ago;
    let secs = at.duration_since(SystemTime::UNIX_EPOCH).unwrap().as_secs();
    let date = std::process::Command::new("date")
        .args(["-u", "-d", &format!("@{secs}"), "+%Y-%m-%dT%H:%M:%SZ"])
        .output()
        .unwrap();
    format!(
        "rlctl: slot {slot} of job {job} started {} on node1\n",
        String::from_utf8(date.stdout).unwrap().trim()
    )
}

/// Train steps `from..=to`, each taking `secs` seconds.
fn steps(from: u64, to: u64, secs: f64) -> String {
    (from..=to)
        .map(|n| {
            format!(
                "WANDB_MIRROR kind=train step={n} metrics={{\"timing/step\": {secs}, \"reward/avg_raw_reward\": 0.5, \"policy/policy_entropy\": 1.0}}\n"
            )
        })
        .collect()
}

/// Writes a fresh log (a new file: nothing cached of it) last written `quiet` ago.
fn write_log(path: &PathBuf, text: &str, quiet: Duration) {
    let _ = std::fs::remove_file(path);
    std::fs::write(path, text).unwrap();
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_modified(SystemTime::now() - quiet).unwrap();
}

/// A checkpoint of `step`, saved as SkyRL saves it.
fn save(sandbox: &Sandbox, step: u64) {
    let ckpt = sandbox
        .root()
        .join("work/checkpoints/gsm8k-canary/gsm8k-canary/ckpt");
    crate::common::save_whole(&ckpt, step);
}

fn status_json(sandbox: &Sandbox) -> serde_json::Value {
    let doc: serde_json::Value =
        serde_json::from_str(&stdout(&ok(sandbox.rlctl().args(["status", "--json"])))).unwrap();
    doc["runs"].clone()
}

fn tend(sandbox: &Sandbox) -> Output {
    sandbox.rlctl().arg("tend").output().unwrap()
}

fn ledger(sandbox: &Sandbox) -> Vec<serde_json::Value> {
    lines_of(&sandbox.root().join("work/runs/ledger.jsonl"))
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_hung_job_is_shown_stalled_and_tend_cancels_it_and_resumes_it_after_it_ends() {
    let sandbox = running();
    let text = slot_line(1, "1001", Duration::from_secs(3600)) + &steps(1, 6, 10.0);
    write_log(
        &log(&sandbox, "1001", "001"),
        &text,
        Duration::from_secs(1800),
    );
    save(&sandbox, 5);

    let table = stdout(&ok(sandbox.rlctl().arg("status")));
    let row = table.lines().nth(1).unwrap();
    assert!(
        // 30m00s and up: the log was written 30 minutes old, and a loaded machine takes
        // seconds to reach this status call.
        row.contains("RUNNING, stalled: no new step for 30m"),
        "{table}"
    );
    assert!(row.contains("(limit 1m00s)"), "{table}");
    let json = status_json(&sandbox);
    assert_eq!(json[0]["state"], "RUNNING", "{json}");
    assert!(
        json[0]["stall"]["quiet_s"].as_f64().unwrap() >= 1800.0,
        "{json}"
    );
    assert_eq!(json[0]["stall"]["limit_s"], 60.0, "{json}");
    assert!(
        json[0].get("eta_s").is_none(),
        "a hung job has no ETA: {json}"
    );

    let watched = sandbox
        .rlctl()
        .args(["watch", "gsm8k-canary", "--once"])
        .output()
        .unwrap();
    let frame = stdout(&watched);
    assert_eq!(watched.status.code(), Some(1), "{frame}");
    assert!(frame.contains("STALLED no new step for 30m0"), "{frame}");
    assert!(!frame.contains("ETA"), "{frame}");

    let out = tend(&sandbox);
    let said = stdout(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("gsm8k-canary job 1001: stalled, no new step for 30m0"),
        "{said}"
    );
    assert!(
        said.contains("(limit 1m00s): its log `"),
        "what was read is said: {said}"
    );
    assert!(
        said.contains(
            "gsm8k-canary_1001.out` shows step 6 last, counted from the latest step by the login node's clock; \
             cancelled, resumed as job 1002 (attempt 2, from step 5)"
        ),
        "{said}"
    );
    assert!(
        said.contains("tend: 1 runs, 1 resumed, 0 need a look"),
        "{said}"
    );
    assert_eq!(
        lines_of(&sandbox.root().join("sbatch-calls/scancel")),
        ["1001"]
    );
    assert!(
        sandbox
            .sbatch_argv(2)
            .contains(&"--dependency=afterany:1001".to_owned()),
        "{:?}",
        sandbox.sbatch_argv(2)
    );
    let records = ledger(&sandbox);
    assert_eq!(records.len(), 2);
    assert_eq!(records[1]["job_id"], "1002");
    assert_eq!(records[1]["attempt"], 2);
    assert_eq!(records[1]["resumed_from"], 5);
}

#[test]
fn a_job_in_its_start_up_is_not_stalled_until_the_floor_passes_from_its_slot_start() {
    let sandbox = running();
    let path = log(&sandbox, "1001", "001");
    // Slot 1 trained 6 steps long ago; slot 2 (a requeue) started 20 s ago and has no step yet.
    let old = slot_line(1, "1001", Duration::from_secs(7200)) + &steps(1, 6, 10.0);
    let starting = old.clone() + &slot_line(2, "1001", Duration::from_secs(20));
    write_log(&path, &starting, Duration::from_secs(1800));
    let json = status_json(&sandbox);
    assert!(json[0].get("stall").is_none(), "{json}");
    assert!(json[0]["eta_s"].as_f64().is_some(), "{json}");
    let out = tend(&sandbox);
    assert!(out.status.success(), "{}", stdout(&out));
    assert_eq!(sandbox.sbatch_calls(), 1, "{}", stdout(&out));
    assert!(lines_of(&sandbox.root().join("sbatch-calls/scancel")).is_empty());
    // The same slot, quiet past the floor since its start: now it is stalled.
    let hung = old + &slot_line(2, "1001", Duration::from_secs(600));
    write_log(&path, &hung, Duration::from_secs(600));
    let json = status_json(&sandbox);
    assert!(
        json[0]["stall"]["quiet_s"].as_f64().unwrap() >= 600.0,
        "{json}"
    );
}

#[test]
fn a_slow_run_is_judged_by_five_of_its_median_steps_not_the_floor() {
    let sandbox = running();
    let path = log(&sandbox, "1001", "001");
    // 300 s a step: the limit is 25 minutes, far above the 1-minute floor.
    let text = slot_line(1, "1001", Duration::from_secs(7200)) + &steps(1, 6, 300.0);
    write_log(&path, &text, Duration::from_secs(900));
    let json = status_json(&sandbox);
    assert!(json[0].get("stall").is_none(), "{json}");
    let out = tend(&sandbox);
    assert!(out.status.success(), "{}", stdout(&out));
    assert_eq!(sandbox.sbatch_calls(), 1);
    write_log(&path, &text, Duration::from_secs(1800));
    let json = status_json(&sandbox);
    assert_eq!(json[0]["stall"]["limit_s"], 1500.0, "{json}");
}

#[test]
fn a_stall_before_any_checkpoint_restarts_from_step_0_and_a_repeated_one_is_left_for_a_person() {
    let sandbox = running();
    let text = slot_line(1, "1001", Duration::from_secs(3600)) + &steps(1, 3, 10.0);
    write_log(
        &log(&sandbox, "1001", "001"),
        &text,
        Duration::from_secs(900),
    );
    let said = stdout(&ok(sandbox.rlctl().arg("tend")));
    assert!(
        said.contains("cancelled, resumed as job 1002 (attempt 2, from step 0)"),
        "{said}"
    );
    // Attempt 2 hangs again, having saved nothing: the hang is in the run, not the machine.
    sandbox.queue("1002|gsm8k-canary|RUNNING\n");
    write_log(
        &log(&sandbox, "1002", "002"),
        &text,
        Duration::from_secs(900),
    );
    let out = tend(&sandbox);
    let said = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("gsm8k-canary job 1002: stalled, no new step for 15m0"),
        "{said}"
    );
    assert!(
        said.contains("cancelled, not resubmitted: attempt 2 resumed from step 0 and hung again"),
        "{said}"
    );
    // It saved nothing: the advice offers no checkpoint, and is the run's own command.
    assert!(!said.contains("--resume latest"), "{said}");
    assert!(
        said.contains(
            "fix the cause, then start it again from step 0 with `rlctl launch gsm8k-canary -- \
             trainer.ckpt_interval=5 trainer.max_steps=30`"
        ),
        "{said}"
    );
    assert!(
        said.contains("tend: 1 runs, 0 resumed, 1 need a look"),
        "{said}"
    );
    assert_eq!(sandbox.sbatch_calls(), 2);
    assert_eq!(
        lines_of(&sandbox.root().join("sbatch-calls/scancel")),
        ["1001", "1002"]
    );
}

#[test]
fn a_bad_watch_table_is_refused_naming_the_fix() {
    for (body, says) in [
        (
            "stall_floor_s = 0",
            "watch.stall_floor_s = 0 would call every running job stalled",
        ),
        ("stall_floor = 60", "unknown field `stall_floor`"),
        ("stall_floor_s = \"10m\"", "stall_floor_s"),
    ] {
        let sandbox = Sandbox::new();
        watch_table(&sandbox, body);
        let out = sandbox.rlctl().arg("status").output().unwrap();
        let err = crate::common::stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{body}: {err}");
        assert!(err.contains(says), "{body}: {err}");
    }
}

#[test]
fn noise_after_the_last_step_does_not_hide_a_hang() {
    let sandbox = running();
    let path = log(&sandbox, "1001", "001");
    let text = slot_line(1, "1001", Duration::from_secs(3600)) + &steps(1, 6, 10.0);
    write_log(&path, &text, Duration::from_secs(1800));
    assert!(status_json(&sandbox)[0].get("stall").is_some());
    // Ray and NCCL keep writing while the trainer hangs: the log's time moves, its steps do not.
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    std::io::Write::write_all(&mut file, b"(raylet) heartbeat\nNCCL WARN timeout\n").unwrap();
    let json = status_json(&sandbox);
    assert!(
        json[0]["stall"]["quiet_s"].as_f64().unwrap() >= 1800.0,
        "{json}"
    );
}

/// A hung job whose QOS has no room for its next attempt (the hung job itself holds the last
/// slot) is cancelled and marked, never left hanging by a refused sbatch; once it has left the
/// queue, the next pass resumes the run from its checkpoint.
#[test]
fn a_hang_with_its_qos_full_is_cancelled_now_and_resumed_by_the_next_pass() {
    let sandbox = running();
    sandbox.debug_submit_limit(2);
    sandbox.queue("1001|gsm8k-canary|RUNNING|boost_qos_dbg\n900|other|PENDING|boost_qos_dbg\n");
    let text = slot_line(1, "1001", Duration::from_secs(3600)) + &steps(1, 6, 10.0);
    write_log(
        &log(&sandbox, "1001", "001"),
        &text,
        Duration::from_secs(1800),
    );
    save(&sandbox, 5);

    let out = tend(&sandbox);
    let said = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(
        said.contains("gsm8k-canary job 1001: stalled, no new step for 30m0")
            && said.contains(
                "; cancelled; QOS boost_qos_dbg has no room for its next attempt yet: a later pass resumes it \
                 from step 5"
            ),
        "{said}"
    );
    assert_eq!(
        sandbox.sbatch_calls(),
        1,
        "no sbatch past the QOS's limit: {said}"
    );
    assert_eq!(
        lines_of(&sandbox.root().join("sbatch-calls/scancel")),
        ["1001"]
    );

    // The hung job has gone (CANCELLED in accounting): the next pass resumes the run.
    sandbox.sacct("1001|CANCELLED by 0|0:0");
    let out = tend(&sandbox);
    let said = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(
        said.contains(
            "gsm8k-canary job 1001: STALLED; resumed as job 1002 (attempt 2, from step 5)"
        ),
        "{said}"
    );
    let records = ledger(&sandbox);
    assert_eq!(records[1]["attempt"], 2, "{records:?}");
    assert_eq!(records[1]["resumed_from"], 5, "{records:?}");

    // A job a person cancelled is theirs: never resumed.
    let sandbox = running();
    sandbox.queue("");
    sandbox.sacct("1001|CANCELLED by 0|0:0");
    save(&sandbox, 5);
    let said = stdout(&tend(&sandbox));
    assert!(!said.contains("resumed as job"), "{said}");
    assert_eq!(sandbox.sbatch_calls(), 1);
}

/// Sets the modification time of `path` to `ago` before now (a writer whose clock is behind).
fn backdate(path: &std::path::Path, ago: Duration) {
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_modified(SystemTime::now() - ago).unwrap();
}

/// The job's alive file, which its wrapper touches (see `plan::alive_file`).
fn alive(log: &std::path::Path) -> PathBuf {
    let name = log.file_name().unwrap().to_str().unwrap();
    log.with_file_name(format!(".{name}.alive"))
}

#[test]
fn a_node_clock_fifteen_minutes_behind_is_read_on_its_own_clock_and_nothing_is_cancelled() {
    let sandbox = running();
    let path = log(&sandbox, "1001", "001");
    // The node's clock is 15 minutes behind the login node's: the log it just wrote, and its
    // wrapper's alive file, both carry times 15 minutes old.
    let behind = Duration::from_secs(900);
    let text = slot_line(1, "1001", Duration::from_secs(1200)) + &steps(1, 6, 10.0);
    write_log(&path, &text, behind);
    std::fs::write(alive(&path), "").unwrap();
    backdate(&alive(&path), behind - Duration::from_secs(5));
    let json = status_json(&sandbox);
    assert!(json[0].get("stall").is_none(), "{json}");
    let out = tend(&sandbox);
    assert!(out.status.success(), "{}", stdout(&out));
    assert!(
        lines_of(&sandbox.root().join("sbatch-calls/scancel")).is_empty(),
        "{}",
        stdout(&out)
    );
    assert_eq!(sandbox.sbatch_calls(), 1);
    // The wrapper goes on touching its file (still 15 minutes behind) and the trainer writes
    // nothing more: quiet past the floor on the node's own clock, it is a hang.
    backdate(&alive(&path), behind - Duration::from_secs(120));
    let json = status_json(&sandbox);
    assert!(
        json[0]["stall"]["quiet_s"].as_f64().unwrap() >= 115.0,
        "{json}"
    );
    assert_eq!(json[0]["stall"]["clock"], "node", "{json}");
    let said = stdout(&ok(sandbox.rlctl().arg("tend")));
    assert!(
        said.contains("counted from the latest step by the compute node's clock (its alive file)"),
        "{said}"
    );
    // Without the alive file (an older wrapper), the login node's clock is all there is: the
    // same log reads as quiet for 15 minutes. This is what the file prevents.
    let fresh = running();
    let path = log(&fresh, "1001", "001");
    write_log(&path, &text, behind);
    assert!(
        status_json(&fresh)[0]["stall"]["quiet_s"].as_f64().unwrap() >= 900.0,
        "login clock"
    );
}

#[test]
fn opd_in_its_first_forty_minutes_is_starting_up_and_a_start_up_past_its_allowance_is_a_hang() {
    let sandbox = Sandbox::new();
    watch_table(&sandbox, "stall_floor_s = 600");
    stage_teachers(sandbox.root());
    sandbox.scancel();
    ok(sandbox.rlctl().args(["launch", "opd-qwen3"]));
    sandbox.queue("1001|opd-qwen3|RUNNING\n");
    let record = &ledger(&sandbox)[0];
    assert_eq!(record["expected_s_per_step"], 832.0, "{record}");
    assert_eq!(record["nodes"], 2, "{record}");
    let path = sandbox
        .root()
        .join("work/runs/opd-qwen3/opd-qwen3/001/opd-qwen3_1001.out");
    // 40 minutes of start-up and a first 832 s step not done yet: no hang.
    let starting = slot_line(1, "1001", Duration::from_secs(40 * 60));
    write_log(&path, &starting, Duration::from_secs(60));
    let json = status_json(&sandbox);
    assert!(json[0].get("stall").is_none(), "{json}");
    let out = tend(&sandbox);
    assert!(out.status.success(), "{}", stdout(&out));
    assert!(lines_of(&sandbox.root().join("sbatch-calls/scancel")).is_empty());
    // Two hours without a first step is past start-up (2 x startup_s x sqrt(2 nodes)) and five
    // expected steps.
    let hung = slot_line(1, "1001", Duration::from_secs(2 * 3600));
    write_log(&path, &hung, Duration::from_secs(60));
    let json = status_json(&sandbox);
    let limit = json[0]["stall"]["limit_s"].as_f64().unwrap();
    assert!(limit > 5.0 * 832.0 && limit < 2.0 * 3600.0, "{json}");
    assert_eq!(json[0]["stall"]["since"], "the slot's start", "{json}");
}

#[test]
fn a_job_whose_trainer_is_not_known_to_print_steps_is_progress_unknown_and_never_cancelled() {
    let sandbox = running();
    // A record of an older rlctl: nothing says the trainer prints a step line rlctl reads.
    let ledger_path = sandbox.root().join("work/runs/ledger.jsonl");
    let text = std::fs::read_to_string(&ledger_path).unwrap();
    std::fs::write(&ledger_path, text.replace(",\"prints_steps\":true", "")).unwrap();
    let path = log(&sandbox, "1001", "001");
    let quiet = slot_line(1, "1001", Duration::from_secs(3 * 3600)) + "vLLM noise\n";
    write_log(&path, &quiet, Duration::from_secs(3600));
    let json = status_json(&sandbox);
    assert!(json[0].get("stall").is_none(), "{json}");
    assert_eq!(json[0]["progress_unknown"], true, "{json}");
    let table = stdout(&ok(sandbox.rlctl().arg("status")));
    assert!(
        table.contains("progress unknown: no step in a form rlctl reads yet"),
        "{table}"
    );
    let out = tend(&sandbox);
    assert!(out.status.success(), "{}", stdout(&out));
    assert!(lines_of(&sandbox.root().join("sbatch-calls/scancel")).is_empty());
    assert_eq!(sandbox.sbatch_calls(), 1);
}
