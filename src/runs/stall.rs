//! The hang watchdog's rule, in one place: a RUNNING job whose log has gained no train step for
//! max(5 × its median s/step, `[watch] stall_floor_s`) is stalled. The quiet spell counts from
//! the latest slot start when no step came after it (start-up is not a hang), else from when
//! the latest step was first seen (see `metrics::pulse`). `status`, `watch` and `tend` all ask
//! [`stall`].

use crate::runs::alerts;
use crate::runs::metrics::Series;
use crate::runs::metrics::pulse::{Pulse, unix_s};
use crate::util::fmt::duration;
use serde::Serialize;
use std::fmt;

/// A job is stalled after this many of its median steps without a new one...
pub const STEPS: f64 = 5.0;

/// How long a stalled job's log has been quiet, and the limit it passed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Stall {
    pub quiet_s: f64,
    pub limit_s: f64,
}

impl fmt::Display for Stall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "no new step for {} (limit {})",
            duration(self.quiet_s),
            duration(self.limit_s)
        )
    }
}

/// Whether a running job with this log `pulse` and median seconds per step is stalled at
/// `now` (Unix seconds), with `floor_s` the least quiet spell that counts. A log with neither a
/// step nor a slot start says nothing: no stall.
pub fn stall(pulse: &Pulse, median_step_s: Option<f64>, floor_s: u64, now: f64) -> Option<Stall> {
    let since = match (pulse.step, pulse.slot) {
        (Some(step), Some(slot)) if slot.offset > step.offset => slot.unix_s,
        (Some(step), _) => step.unix_s,
        (None, Some(slot)) => slot.unix_s,
        (None, None) => return None,
    };
    let steps = median_step_s.filter(|s| s.is_finite() && *s > 0.0);
    let limit_s = (floor_s as f64).max(steps.map_or(0.0, |s| STEPS * s));
    let quiet_s = now - since;
    (quiet_s > limit_s).then_some(Stall { quiet_s, limit_s })
}

/// The stall, now, of a job in SLURM state `state` (squeue's: pass anything else for a job
/// SLURM no longer holds) whose log has `series` and `pulse`: only a RUNNING job stalls, and its
/// median s/step is the one `status` shows.
pub fn of_job(state: &str, series: &Series, pulse: &Pulse, floor_s: u64) -> Option<Stall> {
    if state != "RUNNING" {
        return None;
    }
    of_running(alerts::progress(series, None).secs_per_step, pulse, floor_s)
}

/// [`of_job`] of a RUNNING job whose median s/step (`alerts::progress`'s) is `median`.
pub fn of_running(median: Option<f64>, pulse: &Pulse, floor_s: u64) -> Option<Stall> {
    stall(pulse, median, floor_s, unix_s(std::time::SystemTime::now()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::metrics::pulse::Beat;

    fn pulse(step: Option<(u64, f64)>, slot: Option<(u64, f64)>) -> Pulse {
        let beat = |(offset, unix_s)| Beat { offset, unix_s };
        Pulse {
            step: step.map(beat),
            slot: slot.map(beat),
        }
    }

    #[test]
    fn quiet_past_the_floor_is_a_stall_and_says_so() {
        let p = pulse(Some((100, 1000.0)), Some((0, 500.0)));
        let s = stall(&p, Some(10.0), 600, 1000.0 + 720.0).unwrap();
        assert_eq!(s.limit_s, 600.0);
        assert_eq!(s.to_string(), "no new step for 12m00s (limit 10m00s)");
        assert_eq!(
            stall(&p, Some(10.0), 600, 1000.0 + 600.0),
            None,
            "at the limit"
        );
    }

    #[test]
    fn slow_steps_raise_the_limit_above_the_floor() {
        let p = pulse(Some((100, 0.0)), None);
        assert_eq!(
            stall(&p, Some(300.0), 600, 1400.0),
            None,
            "5 x 300 s = 25 min"
        );
        let s = stall(&p, Some(300.0), 600, 1600.0).unwrap();
        assert_eq!(s.limit_s, 1500.0);
        // No timing, or a nonsense one: the floor alone.
        assert!(stall(&p, None, 600, 700.0).is_some());
        assert!(stall(&p, Some(f64::NAN), 600, 700.0).is_some());
    }

    #[test]
    fn start_up_counts_from_the_latest_slot_start() {
        // Slot 2 started after slot 1's last step: quiet since the slot's date.
        let p = pulse(Some((100, 0.0)), Some((200, 5000.0)));
        assert_eq!(stall(&p, Some(10.0), 600, 5500.0), None);
        assert!(stall(&p, Some(10.0), 600, 5601.0).is_some());
        // No step yet in the job's first slot.
        let p = pulse(None, Some((0, 5000.0)));
        assert_eq!(stall(&p, None, 600, 5500.0), None);
        assert!(stall(&p, None, 600, 5601.0).is_some());
        // A step after the slot start: quiet since that step.
        let p = pulse(Some((300, 9000.0)), Some((200, 5000.0)));
        assert_eq!(stall(&p, None, 600, 9500.0), None);
    }

    #[test]
    fn a_log_without_steps_or_slot_starts_is_never_stalled() {
        assert_eq!(stall(&Pulse::default(), None, 1, 1e12), None);
    }

    #[test]
    fn a_clock_behind_the_log_is_no_stall() {
        let p = pulse(Some((0, 2000.0)), None);
        assert_eq!(stall(&p, None, 600, 1000.0), None);
    }
}
