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

/// What a flavour is, as data: one row per flavour, read by the methods of [`Flavour`].
struct Facts {
    /// The `# flavour:` header's word for it.
    word: &'static str,
    /// How messages name it.
    shown: &'static str,
    /// The file whose presence in a checkout says which flavour it is.
    marker: &'static str,
    /// The folder of the checkout the trainer runs in, whose code it imports.
    working: &'static str,
    /// The Python package the venv must import from the checkout.
    package: &'static str,
    /// The uv extra that installs the trainer's GPU stack.
    uv_extra: &'static str,
    /// The folder of the examples (a dataset's preparation script), below the working folder.
    examples: &'static str,
}

const MARIN: Facts = Facts {
    word: "marin",
    shown: "MarinSkyRL",
    marker: rlctl_grammar::import::MARIN_MARKER,
    working: "skyrl-train",
    package: "skyrl_train",
    uv_extra: "vllm",
    examples: "examples",
};

const UPSTREAM: Facts = Facts {
    word: "upstream",
    shown: "upstream skyrl",
    marker: rlctl_grammar::import::UPSTREAM_MARKER,
    working: "",
    package: "skyrl",
    uv_extra: "fsdp",
    examples: "examples/train",
};

/// One entry module under both flavours' names: the training loop and on-policy distillation
/// with the reference model as the teacher (the same algorithm in both).
const ENTRY_MODULES: [(&str, &str); 2] = [
    (
        "skyrl_train.entrypoints.main_base",
        "skyrl.train.entrypoints.main_base",
    ),
    (
        "examples.on_policy_distillation.main_on_policy_distill",
        UPSTREAM_OPD_EXAMPLE,
    ),
];

/// MarinSkyRL's logits OPD (a vLLM teacher beside the ref worker): upstream skyrl 0.4.0 has only
/// its example, so that is what it runs there (the vLLM teacher's knobs are left out or refused,
/// see `plan::layers`); a checkout with upstream's core OPD runs that instead.
const MARIN_LOGITS_OPD: &str =
    "examples.on_policy_distillation_logits.main_on_policy_distill_logits";

/// Upstream skyrl's on-policy distillation example (run from the repository's root): the
/// reference model is the teacher, scored by the FSDP ref worker; it registers `no_op`.
pub const UPSTREAM_OPD_EXAMPLE: &str =
    "examples.train.on_policy_distillation.main_on_policy_distill";

/// Upstream's core on-policy distillation entry (its main branch, after 0.4.0), with the
/// `trainer.teacher.*` and `trainer.algorithm.opd.*` keys of its config.
pub const UPSTREAM_OPD_CORE: &str = "skyrl.train.entrypoints.main_opd";

/// The file of [`UPSTREAM_OPD_CORE`] in a checkout: its presence says the checkout has it.
pub const UPSTREAM_OPD_CORE_FILE: &str = "skyrl/train/entrypoints/main_opd.py";

impl Flavour {
    const ALL: [Flavour; 2] = [Flavour::Marin, Flavour::Upstream];

    const fn facts(self) -> &'static Facts {
        match self {
            Flavour::Marin => &MARIN,
            Flavour::Upstream => &UPSTREAM,
        }
    }

    /// The flavour a key list's `# flavour: NAME` header names.
    pub fn named(name: &str) -> Option<Flavour> {
        Flavour::ALL.into_iter().find(|f| f.facts().word == name)
    }

    pub fn as_str(self) -> &'static str {
        self.facts().shown
    }

    /// The file whose presence in a checkout says which flavour it is.
    pub const fn marker(self) -> &'static str {
        self.facts().marker
    }

    /// The flavour of the checkout at `checkout`: upstream's by its config module; MarinSkyRL's
    /// by its config file, or its `skyrl-train/` folder where only the package is checked out.
    pub fn of_checkout(checkout: &Utf8Path) -> Option<Flavour> {
        if checkout.join(Flavour::Upstream.marker()).is_file() {
            Some(Flavour::Upstream)
        } else if checkout.join(Flavour::Marin.marker()).is_file()
            || checkout.join(MARIN.working).is_dir()
        {
            Some(Flavour::Marin)
        } else {
            None
        }
    }

    /// The folder the trainer runs in, and whose code it must import.
    pub fn working_folder(self, checkout: &Utf8Path) -> Utf8PathBuf {
        match self.facts().working {
            "" => checkout.to_owned(),
            folder => checkout.join(folder),
        }
    }

    /// The Python package the venv must import from the checkout.
    pub fn package(self) -> &'static str {
        self.facts().package
    }

    /// The uv extra that installs the trainer's GPU stack.
    pub fn uv_extra(self) -> &'static str {
        self.facts().uv_extra
    }

    /// SkyRL's preparation script of a dataset, relative to the trainer's working folder.
    pub fn dataset_script(self, dataset: &str) -> String {
        format!("{}/{dataset}/{dataset}_dataset.py", self.facts().examples)
    }

    /// A preset's entry module under this flavour's name: presets name either flavour's module,
    /// and the known ones are translated; any other module is kept as written.
    pub fn entry_module(self, module: &str) -> String {
        if self == Flavour::Upstream && module == MARIN_LOGITS_OPD {
            return UPSTREAM_OPD_EXAMPLE.to_owned();
        }
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

    /// Whether `module` is one of the on-policy distillation entries rlctl knows, of either
    /// flavour.
    pub fn is_opd_entry(module: &str) -> bool {
        [
            MARIN_LOGITS_OPD,
            ENTRY_MODULES[1].0,
            UPSTREAM_OPD_EXAMPLE,
            UPSTREAM_OPD_CORE,
        ]
        .contains(&module)
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
        // Marin's logits OPD runs upstream's example there; back home it is Marin's own.
        assert_eq!(
            Flavour::Upstream.entry_module(MARIN_LOGITS_OPD),
            UPSTREAM_OPD_EXAMPLE
        );
        assert_eq!(
            Flavour::Marin.entry_module(MARIN_LOGITS_OPD),
            MARIN_LOGITS_OPD
        );
        assert!(
            Flavour::is_opd_entry(MARIN_LOGITS_OPD) && Flavour::is_opd_entry(UPSTREAM_OPD_CORE)
        );
        assert!(!Flavour::is_opd_entry(ENTRY_MODULES[0].1));
    }

    #[test]
    fn each_row_is_named_as_headers_and_records_name_it() {
        for flavour in Flavour::ALL {
            let word = flavour.facts().word;
            assert_eq!(Flavour::named(word), Some(flavour));
            assert_eq!(serde_json::to_value(flavour).unwrap(), word);
        }
        assert_eq!(Flavour::named("fork"), None);
        assert_eq!(
            Flavour::Marin.dataset_script("gsm8k"),
            "examples/gsm8k/gsm8k_dataset.py"
        );
        assert_eq!(
            Flavour::Upstream.dataset_script("gsm8k"),
            "examples/train/gsm8k/gsm8k_dataset.py"
        );
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
