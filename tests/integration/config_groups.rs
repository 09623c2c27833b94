//! MarinSkyRL config groups (`algorithm_recipe/{grpo,opd}.yaml` next to ppo_base_config.yaml,
//! as newer checkouts add them) chosen after `--`: rlctl reads the checkout's groups with its
//! keys, accepts a choice of an existing option, refuses an unknown one with the options, and
//! checks the other knobs against the config the choice composes. The checkout is the installed
//! skyrl-train 0.3.1's config folder (found by crates/rlctl-grammar/tests/schema_oracle.py, the
//! real hydra) with two group folders added; the composed key list is compared with hydra's own
//! composition of the same folder and choice.

use crate::common::{Sandbox, python_oracle, stderr};
use std::path::Path;

const ORACLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/crates/rlctl-grammar/tests/schema_oracle.py"
);
const SETUP: &str = "run `bash tests/setup.sh` (it installs hydra-core, omegaconf and skyrl-train==0.3.1 from PyPI)";

/// Group files as a newer MarinSkyRL lays them out: a recipe changes defaults at once, and OPD's
/// adds a key the base config lacks.
const GROUPS: &[(&str, &str)] = &[
    (
        "algorithm_recipe/grpo.yaml",
        "# @package _global_\ntrainer:\n  algorithm:\n    advantage_estimator: grpo\n",
    ),
    (
        "algorithm_recipe/opd.yaml",
        "# @package _global_\ntrainer:\n  algorithm:\n    advantage_estimator: grpo\n    opd_kl_coef: 1.0\n  \
         policy:\n    optimizer_config:\n      lr: 5.0e-07\n",
    ),
    (
        "off_policy_correction/tis.yaml",
        "# @package trainer.algorithm.off_policy_correction\ntis_imp_ratio_cap: 2.0\n",
    ),
];

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            copy_dir(&path, &to.join(entry.file_name()));
        } else if path.extension().is_some_and(|e| e == "yaml") {
            std::fs::copy(&path, to.join(entry.file_name())).unwrap();
        }
    }
}

/// The test cluster with its checkout a MarinSkyRL one holding config groups, read from the
/// checkout itself (no `software.schema`).
fn grouped_sandbox() -> (Sandbox, std::path::PathBuf) {
    let sandbox = Sandbox::new();
    let installed = python_oracle(ORACLE, &["locate"], b"", SETUP);
    let config = sandbox.root().join("skyrl/skyrl-train/skyrl_train/config");
    copy_dir(Path::new(installed.trim()), &config);
    for (path, text) in GROUPS {
        let path = config.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let profile = sandbox.presets().join("clusters/test.toml");
    let text = std::fs::read_to_string(&profile).unwrap();
    std::fs::write(
        &profile,
        text.replace("schema = \"marinskyrl-a559688\"\n", ""),
    )
    .unwrap();
    (sandbox, config)
}

fn check(sandbox: &Sandbox, overrides: &[&str]) -> std::process::Output {
    (sandbox.rlctl())
        .args(["check", "gsm8k-canary", "--allow", "disk-room", "--"])
        .args(overrides)
        .output()
        .unwrap()
}

#[test]
fn a_group_choice_is_composed_and_judged_as_hydra_does() {
    let (sandbox, config) = grouped_sandbox();
    // The composition rlctl checks against is hydra's own.
    let checkout = camino::Utf8PathBuf::from_path_buf(sandbox.root().join("skyrl")).unwrap();
    for case in [
        &["+algorithm_recipe=opd"][..],
        &["+algorithm_recipe=opd", "+off_policy_correction=tis"],
    ] {
        let choices: Vec<rlctl_grammar::import::Choice> = (case.iter())
            .map(|c| {
                let (g, o) = c.trim_start_matches('+').split_once('=').unwrap();
                rlctl_grammar::import::Choice {
                    group: g.to_owned(),
                    option: o.to_owned(),
                    append: true,
                }
            })
            .collect();
        let schema = rlctl::schema::Schema::with_choices(&checkout, &choices).unwrap();
        let ours: String = schema.keys().map(|(k, v)| format!("{k}={v}\n")).collect();
        let mut args = vec!["flatten", config.to_str().unwrap()];
        args.extend_from_slice(case);
        let hydra = python_oracle(ORACLE, &args, b"", SETUP);
        assert_eq!(ours, hydra, "{case:?}");
    }

    // The recipe's own key is settable with the recipe, and only with it.
    let with = check(
        &sandbox,
        &["+algorithm_recipe=opd", "trainer.algorithm.opd_kl_coef=2.0"],
    );
    assert!(with.status.success(), "{}", stderr(&with));
    let without = check(&sandbox, &["trainer.algorithm.opd_kl_coef=2.0"]);
    assert_eq!(without.status.code(), Some(1), "{}", stderr(&without));
    assert!(
        stderr(&without).contains("opd_kl_coef"),
        "{}",
        stderr(&without)
    );

    // An option with no file: refused with the group's options.
    let unknown = check(&sandbox, &["+algorithm_recipe=opdd"]);
    assert!(!unknown.status.success());
    assert!(
        stderr(&unknown).contains(
            "`+algorithm_recipe=opdd`: config group `algorithm_recipe` has no option `opdd` \
             (no `algorithm_recipe/opdd.yaml` in the checkout's config folder); its options: grpo, opd"
        ),
        "{}",
        stderr(&unknown)
    );
    // A group the defaults list does not name takes `+`, as hydra wants.
    let plain = check(&sandbox, &["algorithm_recipe=opd"]);
    assert!(!plain.status.success());
    assert!(
        stderr(&plain).contains("write `+algorithm_recipe=opd` to add the group"),
        "{}",
        stderr(&plain)
    );
}
