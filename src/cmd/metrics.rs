//! `rlctl metrics`: a run's (or a log file's) per-step metrics as a table, JSON or CSV.

use super::Session;
use super::runs::one;
use crate::error::Result;
use crate::runs::metrics::{table, to_csv, to_json};
use crate::runs::read_series;
use crate::util::out::emit;
use camino::Utf8Path;
use std::io::Write;

pub fn run(session: &Session, run: &str, json: bool, csv: bool, out: &mut dyn Write) -> Result<()> {
    let path = Utf8Path::new(run);
    let log = if path.is_file() {
        path.to_path_buf()
    } else {
        one(session, run)?.log
    };
    let series = read_series(&log)?;
    let text = match (json, csv) {
        (true, _) => to_json(&series),
        (_, true) => to_csv(&series),
        _ => table(&series),
    };
    emit(out, &text)
}
