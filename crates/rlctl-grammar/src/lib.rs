//! The override grammars rlctl checks a command line with, each re-implemented from the
//! library that reads it and proved against that library by a corpus in rlctl's tests:
//! hydra 1.3's override grammar (with OmegaConf's interpolations), which MarinSkyRL's config
//! goes through, and OmegaConf's dotlist, which upstream SkyRL's `from_cli_overrides` reads.

pub mod dotlist;
pub mod hydra;
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
