//! `rlctl schema import`: a SkyRL checkout's config flattened into a key list.

use crate::cli::SchemaImportArgs;
use crate::error::{Error, Result};
use crate::util::fs::write_atomic;
use crate::util::out::emit;
use rlctl_grammar::import::{self as reader, MARIN_MARKER, UPSTREAM_MARKER};
use std::io::Write;

pub fn import(args: &SchemaImportArgs, out: &mut dyn Write) -> Result<()> {
    let dir = &args.config_dir;
    let text = if dir.join(UPSTREAM_MARKER).is_file() {
        reader::import_upstream(dir, args.entry.as_deref())
            .map_err(|e| Error::Unsupported(format!("reading upstream SkyRL's config: {e}")))?
            .0
    } else {
        if args.entry.is_some() {
            return Err(Error::Unsupported(format!(
                "`--entry` is for an upstream SkyRL checkout, and `{dir}` has no `{UPSTREAM_MARKER}`; leave it out for a MarinSkyRL config"
            )));
        }
        let marin = dir.join(MARIN_MARKER);
        let config_dir = match marin.parent() {
            Some(folder) if marin.is_file() => folder.to_owned(),
            _ => dir.clone(),
        };
        reader::import(&config_dir)?
    };
    match args.out.as_deref() {
        Some(file) => write_atomic(file, &text, 0o644),
        None => emit(out, &text),
    }
}
