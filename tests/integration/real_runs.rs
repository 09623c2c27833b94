//! Every embedded preset and grid cell against the real run it replaces (tests/data/real_runs.toml):
//! both resolved to their effective trainer configuration (the knobs over SkyRL's defaults) and
//! job, compared key by key. A difference passes only when the table lists it, with rlctl's value
//! and a reason; a listed difference that no longer differs fails too, so the table stays true.

use crate::common::plan_of;
use rlctl::plan::{Plan, PlanOptions};
use rlctl::preset::Library;
use rlctl::schema::Schema;
use rlctl::schema::knob::{Knob, Origin, Scalar};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};

const TABLE: &str = include_str!("../data/real_runs.toml");

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    source: Source,
    ignored: BTreeMap<String, String>,
    /// A knob every script computed by one rule and rlctl by a corrected one: the table keeps
    /// the scripts' values, and the comparison adds `add` to them.
    corrected: BTreeMap<String, Correction>,
    sets: BTreeMap<String, toml::Table>,
    runs: BTreeMap<String, Run>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Source {
    repository: String,
    commit: String,
    folder: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Run {
    source: String,
    entrypoint: String,
    qos: String,
    time: String,
    nodes: i64,
    #[serde(default)]
    sets: Vec<String>,
    #[serde(default)]
    knobs: toml::Table,
    #[serde(default)]
    differences: BTreeMap<String, Difference>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Correction {
    add: i64,
    reason: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Difference {
    rlctl: toml::Value,
    reason: String,
}

fn table() -> Table {
    toml::from_str(TABLE).expect("tests/data/real_runs.toml parses")
}

/// A value as the trainer sees it, in one spelling: numbers as f64 (`1e-6` = `1.0e-6`, `0.8` =
/// `0.80`), strings unquoted, lists and dicts without spaces and with one kind of quote.
fn canonical(scalar: Scalar) -> String {
    match scalar {
        Scalar::Null => "null".to_owned(),
        Scalar::Bool(b) => b.to_string(),
        Scalar::Int(i) => (i as f64).to_string(),
        Scalar::Float(x) => x.to_string(),
        Scalar::Str(s) => s,
        Scalar::List(text) | Scalar::Dict(text) => text.replace(' ', "").replace('\'', "\""),
    }
}

fn typed(key: &str, value: &toml::Value) -> String {
    canonical(
        Knob::typed(key, value.clone(), Origin::CommandLine)
            .value
            .scalar(),
    )
}

/// The real run's knobs: its sets in order, then its own.
fn real_knobs(table: &Table, name: &str, run: &Run) -> BTreeMap<String, String> {
    let mut knobs = BTreeMap::new();
    for set in &run.sets {
        let set = (table.sets.get(set))
            .unwrap_or_else(|| panic!("{name}: no set `{set}` in tests/data/real_runs.toml"));
        for (key, value) in set {
            knobs.insert(key.clone(), typed(key, value));
        }
    }
    for (key, value) in &run.knobs {
        knobs.insert(key.clone(), typed(key, value));
    }
    for (key, correction) in &table.corrected {
        assert!(!correction.reason.trim().is_empty(), "{key}: no reason");
        if let Some(value) = knobs.get_mut(key) {
            let number: f64 = value.parse().expect("a corrected knob is a number");
            *value = (number + correction.add as f64).to_string();
        }
    }
    knobs
}

/// rlctl's knobs for the same target, keys without hydra's `+`.
fn rlctl_knobs(plan: &Plan) -> BTreeMap<String, String> {
    (plan.knobs.iter())
        .map(|k| (k.path().to_owned(), canonical(k.value.scalar())))
        .collect()
}

/// Every preset and every cell, as `preset` or `grid/cell`.
fn every_target(library: &Library) -> Vec<String> {
    let mut targets: Vec<String> = library.preset_names().map(str::to_owned).collect();
    for grid in library.grid_names() {
        for cell in &library.grid(grid).unwrap().cells {
            targets.push(format!("{grid}/{}", cell.name));
        }
    }
    targets
}

/// What differs between the real run and rlctl's plan, each as (key, real, rlctl); keys absent
/// on one side take SkyRL's default there (`None` where SkyRL has none, e.g. inside a dict).
fn differences(
    table: &Table,
    schema: &Schema,
    name: &str,
    run: &Run,
    plan: &Plan,
) -> Vec<(String, Option<String>, Option<String>)> {
    let real = real_knobs(table, name, run);
    let rlctl = rlctl_knobs(plan);
    let effective = |own: &BTreeMap<String, String>, key: &str| {
        (own.get(key).cloned()).or_else(|| schema.default_scalar(key).map(canonical))
    };
    let keys: BTreeSet<&String> = real.keys().chain(rlctl.keys()).collect();
    let mut found = Vec::new();
    for key in keys {
        if table.ignored.contains_key(key.as_str()) {
            continue;
        }
        let (was, is) = (effective(&real, key), effective(&rlctl, key));
        if was != is {
            found.push((key.clone(), was, is));
        }
    }
    let job = [
        (
            "entrypoint",
            run.entrypoint.clone(),
            plan.entrypoint.clone(),
        ),
        ("job.qos", run.qos.clone(), plan.job.qos.clone()),
        ("job.time", run.time.clone(), plan.job.time.to_string()),
        (
            "job.nodes",
            (run.nodes as f64).to_string(),
            f64::from(plan.job.nodes).to_string(),
        ),
    ];
    for (key, was, is) in job {
        if was != is {
            found.push((key.to_owned(), Some(was), Some(is)));
        }
    }
    found
}

#[test]
fn every_preset_and_cell_is_the_real_run_it_replaces_or_says_why_not() {
    let table = table();
    assert_eq!(
        (
            table.source.repository.as_str(),
            table.source.commit.as_str(),
            table.source.folder.as_str()
        ),
        (
            "ekellbuch/OpenThoughts-Agent",
            "d75b93dc",
            "hpc/skyrl_yaml/leonardo"
        )
    );
    let library = Library::load(None).unwrap();
    let cluster = library.cluster("leonardo").unwrap();
    let schema = library.trainer_schema(&cluster).unwrap();
    let targets = every_target(&library);
    let mut problems: Vec<String> = Vec::new();

    let names: BTreeSet<&str> = targets.iter().map(String::as_str).collect();
    for name in table.runs.keys() {
        if !names.contains(name.as_str()) {
            problems.push(format!("{name}: in the table, but no such preset or cell"));
        }
    }
    for name in &targets {
        let Some(run) = table.runs.get(name) else {
            problems.push(format!(
                "{name}: no real run in tests/data/real_runs.toml; add the run it replaces"
            ));
            continue;
        };
        if run.source.trim().is_empty() {
            problems.push(format!("{name}: the table names no source script"));
        }
        let plan = plan_of(&library, &cluster, name, &PlanOptions::default(), &[])
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let found = differences(&table, &schema, name, run, &plan);
        let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "(unset)".to_owned());
        for (key, was, is) in &found {
            match run.differences.get(key) {
                None => problems.push(format!(
                    "{name}: `{key}` is {} in rlctl but {} in the real run ({}); make the preset match, or list \
                     the difference and its reason in tests/data/real_runs.toml",
                    show(is),
                    show(was),
                    run.source
                )),
                Some(listed) => {
                    let listed_value = Some(typed(key, &listed.rlctl));
                    let listed_value = match key.as_str() {
                        "job.time" | "job.qos" | "entrypoint" => {
                            listed.rlctl.as_str().map(str::to_owned)
                        }
                        _ => listed_value,
                    };
                    if listed_value != *is {
                        problems.push(format!(
                            "{name}: `{key}` is listed as an intended difference with rlctl = {}, but rlctl has {}",
                            show(&listed_value),
                            show(is)
                        ));
                    }
                    if listed.reason.trim().is_empty() {
                        problems.push(format!("{name}: the difference in `{key}` gives no reason"));
                    }
                }
            }
        }
        for key in run.differences.keys() {
            if !found.iter().any(|(k, _, _)| k == key) {
                problems.push(format!(
                    "{name}: `{key}` is listed as a difference, but rlctl now matches the real run: remove it \
                     from tests/data/real_runs.toml"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "\n{}\n", problems.join("\n"));
}

/// Every preset and grid file names the scripts it reproduces.
#[test]
fn every_preset_and_grid_file_names_its_source() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("presets");
    let mut missing = Vec::new();
    for kind in ["runs", "grids"] {
        for entry in std::fs::read_dir(root.join(kind)).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let names_source = text.lines().any(|l| {
                l.starts_with(
                    "# Source: ekellbuch/OpenThoughts-Agent @ d75b93dc, hpc/skyrl_yaml/leonardo/",
                )
            });
            if !names_source {
                missing.push(path.display().to_string());
            }
        }
    }
    assert!(
        missing.is_empty(),
        "no `# Source: ekellbuch/OpenThoughts-Agent @ d75b93dc, hpc/skyrl_yaml/leonardo/...` line in {missing:?}"
    );
}

/// The table's own spelling is checked against SkyRL's keys, so a typo there cannot hide a
/// difference (a misspelt key would compare unset against unset).
#[test]
fn the_table_names_only_keys_skyrl_has() {
    let table = table();
    let library = Library::load(None).unwrap();
    let schema = library.schema("marinskyrl-a559688").unwrap();
    // Keys SkyRL passes on inside a dict, or reads without declaring: absent from the key list.
    let passthrough = [
        "teacher.engine_init_kwargs.max_model_len",
        "teacher.engine_init_kwargs.quantization",
        "teacher.scoring_chunk_size",
    ];
    let mut unknown = BTreeSet::new();
    let sets = table.sets.values();
    let runs = table.runs.values().map(|r| &r.knobs);
    for knobs in sets.chain(runs) {
        for key in knobs.keys() {
            if schema.default_text(key).is_none() && !passthrough.contains(&key.as_str()) {
                unknown.insert(key.clone());
            }
        }
    }
    for run in table.runs.values() {
        for key in run.differences.keys() {
            let job = ["job.qos", "job.time", "job.nodes", "entrypoint"];
            if !job.contains(&key.as_str()) && schema.default_text(key).is_none() {
                unknown.insert(key.clone());
            }
        }
    }
    assert!(unknown.is_empty(), "not SkyRL keys: {unknown:?}");
}
