//! The override grammars, which live in the `rlctl-grammar` crate: hydra's (its items are
//! re-exported here, as the rest of rlctl names them) and upstream SkyRL's OmegaConf dotlist,
//! with the key lists of [`Schema`] as their configs.

pub use rlctl_grammar::KeyList;
pub use rlctl_grammar::dotlist;
pub use rlctl_grammar::hydra::*;

use crate::schema::Schema;
use crate::schema::knob::KnobValue;

impl KeyList for Schema {
    fn key_defaults(&self) -> Vec<(&str, &str)> {
        self.keys().collect()
    }
}

/// A knob's value as the TOML value of the type hydra gives it: a preset's as written, the
/// command line's as hydra's parser reads it. What TOML cannot hold (a null, a sweep, an int
/// past 64 bits) stays its text: the string `"null"` is TOML's stand-in for null, as in presets.
pub fn knob_toml(value: &KnobValue) -> toml::Value {
    match value {
        KnobValue::Typed(value) => value.clone(),
        KnobValue::Verbatim(text) => text_toml(text),
    }
}
