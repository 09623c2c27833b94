//! The commands that submit, written back as the [`Ask`] rlctl prints for the user to run (the
//! rest of a chain, a hint, a changed cell's ways out): every flag of the plan in one place, each
//! struct's fields named so that a flag added to one is a compile error until it is written back
//! or said not to be. `cli/tests.rs` parses any printed ask back into itself.

use super::{Chain, GridArgs, LaunchArgs, PlanArgs};
use crate::check::Allow;
use crate::plan::ask::{Ask, Verb};

impl PlanArgs {
    /// The plan flags and overrides as a command prints them back for `verb`: every flag, each
    /// field named so that a flag added here is a compile error until it is written back
    /// ([`Ask::words`] prints it; `cli/tests.rs` parses the print back into the same ask).
    pub fn ask(&self, verb: Verb) -> Ask {
        let PlanArgs {
            nodes,
            qos,
            time,
            job_name,
            resume,
            wipe,
            until_done,
            max_slots,
            allow,
            overrides,
        } = self;
        Ask {
            nodes: *nodes,
            qos: qos.clone(),
            time: *time,
            job_name: job_name.clone(),
            resume: *resume,
            wipe: *wipe,
            // `--max-slots` requires `--until-done`: alone it is its default.
            until_done: until_done.then_some(*max_slots),
            allow: (allow.iter())
                .filter_map(|a| Allow::ALL.iter().find(|(x, ..)| x == a))
                .map(|(_, name, _)| (*name).to_owned())
                .collect(),
            overrides: overrides.clone(),
            ..Ask::bare(verb)
        }
    }
}

impl LaunchArgs {
    /// This command as rlctl prints it back (the rest of a chain, a hint).
    pub fn ask(&self) -> Ask {
        // Each field named: `--json`, `--change-knobs`, `--dry-run` and `--deep` say how this
        // command runs and prints, not what it submits, so a command printed back leaves them out.
        let LaunchArgs {
            preset,
            chain,
            json: _,
            change_knobs: _,
            submit: _,
            plan,
            deep: _,
        } = self;
        let chain = match chain {
            Chain::Jobs(k) => Some(*k),
            // `auto` is decided against the estimate at each launch: printed as the number
            // decided, by the caller.
            Chain::Auto => None,
        };
        Ask {
            chain,
            ..plan.ask(Verb::Launch {
                preset: preset.clone(),
            })
        }
    }
}

impl GridArgs {
    /// This command as rlctl prints it back (a grid asked again, a cell run as a new one).
    pub fn ask(&self) -> Ask {
        // Each field named, as for launch: `--dry-run`, `--deep` and `--json` are not written back.
        let GridArgs {
            cell,
            all,
            skip,
            as_cell,
            submit: _,
            plan,
            deep: _,
            json: _,
        } = self;
        let verb = match (all, cell) {
            (Some(grid), _) => Verb::GridAll { grid: grid.clone() },
            (None, cell) => Verb::Grid {
                cell: cell.clone().unwrap_or_default(),
            },
        };
        Ask {
            as_cell: as_cell.clone(),
            skip: skip.clone(),
            ..plan.ask(verb)
        }
    }
}
