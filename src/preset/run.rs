//! Run presets and grid catalogs as typed TOML, and a preset's `extends` chain resolved.

use crate::error::{Error, Result};
use crate::preset::walltime::Walltime;
use crate::schema::knob::set_knob;
use crate::schema::knob::{Knob, Origin};
use crate::util::names::{PLAIN_WORD, is_model_id, is_module_name, is_plain_word};
use serde::{Deserialize, Deserializer};

/// A `[knobs]` table: hydra keys, quoted (`"trainer.epochs" = 1`) or as nested tables, in order.
#[derive(Debug, Clone, Default)]
pub struct KnobTable(pub Vec<(String, toml::Value)>);

impl<'de> Deserialize<'de> for KnobTable {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let table = toml::Table::deserialize(d)?;
        let mut knobs = Vec::new();
        flatten("", table, &mut knobs).map_err(serde::de::Error::custom)?;
        Ok(KnobTable(knobs))
    }
}

fn flatten(
    prefix: &str,
    table: toml::Table,
    out: &mut Vec<(String, toml::Value)>,
) -> Result<(), String> {
    for (key, value) in table {
        let key = if prefix.is_empty() {
            key
        } else {
            format!("{prefix}.{key}")
        };
        match value {
            toml::Value::Table(inner) if inner.is_empty() => {
                return Err(format!("knob `{key}` is an empty table; give it a value"));
            }
            toml::Value::Table(inner) => flatten(&key, inner, out)?,
            toml::Value::Datetime(_) => {
                return Err(format!(
                    "knob `{key}`: dates are not hydra values; quote it as a string"
                ));
            }
            toml::Value::Array(ref items)
                if items
                    .iter()
                    .any(|i| matches!(i, toml::Value::Table(_) | toml::Value::Array(_))) =>
            {
                return Err(format!(
                    "knob `{key}`: lists may hold only strings, numbers and booleans"
                ));
            }
            value => out.push((key, value)),
        }
    }
    Ok(())
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunPresetFile {
    description: Option<String>,
    extends: Option<String>,
    entrypoint: Option<String>,
    qos: Option<String>,
    time: Option<Walltime>,
    nodes: Option<u32>,
    model: Option<ModelFile>,
    data: Option<DataFile>,
    reference: Option<Reference>,
    #[serde(default)]
    knobs: KnobTable,
}

/// A measured speed the preset's own knobs ran at, with where it was measured: what `estimate`
/// falls back on before any run is recorded. Not inherited through `extends`: a child changes
/// knobs, so its parent's speed is not its own.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reference {
    pub s_per_step: f64,
    pub source: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelFile {
    policy: Option<String>,
    /// On-policy distillation: the teacher scored with top-k logprobs.
    teacher: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DataFile {
    dataset: Option<String>,
    train: Option<String>,
    val: Option<String>,
}

/// A run preset with its `extends` chain applied: every field known, knobs in final order.
#[derive(Debug, Clone)]
pub struct RunPreset {
    pub name: String,
    pub description: String,
    pub entrypoint: String,
    pub qos: String,
    pub time: Walltime,
    pub nodes: u32,
    pub model: String,
    pub teacher: Option<String>,
    pub dataset: String,
    pub train_file: String,
    pub val_file: String,
    pub reference: Option<Reference>,
    pub knobs: Vec<Knob>,
}

/// Applies `extends` from the root down; `lookup` finds a preset file by name.
pub fn resolve_run_preset<'a>(
    name: &str,
    lookup: &dyn Fn(&str) -> Result<(&'a str, &'a RunPresetFile)>,
) -> Result<RunPreset> {
    let mut chain: Vec<(String, &str, &RunPresetFile)> = Vec::new();
    let mut next = Some(name.to_owned());
    while let Some(current) = next {
        if chain.iter().any(|(n, _, _)| *n == current) {
            let mut names: Vec<String> = chain.into_iter().map(|(n, _, _)| n).collect();
            names.push(current);
            return Err(Error::ExtendsCycle { chain: names });
        }
        let (file, preset) = match (lookup(&current), chain.last()) {
            (Ok(found), _) => found,
            // The preset that names a missing parent is the file to fix.
            (Err(e), Some((child, child_file, _))) => {
                return Err(Error::PresetInvalid {
                    file: (*child_file).to_owned(),
                    message: format!("preset `{child}` extends `{current}`: {e}"),
                });
            }
            (Err(e), None) => return Err(e),
        };
        next = preset.extends.clone();
        chain.push((current, file, preset));
    }
    let mut acc = Partial::default();
    for (preset_name, _, preset) in chain.iter().rev() {
        acc.apply(preset_name, preset);
    }
    let file = chain[0].1;
    let missing = |field: &str| Error::PresetInvalid {
        file: file.to_owned(),
        message: format!(
            "preset `{name}` sets no `{field}`, and neither does any preset it extends"
        ),
    };
    let preset = RunPreset {
        name: name.to_owned(),
        description: acc.description.unwrap_or_default(),
        entrypoint: acc.entrypoint.ok_or_else(|| missing("entrypoint"))?,
        qos: acc.qos.ok_or_else(|| missing("qos"))?,
        time: acc.time.ok_or_else(|| missing("time"))?,
        nodes: acc.nodes.unwrap_or(1),
        model: acc.model.ok_or_else(|| missing("model.policy"))?,
        teacher: acc.teacher,
        dataset: acc.dataset.ok_or_else(|| missing("data.dataset"))?,
        train_file: acc.train.ok_or_else(|| missing("data.train"))?,
        val_file: acc.val.ok_or_else(|| missing("data.val"))?,
        reference: chain[0].2.reference.clone(),
        knobs: acc.knobs,
    };
    check_words(&preset).map_err(|message| Error::PresetInvalid {
        file: file.to_owned(),
        message,
    })?;
    Ok(preset)
}

/// Every string of a preset that reaches a script or a path is checked for what it is, so it is
/// one literal word there: a module name, a model id, a folder or file name.
fn check_words(preset: &RunPreset) -> std::result::Result<(), String> {
    let name = &preset.name;
    if !is_module_name(&preset.entrypoint) {
        return Err(format!(
            "preset `{name}`: entrypoint `{}` is not a Python module path (dotted identifiers, e.g. \
             `skyrl_train.entrypoints.main_base`)",
            preset.entrypoint
        ));
    }
    for (field, id) in std::iter::once(("model.policy", &preset.model))
        .chain(preset.teacher.iter().map(|t| ("model.teacher", t)))
    {
        if !is_model_id(id) {
            return Err(format!(
                "preset `{name}`: {field} `{id}` is not a Hugging Face model id (`org/name`, each {PLAIN_WORD})"
            ));
        }
    }
    for (field, word) in [
        ("data.dataset", &preset.dataset),
        ("data.train", &preset.train_file),
        ("data.val", &preset.val_file),
    ] {
        if !is_plain_word(word) {
            return Err(format!(
                "preset `{name}`: {field} `{word}` must be a plain name under the data root: {PLAIN_WORD}"
            ));
        }
    }
    Ok(())
}

#[derive(Default)]
struct Partial {
    description: Option<String>,
    entrypoint: Option<String>,
    qos: Option<String>,
    time: Option<Walltime>,
    nodes: Option<u32>,
    model: Option<String>,
    teacher: Option<String>,
    dataset: Option<String>,
    train: Option<String>,
    val: Option<String>,
    knobs: Vec<Knob>,
}

impl Partial {
    fn apply(&mut self, name: &str, p: &RunPresetFile) {
        fn set<T: Clone>(slot: &mut Option<T>, value: &Option<T>) {
            if value.is_some() {
                slot.clone_from(value);
            }
        }
        set(&mut self.description, &p.description);
        set(&mut self.entrypoint, &p.entrypoint);
        set(&mut self.qos, &p.qos);
        set(&mut self.time, &p.time);
        set(&mut self.nodes, &p.nodes);
        if let Some(model) = &p.model {
            set(&mut self.model, &model.policy);
            set(&mut self.teacher, &model.teacher);
        }
        if let Some(data) = &p.data {
            set(&mut self.dataset, &data.dataset);
            set(&mut self.train, &data.train);
            set(&mut self.val, &data.val);
        }
        let origin = Origin::Preset(name.to_owned());
        for (key, value) in &p.knobs.0 {
            set_knob(
                &mut self.knobs,
                Knob::typed(key, value.clone(), origin.clone()),
            );
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GridFile {
    pub description: String,
    /// The run preset every cell starts from.
    pub base: String,
    pub qos: Option<String>,
    pub time: Option<Walltime>,
    /// Knobs every cell shares, applied after the base preset's and before the cell's.
    #[serde(default)]
    pub knobs: KnobTable,
    pub cells: Vec<CellFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CellFile {
    pub name: String,
    pub description: String,
    /// `trainer.max_steps` for this cell (the OPD grids size cells by steps).
    pub max_steps: Option<i64>,
    #[serde(default)]
    pub knobs: KnobTable,
}
