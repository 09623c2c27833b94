//! `rlctl schema import`: a SkyRL config folder flattened into a key list.

use crate::cli::SchemaImportArgs;
use crate::error::Result;
use crate::util::fs::write_atomic;
use crate::util::out::emit;
use std::io::Write;

pub fn import(args: &SchemaImportArgs, out: &mut dyn Write) -> Result<()> {
    let text = crate::schema::import::import(&args.config_dir)?;
    match args.out.as_deref() {
        Some(file) => write_atomic(file, &text, 0o644),
        None => emit(out, &text),
    }
}
