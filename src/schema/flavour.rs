//! Which SkyRL a checkout is: MarinSkyRL (hydra, `skyrl-train/`) or upstream `skyrl`
//! (dataclasses, the repository root), and what differs between them when a job runs.
//!
//! The flavour is read from the checkout's marker files, once per plan; where the checkout is
//! not on this machine (a laptop, CI), from the key list's `# flavour: upstream` header
//! (`Schema::flavour_header`).

use camino::{Utf8Path, Utf8PathBuf};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Flavour {
    /// The Marin fork (a559688): hydra composes `ppo_base_config.yaml`.
    #[default]
    Marin,
    /// NovaSky-AI's `skyrl` package (0.4.0): `SkyRLTrainConfig.from_cli_overrides`.
    Upstream,
}

/// One entry module under both flavours' names: the training loop and on-policy distillation.
const ENTRY_MODULES: [(&str, &str); 2] = [
    (
        "skyrl_train.entrypoints.main_base",
        "skyrl.train.entrypoints.main_base",
    ),
    (
        "examples.on_policy_distillation_logits.main_on_policy_distill_logits",
        "examples.train.on_policy_distillation.main_on_policy_distill",
    ),
];

impl Flavour {
    /// The flavour a key list's `# flavour: NAME` header names.
    pub fn named(name: &str) -> Option<Flavour> {
        match name {
            "upstream" => Some(Flavour::Upstream),
            "marin" => Some(Flavour::Marin),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Flavour::Marin => "MarinSkyRL",
            Flavour::Upstream => "upstream skyrl",
        }
    }

    /// The file whose presence in a checkout says which flavour it is.
    pub const fn marker(self) -> &'static str {
        match self {
            Flavour::Marin => rlctl_grammar::import::MARIN_MARKER,
            Flavour::Upstream => rlctl_grammar::import::UPSTREAM_MARKER,
        }
    }

    /// The flavour of the checkout at `checkout`: upstream's by its config module; MarinSkyRL's
    /// by its config file, or its `skyrl-train/` folder where only the package is checked out.
    pub fn of_checkout(checkout: &Utf8Path) -> Option<Flavour> {
        if checkout.join(Flavour::Upstream.marker()).is_file() {
            Some(Flavour::Upstream)
        } else if checkout.join(Flavour::Marin.marker()).is_file()
            || checkout.join("skyrl-train").is_dir()
        {
            Some(Flavour::Marin)
        } else {
            None
        }
    }

    /// The folder the trainer runs in, and whose code it must import.
    pub fn working_folder(self, checkout: &Utf8Path) -> Utf8PathBuf {
        match self {
            Flavour::Marin => checkout.join("skyrl-train"),
            Flavour::Upstream => checkout.to_owned(),
        }
    }

    /// The Python package the venv must import from the checkout.
    pub fn package(self) -> &'static str {
        match self {
            Flavour::Marin => "skyrl_train",
            Flavour::Upstream => "skyrl",
        }
    }

    /// The uv extra that installs the trainer's GPU stack.
    pub fn uv_extra(self) -> &'static str {
        match self {
            Flavour::Marin => "vllm",
            Flavour::Upstream => "fsdp",
        }
    }

    /// A preset's entry module under this flavour's name: presets name either flavour's module,
    /// and the known ones are translated; any other module is kept as written.
    pub fn entry_module(self, module: &str) -> String {
        ENTRY_MODULES
            .iter()
            .find_map(|&(marin, upstream)| match self {
                Flavour::Marin if module == upstream => Some(marin),
                Flavour::Upstream if module == marin => Some(upstream),
                _ => None,
            })
            .unwrap_or(module)
            .to_owned()
    }
}

impl std::fmt::Display for Flavour {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_modules_translate_both_ways_and_others_stay() {
        for (marin, upstream) in ENTRY_MODULES {
            assert_eq!(Flavour::Upstream.entry_module(marin), upstream);
            assert_eq!(Flavour::Marin.entry_module(upstream), marin);
            assert_eq!(Flavour::Marin.entry_module(marin), marin);
        }
        assert_eq!(Flavour::Upstream.entry_module("my.main"), "my.main");
    }

    #[test]
    fn the_checkout_decides_by_its_marker_file() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8Path::from_path(dir.path()).unwrap();
        assert_eq!(Flavour::of_checkout(root), None);
        let marker = root.join(Flavour::Upstream.marker());
        std::fs::create_dir_all(marker.parent().unwrap()).unwrap();
        std::fs::write(&marker, "").unwrap();
        assert_eq!(Flavour::of_checkout(root), Some(Flavour::Upstream));
        assert_eq!(Flavour::Upstream.working_folder(root), root);
    }
}
