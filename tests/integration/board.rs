//! A table of several runs: `status` with its alerts column, a pending job's reason and the
//! totals line; `watch GRID` and `status --watch`, as plain blocks into a pipe and redrawn in
//! place, painted, on a real terminal (tmux).

use crate::common::{BIN, Sandbox, ok, recorded_logs, stdout, write_exec};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// A grid `tiny` of three cells launched as jobs 1001-1003: `fell` runs and its entropy
/// collapsed, `wait` is pending for priority (its log not written yet), `done` finished.
fn grid() -> Sandbox {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.presets().join("grids")).unwrap();
    let mut grid = "description = \"three cells\"\nbase = \"gsm8k-canary\"\n".to_owned();
    for (i, cell) in ["fell", "wait", "done"].iter().enumerate() {
        grid.push_str(&format!(
            "[[cells]]\nname = \"{cell}\"\ndescription = \"{cell}\"\n\
             knobs = {{ \"trainer.policy.optimizer_config.lr\" = {}.0e-6 }}\n",
            i + 1
        ));
    }
    std::fs::write(sandbox.presets().join("grids/tiny.toml"), grid).unwrap();
    ok(sandbox.rlctl().args(["grid", "--all", "tiny"]));
    let logs = recorded_logs(&sandbox);
    std::fs::write(
        &logs["tiny/fell"],
        steps(&[0.6, 0.41, 0.22, 0.09, 0.05, 0.03]),
    )
    .unwrap();
    std::fs::write(
        &logs["tiny/done"],
        steps(&[0.6, 0.58, 0.57]) + "rlctl: job 1003 finished with status 0\n",
    )
    .unwrap();
    let _ = std::fs::remove_file(&logs["tiny/wait"]);
    // The running job as an older squeue stand-in prints it (four fields), the pending one
    // with its reason.
    sandbox.queue(
        "1001|tiny-fell|RUNNING|boost_qos_dbg\n1002|tiny-wait|PENDING|boost_qos_dbg|Priority\n",
    );
    sandbox
}

/// A train step per entropy value, 40 s each.
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

#[test]
fn status_shows_each_runs_alerts_a_pending_jobs_reason_and_the_totals() {
    let sandbox = grid();
    let table = stdout(&ok(sandbox
        .rlctl()
        .args(["status", "tiny"])
        .env("RLCTL_SACCT", "/nonexistent/sacct")));
    assert!(!table.contains('\x1b'), "no colour into a pipe: {table:?}");
    insta::assert_snapshot!(table);
    let json: serde_json::Value = serde_json::from_str(&stdout(&ok(sandbox
        .rlctl()
        .args(["status", "tiny", "--json"])
        .env("RLCTL_SACCT", "/nonexistent/sacct"))))
    .unwrap();
    let rows = json["runs"].as_array().unwrap();
    let field = |i: usize, key: &str| rows[i][key].clone();
    assert_eq!(field(0, "alerts"), serde_json::json!(["entropy-collapse"]));
    assert_eq!(field(1, "reason"), "Priority");
    assert_eq!(
        field(0, "reason"),
        serde_json::Value::Null,
        "a running job waits for nothing"
    );
    assert_eq!(field(2, "alerts"), serde_json::json!([]));
    assert_eq!(field(0, "state"), "RUNNING", "older fields kept: {json}");
    // `--color always` paints into a pipe too; squeue's `None` (a running job's) is no reason.
    sandbox.queue("1001|tiny-fell|RUNNING|boost_qos_dbg|None\n");
    let painted = stdout(&ok(sandbox
        .rlctl()
        .args(["status", "tiny", "--color", "always"])
        .env("RLCTL_SACCT", "/nonexistent/sacct")));
    assert!(painted.contains("\x1b[32mRUNNING\x1b[0m"), "{painted:?}");
    assert!(
        painted.contains("\x1b[31mentropy-collapse\x1b[0m"),
        "{painted:?}"
    );
    assert!(!painted.contains("None"), "{painted}");
}

#[test]
fn watch_of_a_grid_is_one_table_with_totals_and_exits_1_on_an_alert() {
    let sandbox = grid();
    let out = sandbox
        .rlctl()
        .args(["watch", "tiny", "--once"])
        .env("RLCTL_SACCT", "/nonexistent/sacct")
        .output()
        .unwrap();
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "an alert: {text}");
    assert!(!text.contains('\x1b'), "plain lines into a pipe: {text:?}");
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("tiny: ") && lines[0].ends_with(" UTC"),
        "{text}"
    );
    assert!(
        lines[1].starts_with("run ") && lines[1].contains(" alerts "),
        "{text}"
    );
    let row = |cell: &str| {
        *(lines.iter())
            .find(|l| l.starts_with(&format!("tiny/{cell} ")))
            .unwrap_or_else(|| panic!("no row for {cell}: {text}"))
    };
    let words: Vec<&str> = row("fell").split_whitespace().collect();
    assert_eq!(words[2..4], ["RUNNING", "entropy-collapse"], "{text}");
    assert!(row("wait").contains("PENDING (Priority)"), "{text}");
    assert!(row("done").contains("COMPLETED"), "{text}");
    assert!(
        text.contains("3 runs: 1 running, 1 pending, 1 ended;"),
        "{text}"
    );
    // Every job ended: `status --watch` draws one block and ends, 1 for the collapse.
    sandbox.queue("");
    let out = sandbox
        .rlctl()
        .args(["status", "tiny", "--watch", "--interval", "1"])
        .env("RLCTL_SACCT", "/nonexistent/sacct")
        .output()
        .unwrap();
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert_eq!(text.matches("tiny: ").count(), 1, "one block: {text}");
    assert!(
        text.contains("3 runs: 0 running, 0 pending, 3 ended;"),
        "{text}"
    );
}

/// A tmux server of its own (its socket in the sandbox), killed when the test ends.
struct Tmux {
    socket: std::path::PathBuf,
}

impl Tmux {
    fn cmd(&self) -> Command {
        let mut cmd = Command::new("tmux");
        cmd.arg("-S").arg(&self.socket);
        cmd
    }

    /// The pane as it shows now; with `escapes`, its colours as SGR sequences.
    fn pane(&self, escapes: bool) -> String {
        let mut cmd = self.cmd();
        cmd.args(["capture-pane", "-p", "-t", "w"]);
        if escapes {
            cmd.arg("-e");
        }
        String::from_utf8(cmd.output().unwrap().stdout).unwrap()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd().arg("kill-server").output();
    }
}

/// `rlctl watch tiny --interval 1` in a 120x40 tmux pane, with `env`; returns once the fake
/// squeue has been asked `refreshes` times (bounded: 20 s).
fn watch_in_tmux(sandbox: &Sandbox, env: &str, refreshes: usize) -> Tmux {
    // The stand-in squeue counts its calls: one per refresh.
    let count = sandbox.root().join("squeue-calls");
    write_exec(
        &sandbox.root().join("bin/squeue"),
        &format!(
            "#!/bin/bash\necho x >> {}\ncat \"$FAKE_SBATCH_DIR/queue\" 2>/dev/null || true\n",
            count.display()
        ),
    );
    let bin = sandbox.root().join("bin");
    let line = format!(
        "env PATH={}:$PATH FAKE_SBATCH_DIR={} RLCTL_CLUSTER=test RLCTL_PRESETS={} \
         RLCTL_SACCT=/nonexistent/sacct XDG_CONFIG_HOME=/nonexistent TERM=xterm-256color {env} \
         {BIN} watch tiny --interval 1; sleep 60",
        bin.display(),
        sandbox.root().join("sbatch-calls").display(),
        sandbox.presets().display(),
    );
    let tmux = Tmux {
        socket: sandbox.root().join("tmux.sock"),
    };
    let started = tmux
        .cmd()
        .args(["new-session", "-d", "-s", "w", "-x", "120", "-y", "40"])
        .arg(line)
        .status()
        .unwrap();
    assert!(started.success());
    let calls = |p: &Path| std::fs::read_to_string(p).map_or(0, |t| t.lines().count());
    let deadline = Instant::now() + Duration::from_secs(20);
    // Each refresh asks squeue once (and `watch` once more to count the runs).
    while calls(&count) < refreshes + 1 {
        assert!(
            Instant::now() < deadline,
            "no {refreshes} refreshes in 20 s:\n{}",
            tmux.pane(false)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // The refresh that asked has drawn within a moment.
    std::thread::sleep(Duration::from_millis(300));
    tmux
}

#[test]
fn watch_of_a_grid_on_a_terminal_redraws_one_painted_table_in_place() {
    let sandbox = grid();
    let tmux = watch_in_tmux(&sandbox, "", 4);
    let pane = tmux.pane(false);
    assert_eq!(
        pane.matches("tiny: ").count(),
        1,
        "one table, not one per refresh:\n{pane}"
    );
    assert_eq!(pane.matches("tiny/fell").count(), 1, "{pane}");
    assert_eq!(pane.matches("3 runs: ").count(), 1, "{pane}");
    assert!(pane.contains("(Ctrl-C stops)"), "{pane}");
    let painted = tmux.pane(true);
    assert!(
        painted.contains("\x1b[32m"),
        "RUNNING in green:\n{painted:?}"
    );
    assert!(
        painted.contains("\x1b[31m"),
        "the alert in red:\n{painted:?}"
    );
    drop(tmux);

    let sandbox = grid();
    let tmux = watch_in_tmux(&sandbox, "NO_COLOR=1", 2);
    let painted = tmux.pane(true);
    assert!(painted.contains("tiny/fell"), "{painted}");
    for sgr in ["\x1b[31m", "\x1b[32m", "\x1b[33m"] {
        assert!(
            !painted.contains(sgr),
            "NO_COLOR: no {sgr:?} in\n{painted:?}"
        );
    }
}
