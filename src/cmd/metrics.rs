//! `rlctl metrics`: a run's (all its jobs' steps joined) or a log file's per-step metrics as a
//! table, JSON or CSV.

use super::Session;
use super::runs::{no_log, one_run};
use crate::cli::MetricsArgs;
use crate::error::{Error, Result};
use crate::runs::metrics::{table, to_csv};
use crate::runs::{history, read_series};
use crate::util::out::emit;
use camino::Utf8Path;
use std::io::Write;

pub fn run(session: &Session, args: &MetricsArgs, out: &mut dyn Write) -> Result<()> {
    let run = args.run.as_str();
    let path = Utf8Path::new(run);
    let series = if path.is_file() {
        read_series(path)?
    } else {
        match one_run(session, run) {
            // The run's whole history: every job's steps joined, the resumed job's winning.
            Ok((run, record)) => {
                let jobs = history::jobs(&run, &record);
                if !jobs.iter().any(|j| j.log.exists()) {
                    return Err(no_log(&record));
                }
                history::read(&jobs)?.series
            }
            // A path to a log, not a run's name: say the file is not there.
            Err(Error::UnknownName { .. }) if looks_like_a_file(path) => {
                use std::io::Read;
                let why = std::fs::File::open(path)
                    .and_then(|mut f| f.read(&mut [0u8; 1]))
                    .err()
                    .unwrap_or_else(|| std::io::Error::other("not a regular file"));
                return Err(Error::io("read", path, why));
            }
            Err(e) => return Err(e),
        }
    };
    let text = match (args.json, args.csv) {
        // One line: a long run's series is large.
        (true, _) => crate::util::versioned::line(&series),
        (_, true) => to_csv(&series),
        _ => table(&series),
    };
    emit(out, &text)
}

/// A word that names a file rather than a run: a path from `/`, `./` or `~`, or a name ending
/// in a log's extension (run names are plain words joined by `/`).
fn looks_like_a_file(path: &Utf8Path) -> bool {
    let text = path.as_str();
    text.starts_with(['/', '.', '~'])
        || matches!(path.extension(), Some("out" | "log" | "txt" | "err"))
}
