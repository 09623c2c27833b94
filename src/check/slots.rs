//! The `slots` check: a run longer than one wall-time slot must fit the slots it is given, and
//! save a checkpoint in every slot, or the slot's work is lost when SLURM ends the job. It reads
//! the plan's estimate, which the caller computes (recorded runs are a later stage's).

use crate::check::{Check, Finding, Report};
use crate::plan::estimate::Estimate;
use crate::util::fmt::{Digits, duration, number};

/// A `--time` that holds `secs`, written as `--time` reads it.
fn walltime(secs: f64) -> String {
    crate::preset::walltime::Walltime::holding(secs).to_string()
}

/// The findings of the `slots` check on `e` for a chain of `chain` jobs.
pub fn check(e: &Estimate, chain: u32) -> Report {
    let mut report = Report::default();
    let Some(s) = e.s_per_step else {
        return report;
    };
    let finding = |message: String| Finding {
        check: Check::Slots,
        message,
    };
    let usable = e.max_wall_s as f64 - e.startup_s;
    if usable <= 0.0 {
        report.problems.push(finding(format!(
            "a slot of {} is no longer than the {} a job takes to start: no step would run;              give a longer --time",
            duration(e.max_wall_s as f64),
            duration(e.startup_s),
        )));
        return report;
    }
    let fits = e
        .ckpt_interval
        .map_or_else(|| "none".to_owned(), |n| n.to_string());
    if chain > 1
        && let Some(interval) = e.plan_ckpt_interval
        && interval as f64 * s > usable
    {
        report.problems.push(finding(format!(
            "--chain {chain} resumes from the last checkpoint of every slot, but \
             trainer.ckpt_interval={interval} x {} s/step ({}) is longer than a slot of {} less \
             {} start-up: set trainer.ckpt_interval={fits} (the largest that fits)",
            number(s, Digits::Sig(3)),
            e.s_per_step_from,
            duration(e.max_wall_s as f64),
            duration(e.startup_s),
        )));
    }
    if let (Some(slots), Some(wall)) = (e.slots, e.wall_s)
        && slots > u64::from(chain)
    {
        let message = format!(
            "the estimated wall {} ({} steps x {} s/step, {}) needs {slots} slot(s) of {}, and \
             the plan has {chain}: launch with --chain {slots} (and trainer.ckpt_interval <= \
             {fits}), or a longer slot (--time {}, with a --qos that allows it)",
            duration(wall),
            e.steps.unwrap_or(0),
            number(s, Digits::Sig(3)),
            e.s_per_step_from,
            duration(e.max_wall_s as f64),
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
