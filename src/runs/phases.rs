//! What the phase clock's files (`plan::phases`) tell rlctl: where a job still starting up is
//! (`status`, `watch`), and how long start-up and saves took in recorded runs of the same
//! model on as many nodes (`estimate`, the `slots` check, the hang watchdog's limit before the
//! first step, and an `--until-done` slot's end). The ledger is the profile's run root, so the
//! runs it holds ran on the profile's cluster.

use crate::plan::Plan;
use crate::plan::phases::{self, Mark, Phase};
use crate::store::ledger::Record;
use crate::store::recorded::Recorded;
use serde::Serialize;

/// Recorded jobs read for the measured times at most: the newest are the ones that tell.
const JOBS_READ: usize = 8;

/// Records looked at for them at most: a ledger of thousands of runs of older rlctls (no
/// phases) costs no more than this many file opens.
const RECORDS_LOOKED_AT: usize = 64;

/// Where a job in start-up is: its latest phase and when it began.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Starting {
    pub phase: Phase,
    /// The phase in words: `ray head up`, `ray worker 2 up`, `engines ready`.
    pub words: String,
    /// When the phase began, Unix seconds on the node's clock.
    pub since_unix: i64,
    /// How long the job has been in the phase, on the node's clock where it keeps one (see
    /// `stall::now_for`).
    pub for_s: f64,
}

impl std::fmt::Display for Starting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let age = crate::util::fmt::duration(self.for_s);
        write!(f, "starting: {} {age}", self.words)
    }
}

/// The start-up phase of a job whose phases file holds `marks`: the latest slot's last mark,
/// while that slot has neither a first step nor an exit; `None` once it trains or ended.
pub fn starting(marks: &[Mark]) -> Option<Starting> {
    let slot = marks.iter().rposition(|m| m.phase == Phase::Slot)?;
    let tail = &marks[slot..];
    if tail
        .iter()
        .any(|m| matches!(m.phase, Phase::FirstStep | Phase::Exit | Phase::SaveEnded))
    {
        return None;
    }
    let last = tail.last()?;
    Some(Starting {
        phase: last.phase,
        words: last.phase.words(&last.detail),
        since_unix: last.unix_s,
        for_s: 0.0,
    })
}

/// The start-up phase of `record`'s job, from its phases file, now.
pub fn starting_of(record: &Record) -> Option<Starting> {
    let mut s = starting(&phases::read(&phases::file(
        &record.run_dir,
        &record.job_id,
    )))?;
    let (now, _) = crate::runs::stall::now_for(&record.log);
    s.for_s = (now - s.since_unix as f64).max(0.0);
    Some(s)
}

/// Each slot's start-up (its start to its first step) and each save (begun to ended), in
/// seconds, from one job's marks.
pub fn durations(marks: &[Mark]) -> (Vec<f64>, Vec<f64>) {
    let (mut startups, mut saves) = (Vec::new(), Vec::new());
    let (mut slot, mut begun): (Option<i64>, Option<&Mark>) = (None, None);
    for m in marks {
        match m.phase {
            Phase::Slot => (slot, begun) = (Some(m.unix_s), None),
            Phase::FirstStep => {
                startups.extend(slot.take().map(|s| (m.unix_s - s).max(0) as f64));
            }
            Phase::SaveBegun => begun = Some(m),
            Phase::SaveEnded => {
                if let Some(b) = begun.take().filter(|b| b.detail == m.detail) {
                    saves.push((m.unix_s - b.unix_s).max(0) as f64);
                }
            }
            _ => {}
        }
    }
    (startups, saves)
}

/// The 95th percentile (nearest rank) of `values`; `None` for none.
pub fn p95(mut values: Vec<f64>) -> Option<f64> {
    values.retain(|v| v.is_finite());
    values.sort_by(f64::total_cmp);
    let rank = ((values.len() as f64) * 0.95).ceil() as usize;
    values.get(rank.max(1) - 1).copied()
}

/// Start-up and save times measured by recorded jobs like a plan's.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// p95 of a slot's start-up, when any job measured one.
    pub startup_s: Option<f64>,
    /// p95 of a save, when any job measured one.
    pub save_s: Option<f64>,
    /// p95 of a train step (after each job's first) in the same jobs.
    pub step_s: Option<f64>,
    /// The jobs read, newest first.
    pub jobs: Vec<String>,
}

impl Measured {
    /// Where the figures come from, for the reader.
    pub fn from(&self) -> String {
        format!(
            "p95 of recorded job(s) {} (same model and nodes)",
            self.jobs.join(", ")
        )
    }

    /// Seconds from one save's end to the next's: `ckpt_interval` p95 steps and a p95 save.
    pub fn cycle_s(&self, ckpt_interval: u64) -> Option<u64> {
        let (step, save) = (self.step_s?, self.save_s?);
        Some((ckpt_interval as f64 * step + save).ceil() as u64)
    }
}

/// The times measured by the newest recorded jobs of the same model (`trainer.policy.model.path`)
/// on as many nodes as `plan`, those of the same knobs first; `None` when none wrote a phase
/// that tells.
pub fn measured(plan: &Plan, recorded: &Recorded) -> Option<Measured> {
    const MODEL: &str = "trainer.policy.model.path";
    let fingerprint = crate::store::ledger::knob_fingerprint(plan);
    let query = recorded.query(&fingerprint);
    let groups = query
        .same()
        .into_iter()
        .chain(query.near(&[MODEL]).into_iter().map(|(_, g)| g));
    let (mut startups, mut saves, mut steps, mut jobs) = (vec![], vec![], vec![], vec![]);
    let records = groups
        .flat_map(|g| query.records(g))
        .take(RECORDS_LOOKED_AT);
    for record in records {
        if jobs.len() == JOBS_READ {
            break;
        }
        if record.nodes.unwrap_or(1) != plan.job.nodes {
            continue;
        }
        let marks = phases::read(&phases::file(&record.run_dir, &record.job_id));
        let (up, save) = durations(&marks);
        if up.is_empty() && save.is_empty() {
            continue;
        }
        startups.extend(up);
        saves.extend(save);
        steps.extend(crate::runs::estimate::step_times(&record));
        jobs.push(record.job_id);
    }
    (!jobs.is_empty()).then(|| Measured {
        startup_s: p95(startups),
        save_s: p95(saves),
        step_s: p95(steps),
        jobs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(unix_s: i64, phase: Phase, detail: &str) -> Mark {
        Mark {
            unix_s,
            phase,
            detail: detail.to_owned(),
        }
    }

    #[test]
    fn a_slot_without_a_first_step_is_starting_at_its_latest_phase() {
        let mut marks = vec![
            mark(100, Phase::Slot, "1"),
            mark(110, Phase::RayHead, ""),
            mark(130, Phase::RayWorker, "1"),
        ];
        let s = starting(&marks).unwrap();
        assert_eq!((s.words.as_str(), s.since_unix), ("ray worker 1 up", 130));
        marks.push(mark(400, Phase::FirstStep, ""));
        assert_eq!(starting(&marks), None);
        // A requeued slot starts up again.
        marks.push(mark(900, Phase::Slot, "2"));
        assert_eq!(starting(&marks).unwrap().words, "slot started");
        marks.push(mark(901, Phase::Exit, "1"));
        assert_eq!(starting(&marks), None);
    }

    #[test]
    fn start_ups_and_saves_are_timed_within_their_slot() {
        let marks = [
            mark(100, Phase::Slot, "1"),
            mark(400, Phase::FirstStep, ""),
            mark(500, Phase::SaveBegun, "5"),
            mark(530, Phase::SaveEnded, "5"),
            mark(600, Phase::SaveBegun, "10"),
            // Cut by the slot's end: no save measured.
            mark(1000, Phase::Slot, "2"),
            mark(1100, Phase::FirstStep, ""),
        ];
        assert_eq!(durations(&marks), (vec![300.0, 100.0], vec![30.0]));
        assert_eq!(p95(vec![1.0, 2.0, 3.0, 4.0, 100.0]), Some(100.0));
        assert_eq!(p95((1..=100).map(f64::from).collect()), Some(95.0));
        assert_eq!(p95(vec![]), None);
    }
}
