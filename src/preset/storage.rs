//! A profile's `[storage]`: its folders, which of them compute nodes can see at all, and which
//! file systems delete files after some days; resolved, and placed where checkpoints may go.

use crate::error::Result;
use crate::preset::fields::Fields;
use crate::util::fs::Folder;
use crate::util::names::{LOG_FOLDER, is_log_folder};
use camino::{Utf8Path, Utf8PathBuf};
use serde::{Deserialize, Serialize};

/// A file system (by path prefix) that deletes files older than `days` (Leonardo's
/// `$SCRATCH`: 40 days).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PurgeFile {
    pub path: String,
    pub days: u32,
}

#[derive(Debug, Clone, Serialize)]
pub struct Purge {
    pub path: camino::Utf8PathBuf,
    pub days: u32,
}

impl Purge {
    /// The window in seconds.
    pub fn seconds(&self) -> f64 {
        f64::from(self.days) * 86_400.0
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Root {
    Work,
    Scratch,
}

impl Root {
    pub fn as_str(self) -> &'static str {
        match self {
            Root::Work => "work",
            Root::Scratch => "scratch",
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StorageFile {
    work: String,
    scratch: String,
    checkpoints_on: Root,
    checkpoint_root: String,
    run_root: String,
    data_root: String,
    hf_home: String,
    home: String,
    cache_root: String,
    ray_tmp_root: String,
    #[serde(default = "default_min_free_gib")]
    min_free_gib: u64,
    /// The folders compute nodes can see; empty: all of them.
    #[serde(default)]
    compute_visible: Vec<String>,
    #[serde(default)]
    purge: Vec<PurgeFile>,
}

fn default_min_free_gib() -> u64 {
    100
}

#[derive(Debug, Clone, Serialize)]
pub struct Storage {
    pub work: Utf8PathBuf,
    pub scratch: Utf8PathBuf,
    pub checkpoints_on: Root,
    pub checkpoint_root: Utf8PathBuf,
    pub run_root: Utf8PathBuf,
    pub data_root: Utf8PathBuf,
    pub hf_home: Utf8PathBuf,
    pub home: Utf8PathBuf,
    pub cache_root: Utf8PathBuf,
    /// Node-local folder for Ray's per-job temp dir: short, for the 107-byte socket path.
    pub ray_tmp_root: Utf8PathBuf,
    /// `rlctl doctor` warns below this much free space where checkpoints go.
    pub min_free_gib: u64,
    /// Every folder a job touches must be under one of these (JUPITER's nodes see `/e`, not
    /// `/p`); empty when the nodes see every folder the login node does.
    pub compute_visible: Vec<Utf8PathBuf>,
    /// File systems that delete old files: no checkpoint folder of a longer run goes there.
    pub purge: Vec<Purge>,
}

impl Storage {
    /// The volume `checkpoints_on` names, which checkpoints and run folders must be under, and
    /// the one they must never be on (scratch, when it is work): a quota-full scratch kills
    /// runs mid-write. The profile's check and preflight both ask here.
    pub fn checkpoint_volume(&self) -> (&Utf8Path, Option<&Utf8Path>) {
        match self.checkpoints_on {
            Root::Work => (&self.work, Some(&self.scratch)),
            Root::Scratch => (&self.scratch, None),
        }
    }
}

impl StorageFile {
    /// Every folder expanded and made absolute, then checked for where it sits.
    pub fn resolve(&self, f: &Fields) -> Result<Storage> {
        let storage = Storage {
            work: f.path("storage.work", &self.work)?,
            scratch: f.path("storage.scratch", &self.scratch)?,
            checkpoints_on: self.checkpoints_on,
            checkpoint_root: f.path("storage.checkpoint_root", &self.checkpoint_root)?,
            run_root: f.path("storage.run_root", &self.run_root)?,
            data_root: f.path("storage.data_root", &self.data_root)?,
            // Passed into the container with --env (HF_HOME, VLLM_CACHE_ROOT, ...).
            hf_home: f.list_entry("storage.hf_home", &self.hf_home, ",")?,
            home: f.path("storage.home", &self.home)?,
            cache_root: f.list_entry("storage.cache_root", &self.cache_root, ",")?,
            ray_tmp_root: f.path("storage.ray_tmp_root", &self.ray_tmp_root)?,
            min_free_gib: self.min_free_gib,
            compute_visible: (self.compute_visible.iter())
                .map(|dir| f.path("storage.compute_visible", dir))
                .collect::<Result<_>>()?,
            purge: (self.purge.iter())
                .map(|p| match p.days {
                    0 => Err(f.invalid(format!(
                        "storage.purge `{}`: days = 0 would delete files at once; give the site's window in days",
                        p.path
                    ))),
                    days => Ok(Purge {
                        path: f.path("storage.purge.path", &p.path)?,
                        days,
                    }),
                })
                .collect::<Result<_>>()?,
        };
        storage.check_placement(f)?;
        Ok(storage)
    }
}

impl Storage {
    /// The run root names the job's log for SLURM, and both roots sit on the checkpoint volume,
    /// side by side.
    fn check_placement(&self, f: &Fields) -> Result<()> {
        // The run folder holds the job's log, named by `#SBATCH --output`, which SLURM reads
        // itself: no quoting there.
        if !is_log_folder(self.run_root.as_str()) {
            return Err(f.invalid(format!(
                "storage.run_root = `{}`: {LOG_FOLDER}",
                self.run_root
            )));
        }
        let (required, forbidden) = self.checkpoint_volume();
        for (field, dir) in [
            ("storage.checkpoint_root", &self.checkpoint_root),
            ("storage.run_root", &self.run_root),
        ] {
            let on_forbidden = forbidden.is_some_and(|f| dir.starts_with(f));
            if !dir.starts_with(required) || on_forbidden {
                return Err(f.invalid(format!(
                    "{field} = `{dir}` must be under the checkpoint root `{required}` (storage.checkpoints_on = \"{}\"){}",
                    self.checkpoints_on.as_str(),
                    if on_forbidden {
                        ", never on scratch"
                    } else {
                        ""
                    }
                )));
            }
        }
        // `clean` removes a run's checkpoint folder whole: a run folder (scripts, the job's log)
        // inside it would go too, and a checkpoint folder inside the run root would be taken
        // for run folders. Judged where they really are.
        let (checkpoints, runs) = (
            Folder::of(&self.checkpoint_root),
            Folder::of(&self.run_root),
        );
        if checkpoints.is_within(&runs) || runs.is_within(&checkpoints) {
            return Err(f.invalid(format!(
                "storage.checkpoint_root = `{}` and storage.run_root = `{}` nest (resolved: `{}` and `{}`): \
                 `rlctl clean` removes checkpoint folders whole and would take run folders, their scripts \
                 and logs, with them; give them sibling folders, e.g. `{}/checkpoints` and `{}/runs`",
                self.checkpoint_root,
                self.run_root,
                checkpoints.path,
                runs.path,
                required,
                required
            )));
        }
        Ok(())
    }
}
