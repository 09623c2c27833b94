//! The dataclass reader (`import::import_upstream`), which reads upstream SkyRL's key list
//! statically from its dataclasses, proved against the real `skyrl` 0.4.0 wheel (the
//! workspace's tests/setup.sh installs it `--no-deps`).
//!
//! skyrl_upstream_schema_oracle.py (next to this file) imports the wheel's
//! `skyrl/train/config/config.py`, flattens `SkyRLTrainConfig()` and asks
//! `SkyRLTrainConfig.from_cli_overrides` about overrides. Every key the library has must be in
//! the reader's list with an equal default, except for the differences `expected_difference`
//! explains; every key the reader lists beyond the library's (children of
//! `Optional[dataclass] = None` fields) must be accepted by `from_cli_overrides`.

mod common;

use camino::Utf8PathBuf;
use rlctl_grammar::import::import_upstream;
use std::collections::BTreeMap;

const SETUP: &str = "run `bash tests/setup.sh` at the workspace's root (it installs omegaconf and skyrl==0.4.0 --no-deps from PyPI)";

fn oracle(args: &[&str], stdin: &str) -> String {
    let oracle = common::script("skyrl_upstream_schema_oracle.py");
    common::python(&oracle, args, stdin.as_bytes(), SETUP)
}

/// The site-packages folder holding the wheel's `skyrl/` (and `skyrl-gym/`).
fn site() -> Utf8PathBuf {
    oracle(&["locate"], "").trim().into()
}

fn key_map(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (k, v) = l.split_once('=').unwrap();
            (k.to_owned(), v.to_owned())
        })
        .collect()
}

/// Why rlctl's default for `key` may differ from the constructed config's: the value the
/// static reader writes for it, or `None` when the two must be equal.
fn expected_difference(key: &str) -> Option<&'static str> {
    Some(match key {
        // SkyRLTrainConfig.__post_init__ fills these from other keys or constants; the field's
        // own default (what an override replaces) is None.
        "data.dataloader.num_workers"
        | "trainer.ref.model.path"
        | "trainer.algorithm.temperature"
        | "generator.max_input_length" => "null",
        // __post_init__ makes eval_sampling_params SamplingParams(temperature=0.0) when it is
        // None; the class's own default is 1.0.
        "generator.eval_sampling_params.temperature" => "1.0",
        _ => return None,
    })
}

#[test]
fn the_dataclass_reader_reads_the_wheels_own_config() {
    let (rlctl_text, files) = import_upstream(&site(), None).unwrap();
    assert!(rlctl_text.starts_with("# flavour: upstream\n"));
    assert!(
        files
            .iter()
            .any(|f| f.ends_with("skyrl/train/config/config.py")),
        "{files:?}"
    );
    let rlctl = key_map(&rlctl_text);
    let library = key_map(&oracle(&["flatten"], ""));
    assert!(
        library.len() > 400,
        "the library gave {} keys",
        library.len()
    );
    let home = std::env::var("HOME").unwrap();

    let mut problems = Vec::new();
    let mut optional_sections = 0;
    for (key, lib_default) in &library {
        let Some(ours) = rlctl.get(key) else {
            // An `Optional[dataclass] = None` field: the library holds null, rlctl its keys.
            let prefix = format!("{key}.");
            if lib_default == "null" && rlctl.keys().any(|k| k.starts_with(&prefix)) {
                optional_sections += 1;
            } else {
                problems.push(format!("{key}: missing from rlctl's list"));
            }
            continue;
        };
        // `os.path.expanduser("~/…")` runs when the library builds the config; rlctl keeps `~`.
        let ours_expanded = ours.replace("\"~/", &format!("\"{home}/"));
        let want = expected_difference(key).unwrap_or(lib_default);
        if ours_expanded != want {
            problems.push(format!("{key}: rlctl {ours}, library {lib_default}"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert_eq!(
        optional_sections, 4,
        "mixed_precision ×3 and delta_weight_sync"
    );

    // Every key the library's flattening lacks must be one from_cli_overrides accepts, given
    // with its default (a required sibling, `"???"`, given a value).
    let extra: Vec<&String> = rlctl.keys().filter(|k| !library.contains_key(*k)).collect();
    let lines: Vec<String> = extra
        .iter()
        .map(|key| {
            let section = key.rsplit_once('.').unwrap().0;
            let mut args = vec![format!(
                "{key}={}",
                rlctl[*key].replace("\"???\"", "\"/x\"")
            )];
            for (k, v) in &rlctl {
                if v == "\"???\"" && k.rsplit_once('.').unwrap().0 == section && k != *key {
                    args.push(format!("{k}=\"/x\""));
                }
            }
            args.join(" ")
        })
        .collect();
    let verdicts = oracle(&["accepts"], &lines.join("\n"));
    let refused: Vec<String> = lines
        .iter()
        .zip(verdicts.lines())
        .filter(|(_, v)| *v != "ok")
        .map(|(l, v)| format!("{l}: {v}"))
        .collect();
    assert!(refused.is_empty(), "{}", refused.join("\n"));
    assert_eq!(extra.len(), 17, "{extra:?}");
    eprintln!(
        "keys: rlctl {}, library {}, common {}, rlctl only {}",
        rlctl.len(),
        library.len(),
        rlctl.len() - extra.len(),
        extra.len()
    );
}
