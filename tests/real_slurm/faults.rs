//! The fault matrix, on the real cluster: faults {the trainer SIGKILLed, SIGSTOPped (a hang), the
//! time limit, the nodes' slurmd killed, the pointer emptied mid-write, a kill between a save and
//! its cleanup, an empty `squeue` answer, a full checkpoint filesystem} at phases {start-up, a
//! step, a save}, on one and two nodes, on MarinSkyRL and upstream checkouts (the stand-in
//! trainer of each). Every cell is its own site and run, launched once; from then on only cron's
//! `rlctl tend` (every few seconds here) and, where rlctl leaves a run for a person, what its
//! words say to do. Cells share the cluster side by side (a quarter node each: the profile asks
//! for 1 GPU a node), and every wait is on an event: the stand-in parks at the phase
//! (`RLCTL_STANDIN_PARK`) and the fault is injected while it waits. The two-node cells are a
//! second wave (their Ray clusters need the cores), the node failures a third: killing a slurmd
//! takes down every job on its node.
//!
//! Each cell is scored: the response is the right one (resumed by tend, requeued by SLURM, left
//! for a person with the reason, or nothing to do), the run resumed from the newest step that
//! was whole when the fault struck (the stand-in's own save log says which), no more steps lost
//! than `ckpt_interval`, no checkpoint written twice (never restarted from step 0 over whole
//! steps), and the seconds from the fault to rlctl's response. The table is written to
//! `docs/fault-matrix.md` and printed.

use super::{Cluster, REPO, Site, job_field, stderr, stdout};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Fault {
    Kill,
    Hang,
    Timeout,
    NodeFail,
    TornPointer,
    KillBeforeCleanup,
    EmptySqueue,
    FullDisk,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Phase {
    Startup,
    Step,
    Save,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Flavour {
    Marin,
    Upstream,
}

/// What rlctl must do about a cell's fault.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Response {
    /// `tend` submits the run's next attempt.
    TendResumes,
    /// SLURM requeues the job (a node failure); its next slot resumes.
    SlurmRequeues,
    /// `tend` leaves it, saying why; the person's fix resumes it.
    LeftForAPerson,
    /// Nothing happened to the run: nothing may be done to it.
    NothingToDo,
}

#[derive(Clone, Copy, Debug)]
struct Cell {
    fault: Fault,
    phase: Phase,
    nodes: u32,
    flavour: Flavour,
}

const fn cell(fault: Fault, phase: Phase, nodes: u32, flavour: Flavour) -> Cell {
    Cell {
        fault,
        phase,
        nodes,
        flavour,
    }
}

use Fault::*;
use Flavour::*;
use Phase::*;

/// The matrix: 33 cells. The node failures come last, as their own wave.
const MATRIX: &[Cell] = &[
    cell(Kill, Startup, 1, Marin),
    cell(Kill, Step, 1, Marin),
    cell(Kill, Save, 1, Marin),
    cell(Kill, Startup, 1, Upstream),
    cell(Kill, Step, 1, Upstream),
    cell(Kill, Save, 1, Upstream),
    cell(Kill, Step, 2, Marin),
    cell(Hang, Startup, 1, Marin),
    cell(Hang, Step, 1, Marin),
    cell(Hang, Save, 1, Marin),
    cell(Hang, Startup, 1, Upstream),
    cell(Hang, Step, 1, Upstream),
    cell(Hang, Save, 1, Upstream),
    cell(Hang, Step, 2, Upstream),
    cell(Timeout, Startup, 1, Marin),
    cell(Timeout, Step, 1, Marin),
    cell(Timeout, Step, 1, Upstream),
    cell(TornPointer, Save, 1, Marin),
    cell(TornPointer, Save, 1, Upstream),
    cell(TornPointer, Save, 2, Marin),
    cell(KillBeforeCleanup, Save, 1, Marin),
    cell(KillBeforeCleanup, Save, 1, Upstream),
    cell(EmptySqueue, Startup, 1, Marin),
    cell(EmptySqueue, Step, 1, Marin),
    cell(EmptySqueue, Save, 1, Marin),
    cell(EmptySqueue, Step, 1, Upstream),
    cell(FullDisk, Save, 1, Marin),
    cell(FullDisk, Save, 1, Upstream),
    cell(NodeFail, Startup, 1, Marin),
    cell(NodeFail, Step, 1, Marin),
    cell(NodeFail, Save, 1, Marin),
    cell(NodeFail, Step, 1, Upstream),
    cell(NodeFail, Step, 2, Marin),
];

const CKPT_INTERVAL: u64 = 2;

/// Cron's cadence, sped up.
const TEND_EVERY_S: u64 = 5;

impl Cell {
    fn name(&self) -> String {
        let fault = match self.fault {
            Kill => "kill",
            Hang => "hang",
            Timeout => "timeout",
            NodeFail => "node",
            TornPointer => "pointer",
            KillBeforeCleanup => "cleanup",
            EmptySqueue => "squeue",
            FullDisk => "disk",
        };
        let phase = match self.phase {
            Startup => "startup",
            Step => "step",
            Save => "save",
        };
        let flavour = match self.flavour {
            Marin => "m",
            Upstream => "u",
        };
        format!("{fault}-{phase}-{}n-{flavour}", self.nodes)
    }

    fn expected(&self) -> Response {
        match (self.fault, self.phase) {
            (NodeFail, _) => Response::SlurmRequeues,
            // Nothing was saved in the slot: another would stop at the same place.
            (Timeout, Startup) | (FullDisk, _) => Response::LeftForAPerson,
            (EmptySqueue, _) => Response::NothingToDo,
            _ => Response::TendResumes,
        }
    }

    /// A time-limit cell trains on until SLURM stops it; every other cell parks at its phase.
    fn trains_to_the_limit(&self) -> bool {
        self.fault == Timeout && self.phase != Startup
    }

    fn max_steps(&self) -> u64 {
        if self.trains_to_the_limit() { 40 } else { 6 }
    }

    /// Where the stand-in parks (`RLCTL_STANDIN_PARK`), if it does.
    fn park(&self) -> Option<&'static str> {
        match (self.fault, self.phase) {
            _ if self.trains_to_the_limit() => None,
            (TornPointer, _) => Some("pointer@4"),
            (KillBeforeCleanup, _) => Some("cleanup@4"),
            // The disk fills while step 3 runs: the save of step 4 meets it.
            (FullDisk, _) => Some("step@3"),
            (_, Startup) => Some("startup"),
            (_, Step) => Some("step@3"),
            (_, Save) => Some("save@4"),
        }
    }

    fn label(&self) -> (&'static str, &'static str) {
        let fault = match self.fault {
            Kill => "SIGKILL of the trainer",
            Hang => "SIGSTOP of the trainer (a hang)",
            Timeout => "the time limit",
            NodeFail => "the nodes' slurmd killed",
            TornPointer => "pointer emptied mid-write, then SIGKILL",
            KillBeforeCleanup => "SIGKILL between a save and its cleanup",
            EmptySqueue => "squeue answers nothing",
            FullDisk => "checkpoint filesystem full",
        };
        let phase = match (self.fault, self.phase) {
            (TornPointer, _) => "save of step 4 (pointer)",
            (KillBeforeCleanup, _) => "save of step 4 (cleanup)",
            (FullDisk, _) => "save of step 4",
            (Timeout, Step) => "a step",
            (_, Startup) => "start-up",
            (_, Step) => "step 3",
            (_, Save) => "save of step 4",
        };
        (fault, phase)
    }
}

/// Where a cell is.
#[derive(Debug, PartialEq, Eq)]
enum Stage {
    /// Launched: waiting for the stand-in to park (or, trained to the limit, for SLURM to stop it).
    Launched,
    /// Parked, waiting for the node failure's wave to strike.
    Parked,
    /// The fault is in: waiting for rlctl's response and the run's end.
    Struck,
    Done,
}

/// One cell's site and what was seen of it.
struct Run {
    cell: Cell,
    site: Site,
    presets: PathBuf,
    park_dir: PathBuf,
    ckpt: PathBuf,
    first_job: String,
    stage: Stage,
    struck_at: Option<Instant>,
    /// The newest step the stand-in had made whole when the fault struck, and the last step it
    /// had logged.
    whole_at_fault: u64,
    logged_at_fault: u64,
    response: Option<(Response, Duration)>,
    /// Whether the person did what rlctl said.
    person: bool,
    /// Whether a tend pass left the run for a person.
    looked: bool,
    /// What was wrong with the cell, once it is over.
    failure: Option<String>,
    tend_said: String,
    next_tend: Instant,
}

/// A small filesystem over each full-disk cell's checkpoint folder: an ext4 image on a loop
/// device, mounted here and in each node's mount namespace (every slurmd has its own, made
/// private when the node started), so the job, wherever it runs, and this test see one disk.
/// Unmounted however the test ends, before the sites are removed.
struct Disks<'a> {
    cluster: &'a Cluster,
    mounted: Vec<(PathBuf, String)>,
}

impl Disks<'_> {
    fn mount(&mut self, folder: &Path, image: &Path) {
        let run = |cmd: &mut Command| {
            let out = cmd.output().unwrap();
            assert!(out.status.success(), "{cmd:?}: {}", stderr(&out));
            stdout(&out).trim().to_owned()
        };
        run(Command::new("truncate").args(["-s", "4M"]).arg(image));
        run(Command::new("mkfs.ext4").args(["-q", "-F"]).arg(image));
        let device = run(Command::new("losetup")
            .args(["--find", "--show"])
            .arg(image));
        std::fs::create_dir_all(folder).unwrap();
        run(Command::new("mount").arg(&device).arg(folder));
        for node in ["n1", "n2"] {
            let pid = self.cluster.slurmd_pid(node).expect("slurmd");
            run(Command::new("nsenter")
                .args(["-t", &pid, "-m", "mount"])
                .arg(&device)
                .arg(folder));
        }
        self.mounted.push((folder.to_owned(), device));
    }
}

impl Drop for Disks<'_> {
    fn drop(&mut self) {
        for (folder, device) in self.mounted.drain(..) {
            for node in ["n1", "n2"] {
                if let Some(pid) = self.cluster.slurmd_pid(node) {
                    let _ = Command::new("nsenter")
                        .args(["-t", &pid, "-m", "umount", "-l"])
                        .arg(&folder)
                        .status();
                }
            }
            let _ = Command::new("umount").arg("-l").arg(&folder).status();
            let _ = Command::new("losetup").args(["-d", &device]).status();
        }
    }
}

/// Every job of the user: id -> (state, restarts), one squeue.
fn queue(cluster: &Cluster) -> BTreeMap<String, String> {
    let out = cluster
        .client("squeue")
        .args(["-h", "-o", "%i|%T"])
        .output()
        .unwrap();
    stdout(&out)
        .lines()
        .filter_map(|l| l.split_once('|'))
        .map(|(id, state)| (id.to_owned(), state.to_owned()))
        .collect()
}

fn profile(site: &Site, cell: &Cell) -> PathBuf {
    let presets = site.path().join("presets");
    let local =
        std::fs::read_to_string(format!("{REPO}/tests/cluster/presets/clusters/local.toml"))
            .unwrap();
    let mut text = local
        .replace("\ngpus = 4\n", "\ngpus = 1\n")
        .replace("\ncpus = 32\n", "\ncpus = 8\n")
        .replace("\nmem = \"480G\"\n", "\nmem = \"120G\"\n");
    if cell.flavour == Upstream {
        text = text
            .replace(
                "skyrl = \"${REPO}/tests/standin/MarinSkyRL\"",
                "skyrl = \"${ROOT}/upstream-skyrl\"",
            )
            .replace(
                "schema = \"marinskyrl-a559688\"",
                "schema = \"skyrl-0.4.0\"",
            );
    }
    // Start-up as this machine's two loaded cores give it (a two-node Ray cluster can take
    // minutes to form); a start-up longer than the slot for the time limit's cell: the hang
    // limit before the first step (twice the start-up) outlasts the minute, so SLURM's limit
    // strikes first.
    let startup = if cell.fault == Timeout {
        "startup_s = 50"
    } else if cell.nodes > 1 {
        "startup_s = 90"
    } else {
        "startup_s = 60"
    };
    text = text.replace("startup_s = 10", startup);
    // Up to eight jobs' Ray clusters and trainers share two cores: a worker may take minutes to
    // join (the matrix is about rlctl's answers to faults, not about a slow machine).
    text = text.replace("ray_timeout_s = 60", "ray_timeout_s = 240");
    assert!(text.contains("\ngpus = 1\n") && text.contains("\nmem = \"120G\"\n"));
    std::fs::create_dir_all(presets.join("clusters")).unwrap();
    std::fs::write(
        presets.join("clusters/local.toml"),
        text + "\n[watch]\nstall_floor_s = 15\n",
    )
    .unwrap();
    presets
}

impl Run {
    fn rlctl(&self) -> Command {
        let mut cmd = self.site.rlctl();
        cmd.env("RLCTL_PRESETS", &self.presets);
        cmd
    }

    /// The launch's arguments after `launch`: the same for the person's `--resume latest`.
    fn args(&self, time: bool) -> Vec<String> {
        let c = &self.cell;
        let mut args: Vec<String> = vec!["gsm8k-canary".into(), "--job-name".into(), c.name()];
        if c.nodes > 1 {
            args.extend(["--nodes".into(), c.nodes.to_string()]);
        }
        if time && c.fault == Timeout {
            args.extend(["--time".into(), "00:01:00".into()]);
        }
        if c.fault == FullDisk {
            // The 4 MB disk is the fault; the stand-in trainer's saves are kilobytes, not the
            // gigabytes preflight sizes the canary's model at.
            args.extend(["--allow".into(), "disk-room".into()]);
        }
        args.push("--".into());
        for knob in [
            format!("trainer.max_steps={}", c.max_steps()),
            format!("trainer.ckpt_interval={CKPT_INTERVAL}"),
            format!("generator.num_inference_engines={}", c.nodes),
            "trainer.train_batch_size=8".into(),
            "trainer.policy_mini_batch_size=8".into(),
            "trainer.micro_forward_batch_size_per_gpu=2".into(),
            "trainer.micro_train_batch_size_per_gpu=2".into(),
            "generator.sampling_params.max_generate_length=64".into(),
            "trainer.logger=console".into(),
        ] {
            args.push(knob);
        }
        if c.fault == KillBeforeCleanup {
            args.push("trainer.max_ckpts_to_keep=1".into());
        }
        args
    }

    fn launch(&mut self) {
        let mut cmd = self.rlctl();
        cmd.arg("launch").args(self.args(true)).env(
            "RLCTL_STANDIN_STEP_SECONDS",
            if self.cell.trains_to_the_limit() {
                "3"
            } else {
                "1"
            },
        );
        if let Some(park) = self.cell.park() {
            cmd.env("RLCTL_STANDIN_PARK", park)
                .env("RLCTL_STANDIN_PARK_DIR", &self.park_dir);
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}: {}{}",
            self.cell.name(),
            stdout(&out),
            stderr(&out)
        );
        let jobs = super::job_ids(&stdout(&out));
        assert_eq!(jobs.len(), 1, "{}", stdout(&out));
        self.first_job = jobs[0].1.clone();
    }

    /// The steps the stand-in made whole, in order, from its save log.
    fn saves(&self) -> Vec<u64> {
        std::fs::read_to_string(self.ckpt.join("standin_saves.log"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.strip_prefix("step=")?.split(' ').next()?.parse().ok())
            .collect()
    }

    /// Every log of the run, oldest attempt first, joined.
    fn logs(&self) -> String {
        let dir = self
            .site
            .path()
            .join("work/rlctl/runs/gsm8k-canary")
            .join(self.cell.name());
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .flat_map(|a| std::fs::read_dir(a.path()).into_iter().flatten().flatten())
            .map(|f| f.path())
            .filter(|p| p.extension().is_some_and(|e| e == "out"))
            .collect();
        files.sort();
        files
            .iter()
            .map(|f| std::fs::read_to_string(f).unwrap_or_default())
            .collect()
    }

    fn last_logged_step(&self) -> u64 {
        let logs = self.logs();
        logs.lines()
            .filter_map(|l| {
                l.split_once("WANDB_MIRROR kind=train step=")?
                    .1
                    .split(' ')
                    .next()
            })
            .filter_map(|n| n.parse().ok())
            .max()
            .unwrap_or(0)
    }

    /// The step the run's first restart resumed from: its `Resuming from checkpoint` line, else
    /// 0 (a trainer that started again from nothing).
    fn resumed_from(&self) -> Option<u64> {
        let logs = self.logs();
        let starts = logs.matches("config overrides (stand-in trainer").count();
        let resumed = logs
            .split("Resuming from checkpoint ")
            .nth(1)
            .and_then(|rest| rest.split_once("global_step_"))
            .and_then(|(_, n)| n.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|n| n.parse().ok());
        match resumed {
            Some(step) => Some(step),
            None if starts >= 2 || (self.person && starts >= 1) => Some(0),
            None => None,
        }
    }

    fn ledger_jobs(&self) -> Vec<String> {
        std::fs::read_to_string(self.site.path().join("work/rlctl/runs/ledger.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter_map(|r| r["job_id"].as_str().map(str::to_owned))
            .collect()
    }

    fn parked_pid(&self) -> Option<String> {
        let text = std::fs::read_to_string(self.park_dir.join("parked")).ok()?;
        text.split_whitespace()
            .find_map(|kv| kv.strip_prefix("pid="))
            .map(str::to_owned)
    }

    /// Notes what was whole and logged, and strikes (the node failure strikes for its wave).
    fn strike(&mut self, cluster: &Cluster) {
        self.whole_at_fault = self.saves().last().copied().unwrap_or(0);
        self.logged_at_fault = self.last_logged_step();
        let pid = self.parked_pid();
        let signal = |sig: &str| {
            let pid = pid.clone().expect("a parked trainer");
            assert!(
                Command::new("kill")
                    .args([sig, &pid])
                    .status()
                    .unwrap()
                    .success()
            );
        };
        match self.cell.fault {
            Kill | TornPointer | KillBeforeCleanup => signal("-KILL"),
            Hang => signal("-STOP"),
            Timeout | NodeFail => {}
            EmptySqueue => self.squeue_answers_nothing(cluster),
            FullDisk => {
                fill(&self.ckpt.parent().unwrap().join("filler"));
                self.unpark();
            }
        }
        self.struck_at = Some(Instant::now());
        self.stage = Stage::Struck;
    }

    fn unpark(&self) {
        std::fs::write(self.park_dir.join("unpark"), "").unwrap();
    }

    /// Three tend passes whose squeue answers nothing while the job runs: none may act.
    fn squeue_answers_nothing(&mut self, cluster: &Cluster) {
        let empty = self.site.path().join("empty-squeue");
        std::fs::write(&empty, "#!/bin/sh\nexit 0\n").unwrap();
        Command::new("chmod")
            .arg("+x")
            .arg(&empty)
            .status()
            .unwrap();
        for _ in 0..3 {
            let out = self
                .rlctl()
                .arg("tend")
                .env("RLCTL_SQUEUE", &empty)
                .output()
                .unwrap();
            self.tend_said
                .push_str(&format!("{}{}", stdout(&out), stderr(&out)));
        }
        assert_eq!(
            self.ledger_jobs(),
            std::slice::from_ref(&self.first_job),
            "{}: tend acted on an empty squeue answer:\n{}",
            self.cell.name(),
            self.tend_said
        );
        assert_eq!(
            job_field(cluster, &self.first_job, "JobState"),
            "RUNNING",
            "{}: {}",
            self.cell.name(),
            self.tend_said
        );
        self.unpark();
    }

    /// What rlctl did since the fault, if anything yet.
    fn notice(&mut self, cluster: &Cluster) {
        if self.response.is_some() || self.stage != Stage::Struck {
            return;
        }
        let at = self.struck_at.unwrap().elapsed();
        let response = if self.ledger_jobs().len() > 1 {
            Some(Response::TendResumes)
        } else if job_field(cluster, &self.first_job, "Restarts") != "0"
            && !job_field(cluster, &self.first_job, "Restarts").is_empty()
        {
            Some(Response::SlurmRequeues)
        } else if self.looked {
            Some(Response::LeftForAPerson)
        } else {
            None
        };
        self.response = response.map(|r| (r, at));
    }

    /// What the person does with a run rlctl left to them: what its words say.
    fn act_as_the_person(&mut self) {
        if self.person {
            return;
        }
        self.person = true;
        if self.cell.fault == FullDisk {
            assert!(
                self.tend_said.contains("No space left on device"),
                "{}: tend did not name the full disk:\n{}",
                self.cell.name(),
                self.tend_said
            );
            std::fs::remove_file(self.ckpt.parent().unwrap().join("filler")).unwrap();
        } else {
            assert!(
                self.tend_said.contains("no checkpoint was saved"),
                "{}: {}",
                self.cell.name(),
                self.tend_said
            );
        }
        let out = self
            .rlctl()
            .arg("launch")
            .args(["--resume", "latest"])
            .args(self.args(false))
            .env("RLCTL_STANDIN_STEP_SECONDS", "1")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}: the person's launch --resume latest: {}{}",
            self.cell.name(),
            stdout(&out),
            stderr(&out)
        );
    }

    fn tend(&mut self) {
        let out = self.rlctl().arg("tend").output().unwrap();
        let said = format!("{}{}", stdout(&out), stderr(&out));
        self.looked |= out.status.code() == Some(1) && said.contains(&self.cell.name());
        self.tend_said.push_str(&said);
    }

    /// Whether the run is over: its last step saved and none of its jobs held by SLURM.
    fn over(&self, queued: &BTreeMap<String, String>) -> bool {
        self.saves().last() == Some(&self.cell.max_steps())
            && self.ledger_jobs().iter().all(|j| !queued.contains_key(j))
    }
}

/// Fills the filesystem holding `file` until it says ENOSPC.
fn fill(file: &Path) {
    use std::io::Write;
    let mut f = std::fs::File::create(file).unwrap();
    let block = vec![0u8; 4096];
    loop {
        match f.write_all(&block).and_then(|()| f.sync_all()) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(28) => return,
            Err(e) => panic!("filling {}: {e}", file.display()),
        }
    }
}

fn new_run(cluster: &Cluster, cell: Cell, disks: &mut Disks) -> Run {
    let site = Site::new(cluster);
    if cell.flavour == Upstream {
        let status = Command::new("python3")
            .arg(format!("{REPO}/tests/standin/upstream_checkout.py"))
            .arg(site.path().join("upstream-skyrl"))
            .status()
            .unwrap();
        assert!(status.success());
    }
    let presets = profile(&site, &cell);
    let folder = site
        .path()
        .join("work/rlctl/checkpoints/gsm8k-canary")
        .join(cell.name());
    if cell.fault == FullDisk {
        disks.mount(&folder, &site.path().join("disk.img"));
    }
    let park_dir = site.path().join("park");
    std::fs::create_dir_all(&park_dir).unwrap();
    Run {
        cell,
        presets,
        park_dir,
        ckpt: folder.join("ckpt"),
        site,
        first_job: String::new(),
        stage: Stage::Launched,
        struck_at: None,
        whole_at_fault: 0,
        logged_at_fault: 0,
        response: None,
        person: false,
        looked: false,
        failure: None,
        tend_said: String::new(),
        next_tend: Instant::now(),
    }
}

pub fn every_cell_resumes_from_its_newest_whole_step(cluster: &Cluster) {
    let started = Instant::now();
    let mut runs: Vec<Run> = Vec::new();
    let _guard = Guard { cluster };
    // Three waves: one-node cells; two-node cells, whose Ray clusters get the machine's two
    // cores to themselves; the node failures.
    // Two-node cells first in a wave: queued first, they get a quarter of each node before the
    // one-node cells fill one node and leave them waiting on cells that wait on them.
    let wave = |nodes: u32, fault: bool| -> Vec<Cell> {
        let mut cells: Vec<Cell> = (MATRIX.iter().copied())
            .filter(|c| (c.fault == NodeFail) == fault && (fault || c.nodes == nodes))
            .collect();
        cells.sort_by_key(|c| std::cmp::Reverse(c.nodes));
        cells
    };
    for wave in [wave(1, false), wave(2, false), wave(0, true)] {
        let from = runs.len();
        // Declared after `runs`: dropped first, before any site is removed.
        let mut disks = Disks {
            cluster,
            mounted: Vec::new(),
        };
        for cell in wave {
            let mut run = new_run(cluster, cell, &mut disks);
            run.launch();
            runs.push(run);
        }
        drive(cluster, &mut runs[from..]);
        println!("{}", table(&runs[from..]));
    }
    let failures: Vec<String> = runs.iter().filter_map(|r| r.failure.clone()).collect();
    let table = table(&runs);
    let took = started.elapsed();
    let doc = format!(
        "# The fault matrix\n\n\
         Written by the real-cluster test `faults_every_cell_resumes_from_its_newest_whole_step` \
         (`tests/real_slurm/faults.rs`), which fails unless every cell is correct. Each cell is one \
         run of the stand-in trainer on the project's two-node SLURM cluster, faulted once at the \
         phase named; from then on only `rlctl tend` runs (every {TEND_EVERY_S} s here, as cron would every \
         few minutes), and where rlctl leaves a run for a person, the person does what its words \
         say. `ckpt_interval` is {CKPT_INTERVAL}. *Whole at the fault* is the newest step the \
         trainer had saved whole (its `trainer_state.pt` written) when the fault struck; \
         *resumed from* is the step the next trainer started from; *lost* counts the steps \
         logged before the fault and trained again; *detected* is the time from the fault to \
         rlctl's response (a new attempt, SLURM's requeue, or tend's words), which includes \
         tend's cadence and, for a hang, the hang limit (`[watch] stall_floor_s = 15`).\n\n\
         {table}\n{} cells, {} correct, in {:.0} s of wall time, side by side.\n",
        runs.len(),
        runs.len() - failures.len(),
        took.as_secs_f64()
    );
    println!("{doc}");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    std::fs::create_dir_all(format!("{REPO}/docs")).unwrap();
    std::fs::write(format!("{REPO}/docs/fault-matrix.md"), &doc).unwrap();
}

fn panic_text(e: &(dyn std::any::Any + Send)) -> String {
    (e.downcast_ref::<String>().cloned())
        .or_else(|| e.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "a panic".to_owned())
}

/// Runs a wave of cells to their ends: strikes each as it parks (a node failure once every cell
/// of its wave has parked), runs tend, does what a person is told, and checks each cell.
// A Timeout cell not timed out yet must not fall through to the other `Launched` arms.
#[allow(clippy::collapsible_match)]
fn drive(cluster: &Cluster, runs: &mut [Run]) {
    let start = Instant::now();
    let mut nodes_down: Option<Instant> = None;
    let mut revived = false;
    loop {
        let queued = queue(cluster);
        for run in runs.iter_mut() {
            match run.stage {
                Stage::Launched if run.cell.fault == Timeout => {
                    if job_field(cluster, &run.first_job, "JobState") == "TIMEOUT" {
                        run.strike(cluster);
                    }
                }
                Stage::Launched if run.parked_pid().is_some() => {
                    if run.cell.fault == NodeFail {
                        run.stage = Stage::Parked;
                    } else {
                        run.strike(cluster);
                    }
                }
                _ => {}
            }
        }
        // The node failures strike together, once all of them are parked.
        if nodes_down.is_none() && !runs.is_empty() && runs.iter().all(|r| r.stage == Stage::Parked)
        {
            for run in runs.iter_mut() {
                run.strike(cluster);
            }
            cluster.kill_slurmd("n1");
            cluster.kill_slurmd("n2");
            nodes_down = Some(Instant::now());
        }
        if let Some(at) = nodes_down
            && !revived
            && (runs.iter().all(|r| r.response.is_some())
                || at.elapsed() > Duration::from_secs(150))
        {
            // The nodes died: so did everything that ran on them (every job step's slurmstepd
            // and what it started, not only the parked trainer: a step left alive makes the
            // revived slurmd refuse the requeued job as a duplicate and drain its node). Only
            // now, after the requeue, as a stepd still alive before would have reported its
            // job ended to slurmctld. This wave runs alone on the cluster.
            for run in runs.iter() {
                if let Some(pid) = run.parked_pid() {
                    let _ = Command::new("kill").args(["-KILL", &pid]).status();
                }
            }
            kill_every_job_process();
            cluster.restart_slurmd("n1").unwrap();
            cluster.restart_slurmd("n2").unwrap();
            revived = true;
        }
        let tend_allowed = nodes_down.is_none_or(|_| revived);
        for run in runs.iter_mut() {
            if run.stage == Stage::Done {
                continue;
            }
            // Cron runs all along: before the fault too, where a healthy run must be left alone
            // (not in the node failures' wave while its cells wait for each other, parked).
            let tendable = match run.stage {
                Stage::Struck => tend_allowed,
                Stage::Launched => run.cell.fault != NodeFail,
                _ => false,
            };
            if tendable && Instant::now() >= run.next_tend {
                run.tend();
                run.next_tend = Instant::now() + Duration::from_secs(TEND_EVERY_S);
            }
            if run.stage != Stage::Struck {
                continue;
            }
            run.notice(cluster);
            if run.looked && run.cell.expected() == Response::LeftForAPerson {
                run.act_as_the_person();
            }
            if run.over(&queued) {
                run.stage = Stage::Done;
                run.failure = catch_unwind(AssertUnwindSafe(|| check(run)))
                    .err()
                    .map(|e| panic_text(&*e));
            }
        }
        if runs.iter().all(|r| r.stage == Stage::Done) {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(900),
            "cells not done after {:?}: {}",
            start.elapsed(),
            runs.iter()
                .filter(|r| r.stage != Stage::Done)
                .map(|r| format!(
                    "\n{} ({:?}, saves {:?}, jobs {:?}):\n{}\n{}",
                    r.cell.name(),
                    r.stage,
                    r.saves(),
                    r.ledger_jobs(),
                    r.tend_said,
                    tail(&r.logs(), 30)
                ))
                .collect::<String>()
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// SIGKILLs every `slurmstepd` on this machine and every process below one, and waits (10 s at
/// most) until none is left: what a node failure does to the jobs of both nodes.
fn kill_every_job_process() {
    let start = Instant::now();
    loop {
        let doomed = job_processes();
        if doomed.is_empty() {
            return;
        }
        for pid in &doomed {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "job processes still alive 10 s after SIGKILL: {doomed:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The live (not zombie) `slurmstepd` processes and their descendants, read from /proc.
fn job_processes() -> Vec<u32> {
    // (pid, parent, comm, zombie) of every process; `comm` is in parentheses and may hold spaces.
    let procs: Vec<(u32, u32, String, bool)> = (std::fs::read_dir("/proc").unwrap().flatten())
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            let (head, rest) = stat.rsplit_once(") ")?;
            let comm = head.split_once(" (")?.1.to_owned();
            let mut fields = rest.split_whitespace();
            let zombie = fields.next()? == "Z";
            let parent = fields.next()?.parse().ok()?;
            Some((pid, parent, comm, zombie))
        })
        .collect();
    let mut doomed: Vec<u32> = (procs.iter())
        .filter(|p| p.2 == "slurmstepd")
        .map(|p| p.0)
        .collect();
    let mut i = 0;
    while i < doomed.len() {
        let parent = doomed[i];
        doomed.extend(procs.iter().filter(|p| p.1 == parent).map(|p| p.0));
        i += 1;
    }
    doomed.retain(|pid| procs.iter().any(|p| p.0 == *pid && !p.3));
    doomed
}

fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// A cell's score: the right response, resumed from the newest whole step, at most
/// `ckpt_interval` steps lost, every checkpoint written once.
fn check(run: &Run) {
    let name = run.cell.name();
    let why = || format!("{name}:\n{}\n{}", run.tend_said, tail(&run.logs(), 60));
    let response = run.response.map(|(r, _)| r);
    let expected = run.cell.expected();
    if expected == Response::NothingToDo {
        assert_eq!(response, None, "{}", why());
        assert_eq!(run.ledger_jobs().len(), 1, "{}", why());
        assert_eq!(run.resumed_from(), None, "{}", why());
    } else {
        assert_eq!(response, Some(expected), "{}", why());
        assert_eq!(
            run.resumed_from(),
            Some(run.whole_at_fault),
            "resumed from the newest whole step: {}",
            why()
        );
        assert!(
            run.logged_at_fault.saturating_sub(run.whole_at_fault) <= CKPT_INTERVAL,
            "{}",
            why()
        );
    }
    let saves = run.saves();
    let once: Vec<u64> = (1..=run.cell.max_steps() / CKPT_INTERVAL)
        .map(|n| n * CKPT_INTERVAL)
        .collect();
    assert_eq!(saves, once, "every checkpoint written once: {}", why());
}

fn table(runs: &[Run]) -> String {
    let mut out = String::from(
        "| cell | fault | phase | nodes | SkyRL | rlctl's response | whole at the fault | resumed from | lost | detected | correct |\n\
         |---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for run in runs {
        let (fault, phase) = run.cell.label();
        let response = match run.response {
            None => "none (nothing to do)".to_owned(),
            Some((Response::TendResumes, _)) => "tend resumed it".into(),
            Some((Response::SlurmRequeues, _)) => "SLURM requeued it".into(),
            Some((Response::LeftForAPerson, _)) => {
                "left for a person, who resumed it as told".into()
            }
            Some((Response::NothingToDo, _)) => unreachable!(),
        };
        let resumed = run
            .resumed_from()
            .map_or_else(|| "-".to_owned(), |s| s.to_string());
        let lost = match run.resumed_from() {
            Some(from) => run.logged_at_fault.saturating_sub(from).to_string(),
            None => "0".into(),
        };
        let detected = run.response.map_or_else(
            || "-".to_owned(),
            |(_, d)| format!("{:.0} s", d.as_secs_f64()),
        );
        let _ = writeln!(
            out,
            "| `{}` | {fault} | {phase} | {} | {} | {response} | {} | {resumed} | {lost} | {detected} | {} |",
            run.cell.name(),
            run.cell.nodes,
            match run.cell.flavour {
                Marin => "MarinSkyRL",
                Upstream => "upstream",
            },
            run.whole_at_fault,
            if run.failure.is_none() {
                "yes"
            } else {
                "**no**"
            },
        );
    }
    out
}

/// However the test ends: both slurmds back, and, if it failed, its jobs cancelled, so the
/// tests after it find both nodes in service and free.
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
        for node in ["n1", "n2"] {
            if self.cluster.slurmd_pid(node).is_none()
                && let Err(why) = self.cluster.restart_slurmd(node)
            {
                eprintln!("{why}");
            }
        }
        // Slurm 22.05.8 keeps a GPU of each node counted as allocated after the node failures'
        // requeues (`AllocTRES=gres/gpu=1` on idle nodes), and a later test's whole-node job
        // then waits on Resources for ever; a reconfigure recounts from the jobs it holds.
        let _ = self.cluster.client("scontrol").arg("reconfigure").status();
        let start = Instant::now();
        while !queue(self.cluster).is_empty()
            || ["n1", "n2"].iter().any(|n| gpus_held(self.cluster, n))
        {
            if start.elapsed() > Duration::from_secs(30) {
                eprintln!("the nodes still hold GPUs 30 s after the matrix ended");
                break;
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    }
}

/// Whether SLURM counts any of `node`'s GPUs as allocated.
fn gpus_held(cluster: &Cluster, node: &str) -> bool {
    let out = (cluster.client("scontrol"))
        .args(["show", "node", node])
        .output()
        .unwrap();
    (String::from_utf8_lossy(&out.stdout).split_whitespace())
        .any(|w| w.starts_with("AllocTRES=") && w.contains("gres/gpu="))
}
