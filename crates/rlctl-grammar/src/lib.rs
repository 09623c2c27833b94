//! The Python side of SkyRL that rlctl checks against, re-implemented from the libraries that
//! read it and proved against those libraries by this crate's own tests (tests/, the real
//! hydra, OmegaConf and skyrl wheel that tests/setup.sh installs): the override grammars that
//! check a command line (hydra 1.3's, with OmegaConf's interpolations, which MarinSkyRL's config
//! goes through, and OmegaConf's dotlist, which upstream SkyRL's `from_cli_overrides` reads),
//! and the readers that turn either flavour's config files into a key list (`import`).

pub mod dotlist;
pub mod hydra;
pub mod import;
pub mod text;
pub mod yaml;

/// A config's keys with their defaults' text, one `(key, default)` pair per leaf, as a key
/// list holds them (rlctl's `Schema`).
pub trait KeyList {
    fn key_defaults(&self) -> Vec<(&str, &str)>;
}

impl KeyList for [(&str, &str)] {
    fn key_defaults(&self) -> Vec<(&str, &str)> {
        self.to_vec()
    }
}
