//! Upstream SkyRL's key list as rlctl ships and uses it, against the real `skyrl` 0.4.0 wheel
//! (tests/setup.sh installs it `--no-deps`): `rlctl schema import` of the wheel writes the
//! shipped list, the list loads with its flavour, and an entry module's additions reach a
//! checkout's schema through the cache. The reader itself is proved key by key against the
//! wheel by the grammar crate (crates/rlctl-grammar/tests/dataclass_reader.rs), with the
//! oracle used here too (crates/rlctl-grammar/tests/skyrl_upstream_schema_oracle.py).

use crate::common::python_oracle;
use rlctl::preset::Library;
use rlctl::schema::{Flavour, Schema};
use std::path::PathBuf;
use std::sync::OnceLock;

const ORACLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/crates/rlctl-grammar/tests/skyrl_upstream_schema_oracle.py"
);
const SHIPPED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/presets/schemas/skyrl-0.4.0.keys"
);
const SETUP: &str =
    "run `bash tests/setup.sh` (it installs omegaconf and skyrl==0.4.0 --no-deps from PyPI)";

fn oracle(args: &[&str], stdin: &str) -> String {
    python_oracle(ORACLE, args, stdin.as_bytes(), SETUP)
}

/// The site-packages folder holding the wheel's `skyrl/` (and `skyrl-gym/`).
fn site() -> &'static PathBuf {
    static SITE: OnceLock<PathBuf> = OnceLock::new();
    SITE.get_or_init(|| PathBuf::from(oracle(&["locate"], "").trim()))
}

fn rlctl_list() -> String {
    let output = crate::common::rlctl()
        .args(["schema", "import"])
        .arg(site())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "rlctl schema import failed:\n{}",
        crate::common::stderr(&output)
    );
    crate::common::stdout(&output)
}

/// `rlctl schema import` of the wheel writes the shipped list; the grammar crate proves the
/// reader's list against the wheel itself (its tests/dataclass_reader.rs).
#[test]
fn upstream_list_is_what_schema_import_reads_from_the_wheel() {
    let rlctl_text = rlctl_list();
    assert_eq!(
        rlctl_text,
        std::fs::read_to_string(SHIPPED).unwrap(),
        "presets/schemas/skyrl-0.4.0.keys is not what `rlctl schema import` reads from the wheel; regenerate it"
    );
    assert!(rlctl_text.starts_with("# flavour: upstream\n"));
}

/// A key the library refuses is refused by the shipped list too, and the list loads from the
/// Library with its flavour.
#[test]
fn shipped_upstream_list_loads_with_its_flavour() {
    let library = Library::load(None).unwrap();
    let schema = library.schema("skyrl-0.4.0").unwrap();
    assert_eq!(schema.flavour_header(), Some(Flavour::Upstream));
    assert_eq!(
        schema.default_text("generator.inference_engine.num_engines"),
        Some("1")
    );
    let marin = library.schema("marinskyrl-a559688").unwrap();
    assert_eq!(marin.flavour_header(), None);
    let verdict = oracle(&["accepts"], "generator.num_inference_engines=1\n");
    assert!(verdict.starts_with("err "), "{verdict}");
    assert_eq!(schema.default_text("generator.num_inference_engines"), None);
}

/// An entry module's registered names and config subclass reach the list; a checkout's schema
/// is read once and then served from the cache.
#[test]
fn entry_module_additions_and_checkout_cache() {
    let tmp = tempfile::tempdir().unwrap();
    let checkout = tmp.path().join("repo");
    let config = checkout.join("skyrl/train/config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::copy(
        site().join("skyrl/train/config/config.py"),
        config.join("config.py"),
    )
    .unwrap();
    let gym = site().join("skyrl-gym/skyrl_gym/envs");
    for env in ["search", "sql"] {
        let dir = checkout.join("skyrl-gym/skyrl_gym/envs").join(env);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(gym.join(env).join("env.py"), dir.join("env.py")).unwrap();
    }
    let examples = checkout.join("examples/train/dapo");
    std::fs::create_dir_all(&examples).unwrap();
    std::fs::write(
        examples.join("main_dapo.py"),
        r#"import torch
from dataclasses import dataclass
from skyrl.train.config import AlgorithmConfig, make_config
from skyrl.backends.skyrl_train.utils.ppo_utils import register_advantage_estimator, register_policy_loss


@dataclass
class DAPOAlgorithmConfig(AlgorithmConfig):
    overlong_buffer_len: int = 512
    overlong_buffer_penalty_factor: float = 1.0


DAPOConfig = make_config(algorithm_cls=DAPOAlgorithmConfig)


@register_advantage_estimator("no_op")
def no_op(token_level_rewards: torch.Tensor, **kwargs):
    return token_level_rewards, token_level_rewards


@register_policy_loss("my_loss")
def my_loss(*args, **kwargs):
    pass
"#,
    )
    .unwrap();
    // skyrl.train.config re-exports from .config, as the real package does.
    std::fs::write(
        config.join("__init__.py"),
        "from .config import AlgorithmConfig, make_config, SkyRLTrainConfig\n",
    )
    .unwrap();
    let checkout = camino::Utf8PathBuf::from_path_buf(checkout).unwrap();
    let cache = checkout.join("../cache");
    let entry = "examples/train/dapo/main_dapo.py";
    let schema = Schema::from_checkout(&checkout, Some(entry), &cache).unwrap();
    assert_eq!(
        schema.default_text("trainer.algorithm.overlong_buffer_len"),
        Some("512")
    );
    assert_eq!(
        schema.default_text("trainer.algorithm.advantage_estimator"),
        Some("\"grpo\"")
    );
    assert_eq!(
        schema.registered("advantage_estimator").collect::<Vec<_>>(),
        ["no_op"]
    );
    assert_eq!(
        schema.registered("policy_loss").collect::<Vec<_>>(),
        ["my_loss"]
    );
    let without = Schema::from_checkout(&checkout, None, &cache).unwrap();
    assert_eq!(
        without.default_text("trainer.algorithm.overlong_buffer_len"),
        None
    );
    assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 2);
    // `rlctl schema import --entry` adds the same keys and names.
    let output = crate::common::rlctl()
        .args(["schema", "import", checkout.as_str(), "--entry"])
        .arg(entry)
        .output()
        .unwrap();
    let text = crate::common::stdout(&output);
    assert!(text.contains("\ntrainer.algorithm.overlong_buffer_len=512\n"));
    assert!(text.contains("# registered policy_loss: my_loss\n"));
}
