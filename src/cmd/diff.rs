//! `rlctl diff A B`: two recorded runs, presets or cells side by side: the knobs that differ
//! (or all of them), each with the layer that set it, then a recorded run's final metrics and
//! cost.

use super::Session;
use crate::cli::DiffArgs;
use crate::error::{Error, Result};
use crate::plan::PlanOptions;
use crate::preset::Want;
use crate::runs::select_runs;
use crate::runs::state::RunState;
use crate::runs::status::newest_rows;
use crate::store::ledger::{Ledger, Run, knob_fingerprint, knob_layers};
use crate::util::fmt::{Digits, MISSING, cell};
use crate::util::out::emit;
use crate::util::table::{Table, left, right};
use crate::util::versioned::document;
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;

/// One side: its knobs' hydra text and layers, and its run when it is a recorded one.
struct Side {
    name: String,
    /// The column's heading: the name, and the job when one was named by its id.
    label: String,
    knobs: BTreeMap<String, String>,
    layers: BTreeMap<String, String>,
    run: Option<Run>,
}

/// `rlctl diff`: exits 0 whether or not the two differ; 2 when a name means nothing.
pub fn run(session: &Session, args: &DiffArgs, out: &mut dyn Write) -> Result<()> {
    let ledger = session.ledger()?;
    let sides = [
        side(session, &ledger, &args.a)?,
        side(session, &ledger, &args.b)?,
    ];
    let runs: Vec<Run> = sides.iter().filter_map(|s| s.run.clone()).collect();
    if args.json {
        let states = match runs.is_empty() {
            true => vec![None, None],
            false => newest(session, &sides, &runs)?,
        };
        return emit(out, &document(&Diffed::of(&sides, args.all, states)));
    }
    emit(out, &knob_table(&sides, args.all))?;
    if runs.is_empty() {
        return Ok(());
    }
    let states = newest(session, &sides, &runs)?;
    emit(out, &format!("\n{}", metrics_table(&sides, &states)))
}

/// The newest row of each side that is a recorded run (`runs`, in the sides' order).
fn newest(session: &Session, sides: &[Side; 2], runs: &[Run]) -> Result<Vec<Option<RunState>>> {
    let cluster = session.cluster()?;
    let run_root = &cluster.storage.run_root;
    let (rows, warnings) = newest_rows(&session.slurm, run_root, runs, cluster.node.gpus)?;
    super::runs::warn(&warnings);
    let mut rows = rows.into_iter();
    Ok((sides.iter())
        .map(|s| s.run.as_ref().and_then(|_| rows.next()))
        .collect())
}

/// `diff --json`: the two sides, each knob that differs (every knob with `--all`), and the
/// newest row of each side that is a recorded run (as `status --json` gives it; null for a
/// preset or cell).
#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct Diffed {
    pub a: String,
    pub b: String,
    pub knobs: Vec<KnobSides>,
    /// How many knobs differ, of how many either side sets.
    pub differ: usize,
    pub total: usize,
    pub runs: Vec<Option<RunState>>,
}

/// One knob on both sides: its hydra text and the layer that set it, null where unset.
#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct KnobSides {
    pub key: String,
    pub differs: bool,
    pub a: Option<String>,
    pub a_layer: Option<String>,
    pub b: Option<String>,
    pub b_layer: Option<String>,
}

impl Diffed {
    fn of(sides: &[Side; 2], all: bool, runs: Vec<Option<RunState>>) -> Diffed {
        let [a, b] = sides;
        let keys: BTreeSet<&String> = sides.iter().flat_map(|s| s.knobs.keys()).collect();
        let knobs: Vec<KnobSides> = (keys.iter())
            .map(|key| KnobSides {
                key: (*key).clone(),
                differs: a.knobs.get(*key) != b.knobs.get(*key),
                a: a.knobs.get(*key).cloned(),
                a_layer: a.layers.get(*key).cloned(),
                b: b.knobs.get(*key).cloned(),
                b_layer: b.layers.get(*key).cloned(),
            })
            .collect();
        let differ = knobs.iter().filter(|k| k.differs).count();
        Diffed {
            a: a.name.clone(),
            b: b.name.clone(),
            differ,
            total: knobs.len(),
            knobs: knobs.into_iter().filter(|k| all || k.differs).collect(),
            runs,
        }
    }
}

/// What `name` means: a recorded run (what actually ran) first, else a preset's or cell's plan
/// as it would run now.
fn side(session: &Session, ledger: &Ledger, name: &str) -> Result<Side> {
    let ran = match select_runs(ledger, Some(name)) {
        Err(e) if !matches!(e, Error::UnknownName { .. }) => return Err(e),
        ran => ran,
    };
    if let Ok([run]) = ran.as_deref() {
        let record = run.latest();
        // Two jobs of one run would both be labelled by the run: a job id names its column.
        let label = match record.job_id == name {
            true => format!("{} (job {name})", run.name),
            false => run.name.clone(),
        };
        return Ok(Side {
            name: run.name.clone(),
            label,
            knobs: (*record.knobs).clone(),
            layers: (*record.layers).clone(),
            run: Some(run.clone()),
        });
    }
    let selection = match session.library.select(name, Want::Target) {
        Ok(selection) => selection,
        Err(e) => {
            return Err(match ran {
                Ok(runs) => Error::Ambiguous {
                    name: name.to_owned(),
                    candidates: runs.into_iter().map(|r| r.name).collect(),
                },
                // The presets' suggestion, else the ledger's.
                Err(
                    run_error @ Error::UnknownName {
                        suggestion: Some(_),
                        ..
                    },
                ) if matches!(
                    e,
                    Error::UnknownName {
                        suggestion: None,
                        ..
                    }
                ) =>
                {
                    run_error
                }
                Err(_) => e,
            });
        }
    };
    let cluster = session.cluster()?;
    let plan = session.plan_parsed(&cluster, &selection, &PlanOptions::default(), &[])?;
    Ok(Side {
        name: plan.target.clone(),
        label: plan.target.clone(),
        knobs: knob_fingerprint(&plan),
        layers: knob_layers(&plan),
        run: None,
    })
}

/// A row per knob that differs (every knob with `all`): its value and layer on each side.
fn knob_table(sides: &[Side; 2], all: bool) -> String {
    let keys: BTreeSet<&String> = sides.iter().flat_map(|s| s.knobs.keys()).collect();
    let mut table = Table::new([left(), left(), left(), left(), left()]);
    let [a, b] = sides;
    table.row(["knob", &a.label, "layer", &b.label, "layer"]);
    let mut differ = 0;
    for key in &keys {
        let differs = a.knobs.get(*key) != b.knobs.get(*key);
        differ += usize::from(differs);
        if !differs && !all {
            continue;
        }
        let of = |map: &BTreeMap<String, String>| map.get(*key).cloned();
        let of = |map| of(map).unwrap_or_else(|| MISSING.to_owned());
        table.row([
            (*key).clone(),
            of(&a.knobs),
            of(&a.layers),
            of(&b.knobs),
            of(&b.layers),
        ]);
    }
    match (differ, all) {
        (0, false) => format!(
            "{} and {} set all {} knobs alike\n",
            a.label,
            b.label,
            keys.len()
        ),
        _ => format!(
            "{}{differ} of {} knobs differ\n",
            table.render(),
            keys.len()
        ),
    }
}

/// The newest job of each recorded run: state, last step, reward, entropy, s/step, GPU-hours.
fn metrics_table(sides: &[Side; 2], states: &[Option<RunState>]) -> String {
    let mut table = Table::new([left(), right(), right()]);
    table.row(["", sides[0].label.as_str(), sides[1].label.as_str()]);
    type Field = fn(&RunState) -> String;
    let fields: [(&str, Field); 6] = [
        ("state", |s| s.state.clone()),
        ("step", |s| match s.total {
            Some(total) => format!("{}/{total}", s.step),
            None => s.step.to_string(),
        }),
        ("reward", |s| num_of(s.reward)),
        ("entropy", |s| num_of(s.entropy)),
        ("s/step", |s| num_of(s.secs_per_step)),
        ("GPU-h", |s| num_of(s.gpu_hours)),
    ];
    for (label, field) in fields {
        let value = |s: &Option<RunState>| s.as_ref().map_or(MISSING.to_owned(), field);
        table.row([label.to_owned(), value(&states[0]), value(&states[1])]);
    }
    table.render()
}

/// A metric as `status` prints it.
fn num_of(v: Option<f64>) -> String {
    cell(v, Digits::Sig(3))
}
