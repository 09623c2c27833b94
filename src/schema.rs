//! SkyRL's config keys with their defaults: which hydra overrides exist, and of what type.
//! (Interface only: the implementation is being written.)

use crate::knob::Knob;

pub struct Schema {
    pub name: String,
}

impl Schema {
    /// Parses a key list: one `key=default` line per config key, as `rlctl schema import` writes.
    pub fn parse(name: &str, _text: &str) -> Result<Schema, String> {
        Ok(Schema {
            name: name.to_owned(),
        })
    }

    /// Whether hydra would accept this override against SkyRL's config, and whether its value
    /// has the default's type; the message names the key and the fix.
    pub fn check(&self, _knob: &Knob) -> Result<(), String> {
        Ok(())
    }

    /// The default's text for a key, if the key exists.
    pub fn default_text(&self, _key: &str) -> Option<&str> {
        None
    }
}
