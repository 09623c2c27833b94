//! rlctl against a real 2-node SLURM cluster (slurmctld, two slurmd, slurmdbd with QOS limits),
//! brought up by tests/cluster/up.sh on this machine. Jobs really run: through the singularity
//! stand-in, into the stand-in trainer. This binary has its own harness so that the cluster is
//! torn down even when a test fails. Needs root (it installs SLURM and starts daemons).

mod common;
#[path = "real_slurm/discover.rs"]
mod discover;
#[path = "real_slurm/faults.rs"]
mod faults;
#[path = "real_slurm/identity.rs"]
mod identity;
#[path = "real_slurm/mcp.rs"]
mod mcp;
#[path = "real_slurm/unattended.rs"]
mod unattended;
#[path = "real_slurm/upstream.rs"]
mod upstream;

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Output};
use std::time::{Duration, Instant};

const REPO: &str = env!("CARGO_MANIFEST_DIR");

struct Cluster {
    dir: PathBuf,
}

impl Cluster {
    fn up() -> Result<Cluster, String> {
        let uid = Command::new("id")
            .arg("-u")
            .output()
            .map_err(|e| e.to_string())?;
        if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
            return Err(
                "the real-SLURM tests need root: they install slurm packages and start \
                        slurmctld/slurmd/slurmdbd (run the test command as root, as CI does)"
                    .to_owned(),
            );
        }
        let dir = PathBuf::from(
            std::env::var("RLCTL_TEST_SLURM_DIR")
                .unwrap_or_else(|_| "/tmp/rlctl-test-slurm".to_owned()),
        );
        let status = Command::new("bash")
            .arg(format!("{REPO}/tests/cluster/up.sh"))
            .arg(&dir)
            .arg("--accounting")
            .status()
            .map_err(|e| e.to_string())?;
        if !status.success() {
            return Err(format!(
                "tests/cluster/up.sh {} --accounting failed ({status})",
                dir.display()
            ));
        }
        Ok(Cluster { dir })
    }

    fn down(&self) {
        let _ = Command::new("bash")
            .arg(format!("{REPO}/tests/cluster/down.sh"))
            .arg(&self.dir)
            .status();
    }

    fn conf(&self) -> PathBuf {
        self.dir.join("slurm.conf")
    }

    /// A SLURM client command pointed at this cluster.
    fn client(&self, program: &str) -> Command {
        let mut cmd = Command::new(program);
        cmd.env("SLURM_CONF", self.conf());
        cmd
    }

    /// The pid of `node`'s slurmd, as up.sh recorded it, if that process is a live slurmd.
    fn slurmd_pid(&self, node: &str) -> Option<String> {
        let pid = std::fs::read_to_string(self.dir.join(format!("run/slurmd-{node}.pid"))).ok()?;
        let pid = pid.trim().to_owned();
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let alive = !state
            .rsplit_once(") ")
            .is_some_and(|(_, s)| s.starts_with('Z'));
        (comm.trim() == "slurmd" && alive).then_some(pid)
    }

    /// Kills `node`'s slurmd with SIGKILL, as a crashed node's would stop: no goodbye to
    /// slurmctld, and its job steps left running.
    fn kill_slurmd(&self, node: &str) {
        let pid = self.slurmd_pid(node).expect("the slurmd is not running");
        let kill = Command::new("kill").args(["-KILL", &pid]).status().unwrap();
        assert!(kill.success());
        let start = Instant::now();
        while self.slurmd_pid(node).is_some() {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "slurmd {pid} lives"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The node dies as a whole, as a power loss ends one: its slurmd and every process in its
    /// namespace (the job steps, and what they started, Ray's daemons that left their parents
    /// among them) end by SIGKILL at once. A slurmd killed alone leaves its trainers writing
    /// while SLURM starts the requeued job elsewhere, which no real node failure does.
    fn kill_node(&self, node: &str) {
        let pid = self.slurmd_pid(node).expect("the slurmd is not running");
        let ns = std::fs::read_link(format!("/proc/{pid}/ns/uts")).unwrap();
        let in_node = || -> Vec<String> {
            (std::fs::read_dir("/proc").unwrap().flatten())
                .filter(|e| {
                    e.file_name()
                        .to_str()
                        .is_some_and(|n| n.parse::<u32>().is_ok())
                })
                .filter(|e| std::fs::read_link(e.path().join("ns/uts")).is_ok_and(|l| l == ns))
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        };
        let start = Instant::now();
        loop {
            let doomed = in_node();
            if doomed.is_empty() {
                return;
            }
            let _ = Command::new("kill").arg("-KILL").args(&doomed).status();
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "node {node}'s processes live 10 s after SIGKILL: {doomed:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Starts `node`'s dead slurmd again as up.sh first started it; returns once SLURM has the
    /// node back in service (up.sh bounds that wait).
    fn restart_slurmd(&self, node: &str) -> Result<(), String> {
        let out = Command::new("bash")
            .arg(format!("{REPO}/tests/cluster/up.sh"))
            .arg(&self.dir)
            .args(["--restart-slurmd", node])
            .output()
            .map_err(|e| e.to_string())?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "up.sh --restart-slurmd {node} failed ({}): {}{}",
                out.status,
                stdout(&out),
                stderr(&out)
            ))
        }
    }

    /// `node`'s state as sinfo shows it (`idle`, `alloc`, `down*`, ...).
    fn node_state(&self, node: &str) -> String {
        let out = self
            .client("sinfo")
            .args(["-h", "-N", "-n", node, "-o", "%t"])
            .output()
            .unwrap();
        stdout(&out).trim().to_owned()
    }
}

/// One test's world: its own $WORK and scratch in a temp dir, staged like a login node would.
struct Site {
    root: tempfile::TempDir,
    conf: PathBuf,
}

impl Site {
    fn new(cluster: &Cluster) -> Site {
        let root = tempfile::Builder::new()
            .prefix("rlctl-site-")
            .tempdir()
            .unwrap();
        let r = root.path();
        common::stage_offline_files(r);
        std::fs::create_dir_all(r.join("venv/bin")).unwrap();
        std::fs::create_dir_all(r.join("image")).unwrap();
        let python = String::from_utf8(
            Command::new("python3")
                .args(["-c", "import sys; print(sys.executable)"])
                .output()
                .unwrap()
                .stdout,
        )
        .unwrap();
        std::os::unix::fs::symlink(python.trim(), r.join("venv/bin/python")).unwrap();
        Site {
            root,
            conf: cluster.conf(),
        }
    }

    fn path(&self) -> &Path {
        self.root.path()
    }

    /// rlctl on the `local` profile, with the real sbatch and squeue.
    fn rlctl(&self) -> Command {
        let mut cmd = common::rlctl();
        cmd.env("SLURM_CONF", &self.conf)
            .env("RLCTL_PRESETS", format!("{REPO}/tests/cluster/presets"))
            .env("RLCTL_CLUSTER", "local")
            .env("RLCTL_LOCAL_ROOT", self.path())
            .env("RLCTL_REPO", REPO)
            .env_remove("RLCTL_STANDIN_EXIT")
            .env_remove("RLCTL_STANDIN_STEP_SECONDS");
        cmd
    }

    /// Writes `presets/clusters/NAME.toml` into the site: the local profile with one edit.
    /// Point RLCTL_PRESETS at `self.path().join("presets")` to use it.
    fn profile_variant(&self, name: &str, from: &str, to: &str) {
        let presets = self.path().join("presets/clusters");
        std::fs::create_dir_all(&presets).unwrap();
        let local =
            std::fs::read_to_string(format!("{REPO}/tests/cluster/presets/clusters/local.toml"))
                .unwrap();
        assert!(local.contains(from), "{from}");
        std::fs::write(
            presets.join(format!("{name}.toml")),
            local.replace(from, to),
        )
        .unwrap();
    }

    fn run_dir(&self, group: &str, member: &str, attempt: &str) -> PathBuf {
        self.path()
            .join("work/rlctl/runs")
            .join(group)
            .join(member)
            .join(attempt)
    }
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs an rlctl launch that must succeed and submit one job; returns its id.
fn launched(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let jobs = job_ids(&stdout(&out));
    assert_eq!(jobs.len(), 1, "{}", stdout(&out));
    jobs[0].1.clone()
}

/// Job ids from rlctl's `TARGET: job ID` lines, in order.
fn job_ids(out: &str) -> Vec<(String, String)> {
    out.lines()
        .filter_map(|l| {
            let (target, rest) = l.split_once(": job ")?;
            let id = rest.split(|c: char| !c.is_ascii_digit()).next()?;
            Some((target.to_owned(), id.to_owned()))
        })
        .collect()
}

fn job_field(cluster: &Cluster, id: &str, field: &str) -> String {
    let out = cluster
        .client("scontrol")
        .args(["show", "job", "-o", id])
        .output()
        .unwrap();
    let text = stdout(&out);
    text.split_whitespace()
        .find_map(|kv| kv.strip_prefix(&format!("{field}=")))
        .unwrap_or_default()
        .to_owned()
}

/// Polls scontrol until the job has ended; returns (JobState, ExitCode).
fn wait_for(cluster: &Cluster, id: &str, limit: Duration) -> (String, String) {
    let start = Instant::now();
    loop {
        let state = job_field(cluster, id, "JobState");
        let ended = [
            "COMPLETED",
            "FAILED",
            "CANCELLED",
            "TIMEOUT",
            "NODE_FAIL",
            "OUT_OF_MEMORY",
        ];
        if ended.contains(&state.as_str()) {
            return (state, job_field(cluster, id, "ExitCode"));
        }
        assert!(
            start.elapsed() < limit,
            "job {id} still {state} after {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn launch_completes_and_the_run_folder_holds_what_ran(cluster: &Cluster) {
    let site = Site::new(cluster);
    let out = site
        .rlctl()
        .args(["launch", "gsm8k-canary"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let jobs = job_ids(&stdout(&out));
    assert_eq!(jobs.len(), 1, "{}", stdout(&out));
    let id = &jobs[0].1;
    assert_eq!(
        wait_for(cluster, id, Duration::from_secs(120)),
        ("COMPLETED".into(), "0:0".into())
    );

    let run_dir = site.run_dir("gsm8k-canary", "gsm8k-canary", "001");
    let log = std::fs::read_to_string(run_dir.join(format!("gsm8k-canary_{id}.out"))).unwrap();
    for step in 1..=3 {
        assert!(
            log.contains(&format!("WANDB_MIRROR kind=train step={step} metrics=")),
            "{log}"
        );
    }
    assert!(log.contains("standin: exiting with status 0"), "{log}");
    assert!(
        log.contains(&format!("rlctl: job {id} finished with status 0")),
        "{log}"
    );
    // What SLURM ran is, byte for byte, the wrapper in the run folder.
    let ran = cluster
        .client("scontrol")
        .args(["write", "batch_script", id, "-"])
        .output()
        .unwrap();
    assert!(ran.status.success(), "{}", stderr(&ran));
    assert_eq!(
        stdout(&ran),
        std::fs::read_to_string(run_dir.join("sbatch.sh")).unwrap()
    );
    assert!(run_dir.join("run.sh").is_file());
    let record = std::fs::read_to_string(run_dir.join("submission.toml")).unwrap();
    assert!(record.contains(&format!("job_id = \"{id}\"")), "{record}");
    let ckpt = site
        .path()
        .join("work/rlctl/checkpoints/gsm8k-canary/gsm8k-canary/ckpt");
    assert!(
        ckpt.join("global_step_3").is_dir(),
        "the stand-in wrote its checkpoint where rlctl said"
    );
}

fn a_failing_trainer_fails_the_job_with_its_status(cluster: &Cluster) {
    let site = Site::new(cluster);
    let id = launched(
        site.rlctl()
            .args(["launch", "gsm8k-canary"])
            .env("RLCTL_STANDIN_EXIT", "3"),
    );
    assert_eq!(
        wait_for(cluster, &id, Duration::from_secs(120)),
        ("FAILED".into(), "3:0".into())
    );
    sacct_comes_to(cluster, &id, &["-o", "State,ExitCode"], "FAILED|3:0");
}

/// Polls `sacct -j ID -X -n -P ARGS` for at most 30 s until it prints `want`: accounting's
/// records arrive asynchronously, after the job has ended.
fn sacct_comes_to(cluster: &Cluster, id: &str, args: &[&str], want: &str) {
    let start = Instant::now();
    loop {
        let sacct = cluster
            .client("sacct")
            .args(["-j", id, "-X", "-n", "-P"])
            .args(args)
            .output()
            .unwrap();
        let said = stdout(&sacct).trim().to_owned();
        if said == want {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "sacct {args:?} says {said:?}, not {want:?}"
        );
        std::thread::sleep(Duration::from_millis(300));
    }
}

fn grid_all_runs_eight_wide_and_never_submits_a_queued_cell_twice(cluster: &Cluster) {
    let site = Site::new(cluster);
    let grid = |site: &Site| {
        site.rlctl()
            .args([
                "grid",
                "--all",
                "gsm8k-accuracy",
                "--",
                "trainer.max_steps=6",
            ])
            .env("RLCTL_STANDIN_STEP_SECONDS", "0.5")
            .output()
            .unwrap()
    };
    let first = grid(&site);
    assert!(first.status.success(), "{}", stderr(&first));
    let jobs = job_ids(&stdout(&first));
    assert_eq!(jobs.len(), 20, "{}", stdout(&first));

    let second = grid(&site);
    assert!(second.status.success(), "{}", stderr(&second));
    let again = stdout(&second);
    assert!(
        job_ids(&again).is_empty(),
        "a cell was submitted twice:\n{again}"
    );
    assert_eq!(again.matches("; skipped").count(), 20, "{again}");

    // squeue shows each pending cell i > 8 waiting on cell i-8.
    let queue = cluster
        .client("squeue")
        .args(["--noheader", "--format=%i|%j|%E"])
        .output()
        .unwrap();
    let queue = stdout(&queue);
    let mut seen_dependency = 0;
    for (i, (target, id)) in jobs.iter().enumerate().skip(8) {
        if let Some(line) = queue.lines().find(|l| l.starts_with(&format!("{id}|"))) {
            let before = &jobs[i - 8].1;
            assert!(
                line.contains(&format!("afterany:{before}")),
                "{target}: {line}"
            );
            seen_dependency += 1;
        }
    }
    assert!(
        seen_dependency > 0,
        "no dependent cell was still pending:\n{queue}"
    );

    let mut ckpts = std::collections::BTreeSet::new();
    for (target, id) in &jobs {
        assert_eq!(
            wait_for(cluster, id, Duration::from_secs(300)),
            ("COMPLETED".into(), "0:0".into()),
            "{target}"
        );
        let cell = target.split('/').nth(1).unwrap();
        let name = job_field(cluster, id, "JobName");
        assert_eq!(name, format!("gsm8k-accuracy.{cell}"));
        let ckpt = site
            .path()
            .join("work/rlctl/checkpoints/gsm8k-accuracy")
            .join(cell)
            .join("ckpt");
        assert!(ckpt.join("global_step_6").is_dir(), "{target}");
        ckpts.insert(ckpt);
    }
    assert_eq!(ckpts.len(), 20);
    follow_a_finished_grid(&site, &jobs);
}

/// `timing/step` of the train steps after the first in a log, as the trainer printed them.
fn step_times_after_the_first(log: &str) -> Vec<f64> {
    let times: Vec<f64> = (log.lines())
        .filter(|l| l.contains("WANDB_MIRROR kind=train "))
        .filter_map(|l| l.split_once(" metrics=").map(|(_, json)| json))
        .filter_map(|json| serde_json::from_str::<serde_json::Value>(json).ok())
        .filter_map(|m| m["timing/step"].as_f64())
        .collect();
    times.get(1..).unwrap_or_default().to_vec()
}

/// The middle value, or the mean of the two middle ones.
fn median_of(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    assert!(n > 0, "no step times");
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// `estimate --all` after the grid ran: each cell's s/step is the median of the step times (after
/// the first) that the jobs it names logged, its own job among them, measured on the same knobs.
fn estimates_are_the_recorded_medians(site: &Site, jobs: &[(String, String)]) {
    let ledger = std::fs::read_to_string(site.path().join("work/rlctl/runs/ledger.jsonl")).unwrap();
    let logs: BTreeMap<String, String> = (ledger.lines())
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .map(|r| {
            (
                r["job_id"].as_str().unwrap().to_owned(),
                r["log"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let out = site
        .rlctl()
        .args(["estimate", "--all", "gsm8k-accuracy", "--json"])
        // The knobs the grid ran with: the same fingerprint.
        .args(["--", "trainer.max_steps=6"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let estimates: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let estimates = estimates["cells"].as_array().unwrap();
    assert_eq!(estimates.len(), jobs.len());
    for (target, id) in jobs {
        let e = (estimates.iter())
            .find(|e| e["target"] == target.as_str())
            .unwrap_or_else(|| panic!("no estimate of {target}"));
        let from = e["s_per_step_from"].as_str().unwrap();
        let named = (from.strip_prefix("median of recorded job(s) "))
            .and_then(|r| r.strip_suffix(" (same knobs)"))
            .unwrap_or_else(|| panic!("{target}: {from}"));
        let named: Vec<&str> = named.split(", ").collect();
        assert!(named.contains(&id.as_str()), "{target}: {from}");
        let times: Vec<f64> = (named.iter())
            .flat_map(|job| {
                step_times_after_the_first(&std::fs::read_to_string(&logs[*job]).unwrap())
            })
            .collect();
        let want = median_of(times);
        let got = e["s_per_step"].as_f64().unwrap();
        assert!(
            (got - want).abs() < 1e-9,
            "{target}: estimate {got}, recorded median {want}"
        );
    }
}

/// After the accuracy grid ran: status shows every cell, report prints the table and writes the
/// plots, watch flags the cells whose entropy collapsed, clean removes their checkpoints.
fn follow_a_finished_grid(site: &Site, jobs: &[(String, String)]) {
    let status = site
        .rlctl()
        .args(["status", "gsm8k-accuracy"])
        .output()
        .unwrap();
    assert!(status.status.success(), "{}", stderr(&status));
    let table = stdout(&status);
    for (target, id) in jobs {
        let row = table
            .lines()
            .find(|l| l.starts_with(&format!("{target} ")))
            .unwrap_or_else(|| panic!("{target}:\n{table}"));
        assert!(
            row.contains(id.as_str()) && row.contains("COMPLETED") && row.contains("6/6"),
            "{row}"
        );
    }
    let json = site
        .rlctl()
        .args(["status", "gsm8k-accuracy", "--json"])
        .output()
        .unwrap();
    let states: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let states = states["runs"].as_array().unwrap();
    assert_eq!(states.len(), 20);
    assert!(
        states.iter().all(|s| s["source"] == "sacct"),
        "ended jobs' states come from sacct"
    );
    // One attempt each, its GPU-hours from sacct, and no ETA once ended.
    for s in states {
        assert!(
            s["attempt"] == 1
                && s["gpu_hours"].as_f64().is_some_and(|g| g > 0.0)
                && s.get("eta_s").is_none(),
            "{s}"
        );
    }
    estimates_are_the_recorded_medians(site, jobs);

    let plots = site.path().join("report");
    let report = site
        .rlctl()
        .args(["report", "gsm8k-accuracy", "--wide", "--out"])
        .arg(&plots)
        .output()
        .unwrap();
    assert!(report.status.success(), "{}", stderr(&report));
    let md = stdout(&report);
    let rows = md
        .lines()
        .filter(|l| l.starts_with("| ") && l.contains("COMPLETED"))
        .count();
    assert_eq!(rows, 20, "{md}");
    // Every cell's GPU-hours come from sacct (elapsed x gres/gpu), and its s/step is compared
    // with base_long's: the knob-faithful stand-in takes longer a step for more samples a step
    // (n16: 128 x 16) or longer generations (gen2048), less for fewer (n4).
    let split = |line: &str| -> Vec<String> {
        (line.trim().trim_matches('|').split(" | "))
            .map(|c| c.trim().to_owned())
            .collect()
    };
    // The table is padded to read aligned as text: a row is found by its first cell.
    let row_of = |name: &str| {
        md.lines()
            .find(|l| l.starts_with("| ") && split(l)[0] == name)
    };
    let head = split(row_of("cell").unwrap_or_else(|| panic!("{md}")));
    let column = |name: &str| {
        (head.iter().position(|h| h == name)).unwrap_or_else(|| panic!("no column {name}:\n{md}"))
    };
    let cell = |name: &str| -> Vec<String> {
        split(row_of(name).unwrap_or_else(|| panic!("{name}:\n{md}")))
    };
    for (target, _) in jobs {
        let row = cell(target.split('/').nth(1).unwrap());
        // `0.00444 (0%)`: the value, then its change against the base cell.
        let gpu_h: f64 = (row[column("GPU-h")].split_whitespace().next())
            .and_then(|v| v.trim_matches('*').parse().ok())
            .unwrap_or(0.0);
        assert!(
            gpu_h > 0.0,
            "{target}: GPU-h {}:\n{md}",
            row[column("GPU-h")]
        );
    }
    assert_eq!(cell("base_long")[column("changed")], "base", "{md}");
    // `**22.1** (-45%)`: the s/step's change against the base cell, in parentheses.
    let delta = |name: &str| -> f64 {
        let text = &cell(name)[column("s/step")];
        (text
            .rsplit_once('(')
            .map(|(_, d)| d.trim_end_matches(')').trim_end_matches('%')))
        .unwrap_or_default()
        .parse()
        .unwrap_or_else(|_| panic!("{name}: {text}\n{md}"))
    };
    assert!(delta("n16") > 50.0, "{md}");
    assert!(delta("gen2048") > 0.0, "{md}");
    assert!(delta("n4") < 0.0, "{md}");
    // The legend is wrapped at 100 columns: its words are read whatever their line breaks.
    let legend = md.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(legend.contains("the base cell `base_long`"), "{md}");
    assert!(plots.join("gsm8k-accuracy-s_per_step.svg").is_file());
    // Flags are never bold: the collapse column says `yes`.
    let collapse = column("collapse");
    assert_eq!(
        cell("combo_acc")[collapse],
        "yes",
        "combo_acc's entropy collapsed:\n{md}"
    );
    assert_ne!(
        cell("combo_acc_stab")[collapse],
        "yes",
        "the entropy bonus holds:\n{md}"
    );
    let svgs: Vec<_> = std::fs::read_dir(&plots)
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "svg"))
        .collect();
    assert!(svgs.len() >= 3, "{svgs:?}");
    for svg in svgs {
        let text = std::fs::read_to_string(svg.path()).unwrap();
        assert!(
            text.contains("<svg") && text.contains("combo_acc"),
            "{}",
            svg.path().display()
        );
    }

    let watch = site
        .rlctl()
        .args(["watch", "gsm8k-accuracy/combo_acc", "--once"])
        .output()
        .unwrap();
    assert!(
        !watch.status.success(),
        "an alert exits non-zero:\n{}",
        stdout(&watch)
    );
    assert!(
        stdout(&watch).contains("ALERT [entropy-collapse] policy entropy fell from"),
        "{}",
        stdout(&watch)
    );
    let calm = site
        .rlctl()
        .args(["watch", "gsm8k-accuracy/combo_acc_stab", "--once"])
        .output()
        .unwrap();
    assert!(calm.status.success(), "{}{}", stdout(&calm), stderr(&calm));
    assert!(
        stdout(&calm).contains("COMPLETED") && stdout(&calm).contains("step 6/6 (100%)"),
        "{}",
        stdout(&calm)
    );

    let csv = site
        .rlctl()
        .args(["metrics", "gsm8k-accuracy/base_long", "--csv"])
        .output()
        .unwrap();
    assert_eq!(
        stdout(&csv).lines().count(),
        8,
        "a header, the eval before training and six steps:\n{}",
        stdout(&csv)
    );
    assert!(stdout(&csv).contains("\neval,0,"), "{}", stdout(&csv));

    let clean = site
        .rlctl()
        .args(["clean", "gsm8k-accuracy", "--yes"])
        .output()
        .unwrap();
    assert!(clean.status.success(), "{}", stderr(&clean));
    // The checkpoints go; the exported model stays unless asked.
    let base_long = site
        .path()
        .join("work/rlctl/checkpoints/gsm8k-accuracy/base_long");
    let left: Vec<_> = std::fs::read_dir(&base_long)
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(
        left.iter().all(|n| n == "export"),
        "{left:?}\n{}",
        stdout(&clean)
    );
    let clean = site
        .rlctl()
        .args(["clean", "gsm8k-accuracy", "--exports", "--yes"])
        .output()
        .unwrap();
    assert!(clean.status.success(), "{}", stderr(&clean));
    assert!(!base_long.exists(), "{}", stdout(&clean));
}

fn cancel_and_logs_follow_a_running_job(cluster: &Cluster) {
    let site = Site::new(cluster);
    let id = launched(
        site.rlctl()
            .env("RLCTL_STANDIN_STEP_SECONDS", "60")
            .args(["launch", "gsm8k-canary"]),
    );
    let start = Instant::now();
    while job_field(cluster, &id, "JobState") != "RUNNING" {
        assert!(start.elapsed() < Duration::from_secs(60));
        std::thread::sleep(Duration::from_millis(200));
    }
    // A second launch of the running run would write into its checkpoint folder: refused.
    let again = site
        .rlctl()
        .args(["launch", "gsm8k-canary"])
        .output()
        .unwrap();
    assert!(!again.status.success());
    assert!(
        stderr(&again).contains(&format!(
            "gsm8k-canary is already queued as job {id} (RUNNING)"
        )),
        "{}",
        stderr(&again)
    );
    // A checkpoint folder is never removed while its job runs.
    let clean = site
        .rlctl()
        .args(["clean", "gsm8k-canary", "--yes"])
        .output()
        .unwrap();
    assert!(
        stdout(&clean).contains("is still queued or running; its folder stays"),
        "{}",
        stdout(&clean)
    );
    let cancel = site
        .rlctl()
        .args(["cancel", "gsm8k-canary"])
        .output()
        .unwrap();
    assert!(cancel.status.success(), "{}", stderr(&cancel));
    assert!(
        stdout(&cancel).contains(&format!("gsm8k-canary job {id} (RUNNING)")),
        "{}",
        stdout(&cancel)
    );
    // logs --follow returns once the job has ended, with its last line.
    let logs = site
        .rlctl()
        .args(["logs", "gsm8k-canary", "--follow"])
        .output()
        .unwrap();
    assert!(logs.status.success(), "{}", stderr(&logs));
    assert!(stdout(&logs).contains("CANCELLED AT"), "{}", stdout(&logs));
    assert_eq!(
        wait_for(cluster, &id, Duration::from_secs(60)).0,
        "CANCELLED"
    );
    let status = site
        .rlctl()
        .args(["status", "gsm8k-canary"])
        .output()
        .unwrap();
    assert!(stdout(&status).contains("CANCELLED"), "{}", stdout(&status));
}

fn qos_limits_are_enforced_by_rlctl_and_by_slurm_alike(cluster: &Cluster) {
    let site = Site::new(cluster);
    let out = site
        .rlctl()
        .args(["launch", "gsm8k-canary", "--time", "01:00:00"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains(
            "[qos] QOS boost_qos_dbg: --time 01:00:00 is over its 00:30:00 limit; use --qos normal"
        ),
        "{}",
        stderr(&out)
    );
    assert!(
        !site.path().join("work/rlctl/runs").exists(),
        "nothing written"
    );
    // The same request, raw, is refused by SLURM itself: the local QOS matches the profile's.
    let raw = cluster
        .client("sbatch")
        .args([
            "--parsable",
            "--account=rlctl_test",
            "--partition=boost_usr_prod",
            "--qos=boost_qos_dbg",
            "--time=01:00:00",
            "--wrap=true",
        ])
        .output()
        .unwrap();
    assert!(!raw.status.success(), "SLURM accepted {}", stdout(&raw));
    assert!(
        stderr(&raw).contains("QOS") || stderr(&raw).contains("qos"),
        "{}",
        stderr(&raw)
    );
    // And what fits the QOS runs.
    let id = launched(
        site.rlctl()
            .args(["launch", "gsm8k-canary", "--time", "00:30:00"]),
    );
    assert_eq!(job_field(cluster, &id, "QOS"), "boost_qos_dbg");
    wait_for(cluster, &id, Duration::from_secs(120));
}

fn sbatch_rejections_carry_sbatchs_stderr_and_record_nothing(cluster: &Cluster) {
    let site = Site::new(cluster);
    site.profile_variant(
        "nopart",
        "partition = \"boost_usr_prod\"",
        "partition = \"nosuch\"",
    );
    site.profile_variant("noacct", "account = \"rlctl_test\"", "account = \"nosuch\"");
    for (profile, expected) in [
        ("nopart", "invalid partition"),
        ("noacct", "Invalid account"),
    ] {
        let out = site
            .rlctl()
            .env("RLCTL_PRESETS", site.path().join("presets"))
            .args(["--cluster", profile, "launch", "gsm8k-canary"])
            .output()
            .unwrap();
        assert!(!out.status.success(), "{profile}: {}", stdout(&out));
        let err = stderr(&out);
        assert!(err.contains("`sbatch --parsable "), "{err}");
        assert!(
            err.to_lowercase().contains(&expected.to_lowercase()),
            "{profile}: {err}"
        );
        assert!(
            !site.run_dir("gsm8k-canary", "gsm8k-canary", "001").exists(),
            "{profile}: a run folder was left"
        );
    }
}

fn a_grid_cut_short_by_slurm_reports_what_is_queued_and_a_rerun_adds_the_rest(cluster: &Cluster) {
    let site = Site::new(cluster);
    let sacctmgr = |limit: &str| {
        let out = cluster
            .client("sacctmgr")
            .args([
                "-i",
                "modify",
                "user",
                "root",
                "set",
                &format!("MaxSubmitJobs={limit}"),
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    };
    // SLURM itself refuses the fourth submission: a real sbatch failure halfway through a grid.
    sacctmgr("3");
    let grid = || {
        site.rlctl()
            .args([
                "grid",
                "--all",
                "gsm8k-throughput",
                "--",
                "trainer.max_steps=1",
            ])
            .env("RLCTL_STANDIN_STEP_SECONDS", "2")
            .output()
            .unwrap()
    };
    let first = grid();
    sacctmgr("-1");
    assert!(!first.status.success(), "{}", stdout(&first));
    let err = stderr(&first);
    assert!(
        err.starts_with(
            "rlctl: error: cell `gsm8k-throughput/tbs256` was not submitted: sbatch failed: `sbatch --parsable "
        ),
        "{err}"
    );
    assert!(
        err.contains(
            "these cells were submitted before it and are queued:\n  gsm8k-throughput/base: job "
        ),
        "{err}"
    );
    let queued = job_ids(&stdout(&first));
    assert_eq!(queued.len(), 3);
    for (cell, recorded) in [
        ("base", true),
        ("tbs64", true),
        ("tbs128", true),
        ("tbs256", false),
    ] {
        assert_eq!(
            site.run_dir("gsm8k-throughput", cell, "001")
                .join("submission.toml")
                .is_file(),
            recorded,
            "{cell}"
        );
    }
    // Running the grid again submits only what is missing.
    let second = grid();
    assert!(second.status.success(), "{}", stderr(&second));
    let out = stdout(&second);
    let added = job_ids(&out);
    assert_eq!(added.len(), 15, "{out}");
    assert!(
        added
            .iter()
            .all(|(t, _)| !queued.iter().any(|(q, _)| q == t)),
        "{out}"
    );
    let cancel = cluster
        .client("scancel")
        .args(queued.iter().chain(&added).map(|(_, id)| id.as_str()))
        .output()
        .unwrap();
    assert!(cancel.status.success());
    for (_, id) in queued.iter().chain(&added) {
        wait_for(cluster, id, Duration::from_secs(60));
    }
}

/// Ray processes on this machine (both test nodes share it).
fn ray_processes() -> String {
    let out = Command::new("pgrep")
        .args([
            "-af",
            "raylet|gcs_server|ray.scripts.scripts|default_worker",
        ])
        .output()
        .unwrap();
    stdout(&out)
}

/// Waits until no Ray process and no Ray temp dir of `job` is left.
fn assert_ray_gone(job: &str) {
    let start = Instant::now();
    loop {
        let left = ray_processes();
        let tmp = Path::new(&format!("/tmp/r{job}")).exists()
            || Path::new(&format!("/tmp/r{job}w1")).exists();
        if left.trim().is_empty() && !tmp {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "left after job {job}: {left} (temp dir left: {tmp})"
        );
        std::thread::sleep(Duration::from_millis(300));
    }
}

fn log_of(site: &Site, group: &str, member: &str, attempt: &str, job: &str) -> String {
    let name = if group == member {
        group.to_owned()
    } else {
        member.to_owned()
    };
    std::fs::read_to_string(
        site.run_dir(group, member, attempt)
            .join(format!("{name}_{job}.out")),
    )
    .unwrap_or_default()
}

fn two_nodes_bring_up_a_real_ray_cluster_and_leave_nothing(cluster: &Cluster) {
    let site = Site::new(cluster);
    let id = launched(site.rlctl().args(["launch", "gsm8k-multinode"]));
    let (state, code) = wait_for(cluster, &id, Duration::from_secs(180));
    let log = log_of(&site, "gsm8k-multinode", "gsm8k-multinode", "001", &id);
    assert_eq!(
        (state.as_str(), code.as_str()),
        ("COMPLETED", "0:0"),
        "{log}"
    );
    assert_eq!(job_field(cluster, &id, "NumNodes"), "2");
    assert!(log.contains("rlctl: Ray is up: 2 nodes, 8 GPUs"), "{log}");
    assert!(
        log.contains(": 2 nodes, 8 GPUs; tasks ran on n1 n2"),
        "the trainer's own view of Ray:\n{log}"
    );
    assert!(
        log.contains("Ray cluster at 127.0.1.1:"),
        "the head is on n1's own loopback address:\n{log}"
    );
    assert!(log.contains("WANDB_MIRROR kind=train step=3"), "{log}");
    assert_ray_gone(&id);
}

/// Every Ray actor, on every node, runs with the profile's writable HOME and its compiler first
/// on PATH: SkyRL's trainer is such an actor, started by a raylet, not by run.sh. Checked from
/// inside an actor on each node, through the singularity stand-in and with no container.
fn ray_actors_on_every_node_get_the_writable_home_and_the_compiler(cluster: &Cluster) {
    for runtime in ["singularity", "none"] {
        let site = Site::new(cluster);
        // A compiler folder of the site's own, so that the host's PATH cannot pass for it.
        let gcc_bin = site.path().join("gcc/bin");
        std::fs::create_dir_all(&gcc_bin).unwrap();
        std::os::unix::fs::symlink("/usr/bin/gcc", gcc_bin.join("gcc")).unwrap();
        let profile = site.path().join("presets/clusters/local.toml");
        std::fs::create_dir_all(profile.parent().unwrap()).unwrap();
        let local =
            std::fs::read_to_string(format!("{REPO}/tests/cluster/presets/clusters/local.toml"))
                .unwrap();
        let edited = local
            .replace(r#"gcc_bin = "/usr/bin""#, r#"gcc_bin = "${ROOT}/gcc/bin""#)
            .replace(
                r#"runtime = "singularity""#,
                &format!(r#"runtime = "{runtime}""#),
            );
        assert!(edited.contains("${ROOT}/gcc/bin") && edited.contains(runtime));
        std::fs::write(&profile, edited).unwrap();
        let report = site.path().join("actor-env.jsonl");
        let id = launched(
            site.rlctl()
                .env("RLCTL_PRESETS", site.path().join("presets"))
                .env("RLCTL_STANDIN_ACTOR_ENV", &report)
                .args(["launch", "gsm8k-multinode"]),
        );
        let (state, code) = wait_for(cluster, &id, Duration::from_secs(180));
        let log = log_of(&site, "gsm8k-multinode", "gsm8k-multinode", "001", &id);
        assert_eq!(
            (state.as_str(), code.as_str()),
            ("COMPLETED", "0:0"),
            "{runtime}: {log}"
        );
        let seen = std::fs::read_to_string(&report).unwrap_or_default();
        let lines: Vec<serde_json::Value> = seen
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let mut hosts: Vec<&str> = lines.iter().map(|l| l["host"].as_str().unwrap()).collect();
        hosts.sort();
        assert_eq!(hosts, ["n1", "n2"], "{runtime}: {seen}\n{log}");
        let home = site.path().join("scratch/home");
        for line in &lines {
            assert_eq!(
                line["HOME"].as_str(),
                home.to_str(),
                "{runtime}: an actor's HOME: {line}"
            );
            let path = line["PATH"].as_str().unwrap_or_default();
            assert!(
                path.starts_with(&format!("{}:", gcc_bin.display())),
                "{runtime}: an actor's PATH must start with the compiler's folder: {line}"
            );
        }
        assert_ray_gone(&id);
    }
}

fn a_worker_that_never_joins_fails_the_job_and_is_torn_down(cluster: &Cluster) {
    let site = Site::new(cluster);
    site.profile_variant("local", "ray_timeout_s = 60", "ray_timeout_s = 10");
    let id = launched(
        site.rlctl()
            .env("RLCTL_PRESETS", site.path().join("presets"))
            .env("SINGULARITY_SHIM_HANG_IF", "--address=")
            .args(["launch", "gsm8k-multinode"]),
    );
    let (state, code) = wait_for(cluster, &id, Duration::from_secs(120));
    let log = log_of(&site, "gsm8k-multinode", "gsm8k-multinode", "001", &id);
    assert_eq!((state.as_str(), code.as_str()), ("FAILED", "2:0"), "{log}");
    assert!(
        log.contains(
            "rlctl: Ray has 4 of 8 GPUs after 10 s: a worker did not join; failing the job"
        ),
        "{log}"
    );
    assert!(
        log.contains(&format!("rlctl: job {id} finished with status 2")),
        "teardown ran:\n{log}"
    );
    assert!(
        !log.contains("WANDB_MIRROR"),
        "the trainer must not start on half a cluster"
    );
    assert_ray_gone(&id);
    let hung = Command::new("pgrep")
        .args(["-f", "sleep infinity"])
        .output()
        .unwrap();
    assert!(
        stdout(&hung).trim().is_empty(),
        "the stuck worker's step was not ended"
    );
}

fn scancel_of_a_running_multi_node_job_leaves_nothing(cluster: &Cluster) {
    let site = Site::new(cluster);
    let id = launched(
        site.rlctl()
            .env("RLCTL_STANDIN_STEP_SECONDS", "60")
            .args(["launch", "gsm8k-multinode"]),
    );
    let start = Instant::now();
    while !log_of(&site, "gsm8k-multinode", "gsm8k-multinode", "001", &id)
        .contains("Ray cluster at")
    {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the trainer never started"
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    let cancel = cluster.client("scancel").arg(&id).output().unwrap();
    assert!(cancel.status.success());
    let (state, _) = wait_for(cluster, &id, Duration::from_secs(120));
    assert_eq!(state, "CANCELLED");
    assert_ray_gone(&id);
}

fn a_failing_trainer_on_two_nodes_fails_the_job_after_teardown(cluster: &Cluster) {
    let site = Site::new(cluster);
    let id = launched(
        site.rlctl()
            .env("RLCTL_STANDIN_EXIT", "3")
            .args(["launch", "gsm8k-multinode"]),
    );
    let (state, code) = wait_for(cluster, &id, Duration::from_secs(180));
    let log = log_of(&site, "gsm8k-multinode", "gsm8k-multinode", "001", &id);
    assert_eq!((state.as_str(), code.as_str()), ("FAILED", "3:0"), "{log}");
    assert!(
        log.contains(&format!("rlctl: job {id} finished with status 3")),
        "{log}"
    );
    assert_ray_gone(&id);
}

fn a_chain_resumes_each_slot_from_the_same_checkpoints(cluster: &Cluster) {
    let site = Site::new(cluster);
    let out = site
        .rlctl()
        .args([
            "launch",
            "gsm8k-canary",
            "--chain",
            "3",
            "--",
            "trainer.max_steps=2",
            // A chain must save once per slot (the `slots` check).
            "trainer.ckpt_interval=1",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let jobs = job_ids(&stdout(&out));
    assert_eq!(jobs.len(), 3, "{}", stdout(&out));
    for i in 1..3 {
        let dependency = job_field(cluster, &jobs[i].1, "Dependency");
        assert!(
            dependency.starts_with(&format!("afterany:{}", jobs[i - 1].1)),
            "{dependency}"
        );
    }
    for (i, (_, id)) in jobs.iter().enumerate() {
        assert_eq!(
            wait_for(cluster, id, Duration::from_secs(120)).0,
            "COMPLETED"
        );
        let attempt = format!("{:03}", i + 1);
        let run_sh = std::fs::read_to_string(
            site.run_dir("gsm8k-canary", "gsm8k-canary", &attempt)
                .join("run.sh"),
        )
        .unwrap();
        // The job decides the resume mode; only the chain's first link may start fresh.
        let sbatch_sh = std::fs::read_to_string(
            site.run_dir("gsm8k-canary", "gsm8k-canary", &attempt)
                .join("sbatch.sh"),
        )
        .unwrap();
        assert!(
            sbatch_sh.contains(&format!("first_slot={}", i == 0)),
            "job {}",
            i + 1
        );
        assert!(run_sh.contains("/checkpoints/gsm8k-canary/gsm8k-canary/ckpt'"));
    }
    // The first link trained all 2 steps: the later ones find the run complete and end at once.
    for (i, attempt) in [(1, "002"), (2, "003")] {
        let log = log_of(&site, "gsm8k-canary", "gsm8k-canary", attempt, &jobs[i].1);
        assert!(
            log.contains("the run is complete: step 2 of 2") && !log.contains("WANDB_MIRROR"),
            "{log}"
        );
    }
}

#[path = "real_slurm/phases.rs"]
mod phases;
#[path = "real_slurm/requeue.rs"]
mod requeue;
#[path = "real_slurm/tend.rs"]
mod tend;

type Test = (&'static str, fn(&Cluster));

const TESTS: &[Test] = &[
    (
        "faults_every_cell_resumes_from_its_newest_whole_step",
        faults::every_cell_resumes_from_its_newest_whole_step,
    ),
    (
        "init_discover_drafts_the_real_cluster_and_a_launch_on_it_completes",
        discover::init_discover_drafts_the_real_cluster_and_a_launch_on_it_completes,
    ),
    (
        "upstream_the_canary_a_cell_and_a_two_node_run_complete_on_an_upstream_checkout",
        upstream::the_canary_a_cell_and_a_two_node_run_complete_on_an_upstream_checkout,
    ),
    (
        "a_grid_left_to_tend_finishes_through_a_hang_a_node_failure_and_short_slots",
        unattended::a_grid_left_to_tend_finishes_through_a_hang_a_node_failure_and_short_slots,
    ),
    (
        "phases_status_shows_start_up_and_a_slot_ends_with_a_save_inside_its_limit",
        phases::status_shows_start_up_and_a_slot_ends_with_a_save_inside_its_limit,
    ),
    (
        "scontrol_requeue_of_a_running_launch_resumes_and_rewrites_no_checkpoint",
        requeue::scontrol_requeue_of_a_running_launch_resumes_and_rewrites_no_checkpoint,
    ),
    (
        "until_done_reaches_the_last_step_in_two_slots_under_one_job_id",
        requeue::until_done_reaches_the_last_step_in_two_slots_under_one_job_id,
    ),
    (
        "until_done_s_last_slot_times_out_and_tend_resumes_it",
        requeue::until_done_s_last_slot_times_out_and_tend_resumes_it,
    ),
    (
        "a_node_failure_under_a_two_node_until_done_run_requeues_it_and_it_finishes",
        requeue::a_node_failure_under_a_two_node_until_done_run_requeues_it_and_it_finishes,
    ),
    (
        "a_timed_out_run_is_brought_to_its_end_by_tend",
        requeue::a_timed_out_run_is_brought_to_its_end_by_tend,
    ),
    (
        "a_crashing_trainer_is_not_requeued",
        requeue::a_crashing_trainer_is_not_requeued,
    ),
    (
        "tend_a_diverging_running_link_cancels_its_whole_chain",
        tend::a_diverging_running_link_cancels_its_whole_chain,
    ),
    (
        "tend_a_timeout_without_a_checkpoint_is_left_for_a_person",
        tend::a_timeout_without_a_checkpoint_is_left_for_a_person,
    ),
    (
        "launch_completes_and_the_run_folder_holds_what_ran",
        launch_completes_and_the_run_folder_holds_what_ran,
    ),
    (
        "a_failing_trainer_fails_the_job_with_its_status",
        a_failing_trainer_fails_the_job_with_its_status,
    ),
    (
        "grid_all_runs_eight_wide_and_never_submits_a_queued_cell_twice",
        grid_all_runs_eight_wide_and_never_submits_a_queued_cell_twice,
    ),
    (
        "qos_limits_are_enforced_by_rlctl_and_by_slurm_alike",
        qos_limits_are_enforced_by_rlctl_and_by_slurm_alike,
    ),
    (
        "sbatch_rejections_carry_sbatchs_stderr_and_record_nothing",
        sbatch_rejections_carry_sbatchs_stderr_and_record_nothing,
    ),
    (
        "a_grid_cut_short_by_slurm_reports_what_is_queued_and_a_rerun_adds_the_rest",
        a_grid_cut_short_by_slurm_reports_what_is_queued_and_a_rerun_adds_the_rest,
    ),
    (
        "two_nodes_bring_up_a_real_ray_cluster_and_leave_nothing",
        two_nodes_bring_up_a_real_ray_cluster_and_leave_nothing,
    ),
    (
        "ray_actors_on_every_node_get_the_writable_home_and_the_compiler",
        ray_actors_on_every_node_get_the_writable_home_and_the_compiler,
    ),
    (
        "a_worker_that_never_joins_fails_the_job_and_is_torn_down",
        a_worker_that_never_joins_fails_the_job_and_is_torn_down,
    ),
    (
        "scancel_of_a_running_multi_node_job_leaves_nothing",
        scancel_of_a_running_multi_node_job_leaves_nothing,
    ),
    (
        "a_failing_trainer_on_two_nodes_fails_the_job_after_teardown",
        a_failing_trainer_on_two_nodes_fails_the_job_after_teardown,
    ),
    (
        "a_chain_resumes_each_slot_from_the_same_checkpoints",
        a_chain_resumes_each_slot_from_the_same_checkpoints,
    ),
    (
        "cancel_and_logs_follow_a_running_job",
        cancel_and_logs_follow_a_running_job,
    ),
    (
        "a_chain_is_one_run_for_status_cancel_and_clean",
        identity::a_chain_is_one_run_for_status_cancel_and_clean,
    ),
    (
        "an_agent_runs_the_canary_to_completed_through_mcp",
        mcp::an_agent_runs_the_canary_to_completed_through_mcp,
    ),
    (
        "two_launches_at_once_submit_one_job",
        identity::two_launches_at_once_submit_one_job,
    ),
];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--list") {
        for (name, _) in TESTS.iter() {
            println!("{name}: test");
        }
        return ExitCode::SUCCESS;
    }
    let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    let selected: Vec<&Test> = TESTS
        .iter()
        .filter(|(name, _)| filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str())))
        .collect();
    let started = Instant::now();
    println!("\nrunning {} tests", selected.len());
    if selected.is_empty() {
        println!(
            "\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; {} filtered out; finished in 0.00s\n",
            TESTS.len()
        );
        return ExitCode::SUCCESS;
    }
    // One test session at a time on this machine's test cluster: another one would tear it
    // down under this one. The lock is released when the process exits, however it exits.
    let lock_path = std::env::var("RLCTL_TEST_SLURM_DIR")
        .unwrap_or_else(|_| "/tmp/rlctl-test-slurm".to_owned())
        + ".session.lock";
    let lock = std::fs::File::create(&lock_path).expect("cannot create the session lock");
    if lock.try_lock().is_err() {
        println!("waiting for another test session on the cluster ({lock_path})");
        lock.lock().expect("cannot lock the test cluster");
    }
    let cluster = match Cluster::up() {
        Ok(cluster) => cluster,
        Err(why) => {
            println!("test real_slurm_cluster_up ... FAILED\n\n{why}\n");
            println!(
                "test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in {:.2}s\n",
                started.elapsed().as_secs_f64()
            );
            return ExitCode::FAILURE;
        }
    };
    let mut failed = Vec::new();
    for (name, test) in &selected {
        let result = catch_unwind(AssertUnwindSafe(|| test(&cluster)));
        println!(
            "test {name} ... {}",
            if result.is_ok() { "ok" } else { "FAILED" }
        );
        if result.is_err() {
            failed.push(*name);
        }
    }
    if std::env::var_os("RLCTL_TEST_KEEP_CLUSTER").is_none() {
        cluster.down();
    }
    let passed = selected.len() - failed.len();
    if !failed.is_empty() {
        println!("\nfailures:");
        for name in &failed {
            println!("    {name}");
        }
    }
    println!(
        "\ntest result: {}. {passed} passed; {} failed; 0 ignored; 0 measured; {} filtered out; finished in {:.2}s\n",
        if failed.is_empty() { "ok" } else { "FAILED" },
        failed.len(),
        TESTS.len() - selected.len(),
        started.elapsed().as_secs_f64()
    );
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
