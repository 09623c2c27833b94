//! The speed of recorded runs, for `estimate`: the median step time of runs with the same knobs,
//! else of the nearest run of the same shape, else the preset's reference; the last two carried
//! over to the plan's work of a step ([`crate::plan::work`]), or unknown.

use crate::plan::Plan;
use crate::plan::estimate::{Estimate, Speed, Times, estimate};
use crate::plan::work::{Carry, Work};
use crate::runs::alerts::median;
use crate::runs::metrics::Kind;
use crate::runs::metrics::keys::STEP_TIME;
use crate::runs::read_series;
use crate::store::ledger::{Record, knob_fingerprint};
use crate::store::recorded::Recorded;
use crate::submit::GRID_WIDTH;

/// Recorded runs read for one speed at most: the newest are the ones that tell.
const RUNS_READ: usize = 5;

/// `timing/step` of every train step after the first (which pays compilation and warm-up), in
/// the job's own log: each record is one job, so a run's steps count once, each as the job that
/// ran it timed it (a step trained again after a resume was run twice, and timed twice); its
/// run's history (`runs::history`) would count a chain's earlier links again for each later one.
pub fn step_times(record: &Record) -> Vec<f64> {
    let Ok(series) = read_series(&record.log) else {
        return vec![];
    };
    let first = series.steps(Kind::Train).first().map(|s| s.step);
    (series.values(Kind::Train, STEP_TIME))
        .filter(|(step, v)| Some(*step) != first && v.is_finite() && *v > 0.0)
        .map(|(_, v)| v)
        .collect()
}

/// The median step time of the first [`RUNS_READ`] of `records` that logged one, and their jobs.
fn measured(records: impl Iterator<Item = Record>) -> Option<(f64, Vec<String>)> {
    let mut times = Vec::new();
    let mut jobs = Vec::new();
    for record in records {
        let t = step_times(&record);
        if !t.is_empty() {
            times.extend(t);
            jobs.push(record.job_id);
            if jobs.len() == RUNS_READ {
                break;
            }
        }
    }
    median(times.into_iter()).map(|m| (m, jobs))
}

/// The speed of `plan` from the recorded runs, else its reference, carried over to its work
/// ([`crate::plan::work`]); else why it is unknown.
pub fn speed(plan: &Plan, recorded: &Recorded) -> Result<Speed, String> {
    let fingerprint = knob_fingerprint(plan);
    let query = recorded.query(&fingerprint);
    if let Some((s, jobs)) = query.same().and_then(|g| measured(query.records(g))) {
        return Ok(Speed {
            s_per_step: s,
            from: format!("median of recorded job(s) {} (same knobs)", jobs.join(", ")),
            same_knobs: true,
        });
    }
    let (mine, defaults) = (&plan.schedule.work, &plan.schedule.work_defaults);
    // Nearest first; among as near, the group with the newest record.
    let near = query.near(&[]);
    let mut nearest: Option<(String, Vec<String>)> = None;
    let mut read = 0;
    for &(d, group) in &near {
        if read == RUNS_READ {
            break;
        }
        let theirs = Work::of(|key| query.value_in(group, key), defaults);
        let carry = theirs.carry(mine);
        if let Carry::Not(what) = &carry {
            if nearest.is_none() {
                let job = query.records(group).next().map(|r| (r.job_id, r.target));
                nearest = job.map(|(job, target)| (format!("job {job} ({target})"), what.clone()));
            }
            continue;
        }
        for record in query.records(group) {
            if read == RUNS_READ {
                break;
            }
            read += 1;
            let (job, target) = (record.job_id.clone(), record.target.clone());
            if let Some((s, _)) = measured(std::iter::once(record))
                && let Some((s_per_step, how)) = carry.apply(s)
            {
                let work = match &carry {
                    Carry::Scaled(_, basis) if basis.is_empty() => "same work per step".to_owned(),
                    _ => format!("carried over: {how}"),
                };
                return Ok(Speed {
                    s_per_step,
                    from: format!(
                        "nearest recorded run: job {job} ({target}), same model, {d} knob(s) differ; {work}"
                    ),
                    same_knobs: false,
                });
            }
        }
    }
    let reference = Speed::reference(plan);
    if let Some(Ok(speed)) = reference {
        return Ok(speed);
    }
    let differs = |what: &[String]| format!("differs in {}", what.join(", "));
    Err(match (nearest, reference) {
        (Some((run, what)), _) => format!(
            "unknown: no recorded run of this shape; the nearest, {run}, {}",
            differs(&what)
        ),
        (None, Some(Err(what))) => format!(
            "unknown: no recorded run of this shape, and the preset's reference (its own knobs) {}",
            differs(&what)
        ),
        _ if near.is_empty() => "unknown: no recorded run and no reference".to_owned(),
        _ => {
            "unknown: no recorded run of this shape logged a step time, and no reference".to_owned()
        }
    })
}

/// The estimate of `plan` given the recorded runs.
pub fn of(plan: &Plan, recorded: &Recorded) -> Estimate {
    let speed = speed(plan, recorded);
    estimate(
        plan,
        speed.as_ref().map_err(String::as_str),
        times(plan, recorded),
    )
}

/// The start-up and save times of `plan`: measured by recorded runs' phase clocks where they
/// have them ([`crate::runs::phases::measured`]), else the profile's start-up.
pub fn times(plan: &Plan, recorded: &Recorded) -> Times {
    let mut times = Times::profile(plan);
    let Some(m) = crate::runs::phases::measured(plan, recorded) else {
        return times;
    };
    if let Some(s) = m.startup_s {
        times.startup_s = s;
        times.startup_from = m.from();
        times.startup_measured = true;
    }
    times.save_s = m.save_s;
    let interval = (plan.schedule.ckpt_interval).and_then(|n| u64::try_from(n).ok());
    times.cycle_s = interval.filter(|n| *n > 0).and_then(|n| m.cycle_s(n));
    times
}

/// What a grid's cells cost together, over the cells whose estimate is known.
#[derive(Debug, Clone, PartialEq)]
pub struct Totals {
    pub cells: usize,
    pub gpu_hours: f64,
    /// Run [`GRID_WIDTH`] at a time, each cell behind the one that many before it, as
    /// `grid --all` submits them: the longest lane, queue waits left out.
    pub wall_s: f64,
    pub unknown: usize,
}

impl Totals {
    pub fn of(estimates: &[Estimate]) -> Totals {
        let mut lanes = [0.0; GRID_WIDTH];
        let mut gpu_hours = 0.0;
        let mut unknown = 0;
        for (i, e) in estimates.iter().enumerate() {
            match e.wall_s.zip(e.gpu_hours) {
                Some((wall, hours)) => {
                    lanes[i % GRID_WIDTH] += wall;
                    gpu_hours += hours;
                }
                None => unknown += 1,
            }
        }
        Totals {
            cells: estimates.len(),
            gpu_hours,
            wall_s: lanes.into_iter().fold(0.0, f64::max),
            unknown,
        }
    }

    /// The line `estimate --all` ends with.
    pub fn line(&self) -> String {
        use crate::util::fmt::{Digits, duration, number};
        let unknown = match self.unknown {
            0 => "none unknown".to_owned(),
            n => format!("{n} unknown, not counted"),
        };
        format!(
            "total: {} cells, {} GPU-h, {} wall run {GRID_WIDTH} at a time (queue waits not counted); {unknown}",
            self.cells,
            number(self.gpu_hours, Digits::Sig(3)),
            duration(self.wall_s),
        )
    }
}
