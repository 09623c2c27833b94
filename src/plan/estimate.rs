//! What a plan will cost before it runs: steps, seconds per step, wall time, GPU-hours and
//! wall-time slots, each figure with where it came from. The arithmetic lives here, on the plan
//! alone, so preflight can check it; the speeds of recorded runs are found later (`runs`) and
//! handed in.

use crate::plan::Plan;
use crate::schema::list_items;
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
    /// The plan's preset's declared reference speed, if it has one.
    pub fn reference(plan: &Plan) -> Option<Speed> {
        plan.reference.as_ref().map(|r| Speed {
            s_per_step: r.s_per_step,
            from: match plan.target.contains('/') {
                true => format!(
                    "reference of the grid's base preset (its own knobs): {}",
                    r.source
                ),
                false => format!("reference: {}", r.source),
            },
            same_knobs: false,
        })
    }
}

/// One target's estimate; the JSON keys are the serialized fields, `null` where unknown.
#[derive(Debug, Clone, Serialize)]
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
    #[serde(skip)]
    pub startup_s: f64,
    /// The plan's own `trainer.ckpt_interval`.
    #[serde(skip)]
    pub plan_ckpt_interval: Option<u64>,
}

/// The last value a plan gives `key`, as an integer.
pub fn int_knob(plan: &Plan, key: &str) -> Option<i64> {
    (plan.knobs.iter())
        .rfind(|k| k.path() == key)
        .and_then(|k| k.value.scalar().as_int())
}

/// Rows of a parquet file, from its footer alone; `None` when it cannot be read.
pub fn parquet_rows(path: &Utf8Path) -> Option<u64> {
    let file = std::fs::File::open(path).ok()?;
    let meta = parquet::file::metadata::ParquetMetaDataReader::new()
        .parse_and_finish(&file)
        .ok()?;
    u64::try_from(meta.file_metadata().num_rows()).ok()
}

/// The training parquet files a plan reads (`data.train_data`).
fn train_files(plan: &Plan) -> Vec<String> {
    (plan.knobs.iter())
        .rfind(|k| k.path() == "data.train_data")
        .map(|k| list_items(&k.value.hydra_text()))
        .unwrap_or_default()
}

/// Steps the trainer runs: `trainer.max_steps` when set, else epochs × full batches (SkyRL's
/// dataloader drops the last partial batch), with where the figure comes from.
pub fn steps(plan: &Plan) -> (Option<u64>, String) {
    if let Some(n) = int_knob(plan, "trainer.max_steps").filter(|n| *n > 0) {
        return (Some(n as u64), "trainer.max_steps".to_owned());
    }
    let epochs = int_knob(plan, "trainer.epochs").unwrap_or(1).max(0) as u64;
    let Some(batch) = int_knob(plan, "trainer.train_batch_size").filter(|b| *b > 0) else {
        return (None, "unknown: no trainer.train_batch_size".to_owned());
    };
    let files = train_files(plan);
    let mut rows = 0;
    for file in &files {
        match parquet_rows(Utf8Path::new(file)) {
            Some(n) => rows += n,
            None => return (None, format!("unknown: `{file}` is not staged")),
        }
    }
    if files.is_empty() {
        return (None, "unknown: no data.train_data".to_owned());
    }
    let per_epoch = rows / batch as u64;
    (
        Some(epochs * per_epoch),
        format!("{epochs} epoch(s) x {rows} rows / batch {batch}"),
    )
}

/// The estimate of `plan` at `speed`, `startup_s` seconds before the first step of every slot.
pub fn estimate(plan: &Plan, speed: Option<&Speed>, startup_s: f64) -> Estimate {
    let (steps, steps_from) = steps(plan);
    let gpus = plan.job.nodes * plan.job.gpus_per_node;
    let max_wall_s = plan.job.time.seconds();
    let s_per_step = speed.map(|s| s.s_per_step);
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
    let ckpt_interval = s_per_step
        .filter(|s| *s > 0.0 && usable > 0.0)
        .map(|s| ((usable / s).floor() as u64).max(1));
    Estimate {
        target: plan.target.clone(),
        steps,
        steps_from,
        s_per_step,
        s_per_step_from: speed.map_or_else(
            || "unknown: no recorded run and no reference".to_owned(),
            |s| s.from.clone(),
        ),
        wall_s,
        gpu_hours: wall_s.map(|w| f64::from(gpus) * w / 3600.0),
        nodes: plan.job.nodes,
        gpus,
        qos: plan.job.qos.clone(),
        max_wall_s,
        slots,
        ckpt_interval,
        same_knobs: speed.is_some_and(|s| s.same_knobs),
        startup_s,
        plan_ckpt_interval: int_knob(plan, "trainer.ckpt_interval")
            .and_then(|n| u64::try_from(n).ok()),
    }
}

impl Estimate {
    /// The one line `launch` and `grid` print for what they submit.
    pub fn line(&self) -> String {
        use crate::util::fmt::{Digits, duration, number};
        let or = |v: Option<String>| v.unwrap_or_else(|| "?".to_owned());
        format!(
            "{}: {} steps x {} s/step = {} wall, {} GPU-h, {} slot(s) of {}",
            self.target,
            or(self.steps.map(|n| n.to_string())),
            or(self.s_per_step.map(|s| number(s, Digits::Sig(3)))),
            or(self.wall_s.map(duration)),
            or(self.gpu_hours.map(|g| number(g, Digits::Sig(3)))),
            or(self.slots.map(|n| n.to_string())),
            duration(self.max_wall_s as f64),
        )
    }
}
