//! Staging, on the login node, what plans read offline: each model into the profile's HF cache
//! (`hf download`) and each dataset through the SkyRL checkout's own preparation script. An item
//! counts as staged only when it is complete, so an interrupted download is started again.

pub mod detach;

pub use crate::check::model_files::{self, model_folder_missing};
use crate::check::skyrl_rules::Values;
use crate::check::{DATA_KEYS, MODEL_KEYS, list_items};
use crate::plan::Plan;
use crate::plan::estimate::parquet_staged;
use crate::preset::cluster::Cluster;
use crate::schema::Schema;
use crate::schema::flavour::Flavour;
use crate::schema::knob::Scalar;
use crate::util::names::is_plain_word;
use crate::util::quote::{sh, sh_join};
use camino::{Utf8Path, Utf8PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Model,
    Dataset,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Model => "model",
            Kind::Dataset => "data",
        }
    }
}

/// One thing to stage: a model or a dataset folder.
#[derive(Debug, Clone)]
pub struct Item {
    pub kind: Kind,
    /// A plain word naming its log, pid and status files: `model-Qwen--Qwen3-32B`, `data-gsm8k`.
    pub id: String,
    /// What the user reads: `Qwen/Qwen3-32B`, `gsm8k`.
    pub label: String,
    /// How to stage it, or why rlctl knows no way (a local folder, a file outside the data root).
    pub command: Result<StageCommand, String>,
    what: What,
}

#[derive(Debug, Clone)]
enum What {
    /// A repo id in the HF cache.
    CachedModel { repo: String, cache: Utf8PathBuf },
    /// A model folder on disk.
    LocalModel(Utf8PathBuf),
    /// Parquet files.
    Files(Vec<Utf8PathBuf>),
}

/// A command line that runs on the login node, in a folder, with a few variables set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageCommand {
    pub cwd: Option<Utf8PathBuf>,
    pub env: Vec<(String, String)>,
    pub argv: Vec<String>,
}

impl StageCommand {
    /// The command as one shell line: what `--dry-run` prints and what the detached shell runs.
    pub fn line(&self) -> String {
        let mut line = String::new();
        if let Some(cwd) = &self.cwd {
            line.push_str(&format!("cd {} && ", sh(cwd.as_str())));
        }
        for (key, value) in &self.env {
            line.push_str(&format!("{key}={} ", sh(value)));
        }
        line.push_str(&sh_join(&self.argv));
        line
    }
}

/// Where an item stands on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OnDisk {
    /// Complete, at this folder.
    Staged(Utf8PathBuf),
    /// What is missing, in words.
    Missing(String),
}

impl Item {
    pub fn on_disk(&self) -> OnDisk {
        match &self.what {
            What::CachedModel { repo, cache } => cached_model(cache, repo),
            What::LocalModel(dir) => match model_folder_missing(dir) {
                missing if missing.is_empty() => OnDisk::Staged(dir.clone()),
                missing => OnDisk::Missing(missing.join(", ")),
            },
            // The verdict `check` and `estimate` give: an empty or cut file is staged again.
            What::Files(files) => {
                let missing: Vec<String> = (files.iter())
                    .filter_map(|f| parquet_staged(f).err().map(|why| format!("{f} {why}")))
                    .collect();
                match missing.is_empty() {
                    true => OnDisk::Staged(common_parent(files)),
                    false => OnDisk::Missing(missing.join(", ")),
                }
            }
        }
    }
}

/// What the plans read offline, each item once, in the order the plans name them.
pub fn items(plans: &[Plan], cluster: &Cluster, schema: &Schema) -> Vec<Item> {
    let mut items: Vec<Item> = Vec::new();
    let mut add = |item: Item| {
        if !items.iter().any(|i| i.id == item.id) {
            items.push(item);
        }
    };
    for plan in plans {
        let values = Values {
            plan,
            schema,
            hf_cache: &cluster.storage.hf_home,
        };
        for key in MODEL_KEYS {
            let Some(Scalar::Str(model)) = values.get(key) else {
                continue;
            };
            // `${trainer.policy.model.path}`: the same model as another key, staged there.
            if !model.starts_with("${") {
                add(model_item(&model, cluster));
            }
        }
        let mut files: Vec<Utf8PathBuf> = Vec::new();
        for key in DATA_KEYS {
            for file in values
                .text(key)
                .as_deref()
                .map(list_items)
                .unwrap_or_default()
            {
                let file = Utf8PathBuf::from(file);
                if !files.contains(&file) {
                    files.push(file);
                }
            }
        }
        for item in dataset_items(&files, cluster, schema.flavour()) {
            add(item);
        }
    }
    items
}

fn model_item(model: &str, cluster: &Cluster) -> Item {
    if model.starts_with('/') {
        return Item {
            kind: Kind::Model,
            id: format!("model-{}", flat_name(model)),
            label: model.to_owned(),
            command: Err(
                "a local folder: copy the model there (config.json, tokenizer, weights)".into(),
            ),
            what: What::LocalModel(model.into()),
        };
    }
    let cache = cluster.storage.hf_home.clone();
    let command = match model.split_once('/') {
        Some((org, name)) if is_plain_word(org) && is_plain_word(name) => Ok(StageCommand {
            cwd: None,
            // HF_HUB_CACHE, not HF_HOME: HF_HOME would also hide the login token gated
            // models need. A login shell set up for the compute nodes may say offline.
            env: vec![
                ("HF_HUB_OFFLINE".into(), "0".into()),
                ("HF_HUB_CACHE".into(), cache.to_string()),
            ],
            argv: vec![
                cluster.software.hf.clone(),
                "download".into(),
                model.to_owned(),
            ],
        }),
        _ => Err("not a Hugging Face repo id (org/name): stage it by hand".into()),
    };
    Item {
        kind: Kind::Model,
        id: format!("model-{}", flat_name(model)),
        label: model.to_owned(),
        command,
        what: What::CachedModel {
            repo: model.to_owned(),
            cache,
        },
    }
}

/// The files of each `<data_root>/<dataset>/` folder, written by SkyRL's
/// `examples/<dataset>/<dataset>_dataset.py --output_dir <folder>`; other files by hand.
fn dataset_items(files: &[Utf8PathBuf], cluster: &Cluster, flavour: Flavour) -> Vec<Item> {
    let data_root = &cluster.storage.data_root;
    let trainer_dir = flavour.working_folder(&cluster.software.skyrl);
    let mut items: Vec<Item> = Vec::new();
    for file in files {
        let dir = file.parent().unwrap_or(Utf8Path::new("/"));
        let dataset = dir
            .file_name()
            .filter(|_| dir.parent() == Some(data_root.as_path()));
        let (id, label, command) = match dataset {
            Some(name) if is_plain_word(name) => (
                format!("data-{name}"),
                name.to_owned(),
                Ok(StageCommand {
                    cwd: Some(trainer_dir.clone()),
                    env: vec![
                        ("HF_HUB_OFFLINE".into(), "0".into()),
                        ("HF_DATASETS_OFFLINE".into(), "0".into()),
                    ],
                    argv: vec![
                        cluster.software.stage_python.clone(),
                        flavour.dataset_script(name),
                        "--output_dir".into(),
                        dir.to_string(),
                    ],
                }),
            ),
            _ => (
                format!("data-{}", flat_name(file.as_str())),
                file.to_string(),
                Err(format!(
                    "not in a dataset folder <data_root>/<dataset>/ of `{data_root}`: stage it by hand"
                )),
            ),
        };
        match items.iter_mut().find(|i| i.id == id) {
            Some(Item {
                what: What::Files(files),
                ..
            }) => files.push(file.clone()),
            _ => items.push(Item {
                kind: Kind::Dataset,
                id,
                label,
                command,
                what: What::Files(vec![file.clone()]),
            }),
        }
    }
    items
}

/// A name as one plain word for file names: `Qwen/Qwen3-32B` -> `Qwen--Qwen3-32B`.
fn flat_name(name: &str) -> String {
    let flat: String = name
        .trim_start_matches('/')
        .replace('/', "--")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_.-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    flat.chars().take(120).collect()
}

fn common_parent(files: &[Utf8PathBuf]) -> Utf8PathBuf {
    let first = files
        .first()
        .and_then(|f| f.parent())
        .unwrap_or(Utf8Path::new("/"));
    first.to_path_buf()
}

/// The HF cache's snapshot of `repo` that is complete, else what the most complete one lacks:
/// the one verdict `check` gives too ([`model_files::cached_model`]).
fn cached_model(cache: &Utf8Path, repo: &str) -> OnDisk {
    match model_files::cached_model(cache, repo) {
        Ok(dir) => OnDisk::Staged(dir),
        Err(why) => OnDisk::Missing(why),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_quote_what_the_shell_would_split() {
        let command = StageCommand {
            cwd: Some("/w/My Code".into()),
            env: vec![("HF_HUB_CACHE".into(), "/w/hub".into())],
            argv: vec!["hf".into(), "download".into(), "Qwen/Qwen3-32B".into()],
        };
        assert_eq!(
            command.line(),
            "cd '/w/My Code' && HF_HUB_CACHE=/w/hub hf download Qwen/Qwen3-32B"
        );
    }

    #[test]
    fn flat_names_are_plain_words() {
        assert_eq!(flat_name("Qwen/Qwen3-32B"), "Qwen--Qwen3-32B");
        assert_eq!(flat_name("/w/my model"), "w--my_model");
        assert!(is_plain_word(&flat_name("/w/a b/$(x)")));
    }

    #[test]
    fn a_model_folder_is_complete_with_every_shard() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Utf8Path::from_path(tmp.path()).unwrap();
        let write = |name: &str, text: &str| std::fs::write(dir.join(name), text).unwrap();
        assert_eq!(model_folder_missing(dir).len(), 4);
        write("config.json", "{}");
        write("tokenizer_config.json", "{}");
        write("tokenizer.json", "{}");
        write(
            "model.safetensors.index.json",
            r#"{"weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors", "c": "model-00002-of-00002.safetensors"}}"#,
        );
        write("model-00001-of-00002.safetensors", "");
        assert_eq!(
            model_folder_missing(dir),
            ["model-00002-of-00002.safetensors"]
        );
        write("model-00002-of-00002.safetensors", "");
        assert!(model_folder_missing(dir).is_empty());
    }
}
