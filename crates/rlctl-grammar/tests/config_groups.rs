//! Config group choices (`algorithm_recipe=opd`, `+off_policy_correction=tis`) composed into a
//! key list (`import::import_with`), proved against hydra itself: schema_oracle.py composes the
//! same folder with hydra's compose API and the same overrides, and the two key lists must be
//! equal line by line; where hydra refuses the choice, so must the crate, and its message
//! names the fix. The fixture is shaped like a newer MarinSkyRL config folder: group folders
//! of YAML next to ppo_base_config.yaml, one chosen in its defaults list and one not.

mod common;

use camino::Utf8Path;
use rlctl_grammar::import::{self, Choice};

const SETUP: &str = "run `bash tests/setup.sh` at the workspace's root (it installs hydra-core and omegaconf from PyPI)";

/// A config folder as newer MarinSkyRL checkouts lay theirs out.
const FILES: &[(&str, &str)] = &[
    (
        "ppo_base_config.yaml",
        "defaults:\n  - _self_\n  - algorithm_recipe: grpo\n\n\
         trainer:\n  epochs: 1\n  algorithm:\n    advantage_estimator: gae\n    use_kl_loss: true\n    kl_loss_coef: 0.001\n\
         generator:\n  n_samples_per_prompt: 1\n  sampling_params:\n    temperature: 1.0\n",
    ),
    (
        "algorithm_recipe/grpo.yaml",
        "# @package _global_\ntrainer:\n  algorithm:\n    advantage_estimator: grpo\n    use_kl_loss: false\ngenerator:\n  n_samples_per_prompt: 5\n",
    ),
    (
        "algorithm_recipe/opd.yaml",
        "# @package _global_\ntrainer:\n  algorithm:\n    advantage_estimator: no_op\n    kl_loss_coef: 1.0\n\
         teacher:\n  model_path: null\n  top_k_logprobs: 20\ngenerator:\n  n_samples_per_prompt: 1\n",
    ),
    ("off_policy_correction/none.yaml", "enabled: false\n"),
    (
        "off_policy_correction/tis.yaml",
        "# @package trainer.algorithm.off_policy_correction\nenabled: true\ntis_imp_ratio_cap: 2.0\n",
    ),
];

fn choice(text: &str) -> Choice {
    let (key, option) = text.split_once('=').unwrap();
    Choice {
        group: key.trim_start_matches('+').to_owned(),
        option: option.to_owned(),
        append: key.starts_with('+'),
    }
}

#[test]
fn group_choices_compose_as_hydra_composes_them() {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in FILES {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let path = Utf8Path::from_path(dir.path()).unwrap();
    assert_eq!(
        import::groups(path).unwrap(),
        [
            (
                "algorithm_recipe".to_owned(),
                vec!["grpo".to_owned(), "opd".to_owned()]
            ),
            (
                "off_policy_correction".to_owned(),
                vec!["none".to_owned(), "tis".to_owned()]
            ),
        ]
    );
    let cases: &[&[&str]] = &[
        &[],
        &["algorithm_recipe=opd"],
        &["algorithm_recipe=grpo"],
        &["+off_policy_correction=tis"],
        &["+off_policy_correction=none"],
        &["algorithm_recipe=opd", "+off_policy_correction=tis"],
        // Refused by hydra, and by the crate: `+` on a group the defaults list names, a group
        // it does not name without `+`, an option or a group with no file.
        &["+algorithm_recipe=opd"],
        &["off_policy_correction=tis"],
        &["algorithm_recipe=nope"],
        &["recipe=opd"],
    ];
    let mut refused = 0;
    for case in cases {
        let choices: Vec<Choice> = case.iter().map(|c| choice(c)).collect();
        let mut args = vec!["flatten", path.as_str()];
        args.extend_from_slice(case);
        let hydra = common::python(&common::script("schema_oracle.py"), &args, b"", SETUP);
        let ours = import::import_with(path, &choices);
        match (ours, hydra.strip_prefix("!refused: ")) {
            (Ok(ours), None) => {
                assert_eq!(
                    ours, hydra,
                    "{case:?}: the crate's key list differs from hydra's"
                )
            }
            (Err(e), Some(why)) => {
                refused += 1;
                let message = e.to_string();
                assert!(
                    message.contains("its options: grpo, opd")
                        || message.contains("its groups: algorithm_recipe, off_policy_correction")
                        || message.contains("write `+off_policy_correction=tis`")
                        || message.contains("write `algorithm_recipe=opd`"),
                    "{case:?}: {message} (hydra: {why})"
                );
            }
            (ours, _) => panic!("{case:?}: the crate says {ours:?}, hydra says {hydra}"),
        }
    }
    assert_eq!(refused, 4);
    // What the recipe changes reaches the keys: the teacher's section, the estimator.
    let opd = import::import_with(path, &[choice("algorithm_recipe=opd")]).unwrap();
    for line in [
        "trainer.algorithm.advantage_estimator=\"no_op\"",
        "teacher.top_k_logprobs=20",
    ] {
        assert!(opd.lines().any(|l| l == line), "{line}: {opd}");
    }
}
