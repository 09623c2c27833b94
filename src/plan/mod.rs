//! One resolved plan: cluster + preset (+ cell) + flags + overrides, decided once. Rendering
//! and submission read only this.

pub mod ask;
pub mod env;
pub mod estimate;
pub mod layers;
mod naming;
mod options;
pub mod overrides;
pub mod phases;
mod sequence;
pub mod work;

use crate::error::{Error, Result};
use crate::preset::Selection;
use crate::preset::cluster::{
    Cluster, Container, GpuRequest, HeadAddress, Purge, Runtime, SbatchHeader,
};
use crate::preset::container::{Entry, Exec};
use crate::preset::run::{Reference, RunPreset};
use crate::preset::walltime::Walltime;
use crate::schema::Schema;
use crate::schema::flavour::Flavour;
use crate::schema::grammar::knob_toml;
use crate::schema::knob::set_knob;
use crate::schema::knob::toml_text;
use crate::schema::knob::{Knob, Origin};
use crate::util::names::{LOG_FOLDER, PLAIN_WORD, is_log_folder, is_plain_word};
use camino::{Utf8Path, Utf8PathBuf};
use naming::Naming;
use serde::{Serialize, Serializer};

pub use options::{
    Chain, DEFAULT_MAX_SLOTS, MAX_CHAIN, MAX_MAX_SLOTS, PlanOptions, Resume, UntilDone,
};

#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    /// The run's name: `preset`, `preset/job-name` (with `--job-name`), or `grid/cell`.
    pub target: String,
    /// The grid of a cell; `None` for a preset's run. Not part of the shown plan.
    #[serde(skip)]
    pub grid: Option<String>,
    pub description: String,
    pub cluster: String,
    /// Which SkyRL runs the plan; the knobs keep MarinSkyRL's names either way.
    pub flavour: Flavour,
    /// The entry module, under the flavour's name.
    pub entrypoint: String,
    /// The knobs' keys the trainer spells otherwise (upstream's renames), by rlctl's name.
    #[serde(skip)]
    pub trainer_names: std::collections::BTreeMap<String, String>,
    pub resume: Resume,
    pub wipe: bool,
    /// `--until-done`: the job requeues itself at the end of each slot until the run is done.
    pub until_done: Option<UntilDone>,
    pub job: Job,
    pub paths: Paths,
    pub container: ContainerPlan,
    /// Variables passed into the container, in order.
    #[serde(serialize_with = "pairs_as_table")]
    pub env: Vec<(String, String)>,
    /// Variables exported on the nodes themselves, for every step and Ray process.
    #[serde(serialize_with = "pairs_as_table")]
    pub host_env: Vec<(String, String)>,
    /// How a multi-node job brings up Ray; absent for one node.
    pub ray: Option<RayPlan>,
    /// Where W&B keeps the run, when `trainer.logger` includes `wandb`; absent otherwise.
    pub wandb: Option<WandbPlan>,
    /// Hydra overrides in the order they reach the trainer; each key once. Shown by
    /// [`Plan::to_toml`], each with its layer.
    #[serde(skip)]
    pub knobs: Vec<Knob>,
    /// The recipe's knobs the trainer has no counterpart for, left out of `knobs` and said
    /// (MarinSkyRL's OPD on upstream skyrl: `plan::layers`).
    #[serde(skip)]
    pub left_out: Vec<Knob>,
    /// The preset's declared speed, for estimates before any run is recorded.
    #[serde(skip)]
    pub reference: Option<Reference>,
    /// The profile's seconds from a job's start to its first step, for estimates.
    #[serde(skip)]
    pub startup_s: u64,
    /// `startup_s` is the p95 measured by recorded runs of the same model and nodes
    /// (`runs::phases`), not the profile's constant.
    #[serde(skip)]
    pub startup_measured: bool,
    /// The profile's file systems that delete old files, for the run's estimate to fit.
    #[serde(skip)]
    pub purge: Vec<Purge>,
    /// What the step count depends on, as the trainer reads it, for estimates.
    #[serde(skip)]
    pub schedule: estimate::Schedule,
    /// What each whole checkpoint of the run holds beyond the model files (its LoRA adapter).
    #[serde(skip)]
    pub saves: crate::checkpoint::Expect,
}

#[derive(Debug, Clone, Serialize)]
pub struct Job {
    pub name: String,
    /// The profile's words the header carries as they are: account, partition, reservation...
    #[serde(flatten)]
    pub sbatch: SbatchHeader,
    pub qos: String,
    pub time: Walltime,
    pub nodes: u32,
    pub cpus_per_task: u32,
    pub gpus_per_node: u32,
    #[serde(skip_serializing_if = "GpuRequest::is_gres")]
    pub gpu_request: GpuRequest,
    pub mem: String,
    /// SLURM's `%x_%j.out` in the run folder: one log for stdout and stderr.
    pub log: Utf8PathBuf,
    /// Where the job starts (`--chdir`): its run folder, when the profile says some folders are
    /// not visible on compute nodes (sbatch's default, the submitting folder, may be one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chdir: Option<Utf8PathBuf>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Paths {
    /// This submission's folder: the scripts that ran, the log, the submission record.
    pub run_dir: Utf8PathBuf,
    pub sbatch_script: Utf8PathBuf,
    pub run_script: Utf8PathBuf,
    /// The profile's checkpoint root: every checkpoint folder is under it.
    pub checkpoint_root: Utf8PathBuf,
    /// The run's folder under the checkpoint root, unique per preset run and per cell.
    pub checkpoint_dir: Utf8PathBuf,
    pub ckpt_path: Utf8PathBuf,
    pub export_path: Utf8PathBuf,
    /// The folder the trainer runs in and imports from: `skyrl-train/` of a MarinSkyRL
    /// checkout, an upstream checkout's root.
    pub trainer_dir: Utf8PathBuf,
    pub venv_python: Utf8PathBuf,
    pub home: Utf8PathBuf,
    pub gcc_bin: Utf8PathBuf,
    pub cache_dirs: Vec<Utf8PathBuf>,
    /// Ray's temp dir is `<ray_tmp_root>/r<job id>`, short for its socket paths.
    pub ray_tmp_root: Utf8PathBuf,
}

/// A run that logs to W&B: one W&B run across all its slots and chain links, kept beside its
/// checkpoints (the job reads and writes these; see sbatch.sh).
#[derive(Debug, Clone, Serialize)]
pub struct WandbPlan {
    /// `WANDB_DIR`, which W&B writes its offline runs under (`<dir>/wandb/offline-run-*`).
    pub dir: Utf8PathBuf,
    /// The run's `WANDB_RUN_ID`: written by a fresh start, read by every resume.
    pub run_id_file: Utf8PathBuf,
}

impl WandbPlan {
    pub fn in_folder(checkpoint_dir: &Utf8Path) -> WandbPlan {
        WandbPlan {
            dir: wandb_dir_in(checkpoint_dir),
            run_id_file: checkpoint_dir.join("wandb_run_id"),
        }
    }
}

/// A multi-node job's Ray cluster: head on the first node, one worker on each other node.
#[derive(Debug, Clone, Serialize)]
pub struct RayPlan {
    pub head_address: HeadAddress,
    /// The NIC whose address the head uses (with `head_address = "interface"`).
    pub interface: String,
    /// What makes a hostname the interconnect's name (with `head_address = "hostname_suffix"`).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub hostname_suffix: String,
    /// Seconds to wait for the head, then for every GPU to join, before failing the job.
    pub timeout_s: u32,
    pub cpus_per_node: u32,
    pub gpus_per_node: u32,
}

#[derive(Debug, Clone, Serialize)]
pub struct ContainerPlan {
    pub runtime: Runtime,
    pub program: Utf8PathBuf,
    pub image: Utf8PathBuf,
    pub binds: Vec<Utf8PathBuf>,
    /// Mounted read-only over the image.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub overlays: Vec<Utf8PathBuf>,
    /// Loaded (`module load`) before the container runs.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub modules: Vec<String>,
}

impl Plan {
    /// The one plan of a target: each step below decides one part, in the order the guide
    /// (docs/guide/first-run.md) gives for precedence (preset, grid, cell, flags, overrides, then
    /// rlctl's own keys).
    /// `schema` is the cluster's SkyRL key list.
    pub fn resolve(
        selection: &Selection,
        cluster: &Cluster,
        schema: &Schema,
        options: &PlanOptions,
        overrides: &[Knob],
    ) -> Result<Plan> {
        let naming = Naming::of(selection, options)?;
        let preset = &selection.preset;
        check_name("--job-name", &naming.job_name)?;
        let paths = paths(
            cluster,
            schema.flavour(),
            &naming,
            options.run_dir.as_deref(),
        )?;
        let job = job(cluster, preset, &naming, options, &paths.run_dir)?;
        let resume = resume_of(options)?;
        let (mut knobs, left_out) = layers::assemble_leaving_out(&layers::Sources {
            selection,
            nodes: job.nodes,
            nodes_from_flag: options.nodes.is_some(),
            gpus_per_node: cluster.node.gpus,
            profile: &cluster.name,
            data_dir: &cluster.storage.data_root.join(&preset.dataset),
            overrides,
            schema,
        })?;
        set_rlctl_knobs(&mut knobs, schema, resume, &paths)?;
        let saves = saves(&knobs, schema);
        let schedule = schedule(preset, cluster, schema, &knobs)?;
        let wandb =
            env::logs_to_wandb(&knobs, schema).then(|| WandbPlan::in_folder(&paths.checkpoint_dir));
        let env = env::container_env(
            cluster,
            &paths.trainer_dir,
            &paths.venv_python,
            job.nodes,
            wandb.as_ref(),
        )?;
        Ok(Plan {
            target: naming.target(selection),
            grid: selection.cell.map(|c| c.grid.to_owned()),
            description: naming.description(selection),
            cluster: cluster.name.clone(),
            flavour: schema.flavour(),
            entrypoint: schema.entry_module(&preset.entrypoint),
            trainer_names: (knobs.iter())
                .map(|k| (k.path(), schema.trainer_key(k.path())))
                .filter(|(own, theirs)| own != theirs)
                .map(|(own, theirs)| (own.to_owned(), theirs.into_owned()))
                .collect(),
            resume,
            wipe: options.wipe,
            until_done: options
                .until_done
                .map(|n| UntilDone::new(n, cluster.requeue_grace_s, job.time.seconds())),
            container: ContainerPlan::of(&cluster.container),
            env,
            host_env: env::host_env(cluster),
            ray: (job.nodes > 1).then(|| RayPlan::of(cluster)),
            wandb,
            job,
            paths,
            knobs,
            left_out,
            reference: preset.reference.clone(),
            startup_s: cluster.startup_s,
            startup_measured: false,
            purge: cluster.storage.purge.clone(),
            schedule,
            saves,
        })
    }
}

/// `--resume`, fresh unless asked; a wipe with `--resume latest` is refused.
fn resume_of(options: &PlanOptions) -> Result<Resume> {
    let resume = options.resume.unwrap_or(Resume::Fresh);
    if options.wipe && resume == Resume::Latest {
        return Err(Error::BadFlag {
            flag: "--wipe",
            value: "with --resume latest".into(),
            reason: "a wipe deletes the checkpoints a resume would continue from; pick one".into(),
        });
    }
    Ok(resume)
}

/// rlctl's own keys over the layers' (resume mode, checkpoint and export paths, upstream's log
/// path), then every interpolation checked.
fn set_rlctl_knobs(
    knobs: &mut Vec<Knob>,
    schema: &Schema,
    resume: Resume,
    paths: &Paths,
) -> Result<()> {
    for (key, value) in [
        ("trainer.resume_mode", resume.hydra().to_owned()),
        ("trainer.ckpt_path", paths.ckpt_path.to_string()),
        ("trainer.export_path", paths.export_path.to_string()),
    ] {
        set_knob(knobs, Knob::typed(key, value.into(), Origin::Rlctl));
    }
    // Upstream writes every Ray worker's log to `trainer.log_path`, node-local `/tmp` by
    // default: unless a layer says where, it goes beside the run's checkpoints, on every node.
    if schema.default_text(LOG_PATH_KEY).is_some()
        && !knobs.iter().any(|k| k.path() == LOG_PATH_KEY)
    {
        let logs = paths.checkpoint_dir.join("skyrl-logs").to_string();
        set_knob(knobs, Knob::typed(LOG_PATH_KEY, logs.into(), Origin::Rlctl));
    }
    overrides::check_interpolations(knobs, schema)
}

/// How long the run's steps take and how it saves: from its knobs, with the preset's reference
/// (when it has one) measured on the preset's own knobs, at its own node count.
fn schedule(
    preset: &RunPreset,
    cluster: &Cluster,
    schema: &Schema,
    knobs: &[Knob],
) -> Result<estimate::Schedule> {
    let mut schedule = estimate::Schedule::of(knobs, schema);
    // The reference was measured on the preset's own knobs, at its own node count.
    if preset.reference.is_some() {
        let own = layers::assemble(&layers::Sources {
            selection: &Selection {
                preset: preset.clone(),
                cell: None,
            },
            nodes: preset.nodes,
            nodes_from_flag: false,
            gpus_per_node: cluster.node.gpus,
            profile: &cluster.name,
            data_dir: &cluster.storage.data_root.join(&preset.dataset),
            overrides: &[],
            schema,
        })?;
        schedule.reference_work = Some(work::Work::of_knobs(&own, &schedule.work_defaults));
    }
    Ok(schedule)
}

impl ContainerPlan {
    /// The profile's container, as the job runs it.
    fn of(container: &Container) -> ContainerPlan {
        ContainerPlan {
            runtime: container.runtime,
            program: container.program.clone(),
            image: container.image.clone(),
            binds: container.binds.clone(),
            overlays: container.overlays.clone(),
            modules: container.modules.clone(),
        }
    }

    /// The words that run a command in the container: [`Entry::exec_argv`].
    pub fn exec_argv(&self, how: &Exec) -> Vec<String> {
        Entry {
            runtime: self.runtime,
            program: &self.program,
            image: &self.image,
            binds: &self.binds,
            overlays: &self.overlays,
        }
        .exec_argv(how)
    }
}

impl RayPlan {
    /// How a multi-node job's Ray cluster comes up on the profile's nodes and network.
    fn of(cluster: &Cluster) -> RayPlan {
        RayPlan {
            head_address: cluster.network.head_address,
            interface: cluster.node.interconnect.clone(),
            hostname_suffix: cluster.network.hostname_suffix.clone(),
            timeout_s: cluster.network.ray_timeout_s,
            cpus_per_node: cluster.node.cpus,
            gpus_per_node: cluster.node.gpus,
        }
    }
}

/// What the run's saves write beyond the model files, as the trainer reads its knobs.
fn saves(knobs: &[Knob], schema: &Schema) -> crate::checkpoint::Expect {
    let values = crate::schema::resolve::Resolver { knobs, schema };
    crate::checkpoint::Expect {
        lora: values
            .int(crate::checkpoint::LORA_RANK)
            .is_some_and(|r| r > 0),
    }
}

/// The SLURM job: flags over the grid over the preset, on the profile's node shape.
fn job(
    cluster: &Cluster,
    preset: &RunPreset,
    naming: &Naming,
    options: &PlanOptions,
    run_dir: &Utf8Path,
) -> Result<Job> {
    let nodes = options.nodes.unwrap_or(preset.nodes);
    if nodes == 0 {
        return Err(Error::BadFlag {
            flag: "--nodes",
            value: "0".into(),
            reason: "a run needs at least one node".into(),
        });
    }
    let asked = (options.qos.clone())
        .or(naming.grid_qos.clone())
        .unwrap_or(preset.qos.clone());
    let qos = cluster.qos_for(&asked)?.name.clone();
    for (what, text) in [
        ("account", cluster.sbatch.account.as_str()),
        ("partition", cluster.sbatch.partition.as_str()),
        ("--qos", qos.as_str()),
        ("node.mem", cluster.node.mem.as_str()),
    ] {
        check_name(what, text)?;
    }
    Ok(Job {
        name: naming.job_name.clone(),
        sbatch: cluster.sbatch.clone(),
        qos,
        time: options.time.or(naming.grid_time).unwrap_or(preset.time),
        nodes,
        cpus_per_task: cluster.node.cpus_per_task(),
        gpus_per_node: cluster.node.gpus,
        gpu_request: cluster.gpu_request,
        mem: cluster.node.mem.clone(),
        log: run_dir.join(LOG_NAME),
        chdir: (!cluster.storage.compute_visible.is_empty()).then(|| run_dir.to_owned()),
    })
}

/// The run's folders: `<root>/<group>/<member>` under the checkpoint and run roots, and a new
/// numbered run folder for this submission, unless `run_dir` names one.
fn paths(
    cluster: &Cluster,
    flavour: Flavour,
    naming: &Naming,
    run_dir: Option<&Utf8Path>,
) -> Result<Paths> {
    let storage = &cluster.storage;
    let checkpoint_dir = storage
        .checkpoint_root
        .join(&naming.group)
        .join(&naming.member);
    let run_dir = match run_dir {
        Some(dir) => dir.to_owned(),
        None => {
            let run_base = storage.run_root.join(&naming.group).join(&naming.member);
            run_base.join(format!("{:03}", next_attempt(&run_base)?))
        }
    };
    check_log_dir(&run_dir)?;
    Ok(Paths {
        sbatch_script: run_dir.join("sbatch.sh"),
        run_script: run_dir.join("run.sh"),
        run_dir,
        checkpoint_root: storage.checkpoint_root.clone(),
        ckpt_path: ckpt_path_in(&checkpoint_dir),
        export_path: export_path_in(&checkpoint_dir),
        checkpoint_dir,
        trainer_dir: flavour.working_folder(&cluster.software.skyrl),
        venv_python: cluster.software.venv.join("bin/python"),
        home: storage.home.clone(),
        gcc_bin: cluster.software.gcc_bin.clone(),
        cache_dirs: ["vllm", "triton", "flashinfer", "xdg"]
            .map(|name| storage.cache_root.join(name))
            .to_vec(),
        ray_tmp_root: storage.ray_tmp_root.clone(),
    })
}

/// Where SkyRL keeps the checkpoints of the run whose folder is `checkpoint_dir`
/// (`trainer.ckpt_path`): its `global_step_*` folders and its `latest_ckpt_global_step.txt`.
pub fn ckpt_path_in(checkpoint_dir: &Utf8Path) -> Utf8PathBuf {
    checkpoint_dir.join("ckpt")
}

/// Where SkyRL writes the exported model of the run whose folder is `checkpoint_dir`
/// (`trainer.export_path`); `rlctl clean` keeps it unless asked with `--exports`.
pub fn export_path_in(checkpoint_dir: &Utf8Path) -> Utf8PathBuf {
    checkpoint_dir.join("export")
}

/// `WANDB_DIR` of the run whose folder is `checkpoint_dir`: on the same storage as its
/// checkpoints, so that every slot finds it and `tend --sync-wandb` can sync it.
pub fn wandb_dir_in(checkpoint_dir: &Utf8Path) -> Utf8PathBuf {
    checkpoint_dir.join("wandb")
}

/// The job's log in its run folder, as SLURM's `--output` pattern: job name and id.
const LOG_NAME: &str = "%x_%j.out";

/// Where upstream SkyRL's Ray workers write their logs (MarinSkyRL's config has no such key).
pub const LOG_PATH_KEY: &str = "trainer.log_path";

/// The file beside a job's log that its wrapper touches every [`ALIVE_EVERY_S`] seconds while
/// it runs: its modification time is the compute node's clock, as the log's is, so the hang
/// watchdog times a quiet log on one clock (`runs::stall`).
pub fn alive_file(log: &Utf8Path) -> Utf8PathBuf {
    let name = log.file_name().unwrap_or("log");
    log.with_file_name(format!(".{name}.alive"))
}

/// How often the wrapper touches its alive file.
pub const ALIVE_EVERY_S: u64 = 30;

/// The override the job decides at run time, slot by slot, and passes to the trainer last.
pub const RESUME_KEY: &str = "trainer.resume_mode";

impl Plan {
    /// The overrides the trainer receives, in its order: every knob, the resume mode last (the
    /// job passes the one it decides at run time there; this plan's value is its first slot's).
    pub fn trainer_overrides(&self) -> impl Iterator<Item = &Knob> {
        let resume = self.knobs.iter().filter(|k| k.path() == RESUME_KEY);
        (self.knobs.iter())
            .filter(|k| k.path() != RESUME_KEY)
            .chain(resume)
    }

    /// The override the trainer receives for `knob`, in its flavour's grammar and names:
    /// upstream's parser refuses `+`, and knows some keys by other names.
    pub fn trainer_arg(&self, knob: &Knob) -> String {
        match self.flavour {
            Flavour::Marin => knob.hydra_arg(),
            Flavour::Upstream => {
                let path = knob.path();
                let name = self.trainer_names.get(path).map_or(path, String::as_str);
                format!("{name}={}", knob.value.hydra_text())
            }
        }
    }

    /// The log SLURM writes for job `job_id` of this plan: [`LOG_NAME`] filled in.
    pub fn log_file(&self, job_id: &str) -> Utf8PathBuf {
        let name = LOG_NAME.replace("%x", &self.job.name).replace("%j", job_id);
        self.paths.run_dir.join(name)
    }

    /// The alive file of job `job_id` (see [`alive_file`]).
    pub fn alive_file_of(&self, job_id: &str) -> Utf8PathBuf {
        alive_file(&self.log_file(job_id))
    }

    /// Link `n` (from 1) of a chain of jobs over one checkpoint folder: its own run folder
    /// after this plan's, and a resume from the newest checkpoint.
    pub fn chained(&self, n: u32) -> Plan {
        let mut plan = self.clone();
        let base = self
            .paths
            .run_dir
            .parent()
            .expect("run folders are absolute");
        let first: u32 = self
            .paths
            .run_dir
            .file_name()
            .and_then(|a| a.parse().ok())
            .unwrap_or(1);
        let run_dir = base.join(format!("{:03}", first + n));
        plan.job.log = run_dir.join(LOG_NAME);
        if plan.job.chdir.is_some() {
            plan.job.chdir = Some(run_dir.clone());
        }
        plan.paths.sbatch_script = run_dir.join("sbatch.sh");
        plan.paths.run_script = run_dir.join("run.sh");
        plan.paths.run_dir = run_dir;
        plan.resume = Resume::Latest;
        plan.wipe = false;
        let resume = Knob::typed(
            "trainer.resume_mode",
            Resume::Latest.hydra().into(),
            Origin::Rlctl,
        );
        for knob in plan
            .knobs
            .iter_mut()
            .filter(|k| k.path() == "trainer.resume_mode")
        {
            *knob = resume.clone();
        }
        plan
    }
}

/// The next free attempt number under a run's folder; each submission gets its own, so a
/// queued job's scripts are never overwritten by a later launch.
fn next_attempt(run_base: &Utf8Path) -> Result<u32> {
    let entries = match run_base.read_dir_utf8() {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(1),
        Err(e) => return Err(Error::io("read", run_base, e)),
    };
    let mut last = 0;
    for entry in entries.flatten() {
        if let Ok(n) = entry.file_name().parse::<u32>() {
            last = last.max(n);
        }
    }
    Ok(last + 1)
}

/// Names that go on `#SBATCH` lines unquoted (sbatch reads those lines itself, not the shell)
/// and name folders: plain words only.
fn check_name(what: &'static str, text: &str) -> Result<()> {
    if is_plain_word(text) {
        return Ok(());
    }
    Err(Error::BadFlag {
        flag: what,
        value: text.to_owned(),
        reason: PLAIN_WORD.into(),
    })
}

fn check_log_dir(run_dir: &Utf8Path) -> Result<()> {
    if !is_log_folder(run_dir.as_str()) {
        return Err(Error::Unsupported(format!(
            "run folder `{run_dir}`: {LOG_FOLDER}"
        )));
    }
    Ok(())
}

fn pairs_as_table<S: Serializer>(pairs: &[(String, String)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(pairs.iter().map(|(k, v)| (k, v)))
}

impl Plan {
    /// The plan as `show` prints it: TOML, the knobs last, each typed as hydra types it and
    /// followed by a comment naming the layer that set it.
    pub fn to_toml(&self) -> Result<String> {
        let mut text = toml::to_string(self).map_err(|e| Error::Unsupported(e.to_string()))?;
        text.push_str("\n[knobs]\n");
        for (key, value, origin) in self.shown_knobs() {
            let key = toml::Value::String(key);
            let value = toml_text(&value);
            text.push_str(&format!("{key} = {value}  # {origin}\n"));
        }
        Ok(text)
    }

    /// Each knob as `show` gives it: its key as the trainer reads it (upstream's names, and no
    /// `+`), its value typed as hydra types it, and the layer that set it.
    pub fn shown_knobs(&self) -> impl Iterator<Item = (String, toml::Value, &Origin)> {
        self.knobs.iter().map(|knob| {
            let key = match self.flavour {
                Flavour::Marin => knob.key.clone(),
                Flavour::Upstream => {
                    let path = knob.path();
                    self.trainer_names
                        .get(path)
                        .map_or(path, String::as_str)
                        .to_owned()
                }
            };
            (key, knob_toml(&knob.value), &knob.origin)
        })
    }
}
