//! A log's pulse: where its latest train step and its latest slot start are, and when each
//! happened, kept in the log's step cache so that `status`, `watch` and `tend` can tell a trainer
//! that hangs from one that is slow or still starting (see `runs::stall`).
//!
//! Log lines carry no time of their own. A slot-start line carries the wrapper's date; a step's
//! time is the log's modification time as read at the read that first saw that step, which is
//! never earlier than the step was written: a quiet spell is never overestimated.

use serde::{Deserialize, Serialize};
use std::time::SystemTime;

/// The latest step and slot start of a log, each with its byte offset (which came last) and its
/// time in Unix seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Pulse {
    /// The latest train step line, timed by the log's modification time at the read that
    /// first saw it.
    pub step: Option<Beat>,
    /// The latest slot-start line (`rlctl: slot N of job J started DATE on HOST`), timed by its
    /// date.
    pub slot: Option<Beat>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Beat {
    pub offset: u64,
    pub unix_s: f64,
}

impl Pulse {
    /// This pulse with what a read of the bytes after it found: the latest train step line's
    /// offset, the latest slot-start line's offset and date, and the log's modification time
    /// taken after that read (the time of a new step, and of a slot line whose date is unreadable).
    pub fn merged(
        mut self,
        step_line: Option<u64>,
        slot_line: Option<(u64, Option<f64>)>,
        read_at: f64,
    ) -> Pulse {
        if let Some(offset) = step_line {
            self.step = Some(Beat {
                offset,
                unix_s: read_at,
            });
        }
        if let Some((offset, date)) = slot_line {
            self.slot = Some(Beat {
                offset,
                unix_s: date.unwrap_or(read_at),
            });
        }
        self
    }
}

/// Seconds since the Unix epoch of a time (negative before it).
pub fn unix_s(time: SystemTime) -> f64 {
    match time.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(d) => d.as_secs_f64(),
        Err(e) => -e.duration().as_secs_f64(),
    }
}

/// `YYYY-MM-DDTHH:MM:SSZ` (what `date -u +%Y-%m-%dT%H:%M:%SZ` prints) in Unix seconds.
pub fn parse_utc(text: &str) -> Option<f64> {
    let b = text.as_bytes();
    let shape = b"dddd-dd-ddTdd:dd:ddZ";
    if b.len() != shape.len()
        || !(b.iter().zip(shape)).all(|(c, s)| match s {
            b'd' => c.is_ascii_digit(),
            s => c == s,
        })
    {
        return None;
    }
    let num = |from: usize, to: usize| -> i64 { text[from..to].parse().expect("digits") };
    let (y, m, d) = (num(0, 4), num(5, 7), num(8, 10));
    let (hh, mm, ss) = (num(11, 13), num(14, 16), num(17, 19));
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    // Days from 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some((days * 86_400 + hh * 3600 + mm * 60 + ss) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates_read_as_unix_seconds() {
        assert_eq!(parse_utc("1970-01-01T00:00:00Z"), Some(0.0));
        assert_eq!(parse_utc("2000-03-01T00:00:00Z"), Some(951_868_800.0));
        assert_eq!(parse_utc("2026-07-14T09:00:00Z"), Some(1_784_019_600.0));
        for bad in [
            "2026-07-14 09:00:00",
            "2026-13-01T00:00:00Z",
            "",
            "2026-07-14T09:00:00Z x",
        ] {
            assert_eq!(parse_utc(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_newest_read_moves_only_what_it_found() {
        let start = Pulse::default().merged(Some(10), Some((0, Some(5.0))), 100.0);
        assert_eq!(start.step.unwrap().unix_s, 100.0);
        assert_eq!(start.slot.unwrap().unix_s, 5.0);
        let later = start.merged(None, Some((50, None)), 200.0);
        assert_eq!(later.step, start.step, "no new step: its time stays");
        assert_eq!(later.slot.unwrap().offset, 50);
        assert_eq!(
            later.slot.unwrap().unix_s,
            200.0,
            "an unreadable date: the read's time"
        );
    }
}
