//! `rlctl estimate TARGET` and `rlctl estimate --all GRID`: what a run will cost, as a table or
//! JSON, each figure with its source.

use super::{Session, plan_options};
use crate::check::preflight_schema;
use crate::cli::EstimateArgs;
use crate::error::{Error, Result};
use crate::plan::estimate::Estimate;
use crate::preset::Want;
use crate::runs::estimate::{Totals, of};
use crate::store::recorded::Recorded;
use crate::util::fmt::{Digits, MISSING, duration, number};
use crate::util::out::emit;
use crate::util::table::{Table, left, right};
use crate::util::versioned::document;
use schemars::JsonSchema;
use serde::Serialize;
use std::io::Write;

pub fn run(session: &Session, estimate: &EstimateArgs, out: &mut dyn Write) -> Result<()> {
    let (name, all, args) = (
        estimate.name.as_deref(),
        estimate.all.as_deref(),
        &estimate.plan,
    );
    let library = &session.library;
    let cluster = session.cluster()?;
    let targets = match (name, all) {
        (Some(name), _) => vec![library.select(name, Want::Target)?],
        (None, Some(grid)) => library.select_grid(grid)?,
        (None, None) => {
            return Err(Error::Unsupported(
                "name a preset or cell, or a grid with --all".to_owned(),
            ));
        }
    };
    let options = plan_options(args);
    let overrides = session.parse_overrides(&cluster, &args.overrides)?;
    let plans = (targets.iter())
        .map(|s| session.plan_parsed(&cluster, s, &options, &overrides))
        .collect::<Result<Vec<_>>>()?;
    // A confident figure for a misspelt key would be a figure for another run.
    preflight_schema(library, &cluster, &args.allow, &plans)?;
    let recorded = Recorded::read(session.ledger()?)?;
    let estimates: Vec<Estimate> = plans.iter().map(|p| of(p, &recorded)).collect();
    let text = match (estimate.json, all) {
        (true, Some(grid)) => {
            let doc = Estimates {
                grid: grid.to_owned(),
                cells: estimates,
            };
            return emit(out, &document(&doc));
        }
        (true, None) => return emit(out, &document(&estimates[0])),
        (false, None) => table(&estimates),
        (false, Some(_)) => format!("{}\n{}", table(&estimates), Totals::of(&estimates).line()),
    };
    emit(out, &format!("{text}\n"))
}

/// `estimate --all GRID --json`: each cell's estimate (`estimate TARGET --json` is one
/// estimate's keys at the top level).
#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct Estimates {
    pub grid: String,
    pub cells: Vec<Estimate>,
}

/// One row per target, then where each figure came from.
pub fn table(estimates: &[Estimate]) -> String {
    let mut t = Table::new([
        left(),
        right(),
        right(),
        right(),
        right(),
        right(),
        right(),
        left(),
        right(),
        right(),
        right(),
    ]);
    t.row([
        "target", "steps", "s/step", "wall", "GPU-h", "nodes", "gpus", "qos", "slot", "slots",
        "ckpt",
    ]);
    let or = |v: Option<String>| v.unwrap_or_else(|| MISSING.to_owned());
    for e in estimates {
        t.row([
            e.target.clone(),
            or(e.steps.map(|n| n.to_string())),
            or(e.s_per_step.map(|s| number(s, Digits::Sig(3)))),
            or(e.wall_s.map(duration)),
            or(e.gpu_hours.map(|g| number(g, Digits::Sig(3)))),
            e.nodes.to_string(),
            e.gpus.to_string(),
            e.qos.clone(),
            duration(e.max_wall_s as f64),
            or(e.slots.map(|n| n.to_string())),
            or(e.ckpt_interval.map(|n| n.to_string())),
        ]);
    }
    let mut text = t.render();
    text.push_str("\nwhere from:\n");
    for e in estimates {
        text.push_str(&format!(
            "  {}: steps: {}; s/step: {}; start-up {}: {}{}\n",
            e.target,
            e.steps_from,
            e.s_per_step_from,
            duration(e.startup_s),
            e.startup_from,
            e.save_s
                .map_or_else(String::new, |s| format!("; a save {}", duration(s))),
        ));
    }
    text.push_str(
        "(wall = steps x s/step + the start-up per slot; ckpt = the largest trainer.ckpt_interval \
         that saves once per slot)",
    );
    text
}
