//! One resolved plan: cluster + preset (+ cell) + flags + overrides, decided once. Rendering
//! and submission read only this.

use crate::cluster::{Cluster, Runtime};
use crate::error::{Error, Result};
use crate::knob::{Knob, Origin};
use crate::library::{Library, Target, target_name};
use crate::overrides::FORCED_KEYS;
use crate::preset::set_knob;
use crate::walltime::Walltime;
use camino::{Utf8Path, Utf8PathBuf};
use serde::{Serialize, Serializer};

/// `trainer.resume_mode`: always explicit, so no default can wipe or resume by accident.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Resume {
    /// Start from step 0 (`trainer.resume_mode=null`).
    Fresh,
    /// Continue from the newest `global_step_*` in the checkpoint folder.
    Latest,
}

impl Resume {
    fn hydra(self) -> &'static str {
        match self {
            Resume::Fresh => "null",
            Resume::Latest => "latest",
        }
    }
}

/// What the command line may change about a run, besides hydra overrides.
#[derive(Debug, Clone, Default)]
pub struct PlanOptions {
    pub nodes: Option<u32>,
    pub qos: Option<String>,
    pub time: Option<Walltime>,
    pub job_name: Option<String>,
    pub resume: Option<Resume>,
    /// Delete the checkpoint folder's `global_step_*` inside the job, before a fresh start.
    pub wipe: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub target: String,
    pub description: String,
    pub cluster: String,
    pub entrypoint: String,
    pub resume: Resume,
    pub wipe: bool,
    pub job: Job,
    pub paths: Paths,
    pub container: ContainerPlan,
    /// Variables passed into the container, in order.
    #[serde(serialize_with = "pairs_as_table")]
    pub env: Vec<(String, String)>,
    /// Hydra overrides in the order they reach the trainer; each key once.
    #[serde(serialize_with = "knobs_as_table")]
    pub knobs: Vec<Knob>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Job {
    pub name: String,
    pub account: String,
    pub partition: String,
    pub qos: String,
    pub time: Walltime,
    pub nodes: u32,
    pub cpus_per_task: u32,
    pub gpus_per_node: u32,
    pub mem: String,
    /// SLURM's `%x_%j.out` in the run folder: one log for stdout and stderr.
    pub log: Utf8PathBuf,
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
    pub skyrl_train: Utf8PathBuf,
    pub venv_python: Utf8PathBuf,
    pub home: Utf8PathBuf,
    pub gcc_bin: Utf8PathBuf,
    pub cache_dirs: Vec<Utf8PathBuf>,
    /// Ray's temp dir is `<ray_tmp_root>/r<job id>`, short for its socket paths.
    pub ray_tmp_root: Utf8PathBuf,
}

#[derive(Debug, Clone, Serialize)]
pub struct ContainerPlan {
    pub runtime: Runtime,
    pub program: Utf8PathBuf,
    pub image: Utf8PathBuf,
    pub binds: Vec<Utf8PathBuf>,
}

impl Plan {
    pub fn resolve(
        library: &Library,
        cluster: &Cluster,
        target: &Target,
        options: &PlanOptions,
        overrides: &[Knob],
    ) -> Result<Plan> {
        let (preset_name, group, member, default_job, grid_qos, grid_time) = match target {
            Target::Preset(name) => {
                let job = options.job_name.clone().unwrap_or_else(|| name.clone());
                (name.clone(), name.clone(), job.clone(), job, None, None)
            }
            Target::Cell { grid, cell } => {
                let g = library.grid(grid)?;
                let job = options
                    .job_name
                    .clone()
                    .unwrap_or_else(|| format!("{grid}.{cell}"));
                (
                    g.base.clone(),
                    grid.clone(),
                    cell.clone(),
                    job,
                    g.qos.clone(),
                    g.time,
                )
            }
        };
        let preset = library.run_preset(&preset_name)?;
        check_name("--job-name", &default_job)?;

        let nodes = options.nodes.unwrap_or(preset.nodes);
        if nodes == 0 {
            return Err(Error::BadFlag {
                flag: "--nodes",
                value: "0".into(),
                reason: "a run needs at least one node".into(),
            });
        }
        if nodes > 1 {
            return Err(Error::Unsupported(format!(
                "--nodes {nodes}: multi-node runs need the Ray bring-up, which rlctl does not render yet; use --nodes 1"
            )));
        }
        let qos = options
            .qos
            .clone()
            .or(grid_qos)
            .unwrap_or(preset.qos.clone());
        cluster.qos(&qos)?;
        let time = options.time.or(grid_time).unwrap_or(preset.time);

        let storage = &cluster.storage;
        let checkpoint_dir = storage.checkpoint_root.join(&group).join(&member);
        let run_base = storage.run_root.join(&group).join(&member);
        let run_dir = run_base.join(format!("{:03}", next_attempt(&run_base)?));
        let ckpt_path = checkpoint_dir.join("ckpt");
        let export_path = checkpoint_dir.join("export");
        let data_dir = storage.data_root.join(&preset.dataset);
        let skyrl_train = cluster.software.skyrl.join("skyrl-train");
        let venv_python = cluster.software.venv.join("bin/python");
        let cache = &storage.cache_root;

        let origin = Origin::Preset(preset.name.clone());
        let gpus = cluster.node.gpus;
        let mut knobs = vec![
            Knob::typed(
                "trainer.policy.model.path",
                preset.model.clone().into(),
                origin.clone(),
            ),
            Knob::typed(
                "data.train_data",
                path_list(&data_dir.join(&preset.train_file)),
                origin.clone(),
            ),
            Knob::typed(
                "data.val_data",
                path_list(&data_dir.join(&preset.val_file)),
                origin.clone(),
            ),
        ];
        for role in ["policy", "critic", "ref"] {
            let num_nodes = format!("trainer.placement.{role}_num_nodes");
            let per_node = format!("trainer.placement.{role}_num_gpus_per_node");
            knobs.push(Knob::typed(
                &num_nodes,
                i64::from(nodes).into(),
                origin.clone(),
            ));
            knobs.push(Knob::typed(
                &per_node,
                i64::from(gpus).into(),
                origin.clone(),
            ));
        }
        let mut layers: Vec<Knob> = preset.knobs.clone();
        if let Target::Cell { grid, cell } = target {
            let g = library.grid(grid)?;
            for (key, value) in &g.knobs.0 {
                layers.push(Knob::typed(key, value.clone(), Origin::Grid(grid.clone())));
            }
            let c = library.cell(grid, cell)?;
            for (key, value) in &c.knobs.0 {
                layers.push(Knob::typed(
                    key,
                    value.clone(),
                    Origin::Cell(target_name(target)),
                ));
            }
        }
        for knob in layers.into_iter().chain(overrides.iter().cloned()) {
            // The command line's overrides were refused on parsing; presets are checked here.
            if let Some((key, hint)) = FORCED_KEYS.iter().find(|(k, _)| *k == knob.path()) {
                return Err(Error::Unsupported(format!(
                    "{} sets `{key}`, which rlctl sets itself: {hint}",
                    knob.origin
                )));
            }
            set_knob(&mut knobs, knob);
        }
        let resume = options.resume.unwrap_or(Resume::Fresh);
        if options.wipe && resume == Resume::Latest {
            return Err(Error::BadFlag {
                flag: "--wipe",
                value: "with --resume latest".into(),
                reason: "a wipe deletes the checkpoints a resume would continue from; pick one"
                    .into(),
            });
        }
        for (key, value) in [
            ("trainer.resume_mode", resume.hydra().to_owned()),
            ("trainer.ckpt_path", ckpt_path.to_string()),
            ("trainer.export_path", export_path.to_string()),
        ] {
            set_knob(&mut knobs, Knob::typed(key, value.into(), Origin::Rlctl));
        }

        let gcc_bin = cluster.software.gcc_bin.clone();
        let hf_home = storage.hf_home.to_string();
        let cache_dir = |name: &str| cache.join(name);
        let mut env: Vec<(String, String)> = vec![
            ("HF_HUB_OFFLINE".into(), "1".into()),
            ("TRANSFORMERS_OFFLINE".into(), "1".into()),
            ("WANDB_MODE".into(), "offline".into()),
            ("HF_HOME".into(), hf_home.clone()),
            ("HF_HUB_CACHE".into(), hf_home),
            ("RAY_USAGE_STATS_ENABLED".into(), "0".into()),
            ("VLLM_NO_USAGE_STATS".into(), "1".into()),
            ("DO_NOT_TRACK".into(), "1".into()),
            ("VLLM_CACHE_ROOT".into(), cache_dir("vllm").to_string()),
            ("TRITON_CACHE_DIR".into(), cache_dir("triton").to_string()),
            (
                "FLASHINFER_WORKSPACE_BASE".into(),
                cache_dir("flashinfer").to_string(),
            ),
            ("XDG_CACHE_HOME".into(), cache_dir("xdg").to_string()),
            ("CC".into(), gcc_bin.join("gcc").to_string()),
            ("CXX".into(), gcc_bin.join("g++").to_string()),
            ("PYTHONPATH".into(), skyrl_train.to_string()),
            ("VENV_PY".into(), venv_python.to_string()),
        ];
        for (key, value) in &cluster.env {
            env.retain(|(k, _)| k != key);
            env.push((key.clone(), value.clone()));
        }
        for (key, value) in &env {
            if value.contains([',', '\n']) {
                return Err(Error::Unsupported(format!(
                    "{key}={value}: singularity's --env cannot carry commas or newlines; choose a path without them"
                )));
            }
        }
        for (what, text) in [
            ("account", cluster.account.as_str()),
            ("partition", cluster.partition.as_str()),
            ("--qos", qos.as_str()),
        ] {
            check_name(what, text)?;
        }
        check_log_dir(&run_dir)?;

        Ok(Plan {
            target: target_name(target),
            description: match target {
                Target::Preset(_) => preset.description.clone(),
                Target::Cell { grid, cell } => library.cell(grid, cell)?.description.clone(),
            },
            cluster: cluster.name.clone(),
            entrypoint: preset.entrypoint.clone(),
            resume,
            wipe: options.wipe,
            job: Job {
                name: default_job,
                account: cluster.account.clone(),
                partition: cluster.partition.clone(),
                qos,
                time,
                nodes,
                cpus_per_task: cluster.node.cpus,
                gpus_per_node: gpus,
                mem: cluster.node.mem.clone(),
                log: run_dir.join("%x_%j.out"),
            },
            paths: Paths {
                sbatch_script: run_dir.join("sbatch.sh"),
                run_script: run_dir.join("run.sh"),
                run_dir,
                checkpoint_root: storage.checkpoint_root.clone(),
                checkpoint_dir,
                ckpt_path,
                export_path,
                skyrl_train,
                venv_python,
                home: storage.home.clone(),
                gcc_bin,
                cache_dirs: ["vllm", "triton", "flashinfer", "xdg"]
                    .map(cache_dir)
                    .to_vec(),
                ray_tmp_root: storage.ray_tmp_root.clone(),
            },
            container: ContainerPlan {
                runtime: cluster.container.runtime,
                program: cluster.container.program.clone(),
                image: cluster.container.image.clone(),
                binds: cluster.container.binds.clone(),
            },
            env,
            knobs,
        })
    }
}

fn path_list(path: &Utf8Path) -> toml::Value {
    toml::Value::Array(vec![path.to_string().into()])
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

/// Names that go on `#SBATCH` lines unquoted: sbatch reads those lines itself, not the shell.
fn check_name(what: &'static str, text: &str) -> Result<()> {
    let ok = !text.is_empty()
        && text.len() <= 128
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.-+".contains(c));
    if ok {
        Ok(())
    } else {
        Err(Error::BadFlag {
            flag: what,
            value: text.to_owned(),
            reason: "use only letters, digits, `_`, `.`, `-` and `+` (at most 128)".into(),
        })
    }
}

fn check_log_dir(run_dir: &Utf8Path) -> Result<()> {
    if run_dir
        .as_str()
        .contains(|c: char| c.is_whitespace() || "%'\"\\$`".contains(c))
    {
        return Err(Error::Unsupported(format!(
            "run folder `{run_dir}`: SLURM's --output cannot carry spaces, quotes, `$` or `%`; change storage.run_root"
        )));
    }
    Ok(())
}

fn pairs_as_table<S: Serializer>(pairs: &[(String, String)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(pairs.iter().map(|(k, v)| (k, v)))
}

fn knobs_as_table<S: Serializer>(knobs: &[Knob], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(knobs.iter().map(|k| (&k.key, k.value.hydra_text())))
}
