//! A recorded run as the command that submits it again, built from its record alone (its preset
//! or cell, job name, `--nodes`, `--until-done --max-slots`, the overrides it was given), and the
//! hint that offers it: only ever a checkpoint the run has ([`crate::checkpoint::decide`]).

use crate::checkpoint::Decision;
use crate::plan::Resume;
use crate::plan::ask::{Ask, Verb};
use crate::schema::knob::{Knob, KnobValue, Origin};
use crate::store::ledger::Record;

/// The run of `record` asked again: what it was launched with, as a fresh start (the caller
/// sets `resume`).
pub fn ask(record: &Record) -> Ask {
    let layer = |key: &str| record.layers.get(key).map(String::as_str);
    let (verb, default_name) = match &record.grid {
        Some(_) => (
            Verb::Grid {
                cell: record.target.clone(),
            },
            format!("{}.{}", record.group, record.member),
        ),
        None => (
            Verb::Launch {
                preset: record.group.clone(),
            },
            record.group.clone(),
        ),
    };
    let nodes_flag = (record.layers.values()).any(|l| l == Origin::Flag(String::new()).layer());
    Ask {
        job_name: (record.job_name != default_name).then(|| record.job_name.clone()),
        nodes: record.nodes.filter(|_| nodes_flag),
        until_done: record.max_slots,
        overrides: (record.knobs.iter())
            .filter(|(key, _)| layer(key) == Some(Origin::CommandLine.layer()))
            .map(|(key, value)| override_text(key, value))
            .collect(),
        ..Ask::bare(verb)
    }
}

/// A recorded knob as the override that set it (`key=value`, or `~key` alone).
fn override_text(key: &str, value: &str) -> String {
    Knob {
        key: key.to_owned(),
        value: KnobValue::Verbatim(value.to_owned()),
        origin: Origin::CommandLine,
    }
    .hydra_arg()
}

/// What to run to continue `record`'s run, from what its checkpoint folder holds now: a resume
/// from its newest whole step, a start from step 0 when it saved none, or why neither is safe.
pub fn hint(record: &Record) -> String {
    let mut ask = ask(record);
    match record.resume_decision() {
        Decision::Resume { step, .. } => {
            ask.resume = Resume::Latest;
            format!(
                "continue from step {step} (its newest whole checkpoint) with `{}`",
                ask.command()
            )
        }
        Decision::Fresh => format!(
            "start it again from step 0 with `{}`, as it saved no checkpoint in `{}`",
            ask.command(),
            record.ckpt_path()
        ),
        Decision::Refuse(why) => format!("make its checkpoint folder safe to resume: {why}"),
    }
}
