//! The schema check and `rlctl schema import`, proved against hydra itself.
//!
//! The oracle tests need hydra and SkyRL's config YAMLs, from PyPI (tests/setup.sh):
//!
//!     python3 -m pip install hydra-core omegaconf
//!     python3 -m pip install --no-deps --ignore-requires-python skyrl-train==0.3.1
//!
//! (skyrl-train needs Python 3.12 and a GPU stack; `--no-deps --ignore-requires-python` installs
//! only its files, which is all the config YAMLs need. hydra-core and omegaconf get their own
//! dependencies, antlr4 and PyYAML.) Without them these tests fail, saying to run
//! tests/setup.sh; they never skip.
//!
//! crates/rlctl-grammar/tests/schema_oracle.py composes SkyRL's `ppo_base_config` with hydra's
//! compose API: it prints hydra's own flattening of the config, and hydra's verdict on each
//! override of a corpus. The grammar crate proves its YAML reader with it on its own
//! (crates/rlctl-grammar/tests/yaml_reader.rs, SkyRL's config and folders that use what SkyRL's
//! does not); here `rlctl schema import` is proved on SkyRL's config and on a checkout.

use crate::common::{knob, python_oracle};
use rlctl::schema::Schema;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const ORACLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/crates/rlctl-grammar/tests/schema_oracle.py"
);
const SETUP: &str = "run `bash tests/setup.sh` (it installs hydra-core, omegaconf and skyrl-train==0.3.1 from PyPI)";

/// Runs the oracle; a missing python3, hydra or skyrl-train fails the test with the fix.
fn oracle(args: &[&str], stdin: &[u8]) -> String {
    python_oracle(ORACLE, args, stdin, SETUP)
}

/// The config folder of the installed skyrl-train, found without importing it.
fn skyrl_config_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| PathBuf::from(oracle(&["locate"], b"").trim()))
}

fn rlctl_import(dir: &Path) -> std::process::Output {
    crate::common::rlctl()
        .args(["schema", "import"])
        .arg(dir)
        .output()
        .unwrap()
}

fn import_ok(dir: &Path) -> String {
    let output = rlctl_import(dir);
    assert!(
        output.status.success(),
        "rlctl schema import {} failed:\n{}",
        dir.display(),
        crate::common::stderr(&output)
    );
    crate::common::stdout(&output)
}

/// Both key lists equal, or a failure listing the first differing lines.
fn assert_same_keys(rlctl: &str, hydra: &str, what: &str) {
    if rlctl == hydra {
        return;
    }
    let (r, h): (Vec<&str>, Vec<&str>) = (rlctl.lines().collect(), hydra.lines().collect());
    let mut diff = String::new();
    for i in 0..r.len().max(h.len()) {
        let (a, b) = (r.get(i).copied(), h.get(i).copied());
        if a != b {
            diff.push_str(&format!("line {}:\n  rlctl {a:?}\n  hydra {b:?}\n", i + 1));
        }
    }
    panic!("{what}: rlctl's key list differs from hydra's own flattening:\n{diff}");
}

#[test]
fn import_of_skyrl_train_equals_hydras_own_flattening() {
    let dir = skyrl_config_dir();
    let rlctl = import_ok(dir);
    let hydra = oracle(&["flatten", dir.to_str().unwrap()], b"");
    assert!(
        hydra.lines().count() > 200,
        "hydra printed too few keys:\n{hydra}"
    );
    assert_same_keys(&rlctl, &hydra, "skyrl-train 0.3.1");

    // --out writes the same list to a file.
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("skyrl.keys");
    let output = crate::common::rlctl()
        .args(["schema", "import"])
        .arg(dir)
        .arg("--out")
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        crate::common::stderr(&output)
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), rlctl);

    // A MarinSkyRL checkout (its config under skyrl-train/skyrl_train/config) gives the same.
    let checkout = tmp.path().join("MarinSkyRL");
    std::fs::create_dir_all(checkout.join("skyrl-train/skyrl_train")).unwrap();
    std::os::unix::fs::symlink(dir, checkout.join("skyrl-train/skyrl_train/config")).unwrap();
    assert_same_keys(&import_ok(&checkout), &hydra, "a MarinSkyRL checkout");
}

fn write_fixture(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

#[test]
fn import_errors_name_the_file_and_the_fix() {
    let err = |dir: &Path| {
        let output = rlctl_import(dir);
        assert!(
            !output.status.success(),
            "import of {} succeeded",
            dir.display()
        );
        let root = dir.to_str().unwrap().to_owned();
        crate::common::stderr(&output).replace(&root, "DIR")
    };
    let tmp = tempfile::tempdir().unwrap();
    let output = rlctl_import(&tmp.path().join("nope"));
    assert_eq!(
        crate::common::stderr(&output).replace(tmp.path().to_str().unwrap(), "DIR"),
        "rlctl: error: cannot read the SkyRL config folder `DIR/nope`: No such file or directory (os error 2); give the folder that holds ppo_base_config.yaml (`skyrl_train/config` in a SkyRL checkout or an installed skyrl-train)\n"
    );
    assert_eq!(
        err(tmp.path()),
        "rlctl: error: `DIR/ppo_base_config.yaml` does not exist: `rlctl schema import` reads SkyRL's ppo_base_config.yaml; give the folder that holds it (`skyrl_train/config` in a SkyRL checkout or an installed skyrl-train)\n"
    );
    let nested = write_fixture(&[("skyrl_train/config/ppo_base_config.yaml", "a: 1\n")]);
    assert_eq!(
        err(nested.path()),
        "rlctl: error: `DIR/ppo_base_config.yaml` does not exist: `rlctl schema import` reads SkyRL's ppo_base_config.yaml; it is in `DIR/skyrl_train/config`: run `rlctl schema import DIR/skyrl_train/config`\n"
    );
    let missing = write_fixture(&[
        (
            "ppo_base_config.yaml",
            "defaults:\n  - _self_\n  - deepspeed_config@deepspeed_config.train: trian\na: 1\n",
        ),
        ("deepspeed_config/train.yaml", "stage: 3\n"),
    ]);
    assert_eq!(
        err(missing.path()),
        "rlctl: error: DIR/ppo_base_config.yaml: its defaults list names `deepspeed_config@deepspeed_config.train: trian`, but `DIR/deepspeed_config/trian.yaml` does not exist; name an option that has a file in `DIR/deepspeed_config`, or mark the entry `optional`\n"
    );
    let nested_missing = write_fixture(&[
        ("ppo_base_config.yaml", "defaults:\n  - g: x\n"),
        ("g/x.yaml", "defaults:\n  - inner: y\n"),
    ]);
    assert_eq!(
        err(nested_missing.path()),
        "rlctl: error: DIR/g/x.yaml: its defaults list names `inner: y`, but `DIR/g/inner/y.yaml` does not exist; name an option that has a file in `DIR/g/inner`, or mark the entry `optional`\n"
    );
    let bad_yaml = write_fixture(&[("ppo_base_config.yaml", "a: 1\n  b: [2\n")]);
    let message = err(bad_yaml.path());
    assert!(
        message.starts_with("rlctl: error: DIR/ppo_base_config.yaml: line 2, column "),
        "{message}"
    );
    let twice = write_fixture(&[("ppo_base_config.yaml", "a: 1\nb: 2\na: 3\n")]);
    assert_eq!(
        err(twice.path()),
        "rlctl: error: DIR/ppo_base_config.yaml: line 3, column 1: the key `a` is given twice in one mapping\n"
    );
    let override_first = write_fixture(&[(
        "ppo_base_config.yaml",
        "defaults:\n  - override hydra/job_logging: disabled\n  - g: x\n",
    )]);
    assert_eq!(
        err(override_first.path()),
        "rlctl: error: DIR/ppo_base_config.yaml: defaults entry `override hydra/job_logging: disabled` comes before `g: x`: hydra wants `override` entries at the end of the defaults list\n"
    );
}

/// Overrides whose key validity rlctl and hydra must judge alike, against skyrl-train 0.3.1.
const CORPUS: &[&str] = &[
    // Keys that exist, with values of every kind (some of the wrong type: hydra takes them).
    "trainer.epochs=2",
    "trainer.train_batch_size=abc",
    "trainer.epochs=2.0",
    "trainer.policy.optimizer_config.lr=3e-6",
    "trainer.policy.optimizer_config.lr=fast",
    "generator.sampling_params.temperature=0.7",
    "generator.enforce_eager=no",
    "trainer.strategy=fsdp",
    "trainer.strategy=[a,b]",
    "trainer.policy.model.path=Qwen/Qwen2.5-0.5B-Instruct",
    "data.train_data=['/w/train.parquet']",
    "trainer.policy.optimizer_config.adam_betas=[0.9,0.95]",
    "trainer.policy.optimizer_config.adam_betas=0.9",
    "trainer.resume_path=null",
    "trainer.resume_mode=null",
    "trainer.rope_scaling={rope_type:yarn,factor:4.0}",
    "trainer.placement={colocate_all:false}",
    "trainer.placement=5",
    "trainer.policy=null",
    "trainer.epochs=${trainer.seed}",
    "generator.engine_init_kwargs={}",
    "generator.engine_init_kwargs=5",
    "trainer.policy.megatron_config.transformer_config_kwargs={recompute_method:block}",
    "trainer.policy.megatron_config.transformer_config_kwargs.recompute_method=block",
    "data.train_data.0=/w/other.parquet",
    "trainer.policy.optimizer_config.adam_betas.1=0.95",
    "deepspeed_config.train.zero_optimization.stage=2",
    "trainer.policy.deepspeed_config={a:1}",
    "trainer.policy.deepspeed_config=x",
    "hydra.run.dir=/tmp/x",
    // Unknown keys and misspellings.
    "trainer.epochx=2",
    "generator.enforce_eagr=true",
    "trainer.enforce_eager=true",
    "trainer.nonexistent_knob=1",
    "newtop=1",
    "Trainer.epochs=1",
    "trainer.polcy.optimizer_config.lr=1e-6",
    // Dict pass-throughs: a new key needs `+`.
    "generator.engine_init_kwargs.max_model_len=4096",
    "+generator.engine_init_kwargs.max_model_len=4096",
    "++generator.engine_init_kwargs.max_model_len=4096",
    "generator.chat_template_kwargs.enable_thinking=false",
    "+generator.chat_template_kwargs.enable_thinking=false",
    "trainer.policy.model_config_kwargs.vocab_size=1",
    "trainer.policy.megatron_config.transformer_config_kwargs.foo=1",
    "+trainer.policy.megatron_config.transformer_config_kwargs.foo=1",
    "generator.engine_init_kwargs={max_model_len:4096}",
    "+generator.engine_init_kwargs={max_model_len:4096}",
    "trainer.placement={colocate_al:false}",
    // `+` on keys that exist: refused, unless the value is null or a list or dict.
    "+trainer.epochs=2",
    "+generator.enforce_eager=false",
    "+trainer.policy.optimizer_config.lr=1e-6",
    "+trainer.resume_path=/x",
    "+generator.rope_scaling={factor:2}",
    "+generator.rope_scaling=x",
    "+generator.model_name=x",
    "+trainer.ckpt_path=/x",
    "+trainer.policy.optimizer_config.adam_betas=[1,2]",
    "+data.train_data.0=x",
    "+data.train_data.1=x",
    "+generator.engine_init_kwargs=[1]",
    // `+` on new keys.
    "+trainer.new_knob=1",
    "+newtop.a.b=1",
    "+trainer.epochs.x=1",
    "+trainer.rope_scaling.factor=2",
    "+trainer.policy.deepspeed_config.x=1",
    "+trainer.policy.deepspeed_config.zero_optimization.stage=2",
    "+trainer.policy.deepspeed_config.zero_optimization.stage9=2",
    // New keys without `+`, and keys below values.
    "trainer.rope_scaling.factor=2",
    "trainer.epochs.x=1",
    "trainer.ckpt_path.a=1",
    "trainer.policy.deepspeed_config.zero_optimization.stage=2",
    "data.train_data.1=x",
    "data.train_data.x=1",
    "data.train_data.0.a=1",
    "trainer.placement=[1]",
    "data.train_data={a:1}",
    // `~`: the key must have a value (and the given one, if any).
    "~trainer.epochs",
    "~trainer.nope",
    "~trainer.epochs=1",
    "~trainer.epochs=2",
    "~trainer.epochs=1.0",
    "~trainer.epochs=null",
    "~trainer.bf16=1",
    "~trainer.strategy=fsdp2",
    "~trainer.strategy=fsdp",
    "~trainer.resume_path",
    "~generator.rope_scaling",
    "~trainer.placement",
    "~trainer.placement={}",
    "~trainer.policy.deepspeed_config.zero_optimization",
    "~data.train_data.0",
    "~generator.engine_init_kwargs",
    "~generator.engine_init_kwargs={}",
    "~trainer.ref.model.path=Qwen/Qwen2.5-1.5B-Instruct",
    "~trainer.ref.model.path=other",
    "~trainer.policy.optimizer_config.adam_betas=[0.9,0.999]",
    "~trainer.policy.optimizer_config.adam_betas=[0.9]",
    // `++`: add or override, always, but not past a list's end.
    "++trainer.epochs=2",
    "++trainer.new_knob=1",
    "++generator.enforce_eagr=true",
    "++trainer.epochs.x.y=1",
    "++data.train_data.1=x",
    "++data.train_data.x=1",
    "++generator.engine_init_kwargs.x=1",
];

#[test]
fn key_verdicts_agree_with_hydra_on_every_override_of_the_corpus() {
    let dir = skyrl_config_dir();
    let schema = Schema::parse("skyrl-train-0.3.1", &import_ok(dir)).unwrap();
    let mut input = Vec::new();
    for arg in CORPUS {
        input.extend_from_slice(arg.as_bytes());
        input.push(0);
    }
    let verdicts: Vec<serde_json::Value> = oracle(&["verdicts", dir.to_str().unwrap()], &input)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(verdicts.len(), CORPUS.len(), "hydra judged {verdicts:?}");
    let mut disagreements = Vec::new();
    let (mut accepted, mut refused) = (0, 0);
    for (arg, verdict) in CORPUS.iter().zip(&verdicts) {
        assert_eq!(verdict["override"], *arg);
        let hydra_ok = verdict["ok"].as_bool().unwrap();
        let rlctl = schema.check_key(&knob(arg));
        if hydra_ok {
            accepted += 1;
        } else {
            refused += 1;
        }
        if rlctl.is_ok() != hydra_ok {
            disagreements.push(format!(
                "{arg}\n  hydra: {}\n  rlctl: {}",
                if hydra_ok {
                    "accepted".to_owned()
                } else {
                    format!("refused ({})", verdict["error"].as_str().unwrap_or(""))
                },
                match &rlctl {
                    Ok(()) => "accepted".to_owned(),
                    Err(m) => format!("refused ({m})"),
                }
            ));
        }
    }
    assert!(
        disagreements.is_empty(),
        "rlctl and hydra disagree on {} of {} overrides:\n{}",
        disagreements.len(),
        CORPUS.len(),
        disagreements.join("\n")
    );
    assert!(CORPUS.len() >= 40 && accepted >= 20 && refused >= 20);
}

// ---------------------------------------------------------------------------------------------
