//! Putting plans in the queue: the checks across plans (controlled grids, preflight), the
//! order jobs wait in, and the submission loop (or the dry run).

pub mod again;
pub mod borrowed;
pub mod intent;
pub mod ledger;
pub mod occupancy;
pub mod resubmit;
pub mod room;
pub mod run_dir;
pub mod slurm;
pub mod unrecorded;
pub mod waiting;

use crate::error::{ChangedCell, Error, InUse, Result};
use crate::plan::Plan;
use crate::plan::ask::{Ask, Verb};
use crate::preset::cluster::Cluster;
use crate::render::print_files;
use crate::render::render;
use crate::submit::intent::{CellIntent, CellStatus, GridIntent};
use crate::submit::ledger::{Ledger, Record, knob_fingerprint};
use crate::submit::occupancy::{Occupancy, Occupant};
use crate::submit::room::Room;
use crate::submit::run_dir::{Context, submit};
use crate::submit::slurm::{Dependency, Slurm};
use crate::util::out::emit;
use crate::util::quote::sh_join;
use crate::util::turn::Turn;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;

/// At most this many cells of one `grid --all` run at once: cell i waits for cell i-8.
pub const GRID_WIDTH: usize = 8;

/// How the jobs of one submission wait for each other.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Cell i waits for cell i-8 to end.
    Grid,
    /// Each job waits for the one before it: one run across several wall-time slots.
    Chain,
}

impl Order {
    fn waits_on(self, i: usize) -> Option<usize> {
        match self {
            Order::Grid => i.checked_sub(GRID_WIDTH),
            Order::Chain => i.checked_sub(1),
        }
    }
}

/// What every submission of one command shares: the ledger, and the SkyRL checkout's commit.
pub fn context(cluster: &Cluster) -> Context {
    Context {
        ledger: Ledger::at(&cluster.storage.run_root),
        skyrl_commit: ledger::git_commit(&cluster.software.skyrl),
        submit_limits: (cluster.qos.iter())
            .filter_map(|q| Some((q.name.clone(), q.max_submit_jobs?)))
            .collect(),
        run_root: cluster.storage.run_root.clone(),
        ask: None,
    }
}

/// A controlled grid never changes a recorded cell's hyperparameters mid-series. `asked` is the
/// grid command as given: the ways out the refusal names are that command, changed.
pub fn controlled(plans: &[Plan], recorded: &[Record], asked: &Ask) -> Result<()> {
    let mut changed = Vec::new();
    for plan in plans {
        let Some(record) = recorded.iter().find(|r| r.target == plan.target) else {
            continue;
        };
        let diffs = knob_changes(&record.knobs, plan);
        if !diffs.is_empty() {
            changed.push(changed_cell(&plan.target, &record.job_id, diffs, asked));
        }
    }
    if changed.is_empty() {
        return Ok(());
    }
    Err(Error::ControlledGridChanged { cells: changed })
}

/// The cell `target` refused, with the ways out: each `asked`, changed.
fn changed_cell(target: &str, job_id: &str, diffs: Vec<String>, asked: &Ask) -> ChangedCell {
    let (grid, cell) = target.rsplit_once('/').unwrap_or(("", target));
    // A cell already asked `--as` another is that cell again, under the next new name.
    let verb = match (&asked.verb, &asked.as_cell) {
        (Verb::Grid { .. }, Some(_)) => asked.verb.clone(),
        _ => Verb::Grid {
            cell: target.to_owned(),
        },
    };
    let as_new = Ask {
        verb,
        as_cell: Some(format!("{cell}-v2")),
        skip: Vec::new(),
        ..asked.clone()
    };
    let mut skip = Ask {
        verb: Verb::GridAll {
            grid: grid.to_owned(),
        },
        as_cell: None,
        ..asked.clone()
    };
    if !skip.skip.iter().any(|s| s == cell || s == target) {
        skip.skip.push(cell.to_owned());
    }
    ChangedCell {
        target: target.to_owned(),
        job_id: job_id.to_owned(),
        diffs,
        as_new: as_new.command(),
        again: asked.command(),
        skip: skip.command(),
    }
}

/// How a run's knobs would change from what it `recorded` to `plan`'s: one `key: recorded ->
/// asked` per knob that differs. A run keeps its knobs, a grid's cell as a resumed run.
pub fn knob_changes(recorded: &BTreeMap<String, String>, plan: &Plan) -> Vec<String> {
    let now = knob_fingerprint(plan);
    let keys: BTreeSet<&String> = recorded.keys().chain(now.keys()).collect();
    let show = |v: Option<&String>| v.map_or("(unset)".to_owned(), |v| v.clone());
    (keys.into_iter())
        .filter(|key| recorded.get(*key) != now.get(*key))
        .map(|key| {
            format!(
                "{key}: {} -> {}",
                show(recorded.get(key)),
                show(now.get(key))
            )
        })
        .collect()
}

/// Submits plans in order (or prints them, with --dry-run); plan i depends on plan i-8. A
/// plan whose resolved checkpoint folder (or job name) a pending or running job already uses
/// is not submitted beside it: a grid skips it (and chains on that job), a single launch or a
/// chain is refused. Launches take turns from the queue check to their last record. Where the
/// QOS limits how many jobs a user may have submitted, a grid submits what fits and says how to
/// submit the rest; a single launch or a chain that does not fit is refused before anything is
/// written.
pub fn launch(
    plans: &[Plan],
    recorded: &[Option<&Record>],
    order: Order,
    slurm: &Slurm,
    dry_run: bool,
    context: &Context,
    out: &mut dyn Write,
) -> Result<()> {
    let renders = plans.iter().map(render).collect::<Result<Vec<_>>>()?;
    if dry_run {
        for (i, (plan, files)) in plans.iter().zip(&renders).enumerate() {
            let dependency = order
                .waits_on(i)
                .map(|j| Dependency::AfterAny(format!("<job {} of this submission>", j + 1)));
            let argv = slurm.sbatch_argv(&plan.paths.sbatch_script, dependency.as_ref());
            if i > 0 {
                emit(out, "\n")?;
            }
            emit(
                out,
                &format!(
                    "==> sbatch command for {} <==\n{}\n",
                    plan.target,
                    sh_join(&argv)
                ),
            )?;
            print_files(out, files)?;
        }
        for (qos, limit) in &context.submit_limits {
            let wanted = plans.iter().filter(|p| p.job.qos == *qos).count();
            if wanted > *limit as usize {
                crate::say!(
                    "rlctl: note: QOS {qos} lets a user have {limit} jobs submitted at once: a launch submits at most \
                     {limit} of these {wanted} (fewer if you already have jobs there); running it again as they end \
                     submits the next ones"
                );
            }
        }
        crate::say!("rlctl: dry run: nothing was written and nothing was submitted");
        return Ok(());
    }
    if !context.run_root.is_dir() && (order == Order::Chain || plans.len() == 1) {
        // Refused before the turn makes the run root: a refused launch writes nothing.
        let queued = slurm.queued()?;
        let new = (plans.iter().zip(recorded))
            .filter(|(p, r)| r.is_none() && !queued.iter().any(|j| j.name == p.job.name));
        Room::new(&context.submit_limits, &queued).fits_all(new.map(|(p, _)| p))?;
    }
    let turn = Turn::take(&context.run_root)?;
    let occupancy = Occupancy::read(&turn, slurm, &context.ledger)?;
    // Refused before anything is queued: a job sbatch queues must get its record.
    context.ledger.appendable()?;
    // `grid --all` asked again: the cells the last ask left waiting are asked anew here.
    let mut intent = match &context.ask {
        Some(ask) => {
            let old = GridIntent::load(&context.run_root, &ask.grid)
                .ok()
                .flatten();
            for cell in old.iter().flat_map(|o| &o.cells) {
                if let CellStatus::Waiting { run_dir, .. } = &cell.status {
                    waiting::discard(run_dir);
                }
            }
            Some(GridIntent::new(
                &ask.grid,
                ask.command.clone(),
                ask.skipped.clone(),
            ))
        }
        None => None,
    };
    let mut status = |plan: &Plan, status: CellStatus| {
        if let (Some(intent), Some(ask)) = (&mut intent, &context.ask) {
            intent.cells.push(CellIntent {
                target: plan.target.clone(),
                status,
                estimate_gpu_hours: ask.estimates.get(&plan.target).copied(),
            });
        }
    };
    let queued = &occupancy.queued;
    let occupant = |p: &Plan| occupancy.occupant(&p.paths.checkpoint_dir, &p.job.name);
    let mut room = Room::new(&context.submit_limits, queued);
    if order == Order::Chain || plans.len() == 1 {
        // One run is all or nothing: a chain cut short would leave a run without its later slots.
        let new =
            (plans.iter().zip(recorded)).filter(|(p, r)| r.is_none() && occupant(p).is_none());
        room.fits_all(new.map(|(p, _)| p))?;
    }
    // The job each plan is, or waits as; `None` where there is nothing to wait for.
    let mut job_ids: Vec<Option<String>> = Vec::new();
    let mut submitted: Vec<(String, String)> = Vec::new();
    let mut deferred: Vec<&Plan> = Vec::new();
    let mut deferred_at: Vec<usize> = Vec::new();
    for (i, (plan, files)) in plans.iter().zip(&renders).enumerate() {
        if let Some(record) = recorded[i] {
            emit(
                out,
                &format!(
                    "{}: already submitted as job {}; skipped\n",
                    plan.target, record.job_id
                ),
            )?;
            // A job that has left the queue is over: waiting on it would only make sbatch
            // refuse an id it has forgotten.
            let still_queued = queued.iter().any(|j| j.id == record.job_id);
            job_ids.push(still_queued.then(|| record.job_id.clone()));
            status(
                plan,
                CellStatus::Recorded {
                    job_id: record.job_id.clone(),
                },
            );
            continue;
        }
        if let Some(Occupant { job, shared }) = occupant(plan) {
            let single = order == Order::Chain || plans.len() == 1;
            // Another run's name only when a link makes its folder this one.
            let other = shared.filter(|(run, _)| *run != plan.target);
            // What gives this run a folder of its own: a cell's job name does not.
            let own = match plan.grid {
                Some(_) => "run it as a new cell with --as NEW_CELL",
                None => "pick another --job-name",
            };
            match (other, single) {
                (None, true) => {
                    return Err(Error::AlreadyQueued {
                        target: plan.target.clone(),
                        job_id: job.id.clone(),
                        state: job.state.clone(),
                        job_name: job.name.clone(),
                        fix: own,
                    });
                }
                (Some((run, folder)), true) => {
                    return Err(Error::CheckpointInUse(Box::new(InUse {
                        target: plan.target.clone(),
                        folder,
                        job_id: job.id.clone(),
                        state: job.state.clone(),
                        run,
                        fix: own,
                    })));
                }
                (Some((run, _)), false) => emit(
                    out,
                    &format!(
                        "{}: its checkpoint folder is in use by job {} ({}) of {run}; skipped\n",
                        plan.target, job.id, job.state
                    ),
                )?,
                (None, false) => emit(
                    out,
                    &format!(
                        "{}: already queued as job {} ({}); skipped\n",
                        plan.target, job.id, job.state
                    ),
                )?,
            }
            job_ids.push(Some(job.id.clone()));
            status(
                plan,
                CellStatus::Recorded {
                    job_id: job.id.clone(),
                },
            );
            continue;
        }
        // A cell whose lane still waits waits behind it: cells go in the order asked.
        let lane_waits = order.waits_on(i).is_some_and(|j| deferred_at.contains(&j));
        if lane_waits || !room.take(&plan.job.qos) {
            let asked = context.ask.is_some();
            if asked {
                waiting::prepare(plan, files, context.skyrl_commit.clone())?;
            }
            emit(
                out,
                &match asked {
                    true => format!("{}: waits for room in QOS {}\n", plan.target, plan.job.qos),
                    false => format!(
                        "{}: not submitted: QOS {} is full\n",
                        plan.target, plan.job.qos
                    ),
                },
            )?;
            status(
                plan,
                CellStatus::Waiting {
                    run_dir: plan.paths.run_dir.clone(),
                    qos: plan.job.qos.clone(),
                },
            );
            deferred.push(plan);
            deferred_at.push(i);
            job_ids.push(None);
            continue;
        }
        let dependency = order
            .waits_on(i)
            .and_then(|j| job_ids[j].clone())
            .map(Dependency::AfterAny);
        match submit(plan, files, slurm, dependency.as_ref(), context) {
            Ok(done) => {
                let after = match &dependency {
                    Some(Dependency::AfterAny(job)) => format!(", after job {job}"),
                    None => String::new(),
                };
                emit(
                    out,
                    &format!(
                        "{}: job {}{after}\n  run folder  {}\n  checkpoints {}\n",
                        plan.target, done.job_id, plan.paths.run_dir, plan.paths.checkpoint_dir
                    ),
                )?;
                job_ids.push(Some(done.job_id.clone()));
                status(
                    plan,
                    CellStatus::Submitted {
                        job_id: done.job_id.clone(),
                    },
                );
                submitted.push((plan.target.clone(), done.job_id));
            }
            Err(e) if plans.len() > 1 => {
                return Err(Error::GridPartial {
                    submitted,
                    failed_cell: plan.target.clone(),
                    source: Box::new(e),
                });
            }
            Err(e) => return Err(e),
        }
    }
    if let Some(intent) = &intent {
        intent.store(&context.run_root)?;
    }
    if !deferred.is_empty() {
        emit(
            out,
            &room.how_to_submit_the_rest(plans, &deferred, intent.is_some()),
        )?;
    }
    drop(turn);
    Ok(())
}
