//! A whole grid with nobody watching, on the real cluster: launched once with `--until-done`,
//! then only `rlctl tend` in a loop, as cron would run it, while faults happen from outside as
//! they happen on a cluster: one cell's trainer hangs (SIGSTOP), the second node dies under a
//! running cell and comes back, one cell needs more than one slot, and the QOS admits
//! fewer jobs than the grid has cells. Every cell reaches its last step, no checkpoint is saved
//! twice, tend names the hang, the grid's report appears, and each cell is one W&B run (the real
//! `wandb` package, offline) however many times its trainer started.

use super::{Cluster, Site, stderr, stdout};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The grid: four cells of the canary at a small batch (the stand-in prints about 6 s per
/// step, so a hang shows after max(5 x 6 s, the floor) = 30 s), a checkpoint every 2 steps.
const GRID: &str = r#"description = "four cells left to tend"
base = "gsm8k-canary"
qos = "tendq"
# A slot works 3 of its 4 minutes (a quarter is the requeue grace): on 2 loaded cores Ray and
# the trainer take most of a minute to start, and the hang must outlast its 30 s limit inside the
# slot it happens in, or the slot's own end stops it before tend can see it.
time = "00:04:00"

[knobs]
"trainer.train_batch_size" = 8
"trainer.policy_mini_batch_size" = 8
"trainer.micro_forward_batch_size_per_gpu" = 2
"trainer.micro_train_batch_size_per_gpu" = 2
"generator.sampling_params.max_generate_length" = 64
"trainer.ckpt_interval" = 2
# W&B offline (compute nodes have no internet): one W&B run per cell across its slots and attempts.
"trainer.logger" = "wandb"
"trainer.project_name" = "rlctl_test"

[[cells]]
name = "hang"
description = "its trainer is stopped after its first checkpoints"
knobs = { "trainer.max_steps" = 10 }

[[cells]]
name = "long"
description = "longer than a slot"
knobs = { "trainer.max_steps" = 120 }

[[cells]]
name = "node"
description = "runs when the second node's slurmd dies"
knobs = { "trainer.max_steps" = 30 }

[[cells]]
name = "last"
description = "waits for room in the QOS"
knobs = { "trainer.max_steps" = 8 }
"#;

const CELLS: [(&str, u64); 4] = [("hang", 10), ("long", 120), ("node", 30), ("last", 8)];

fn ckpt(site: &Site, cell: &str) -> PathBuf {
    site.path()
        .join("work/rlctl/checkpoints/unattended")
        .join(cell)
        .join("ckpt")
}

/// The steps the stand-in saved, in order, from its save log.
fn saved_steps(site: &Site, cell: &str) -> Vec<u64> {
    std::fs::read_to_string(ckpt(site, cell).join("standin_saves.log"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.strip_prefix("step=")?.split(' ').next()?.parse().ok())
        .collect()
}

/// The pid of a cell's stand-in trainer, from its newest log's `pid=` prefix, while it lives.
fn trainer_pid(site: &Site, cell: &str) -> Option<String> {
    let dir = site.path().join("work/rlctl/runs/unattended").join(cell);
    let mut logs: Vec<PathBuf> = walk_logs(&dir);
    logs.sort_by_key(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok());
    let text = std::fs::read_to_string(logs.last()?).ok()?;
    let pid = text
        .rsplit("(skyrl_entrypoint pid=")
        .next()?
        .split(')')
        .next()?
        .to_owned();
    let cmdline = std::fs::read_to_string(format!("/proc/{pid}/cmdline")).ok()?;
    cmdline.contains("main_base").then_some(pid)
}

/// Stops the hang cell's trainer (SIGSTOP) once its checkpoint of step 2 is saved and step 3 is
/// logged, looking every 200 ms until `give_up` is set; the pid it stopped.
fn stop_the_hang(site: &Site, give_up: &std::sync::atomic::AtomicBool) -> Option<String> {
    while !give_up.load(std::sync::atomic::Ordering::Relaxed) {
        if saved_steps(site, "hang").contains(&2)
            && tails(site, "hang").contains("kind=train step=3 ")
            && let Some(pid) = trainer_pid(site, "hang")
        {
            let kill = Command::new("kill").args(["-STOP", &pid]).status().unwrap();
            assert!(kill.success());
            return Some(pid);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    None
}

/// Cron's passes of `rlctl tend`, every 4 s, while node n2 dies under a running cell
/// (not the hang's) that has saved, and revived once SLURM marks n2 down, until every cell has
/// saved its last step and tend says the grid ended: when n2 was killed, whether it was
/// revived, and all tend said.
fn tend_until_done(
    cluster: &Cluster,
    site: &Site,
    rlctl: &dyn Fn() -> Command,
) -> (Option<Instant>, bool, String) {
    let (mut killed, mut revived, mut passes) = (None::<Instant>, false, String::new());
    let start = Instant::now();
    loop {
        let jobs = queue(cluster);
        if killed.is_none() {
            let on_n2 = jobs.values().find(|(name, state, nodes)| {
                state == "RUNNING" && nodes == "n2" && name != "unattended.hang"
            });
            if let Some((name, _, _)) = on_n2
                && !saved_steps(site, name.trim_start_matches("unattended.")).is_empty()
            {
                cluster.kill_node("n2");
                killed = Some(Instant::now());
            }
        }
        if let Some(at) = killed
            && !revived
            && (cluster.node_state("n2").starts_with("down")
                || at.elapsed() > Duration::from_secs(150))
        {
            cluster.restart_slurmd("n2").unwrap();
            revived = true;
        }
        let pass = rlctl().arg("tend").output().unwrap();
        passes.push_str(&stdout(&pass));
        passes.push_str(&stderr(&pass));
        let all_saved = CELLS
            .iter()
            .all(|(cell, last)| saved_steps(site, cell).last() == Some(last));
        if all_saved && passes.contains("every cell has ended") {
            return (killed, revived, passes);
        }
        assert!(
            start.elapsed() < Duration::from_secs(900),
            "the grid did not finish: saves {:?}, queue {jobs:?}\n{passes}",
            CELLS.map(|(c, _)| (c, saved_steps(site, c)))
        );
        std::thread::sleep(Duration::from_secs(4));
    }
}

/// The last lines of each of a cell's logs, for a failure's message.
fn tails(site: &Site, cell: &str) -> String {
    let dir = site.path().join("work/rlctl/runs/unattended").join(cell);
    let mut out = String::new();
    for log in walk_logs(&dir) {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        out.push_str(&format!("==> {} <==\n", log.display()));
        for line in &lines[lines.len().saturating_sub(40)..] {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

fn walk_logs(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for attempt in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        for file in std::fs::read_dir(attempt.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let path = file.path();
            if path.extension().is_some_and(|e| e == "out") {
                out.push(path);
            }
        }
    }
    out
}

/// Adds the QOS `tendq` (3 jobs per user) to the cluster's accounting, once.
fn add_small_qos(cluster: &Cluster) {
    let sacctmgr = |args: &[&str]| {
        let out = cluster
            .client("sacctmgr")
            .arg("-i")
            .args(args)
            .output()
            .unwrap();
        format!("{}{}", stdout(&out), stderr(&out))
    };
    let shown = cluster
        .client("sacctmgr")
        .args(["-n", "show", "qos", "tendq", "format=name"])
        .output()
        .unwrap();
    if stdout(&shown).trim().is_empty() {
        sacctmgr(&[
            "add",
            "qos",
            "tendq",
            "MaxWall=00:30:00",
            "MaxSubmitJobsPerUser=3",
            "Flags=DenyOnLimit",
        ]);
        let said = sacctmgr(&["modify", "user", "root", "set", "QOS+=tendq"]);
        assert!(!said.contains("rror"), "{said}");
    }
}

/// Every job of the user, id -> (state, node list), from squeue.
fn queue(cluster: &Cluster) -> BTreeMap<String, (String, String, String)> {
    let out = cluster
        .client("squeue")
        .args(["-h", "-o", "%i|%j|%T|%N"])
        .output()
        .unwrap();
    stdout(&out)
        .lines()
        .filter_map(|l| {
            let mut f = l.split('|');
            Some((
                f.next()?.to_owned(),
                (
                    f.next()?.to_owned(),
                    f.next()?.to_owned(),
                    f.next()?.to_owned(),
                ),
            ))
        })
        .collect()
}

pub fn a_grid_left_to_tend_finishes_through_a_hang_a_node_failure_and_short_slots(
    cluster: &Cluster,
) {
    add_small_qos(cluster);
    let site = Site::new(cluster);
    let presets = site.path().join("presets");
    std::fs::create_dir_all(presets.join("grids")).unwrap();
    std::fs::write(presets.join("grids/unattended.toml"), GRID).unwrap();
    site.profile_variant(
        "local",
        "[[slurm.qos]]\nname = \"normal\"\n",
        "[[slurm.qos]]\nname = \"tendq\"\nmax_wall = \"00:30:00\"\nmax_nodes = 2\nmax_submit_jobs = 3\n\n\
         [[slurm.qos]]\nname = \"normal\"\n",
    );
    let profile = presets.join("clusters/local.toml");
    let text = std::fs::read_to_string(&profile).unwrap();
    std::fs::write(&profile, format!("{text}\n[watch]\nstall_floor_s = 15\n")).unwrap();
    let rlctl = || {
        let mut cmd = site.rlctl();
        cmd.env("RLCTL_PRESETS", &presets)
            .env("RLCTL_STANDIN_STEP_SECONDS", "2")
            // SkyRL's validate_cfg asks for a key even offline; the jobs inherit these, and
            // W&B, offline, is kept off the network all the same.
            .env("WANDB_API_KEY", "not-a-key")
            .env("WANDB_BASE_URL", "http://127.0.0.1:9")
            .env("WANDB_SILENT", "true")
            .env("WANDB_DISABLE_CODE", "true")
            .env("WANDB_DISABLE_GIT", "true");
        cmd
    };

    let out = rlctl()
        .args([
            "grid",
            "--all",
            "unattended",
            "--until-done",
            "--max-slots",
            "6",
        ])
        .output()
        .unwrap();
    let said = stdout(&out);
    assert!(out.status.success(), "{said}{}", stderr(&out));
    assert!(
        said.contains("unattended/last: waits for room in QOS tendq"),
        "{said}"
    );
    assert!(said.contains("1 waiting for the QOS"), "{said}");

    let _guard = Guard { cluster };
    // The hang is made from outside by a watcher that looks every 200 ms, not by the 4 s cron
    // loop below: stopped after step 3 is logged (past its checkpoint of step 2 and the warm-up
    // step, so the median s/step is the steady one), and before step 4 ends, the same moment
    // on a loaded machine as on an idle one.
    let start = Instant::now();
    let stopper_done = std::sync::atomic::AtomicBool::new(false);
    let (stopped, killed, revived, passes) = std::thread::scope(|scope| {
        let stopper = scope.spawn(|| stop_the_hang(&site, &stopper_done));
        let outcome = tend_until_done(cluster, &site, &rlctl);
        stopper_done.store(true, std::sync::atomic::Ordering::Relaxed);
        let stopped = stopper.join().unwrap();
        (stopped, outcome.0, outcome.1, outcome.2)
    });
    assert!(
        stopped.is_some(),
        "the hang cell's trainer was never stopped"
    );
    assert!(
        killed.is_some() && revived,
        "node n2 never died and came back"
    );
    for (cell, last) in CELLS {
        let steps = saved_steps(&site, cell);
        let want: Vec<u64> = (1..=last / 2).map(|n| 2 * n).collect();
        let log = std::fs::read_to_string(ckpt(&site, cell).join("standin_saves.log"))
            .unwrap_or_default();
        assert!(
            steps == want,
            "{cell}: every checkpoint saved once: saved {steps:?}, want {want:?}; its save \
             log (step, job, restart):\n{log}\ntend said:\n{passes}"
        );
    }
    assert!(
        passes.contains("unattended/hang job ") && passes.contains("no new step for"),
        "tend names the hang (stopped {stopped:?}):\n{passes}\n{}",
        tails(&site, "hang")
    );
    for (cell, _) in CELLS {
        let folder = ckpt(&site, cell).parent().unwrap().to_owned();
        let id = std::fs::read_to_string(folder.join("wandb_run_id")).unwrap();
        let id = id.trim();
        let runs: Vec<String> = std::fs::read_dir(folder.join("wandb/wandb"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("offline-run-"))
            .collect();
        assert!(!runs.is_empty(), "{cell}: no offline W&B run");
        assert!(
            runs.iter().all(|r| r.ends_with(&format!("-{id}"))),
            "{cell}: W&B runs {runs:?}, id {id}"
        );
        if cell == "hang" || cell == "long" {
            assert!(runs.len() >= 2, "{cell} started more than once: {runs:?}");
        }
    }
    // The cell the QOS had no room for went in by tend, once another had ended.
    assert!(
        passes.contains("unattended/last: job ")
            && passes.contains("(it waited for room in QOS tendq)"),
        "{passes}"
    );
    // The hang's next attempt is the cell's attempt 2, resumed from the step it had saved.
    let ledger = std::fs::read_to_string(site.path().join("work/rlctl/runs/ledger.jsonl")).unwrap();
    assert!(
        ledger
            .lines()
            .any(|l| l.contains("\"target\":\"unattended/hang\"") && l.contains("\"attempt\":2")),
        "{ledger}"
    );
    // What cron's log would have shown, for the test's reader.
    let mut said: Vec<&str> = Vec::new();
    for line in passes.lines().filter(|l| !l.starts_with("tend: ")) {
        if !said.contains(&line) {
            said.push(line);
        }
    }
    eprintln!("tend said, in {:?}:\n{}", start.elapsed(), said.join("\n"));
    let report = site
        .path()
        .join("work/rlctl/runs/unattended/report/unattended.md");
    let table =
        std::fs::read_to_string(&report).unwrap_or_else(|e| panic!("{report:?}: {e}\n{passes}"));
    for (cell, _) in CELLS {
        assert!(table.contains(cell), "{table}");
    }
    // Each cell's whole curve, from step 1 to its last, though its jobs met a hang, a node
    // failure and time limits: every job of the run joined, none of its steps missing.
    for (cell, last) in CELLS {
        let out = rlctl()
            .args(["metrics", &format!("unattended/{cell}"), "--json"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{cell}: {}", stderr(&out));
        let series: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        let steps: Vec<u64> = (series["train"].as_array().unwrap().iter())
            .map(|s| s["step"].as_u64().unwrap())
            .collect();
        let missing: Vec<u64> = (1..=last).filter(|n| !steps.contains(n)).collect();
        let unlogged = saved_last_by_an_ended_attempt(&site, cell);
        assert!(
            steps.windows(2).all(|w| w[0] < w[1])
                && steps.first() == Some(&1)
                && steps.last() == Some(&last)
                && missing.iter().all(|n| unlogged.contains(n)),
            "{cell}: the curve is not whole: steps {steps:?}, missing {missing:?}, of which only \
             {unlogged:?} may be (saved last by an attempt that ended before its log got the \
             step's line)"
        );
    }
}

/// The steps whose checkpoint an attempt saved last before it ended (killed, or out of time), with
/// another attempt saving after it: the trainer logged such a step's line a moment before its
/// save, and Ray forwards a worker's lines to the job's log a little later, so a kill just after
/// the save can lose the line (the step was trained: its whole checkpoint is where the next attempt resumed).
fn saved_last_by_an_ended_attempt(site: &Site, cell: &str) -> Vec<u64> {
    let log =
        std::fs::read_to_string(ckpt(site, cell).join("standin_saves.log")).unwrap_or_default();
    let saves: Vec<(u64, &str)> = (log.lines())
        .filter_map(|l| {
            let (step, attempt) = l.strip_prefix("step=")?.split_once(' ')?;
            Some((step.parse().ok()?, attempt))
        })
        .collect();
    saves
        .windows(2)
        .filter(|w| w[0].1 != w[1].1)
        .map(|w| w[0].0)
        .collect()
}

/// However the test ends: n2's slurmd back, and, if it failed, the test's jobs cancelled, so
/// the tests after it find both nodes in service and free.
struct Guard<'a> {
    cluster: &'a Cluster,
}

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            for id in queue(self.cluster).keys() {
                let _ = self.cluster.client("scancel").arg(id).status();
            }
        }
        if self.cluster.slurmd_pid("n2").is_none()
            && let Err(why) = self.cluster.restart_slurmd("n2")
        {
            eprintln!("{why}");
        }
    }
}
