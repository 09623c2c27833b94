//! Hydra's override grammar and OmegaConf's interpolations as this crate re-implements them
//! (`hydra::check`, then `hydra::Config`'s resolution, on SkyRL's config as the YAML reader
//! gives it, which tests/yaml_reader.rs proves), proved against hydra itself: every command line of a
//! corpus (corpus.rs) and of a proptest (values.rs) goes through the crate's functions and
//! through hydra_grammar_oracle.py (hydra's OverridesParser, then a compose of SkyRL's config
//! and OmegaConf's resolution of it), and the two must stop at the same stage, case by case.
//!
//! Hydra's stages, in its order: `parse` (the grammar, function calls included), `sweep` (a
//! sweep outside --multirun), `compose` (applying the overrides: OmegaConf's check of the value
//! it stores, and hydra's key rules), `resolve` (an interpolation that does not resolve). The
//! key rules (a key the config lacks, `+` on a key it has) are no grammar's: rlctl's schema
//! check holds them, proved by rlctl's tests/integration/schema.rs and hydra_grammar.rs. So
//! where hydra refuses on composing and the crate finds nothing, the case agrees.
//!
//! The oracles need hydra-core, omegaconf and skyrl-train 0.3.1's config files, which the
//! workspace's tests/setup.sh installs; without them the tests fail saying so, never skip.

#[path = "../common/mod.rs"]
mod common;
mod corpus;
mod values;

use rlctl_grammar::hydra::{self, Config, Stage};
use rlctl_grammar::import;

const SETUP: &str = "run `bash tests/setup.sh` at the workspace's root (it installs hydra-core, omegaconf and skyrl-train==0.3.1 from PyPI)";

#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
struct Hydra {
    ok: bool,
    stage: Option<String>,
    error: Option<String>,
}

/// Hydra's verdict on each case, from one python process.
fn oracle(mode: &[&str], cases: &[Vec<String>]) -> Vec<Hydra> {
    let input: String = (cases.iter())
        .map(|c| serde_json::to_string(c).unwrap() + "\n")
        .collect();
    let oracle = common::script("hydra_grammar_oracle.py");
    let verdicts: Vec<Hydra> = common::python(&oracle, mode, input.as_bytes(), SETUP)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(verdicts.len(), cases.len(), "one verdict per case");
    verdicts
}

/// The config folder of the installed skyrl-train, found without importing it.
fn skyrl_config_dir() -> camino::Utf8PathBuf {
    let oracle = common::script("schema_oracle.py");
    common::python(&oracle, &["locate"], b"", SETUP)
        .trim()
        .into()
}

/// The stage of hydra's at which the crate refuses a command line, `None` where it passes: the
/// grammar of each argument, then the interpolations of SkyRL's config with every override
/// applied in order. An interpolation of SkyRL's own that fails counts only where an override
/// is to blame (it set the value, or removed the key the value names), as rlctl counts it.
fn crate_stage(keys: &[(&str, &str)], case: &[String]) -> Option<&'static str> {
    let mut overrides = Vec::new();
    for arg in case {
        match hydra::check(arg) {
            Ok(parsed) => overrides.push(parsed),
            Err(refusal) => return Some(stage_name(refusal.stage)),
        }
    }
    let mut config = Config::from_schema(keys);
    for (i, o) in overrides.iter().enumerate() {
        config.apply(&o.key, o.prefix, o.value.as_ref(), i);
    }
    let blamed = |missing: &str| {
        (overrides.iter()).any(|o| missing == o.key || missing.starts_with(&format!("{}.", o.key)))
    };
    let unresolved = config
        .problems()
        .into_iter()
        .any(|p| p.origin.is_some() || p.failure.missing.as_deref().is_some_and(blamed));
    unresolved.then_some("resolve")
}

/// A refusal's stage under the oracle's name for it.
fn stage_name(stage: Stage) -> &'static str {
    match stage {
        Stage::Key | Stage::Syntax | Stage::Function => "parse",
        Stage::Sweep => "sweep",
        Stage::Storage => "compose",
        Stage::Resolution => "resolve",
    }
}

/// Whether the crate stops where hydra does; hydra's key rules at `compose` are not the crate's.
fn agrees(hydra: &Hydra, ours: Option<&str>) -> bool {
    hydra.stage.as_deref() == ours || (hydra.stage.as_deref() == Some("compose") && ours.is_none())
}

/// Every case where the crate and hydra disagree, described.
fn disagreements(cases: &[Vec<String>], hydra: &[Hydra], ours: &[Option<&str>]) -> Vec<String> {
    (cases.iter().zip(hydra).zip(ours))
        .filter(|((_, h), o)| !agrees(h, **o))
        .map(|((case, h), o)| {
            format!(
                "{case:?}\n  hydra: {} {}\n  crate: {}",
                h.stage.as_deref().unwrap_or("accepts"),
                h.error.as_deref().unwrap_or(""),
                o.unwrap_or("accepts")
            )
        })
        .collect()
}

#[test]
fn the_grammar_stops_where_hydra_stops_on_every_line_of_the_corpus() {
    let cases = corpus::cases();
    assert!(cases.len() >= 200, "{} cases", cases.len());
    let dir = skyrl_config_dir();
    let oracle_cases = cases.clone();
    let oracle_dir = dir.clone();
    let hydra =
        std::thread::spawn(move || oracle(&["compose", oracle_dir.as_str()], &oracle_cases));
    let key_list = common::key_list(&import::import(&dir).unwrap());
    let keys = common::borrowed(&key_list);
    let ours: Vec<Option<&str>> = cases.iter().map(|c| crate_stage(&keys, c)).collect();
    let hydra = hydra.join().unwrap();
    let wrong = disagreements(&cases, &hydra, &ours);
    assert!(
        wrong.is_empty(),
        "the crate and hydra disagree on {} of {} cases:\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
    // Every stage occurs often enough to mean something.
    for stage in ["parse", "sweep", "compose", "resolve"] {
        let n = ours.iter().filter(|o| **o == Some(stage)).count();
        assert!(n >= 5, "the crate refused {n} cases at `{stage}`");
    }
    let passed = ours.iter().filter(|o| o.is_none()).count();
    assert!(passed > 50, "{passed} of {} passed", cases.len());
}

#[test]
fn arbitrary_values_stop_where_hydra_stops() {
    let key_list = common::key_list(values::TINY_KEYS);
    let keys = common::borrowed(&key_list);
    let cases = values::cases();
    let hydra = oracle(&["values"], &cases);
    let ours: Vec<Option<&str>> = cases.iter().map(|c| crate_stage(&keys, c)).collect();
    // An environment variable the job lacks is the job's business: the crate cannot see the
    // compute node's environment and lets `${oc.env:...}` through.
    let wrong: Vec<String> = disagreements(&cases, &hydra, &ours)
        .into_iter()
        .filter(|d| !d.contains("Environment variable"))
        .collect();
    let accepted = hydra.iter().filter(|h| h.ok).count();
    assert!(
        accepted * 10 > cases.len() && accepted * 10 < cases.len() * 9,
        "{accepted} of {} accepted: the values should be near misses",
        cases.len()
    );
    assert!(
        wrong.is_empty(),
        "the crate and hydra disagree on {} of {} values:\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
}
