//! A reader's watermark over a log: the last train step it judged, kept next to the log
//! (`.<log name>.seen-<reader>`), so that `watch --once` and `tend` in cron judge every step
//! since their last look (see [`alerts::alerts_since`]) and a spike between two looks is
//! reported once. Each reader keeps its own: a person's `watch` does not hide a step from cron's
//! `tend`. A watermark that cannot be read or written is only a step judged again or a window
//! judged as the latest step alone, never an error.

use super::alerts::{self, Alert, Thresholds};
use super::metrics::Series;
use crate::util::fs::write_atomic;
use camino::{Utf8Path, Utf8PathBuf};

/// Who looked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    Watch,
    Tend,
}

impl Reader {
    fn as_str(self) -> &'static str {
        match self {
            Reader::Watch => "watch",
            Reader::Tend => "tend",
        }
    }
}

/// Where `reader`'s watermark over `log` lives.
pub fn path_for(log: &Utf8Path, reader: Reader) -> Utf8PathBuf {
    let name = log.file_name().unwrap_or("log");
    log.with_file_name(format!(".{name}.seen-{}", reader.as_str()))
}

/// The last train step `reader` judged in `log`; `None` if it never looked or the file is not
/// a step number.
pub fn load(log: &Utf8Path, reader: Reader) -> Option<u64> {
    let text = std::fs::read_to_string(path_for(log, reader)).ok()?;
    text.trim().parse().ok()
}

/// Keeps `step` as the last train step `reader` judged in `log`. Not written, the next look
/// judges some steps again: no error.
pub fn store(log: &Utf8Path, reader: Reader, step: u64) {
    let _ = write_atomic(&path_for(log, reader), &format!("{step}\n"), 0o644);
}

/// The alerts of the train steps of `log` (read as `series`) since `reader`'s last look, and
/// the new watermark stored. A watermark beyond the log's last step belongs to a log since
/// replaced (a job restarted into it): the latest step alone is judged, as on a first look.
pub fn judge(log: &Utf8Path, reader: Reader, series: &Series, t: &Thresholds) -> Vec<Alert> {
    let last = series.last_train_step();
    let after = load(log, reader).filter(|&seen| last.is_some_and(|l| seen <= l));
    let raised = alerts::alerts_since(series, t, after);
    if let Some(last) = last
        && Some(last) != after
    {
        store(log, reader, last);
    }
    raised
}
