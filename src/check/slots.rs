//! The `slots` check: a run longer than one wall-time slot must fit the slots it is given, and
//! save a checkpoint in every slot, or the slot's work is lost when SLURM ends the job. It reads
//! the plan's estimate, which the caller computes (recorded runs are a later stage's).

use crate::check::{Check, Finding, Report};
use crate::plan::Plan;
use crate::plan::estimate::Estimate;
use crate::plan::{MAX_CHAIN, MAX_MAX_SLOTS};
use crate::util::fmt::{Digits, duration, number};

/// A `--time` that holds `secs`, written as `--time` reads it.
fn walltime(secs: f64) -> String {
    crate::preset::walltime::Walltime::holding(secs).to_string()
}

/// The wall-time slots a plan is given: the links of a chain, or the requeues of one
/// `--until-done` job. Either way each slot resumes from the last checkpoint of the one before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slots {
    Chain(u32),
    /// `--max-slots` slots for each of `jobs` jobs (one, unless chained as well).
    UntilDone {
        max_slots: u32,
        jobs: u32,
    },
}

impl Slots {
    /// A chain of `chain` jobs of `plan`, each requeueing itself when it is `--until-done`.
    pub fn of(plan: &Plan, chain: u32) -> Slots {
        match plan.until_done {
            Some(u) => Slots::UntilDone {
                max_slots: u.max_slots,
                jobs: chain.max(1),
            },
            None => Slots::Chain(chain),
        }
    }

    fn count(self) -> u64 {
        match self {
            Slots::Chain(k) => k.into(),
            Slots::UntilDone { max_slots, jobs } => u64::from(max_slots) * u64::from(jobs),
        }
    }

    /// The plan's own flags that give its slots.
    fn flag(self) -> String {
        match self {
            Slots::Chain(k) => format!("--chain {k}"),
            Slots::UntilDone { max_slots, .. } => format!("--until-done --max-slots {max_slots}"),
        }
    }

    /// The flag that gives `needed` slots.
    fn fix(self, needed: u64) -> String {
        match self {
            // Only values the flags take: past a chain's most links, one job that requeues.
            Slots::Chain(_) if needed <= u64::from(MAX_CHAIN) => format!("--chain {needed}"),
            Slots::Chain(_) => format!(
                "--until-done --max-slots {}",
                needed.min(u64::from(MAX_MAX_SLOTS))
            ),
            Slots::UntilDone { jobs, .. } => format!(
                "--max-slots {}",
                needed
                    .div_ceil(u64::from(jobs))
                    .min(u64::from(MAX_MAX_SLOTS))
            ),
        }
    }

    /// After "the plan has N": the flags that say so, where they are not `--chain N` itself.
    fn given(self) -> String {
        match self {
            Slots::Chain(_) => String::new(),
            Slots::UntilDone { .. } => format!(" ({})", self.flag()),
        }
    }
}

/// The findings of the `slots` check on `e` for the `slots` the plan is given.
pub fn check(e: &Estimate, slots: Slots) -> Report {
    let chain = slots.count();
    let mut report = Report::default();
    let Some(s) = e.s_per_step else {
        return report;
    };
    let finding = |message: String| Finding::new(Check::Slots, message);
    let usable = e.max_wall_s as f64 - e.startup_s;
    if usable <= 0.0 {
        report.problems.push(finding(format!(
            "a slot of {} is no longer than the {} a job takes to start ({}): no step would run; give a longer --time",
            duration(e.max_wall_s as f64),
            duration(e.startup_s),
            e.startup_from,
        )));
        return report;
    }
    let fits = e
        .ckpt_interval
        .map_or_else(|| "none".to_owned(), |n| n.to_string());
    if chain > 1
        && let Some(interval) = e.plan_ckpt_interval
        && interval as f64 * s + e.save_s.unwrap_or(0.0) > usable
    {
        // A measured save must end inside the slot too.
        let save = e.save_s.map_or_else(String::new, |v| {
            format!(" and a save of {} (measured)", duration(v))
        });
        report.problems.push(finding(format!(
            "{} resumes from the last checkpoint of every slot, but \
             trainer.ckpt_interval={interval} x {} s/step ({}){save} is longer than a slot of {} \
             less {} start-up ({}): set trainer.ckpt_interval={fits} (the largest that fits)",
            slots.flag(),
            number(s, Digits::Sig(3)),
            e.s_per_step_from,
            duration(e.max_wall_s as f64),
            duration(e.startup_s),
            e.startup_from,
        )));
    }
    if let (Some(needed), Some(wall)) = (e.slots, e.wall_s)
        && needed > chain
    {
        // The whole fix, to copy: the slots and, where the plan saves too seldom, the interval
        // that saves in every slot (without it each slot's work is lost).
        let ckpt = match (e.ckpt_interval, e.plan_ckpt_interval) {
            (Some(most), Some(now)) if now <= most => String::new(),
            (Some(most), _) => format!(" -- trainer.ckpt_interval={most}"),
            (None, _) => String::new(),
        };
        let message = format!(
            "the estimated wall {} ({} steps x {} s/step, {}) needs {needed} slot(s) of {}, and \
             the plan has {chain}{}: launch with {}{ckpt} (every slot saves a checkpoint and the \
             next resumes from it; trainer.ckpt_interval <= {fits}), or one longer slot \
             (--time {}, with a --qos that allows it)",
            duration(wall),
            e.steps.unwrap_or(0),
            number(s, Digits::Sig(3)),
            e.s_per_step_from,
            duration(e.max_wall_s as f64),
            slots.given(),
            slots.fix(needed),
            walltime(wall),
        );
        // Only a speed measured on these very knobs is firm enough to refuse a launch on.
        if e.same_knobs {
            report.problems.push(finding(message));
        } else {
            report.warnings.push(finding(message));
        }
    }
    report
}
