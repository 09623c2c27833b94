//! Upstream SkyRL's command-line grammar (OmegaConf's dotlist, as `SkyRLTrainConfig.
//! from_cli_overrides` of the skyrl 0.4.0 wheel reads it), proved against the wheel itself:
//! every case of a corpus (omegaconf_dotlist.corpus, next to this file) goes through
//! `dotlist::check_argv` and through skyrl_dotlist_oracle.py (next to this file too), and the
//! verdicts must agree case by case: the same yes or no,
//! the same stage of refusal (`+`, OmegaConf's reading, a retired key, an interpolation, a key
//! no config class has), and, where OmegaConf reads the items, the same value of the same type.
//!
//! The config's keys come from the wheel too (the oracle's `keys` mode walks its dataclasses),
//! and every one of them is a case, with its default. Where the wheel refuses a value by a rule
//! of a dataclass's own (`__post_init__`, an Enum), that is no grammar's rule: rlctl's grammar
//! must accept the line, and the test counts such cases apart.

mod common;

use rlctl_grammar::dotlist::{self, Item};
use rlctl_grammar::yaml::{Y, py_float};
use serde_json::{Value, json};

const CORPUS: &str = include_str!("omegaconf_dotlist.corpus");
const SETUP: &str =
    "run `bash tests/setup.sh` (it installs omegaconf, PyYAML and skyrl==0.4.0 from PyPI)";

#[derive(Debug, serde::Deserialize)]
struct Upstream {
    ok: bool,
    stage: Option<String>,
    error: Option<String>,
    values: Option<Vec<Value>>,
}

fn python(args: &[&str], input: String) -> String {
    let oracle = common::script("skyrl_dotlist_oracle.py");
    common::python(&oracle, args, input.as_bytes(), SETUP)
}

/// The wheel's config as a key list.
fn upstream_keys() -> Vec<(String, String)> {
    common::key_list(&python(&["keys"], String::new()))
}

fn oracle(cases: &[Vec<String>]) -> Vec<Upstream> {
    let input: String = cases
        .iter()
        .map(|c| serde_json::to_string(c).unwrap() + "\n")
        .collect();
    let verdicts: Vec<Upstream> = python(&[], input)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(verdicts.len(), cases.len(), "one verdict per case");
    verdicts
}

/// A value as the oracle prints it: ints and floats tagged, dicts as pairs.
fn tagged(value: &Y) -> Value {
    match value {
        Y::Null => Value::Null,
        Y::Bool(b) => json!(b),
        Y::Str(s) => json!(s),
        Y::Int(i) => json!({ "int": i.to_string() }),
        Y::Float(x) => json!({ "float": py_float(*x) }),
        Y::Seq(items) => Value::Array(items.iter().map(tagged).collect()),
        Y::Map(pairs) => {
            json!({ "dict": pairs.iter().map(|(k, v)| json!([tagged(k), tagged(v)])).collect::<Vec<_>>() })
        }
    }
}

/// The config OmegaConf makes of one item alone.
fn alone(item: &Item) -> Value {
    tagged(&Y::Map(dotlist::merged(std::slice::from_ref(item))))
}

/// Python's float repr and rlctl's may spell one float two ways (`1e-06`, `1e-6`): compare the
/// numbers.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y))
            if x.contains_key("float") && y.contains_key("float") =>
        {
            let f = |v: &Value| v["float"].as_str().and_then(|s| s.parse::<f64>().ok());
            match (f(a), f(b)) {
                (Some(p), Some(q)) => p == q || (p.is_nan() && q.is_nan()),
                _ => false,
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn corpus(keys: &[(&str, &str)]) -> Vec<Vec<String>> {
    let mut cases: Vec<Vec<String>> = Vec::new();
    // Hand-written: one case a line, its items separated by tabs.
    for line in CORPUS.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        cases.push(line.split('\t').map(str::to_owned).collect());
    }
    cases.push(vec![String::new()]);
    // Every key of the config, with its default.
    for (key, default) in keys {
        cases.push(vec![format!("{key}={default}")]);
    }
    // Each key misspelt at each level of its path.
    let mut misspelt: Vec<String> = Vec::new();
    for (key, _) in keys {
        let segs: Vec<&str> = key.split('.').collect();
        for depth in 0..segs.len() {
            let mut wrong = segs[..=depth].to_vec();
            let bad = format!("{}x", segs[depth]);
            wrong[depth] = &bad;
            let wrong = wrong.join(".");
            if !misspelt.contains(&wrong) {
                misspelt.push(wrong);
            }
        }
    }
    cases.extend(misspelt.into_iter().map(|k| vec![format!("{k}=1")]));
    cases
}

#[test]
fn the_dotlist_reads_a_command_line_as_upstream_skyrl_does() {
    let owned = upstream_keys();
    let schema = common::borrowed(&owned);
    let cases = corpus(&schema);
    let upstream = oracle(&cases);
    let mut disagreements = Vec::new();
    let (mut refused, mut beyond) = (0, 0);
    for (case, up) in cases.iter().zip(&upstream) {
        let ours = dotlist::check_argv(&schema[..], case).map_err(|r| r.message);
        let stage = dotlist::check_argv(&schema[..], case)
            .err()
            .map(|r| r.stage.name());
        refused += usize::from(!up.ok);
        let verdict_agrees = match up.stage.as_deref() {
            None => ours.is_ok(),
            Some("value") => {
                beyond += 1;
                ours.is_ok()
            }
            Some(s) => stage == Some(s),
        };
        let ours_values = case
            .iter()
            .map(|a| dotlist::upstream_check(a).map(|i| alone(&i)))
            .collect::<Result<Vec<_>, _>>()
            .ok();
        let values_agree = match (&up.values, &ours_values) {
            (Some(u), Some(o)) => u.len() == o.len() && u.iter().zip(o).all(|(a, b)| same(a, b)),
            (None, None) => true,
            // OmegaConf read the items and rlctl did not, or the other way round.
            _ => up.stage.as_deref() == Some("plus"),
        };
        if !verdict_agrees || !values_agree {
            disagreements.push(format!(
                "{case:?}\n  upstream: {} {} {:?}\n  rlctl:    {:?} {:?}",
                up.stage.as_deref().unwrap_or("accepts"),
                up.error.as_deref().unwrap_or(""),
                up.values,
                ours.err(),
                ours_values
            ));
        }
    }
    println!(
        "{} cases: {} agree, {refused} refused by upstream ({beyond} by a dataclass value rule)",
        cases.len(),
        cases.len() - disagreements.len()
    );
    assert!(
        disagreements.is_empty(),
        "rlctl and upstream SkyRL disagree on {} of {} cases:\n{}",
        disagreements.len(),
        cases.len(),
        disagreements.join("\n")
    );
    assert!(cases.len() >= 300, "{} cases", cases.len());
    assert!(
        refused > 100 && cases.len() - refused > 100,
        "{refused} of {} refused",
        cases.len()
    );
}
