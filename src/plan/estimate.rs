//! What a plan will cost before it runs: steps, seconds per step, wall time, GPU-hours and
//! wall-time slots, each figure with where it came from. The arithmetic lives here, on the plan
//! alone, so preflight can check it; the speeds of recorded runs are found later (`runs`) and
//! handed in.

use crate::plan::Plan;
use crate::plan::work::{Carry, Defaults, Work};
use crate::schema::Schema;
use crate::schema::knob::{Knob, Scalar};
use crate::schema::list_items;
use crate::schema::resolve::Resolver;
use camino::Utf8Path;
use serde::Serialize;

/// How fast a plan runs, and from what that is known.
#[derive(Debug, Clone, PartialEq)]
pub struct Speed {
    pub s_per_step: f64,
    /// Where the figure comes from, for the reader: a recorded job, a reference run.
    pub from: String,
    /// Measured on recorded runs with the same knobs: firm enough to refuse a launch on.
    pub same_knobs: bool,
}

impl Speed {
    /// The plan's preset's declared reference speed, carried over to the plan's work: `None`
    /// without a reference, what differs when it cannot be carried over.
    pub fn reference(plan: &Plan) -> Option<Result<Speed, Vec<String>>> {
        let r = plan.reference.as_ref()?;
        let from = match plan.target.contains('/') {
            true => format!(
                "reference of the grid's base preset (its own knobs): {}",
                r.source
            ),
            false => format!("reference: {}", r.source),
        };
        let schedule = &plan.schedule;
        let carry = (schedule.reference_work.as_ref())
            .map_or(Carry::Scaled(1.0, Vec::new()), |w| w.carry(&schedule.work));
        Some(match (carry.apply(r.s_per_step), carry) {
            (Some((s_per_step, how)), Carry::Scaled(_, basis)) => Ok(Speed {
                s_per_step,
                from: match basis.is_empty() {
                    true => from,
                    false => format!("{from}; carried over: {how}"),
                },
                same_knobs: false,
            }),
            (_, Carry::Not(what)) | (None, Carry::Scaled(_, what)) => Err(what),
        })
    }
}

/// The seconds a step of `plan` is expected to take before any is measured: the preset's
/// reference carried over to the plan's work, else the reference as it stands (an order of
/// magnitude is all the hang watchdog asks of it).
pub fn expected_s_per_step(plan: &Plan) -> Option<f64> {
    match Speed::reference(plan)? {
        Ok(speed) => Some(speed.s_per_step),
        Err(_) => plan.reference.as_ref().map(|r| r.s_per_step),
    }
}

/// One target's estimate; the JSON keys are the serialized fields, `null` where unknown.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Estimate {
    pub target: String,
    pub steps: Option<u64>,
    pub steps_from: String,
    pub s_per_step: Option<f64>,
    pub s_per_step_from: String,
    pub wall_s: Option<f64>,
    pub gpu_hours: Option<f64>,
    pub nodes: u32,
    pub gpus: u32,
    pub qos: String,
    /// One slot: the plan's `--time`.
    pub max_wall_s: u64,
    /// Wall-time slots the run needs, each paying the start-up again.
    pub slots: Option<u64>,
    /// The largest `trainer.ckpt_interval` that saves at least once per slot.
    pub ckpt_interval: Option<u64>,
    #[serde(skip)]
    pub same_knobs: bool,
    /// Seconds before the first step of every slot.
    pub startup_s: f64,
    /// Where `startup_s` comes from: recorded runs' phase clocks, or the profile's constant.
    pub startup_from: String,
    /// Seconds a save takes (p95 of recorded runs), when measured.
    pub save_s: Option<f64>,
    /// The seconds from one save's end to the next that an `--until-done` slot plans for
    /// (`ckpt_interval` x p95 step + p95 save), when measured.
    #[serde(skip)]
    pub cycle_s: Option<u64>,
    #[serde(skip)]
    pub startup_measured: bool,
    /// The plan's own `trainer.ckpt_interval`.
    #[serde(skip)]
    pub plan_ckpt_interval: Option<u64>,
}

/// What the trainer's step count depends on, read once the plan's knobs are final: each value
/// as the trainer reads it, SkyRL's default filled in and `${a.b}` followed ([`Resolver`]).
#[derive(Debug, Clone, Default)]
pub struct Schedule {
    pub epochs: Option<i64>,
    pub train_batch_size: Option<i64>,
    pub max_steps: Option<i64>,
    pub ckpt_interval: Option<i64>,
    /// The training parquet files (`data.train_data`).
    pub train_data: Vec<String>,
    /// The work of one step of this plan, and of its preset's reference run.
    pub work: Work,
    pub reference_work: Option<Work>,
    /// SkyRL's defaults of the work knobs, for recorded runs that leave one unset.
    pub work_defaults: Defaults,
}

impl Schedule {
    pub fn of(knobs: &[Knob], schema: &Schema) -> Schedule {
        let values = Resolver { knobs, schema };
        let defaults = Defaults::of(schema);
        let train_data = match values.value("data.train_data") {
            Some(Scalar::List(text) | Scalar::Str(text)) => list_items(&text),
            _ => Vec::new(),
        };
        Schedule {
            epochs: values.int("trainer.epochs"),
            train_batch_size: values.int("trainer.train_batch_size"),
            max_steps: values.int("trainer.max_steps"),
            ckpt_interval: values.int("trainer.ckpt_interval"),
            train_data,
            work: Work::of_knobs(knobs, &defaults),
            reference_work: None,
            work_defaults: defaults,
        }
    }
}

/// Why a parquet file a job reads does not count as staged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unstaged {
    Missing,
    /// The footer reads, and says 0 rows: the trainer would run no step.
    Empty,
    /// No readable footer: a copy or a download that stopped part-way.
    Cut,
}

impl std::fmt::Display for Unstaged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Unstaged::Missing => "does not exist",
            Unstaged::Empty => "is empty: 0 rows",
            Unstaged::Cut => "is cut short: footer unreadable",
        })
    }
}

/// The one verdict on a parquet file, for `stage`, `check` and `estimate` alike: it is staged
/// iff its footer reads and holds more than 0 rows; then its rows, from the footer alone.
pub fn parquet_staged(path: &Utf8Path) -> Result<u64, Unstaged> {
    let Ok(file) = std::fs::File::open(path) else {
        return Err(Unstaged::Missing);
    };
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Err(Unstaged::Missing);
    }
    let meta = parquet::file::metadata::ParquetMetaDataReader::new()
        .parse_and_finish(&file)
        .map_err(|_| Unstaged::Cut)?;
    match u64::try_from(meta.file_metadata().num_rows()) {
        Ok(0) => Err(Unstaged::Empty),
        Ok(rows) => Ok(rows),
        Err(_) => Err(Unstaged::Cut),
    }
}

/// The command that stages what `plan` reads, for messages: its preset or cell.
pub fn stage_command(plan: &Plan) -> String {
    let name = match plan.grid {
        Some(_) => plan.target.as_str(),
        None => plan.target.split('/').next().unwrap_or_default(),
    };
    format!("rlctl stage {name}")
}

/// Steps the trainer runs, as SkyRL sets its total: epochs × full batches (its train
/// dataloader drops the last partial batch), capped by `trainer.max_steps` when that is above
/// 0; with where the figure comes from. Unstaged data leaves only the cap, named as such.
pub fn steps(plan: &Plan) -> (Option<u64>, String) {
    let s = &plan.schedule;
    let cap = s.max_steps.filter(|n| *n > 0).map(|n| n as u64);
    let unknown = |why: String| match cap {
        Some(n) => (Some(n), format!("trainer.max_steps (at most: {why})")),
        None => (None, format!("unknown: {why}")),
    };
    let epochs = s.epochs.unwrap_or(1).max(0) as u64;
    let Some(batch) = s.train_batch_size.filter(|b| *b > 0) else {
        return unknown("no trainer.train_batch_size".to_owned());
    };
    if s.train_data.is_empty() {
        return unknown("no data.train_data".to_owned());
    }
    let mut rows = 0;
    for file in &s.train_data {
        match parquet_staged(Utf8Path::new(file)) {
            Ok(n) => rows += n,
            Err(why) => {
                return unknown(format!(
                    "the dataset {file} is not staged (it {why}); run `{}`",
                    stage_command(plan)
                ));
            }
        }
    }
    let total = epochs * (rows / batch as u64);
    let from = format!("{epochs} epoch(s) x {rows} rows / batch {batch}");
    match cap {
        Some(n) if n < total => (
            Some(n),
            format!("trainer.max_steps (below {from} = {total})"),
        ),
        Some(n) => (Some(total), format!("{from} (under trainer.max_steps={n})")),
        None => (Some(total), from),
    }
}

/// How long a slot takes to start and a save to end, and where that is known from.
#[derive(Debug, Clone, PartialEq)]
pub struct Times {
    pub startup_s: f64,
    pub startup_from: String,
    /// `startup_s` was measured, not the profile's.
    pub startup_measured: bool,
    pub save_s: Option<f64>,
    pub cycle_s: Option<u64>,
}

impl Times {
    /// The profile's constant start-up, no save measured: what a plan has before any run of
    /// its model recorded its phases.
    pub fn profile(plan: &Plan) -> Times {
        Times {
            startup_s: plan.startup_s as f64,
            startup_from: "the profile's slurm.startup_s (no recorded run measured one)".to_owned(),
            startup_measured: false,
            save_s: None,
            cycle_s: None,
        }
    }
}

/// The estimate of `plan` at `speed` (else why it is unknown), with `times`' start-up before
/// the first step of every slot.
pub fn estimate(plan: &Plan, speed: Result<&Speed, &str>, times: Times) -> Estimate {
    let startup_s = times.startup_s;
    let (steps, steps_from) = steps(plan);
    let gpus = plan.job.nodes * plan.job.gpus_per_node;
    let max_wall_s = plan.job.time.seconds();
    let s_per_step = speed.ok().map(|s| s.s_per_step);
    let train_s = steps.zip(s_per_step).map(|(n, s)| n as f64 * s);
    let usable = max_wall_s as f64 - startup_s;
    let slots = train_s.map(|t| {
        if usable <= 0.0 {
            u64::MAX
        } else {
            ((t / usable).ceil() as u64).max(1)
        }
    });
    let wall_s = train_s.zip(slots).map(|(t, k)| t + k as f64 * startup_s);
    // A measured save must end inside the slot as well.
    let saving = usable - times.save_s.unwrap_or(0.0);
    let ckpt_interval = s_per_step
        .filter(|s| *s > 0.0 && saving > 0.0)
        .map(|s| ((saving / s).floor() as u64).max(1));
    Estimate {
        target: plan.target.clone(),
        steps,
        steps_from,
        s_per_step,
        s_per_step_from: speed.map_or_else(str::to_owned, |s| s.from.clone()),
        wall_s,
        gpu_hours: wall_s.map(|w| f64::from(gpus) * w / 3600.0),
        nodes: plan.job.nodes,
        gpus,
        qos: plan.job.qos.clone(),
        max_wall_s,
        slots,
        ckpt_interval,
        same_knobs: speed.is_ok_and(|s| s.same_knobs),
        startup_s,
        startup_from: times.startup_from,
        save_s: times.save_s,
        cycle_s: times.cycle_s,
        startup_measured: times.startup_measured,
        plan_ckpt_interval: (plan.schedule.ckpt_interval).and_then(|n| u64::try_from(n).ok()),
    }
}

impl Estimate {
    /// What was measured, into the plan its job is rendered and recorded from: the start-up
    /// (for the hang watchdog) and the save cycle an `--until-done` slot plans its end by.
    pub fn measured_into(&self, plan: &mut Plan) {
        if self.startup_measured {
            plan.startup_s = self.startup_s.ceil() as u64;
            plan.startup_measured = true;
        }
        if let (Some(u), Some(cycle)) = (plan.until_done.as_mut(), self.cycle_s) {
            u.cycle_s = cycle;
        }
    }

    /// The one line `launch` and `grid` print for what they submit; what is unknown in words.
    pub fn line(&self) -> String {
        use crate::util::fmt::{Digits, duration, number};
        let slot = duration(self.max_wall_s as f64);
        match (
            self.steps,
            self.s_per_step,
            self.wall_s,
            self.gpu_hours,
            self.slots,
        ) {
            (Some(n), Some(s), Some(wall), Some(gpu_h), Some(slots)) => format!(
                "{}: {n} steps x {} s/step = {} wall, {} GPU-h, {slots} slot(s) of {slot}",
                self.target,
                number(s, Digits::Sig(3)),
                duration(wall),
                number(gpu_h, Digits::Sig(3)),
            ),
            (steps, s, ..) => {
                let steps = steps.map_or_else(
                    || format!("steps {}", self.steps_from),
                    |n| format!("{n} steps"),
                );
                let s = s.map_or_else(
                    || format!("s/step {}", self.s_per_step_from),
                    |s| format!("{} s/step", number(s, Digits::Sig(3))),
                );
                format!("{}: {steps}; {s}; slots of {slot}", self.target)
            }
        }
    }
}
