//! SkyRL's per-step metric lines (`WANDB_MIRROR kind=train step=N metrics={...}`), read from
//! job logs. (Types only: the parser is being written.)

use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Train,
    Eval,
}

/// One step's metrics: only the numeric values of the JSON object.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    pub kind: Kind,
    pub step: u64,
    pub metrics: BTreeMap<String, f64>,
}

/// A run's steps in log order, the first line of each (kind, step) kept.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Series {
    pub train: Vec<Step>,
    pub eval: Vec<Step>,
}
