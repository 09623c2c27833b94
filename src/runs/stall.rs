//! The hang watchdog's rule, in one place: a RUNNING job whose log has gained no train step for
//! max(5 × its median s/step, `[watch] stall_floor_s`) is stalled. The quiet spell counts from
//! when the latest step was first seen (see `metrics::pulse`), or from the latest slot start
//! when no step came after it: then the limit also covers start-up, an allowance that grows
//! with the job's nodes, and 5 of the steps the plan expects (its reference s/step), since
//! nothing has been measured yet. A log that has never shown a step in a form rlctl reads says
//! nothing of progress: its job is "progress unknown", never stalled. `status`, `watch` and
//! `tend` all ask [`judge`].
//!
//! Every time involved is read on one clock where the job gives one: the wrapper touches a
//! file beside its log every few seconds (`plan::alive_file`), whose modification time is the node's
//! time (as the log's is, and the slot line's date), so a node whose clock runs behind the
//! login node's does not make a new step look old.

use crate::runs::alerts;
use crate::runs::metrics::Series;
use crate::runs::metrics::pulse::{Pulse, unix_s};
use crate::store::ledger::Record;
use crate::util::fmt::duration;
use camino::Utf8Path;
use serde::Serialize;
use std::fmt;

/// A job is stalled after this many of its median steps without a new one...
pub const STEPS: f64 = 5.0;

/// How long a stalled job's log has been quiet, the limit it passed, and what that was read
/// from.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Stall {
    pub quiet_s: f64,
    pub limit_s: f64,
    /// What the quiet spell counts from: `step N` or `slot start`.
    pub since: String,
    /// Which clock "now" was read on: `node` (the job's alive file) or `login`.
    pub clock: &'static str,
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

impl Stall {
    /// What the spell was counted from, for the cron log: the last thing seen and the clock.
    pub fn evidence(&self) -> String {
        let clock = match self.clock {
            "node" => "the compute node's clock (its alive file)",
            _ => "the login node's clock",
        };
        format!("counted from {} by {clock}", self.since)
    }
}

/// A measured start-up (a p95 of recorded jobs) is a hang once this many times over.
pub const MEASURED_MARGIN: f64 = 1.5;

/// What a job is judged by beyond its log.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// The profile's `[watch] stall_floor_s`: the least quiet spell that counts.
    pub floor_s: u64,
    /// Seconds from a slot's start to its first step that are start-up, not a hang.
    pub startup_s: f64,
    /// Seconds a step is expected to take before one is measured.
    pub expected_s_per_step: Option<f64>,
    /// The trainer prints a step line rlctl reads from its first step on.
    pub prints_steps: bool,
}

impl Limits {
    /// The limits of a recorded job: its start-up allowance, either [`MEASURED_MARGIN`] times
    /// the p95 start-up that recorded runs of its model measured on its nodes, or its profile's
    /// `slurm.startup_s`, doubled for its variance and grown with the square root of the nodes,
    /// whose Ray and engines start together (8 min on one node, 23 on eight at the default
    /// 240 s); and its plan's expected s/step, as the record keeps them.
    pub fn of(record: &Record, floor_s: u64) -> Limits {
        let nodes = f64::from(record.nodes.unwrap_or(1).max(1));
        let startup = record.startup_s.unwrap_or(0) as f64;
        Limits {
            floor_s,
            // A start-up measured on these nodes (a p95 of recorded runs' phase clocks) needs
            // only a margin.
            startup_s: match record.startup_measured {
                true => MEASURED_MARGIN * startup,
                false => 2.0 * startup * nodes.sqrt(),
            },
            expected_s_per_step: record.expected_s_per_step,
            prints_steps: record.prints_steps,
        }
    }
}

/// What the watchdog makes of a running job.
#[derive(Debug, Clone, PartialEq)]
pub enum Watch {
    /// Steps come, or the quiet spell is within its limit.
    Fine,
    /// The log has never shown a step rlctl reads: nothing to judge.
    Unknown,
    Stalled(Stall),
}

/// The verdict, at `now` (Unix seconds on `clock`), on a running job with this log `pulse` and
/// median seconds per step.
pub fn judge(
    pulse: &Pulse,
    median_step_s: Option<f64>,
    limits: &Limits,
    now: f64,
    clock: &'static str,
) -> Watch {
    if pulse.step.is_none() && !limits.prints_steps {
        return Watch::Unknown;
    }
    let steps = median_step_s.filter(|s| s.is_finite() && *s > 0.0);
    let floor = limits.floor_s as f64;
    let start_up = |at: f64| {
        let expected = steps.or(limits.expected_s_per_step.filter(|s| *s > 0.0));
        let limit = limits.startup_s + STEPS * expected.unwrap_or(0.0);
        ("the slot's start".to_owned(), at, floor.max(limit))
    };
    let (since, at, limit_s) = match (pulse.step, pulse.slot) {
        // A slot that started after the latest step: start-up, then a first step.
        (Some(step), Some(slot)) if slot.offset > step.offset => start_up(slot.unix_s),
        (Some(step), _) => (
            "the latest step".to_owned(),
            step.unix_s,
            floor.max(steps.map_or(0.0, |s| STEPS * s)),
        ),
        (None, Some(slot)) => start_up(slot.unix_s),
        // Neither a step nor a slot start: nothing to count from.
        (None, None) => return Watch::Fine,
    };
    let quiet_s = now - at;
    if quiet_s > limit_s {
        Watch::Stalled(Stall {
            quiet_s,
            limit_s,
            since,
            clock,
        })
    } else {
        Watch::Fine
    }
}

/// "Now" for the job writing `log`: the node's time of its wrapper's latest touch when it
/// keeps one (at most `plan::ALIVE_EVERY_S` behind the node's now: a spell is never
/// overestimated), else the login node's.
pub fn now_for(log: &Utf8Path) -> (f64, &'static str) {
    let touched = std::fs::metadata(crate::plan::alive_file(log)).and_then(|m| m.modified());
    match touched {
        Ok(t) => (unix_s(t), "node"),
        Err(_) => (unix_s(std::time::SystemTime::now()), "login"),
    }
}

/// The verdict, now, on the job of `record` in SLURM state `state` (squeue's: pass anything
/// else for a job SLURM no longer holds) whose log has `series` and `pulse`: only a RUNNING
/// job is judged, by the median s/step `status` shows.
pub fn of_job(record: &Record, state: &str, series: &Series, pulse: &Pulse, floor_s: u64) -> Watch {
    if state != "RUNNING" {
        return Watch::Fine;
    }
    of_running(
        record,
        alerts::progress(series, None).secs_per_step,
        pulse,
        floor_s,
    )
}

/// [`of_job`] of a RUNNING job whose median s/step (`alerts::progress`'s) is `median`.
pub fn of_running(record: &Record, median: Option<f64>, pulse: &Pulse, floor_s: u64) -> Watch {
    let (now, clock) = now_for(&record.log);
    judge(pulse, median, &Limits::of(record, floor_s), now, clock)
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

    fn limits(floor_s: u64) -> Limits {
        Limits {
            floor_s,
            startup_s: 0.0,
            expected_s_per_step: None,
            prints_steps: true,
        }
    }

    fn stall(p: &Pulse, median: Option<f64>, l: &Limits, now: f64) -> Option<Stall> {
        match judge(p, median, l, now, "login") {
            Watch::Stalled(s) => Some(s),
            _ => None,
        }
    }

    #[test]
    fn quiet_past_the_floor_is_a_stall_and_says_so() {
        let p = pulse(Some((100, 1000.0)), Some((0, 500.0)));
        let s = stall(&p, Some(10.0), &limits(600), 1000.0 + 720.0).unwrap();
        assert_eq!(s.limit_s, 600.0);
        assert_eq!(s.to_string(), "no new step for 12m00s (limit 10m00s)");
        assert_eq!(
            s.evidence(),
            "counted from the latest step by the login node's clock"
        );
        assert_eq!(
            stall(&p, Some(10.0), &limits(600), 1000.0 + 600.0),
            None,
            "at the limit"
        );
    }

    #[test]
    fn slow_steps_raise_the_limit_above_the_floor() {
        let p = pulse(Some((100, 0.0)), None);
        let l = limits(600);
        assert_eq!(stall(&p, Some(300.0), &l, 1400.0), None, "5 x 300 s");
        assert_eq!(stall(&p, Some(300.0), &l, 1600.0).unwrap().limit_s, 1500.0);
        // No timing, or a nonsense one: the floor alone.
        assert!(stall(&p, None, &l, 700.0).is_some());
        assert!(stall(&p, Some(f64::NAN), &l, 700.0).is_some());
    }

    #[test]
    fn start_up_counts_from_the_slot_start_and_covers_start_up_and_expected_steps() {
        // OPD: 832 s a step, 8 min of start-up on one node.
        let l = Limits {
            floor_s: 600,
            startup_s: 480.0,
            expected_s_per_step: Some(832.0),
            prints_steps: true,
        };
        let fresh = pulse(None, Some((0, 0.0)));
        assert_eq!(stall(&fresh, None, &l, 40.0 * 60.0), None, "40 minutes in");
        let s = stall(&fresh, None, &l, 4700.0).unwrap();
        assert_eq!(s.limit_s, 480.0 + 5.0 * 832.0);
        assert_eq!(s.since, "the slot's start");
        // A requeued slot after slot 1's steps: its start-up again, judged by the measured pace.
        let again = pulse(Some((100, 0.0)), Some((200, 5000.0)));
        assert_eq!(stall(&again, Some(10.0), &l, 5000.0 + 600.0), None);
        assert!(stall(&again, Some(10.0), &l, 5000.0 + 601.0).is_some());
        // A step after the slot start: quiet since that step.
        let p = pulse(Some((300, 9000.0)), Some((200, 5000.0)));
        assert_eq!(stall(&p, None, &limits(600), 9500.0), None);
    }

    #[test]
    fn a_log_that_never_showed_a_step_it_is_not_known_to_print_is_progress_unknown() {
        let l = Limits {
            prints_steps: false,
            ..limits(1)
        };
        let p = pulse(None, Some((0, 0.0)));
        assert_eq!(judge(&p, None, &l, 1e12, "login"), Watch::Unknown);
        // Once a step is read, the format is known.
        let p = pulse(Some((10, 0.0)), Some((0, 0.0)));
        assert!(matches!(
            judge(&p, None, &l, 1e12, "login"),
            Watch::Stalled(_)
        ));
    }

    #[test]
    fn a_log_without_steps_or_slot_starts_is_never_stalled() {
        assert_eq!(
            judge(&Pulse::default(), None, &limits(1), 1e12, "login"),
            Watch::Fine
        );
    }

    #[test]
    fn a_clock_behind_the_log_is_no_stall() {
        let p = pulse(Some((0, 2000.0)), None);
        assert_eq!(stall(&p, None, &limits(600), 1000.0), None);
    }
}
