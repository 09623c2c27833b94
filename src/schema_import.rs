//! `rlctl schema import`: flattens a SkyRL hydra `config/` folder into a key list.
//! (Interface only: the implementation is being written.)

use crate::error::{Error, Result};
use camino::Utf8Path;

/// The key list of `config_dir`'s `ppo_base_config.yaml`, following its `defaults:` list, in
/// the format `Schema::parse` reads.
pub fn import(config_dir: &Utf8Path) -> Result<String> {
    Err(Error::Unsupported(format!(
        "schema import of {config_dir} is not implemented yet"
    )))
}
