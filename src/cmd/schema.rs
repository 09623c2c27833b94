//! `rlctl schema import`: a SkyRL config folder flattened into a key list.

use crate::error::Result;
use crate::util::fs::write_atomic;
use crate::util::out::emit;
use camino::Utf8Path;
use std::io::Write;

pub fn import(config_dir: &Utf8Path, file: Option<&Utf8Path>, out: &mut dyn Write) -> Result<()> {
    let text = crate::schema::import::import(config_dir)?;
    match file {
        Some(file) => write_atomic(file, &text, 0o644),
        None => emit(out, &text),
    }
}
