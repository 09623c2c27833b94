//! Putting plans in the queue: the order jobs wait in, and the submission loop (or the dry
//! run).

pub mod again;
pub mod occupancy;
pub mod resubmit;
pub mod room;
pub mod run_dir;
pub mod submission;
pub mod waiting;

use crate::error::{Error, InUse, Result};
use crate::plan::Plan;
use crate::preset::cluster::Cluster;
use crate::render::{RenderedFile, print_files, render};
use crate::slurm::{Dependency, QueuedJob, Slurm};
use crate::store::intent::{CellIntent, CellStatus, GridAsk, GridIntent};
use crate::store::ledger::{self, Ledger, Record};
use crate::submit::occupancy::{Occupancy, Occupant};
use crate::submit::room::Room;
use crate::submit::run_dir::{Context, submit};
use crate::submit::submission::{Outcome, Submission};
use crate::util::out::emit;
use crate::util::quote::sh_join;
use crate::util::turn::Turn;
use camino::Utf8Path;
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

/// Submits plans in order (or prints them, with --dry-run); plan i depends on plan i-8. A
/// plan whose resolved checkpoint folder (or job name) a pending or running job already uses
/// is not submitted beside it: a grid skips it (and chains on that job), a single launch or a
/// chain is refused. Launches take turns from the queue check to their last record. Where the
/// QOS limits how many jobs a user may have submitted, a grid submits what fits and says how to
/// submit the rest; a single launch or a chain that does not fit is refused before anything is
/// written. Each plan is first decided ([`Progress::decide`]), then the decision carried out.
pub fn launch(
    plans: &[Plan],
    recorded: &[Option<&Record>],
    order: Order,
    slurm: &Slurm,
    dry_run: bool,
    context: &Context,
    out: &mut dyn Write,
) -> Result<Vec<Submission>> {
    let renders = plans.iter().map(render).collect::<Result<Vec<_>>>()?;
    if dry_run {
        print_dry_run(plans, &renders, order, slurm, context, out)?;
        let shown = |p| Submission::of(p, Outcome::DryRun, None);
        return Ok(plans.iter().map(shown).collect());
    }
    // One run is all or nothing: a chain cut short would leave a run without its later slots.
    let single = order == Order::Chain || plans.len() == 1;
    if !context.run_root.is_dir() && single {
        fits_before_the_turn(plans, recorded, slurm, context)?;
    }
    let turn = Turn::take(&context.run_root)?;
    let occupancy = Occupancy::read(&turn, slurm, &context.ledger)?;
    // Refused before anything is queued: a job sbatch queues must get its record.
    context.ledger.appendable()?;
    let mut intent = (context.ask.as_ref()).map(|ask| asked_anew(ask, &context.run_root));
    let occupant = |p: &Plan| occupancy.occupant(&p.paths.checkpoint_dir, &p.job.name);
    let mut progress = Progress {
        order,
        single,
        room: Room::new(&context.submit_limits, &occupancy.queued),
        job_ids: Vec::new(),
        waiting: Vec::new(),
    };
    if single {
        let new =
            (plans.iter().zip(recorded)).filter(|(p, r)| r.is_none() && occupant(p).is_none());
        progress.room.fits_all(new.map(|(p, _)| p))?;
    }
    let mut launcher = Launcher {
        slurm,
        context,
        out,
        grid: plans.len() > 1,
        submitted: Vec::new(),
    };
    let mut submissions = Vec::with_capacity(plans.len());
    for (i, (plan, files)) in plans.iter().zip(&renders).enumerate() {
        let decision = progress.decide(i, plan, recorded[i], occupant(plan), &occupancy.queued)?;
        let waits = decision == Decision::Waits;
        let mut submission = decision.submission(plan);
        let (job_id, status) = launcher.carry_out(decision, plan, files)?;
        if submission.outcome == Outcome::Submitted {
            submission.job_id.clone_from(&job_id);
        }
        submissions.push(submission);
        if let (Some(intent), Some(ask)) = (&mut intent, &context.ask) {
            intent.cells.push(CellIntent {
                target: plan.target.clone(),
                status,
                estimate_gpu_hours: ask.estimates.get(&plan.target).copied(),
            });
        }
        progress.carried_out(i, job_id, waits);
    }
    if let Some(intent) = &intent {
        intent.store(&context.run_root)?;
    }
    if !progress.waiting.is_empty() {
        let deferred: Vec<&Plan> = progress.waiting.iter().map(|&i| &plans[i]).collect();
        emit(
            launcher.out,
            &(progress.room).how_to_submit_the_rest(plans, &deferred, intent.is_some()),
        )?;
    }
    drop(turn);
    Ok(submissions)
}

/// A single run's room in its QOS, checked before the turn makes the run root: a refused
/// launch writes nothing.
fn fits_before_the_turn(
    plans: &[Plan],
    recorded: &[Option<&Record>],
    slurm: &Slurm,
    context: &Context,
) -> Result<()> {
    let queued = slurm.queued()?;
    let new = (plans.iter().zip(recorded))
        .filter(|(p, r)| r.is_none() && !queued.iter().any(|j| j.name == p.job.name));
    Room::new(&context.submit_limits, &queued).fits_all(new.map(|(p, _)| p))
}

/// `--dry-run`: each plan's sbatch command and files, and the QOS limits a launch would meet;
/// nothing written, nothing submitted.
fn print_dry_run(
    plans: &[Plan],
    renders: &[Vec<RenderedFile>],
    order: Order,
    slurm: &Slurm,
    context: &Context,
    out: &mut dyn Write,
) -> Result<()> {
    for (i, (plan, files)) in plans.iter().zip(renders).enumerate() {
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
    Ok(())
}

/// `grid --all` asked again: the cells the last ask left waiting are asked anew, so their
/// prepared folders go, and a new intent starts.
fn asked_anew(ask: &GridAsk, run_root: &Utf8Path) -> GridIntent {
    let old = GridIntent::load(run_root, &ask.grid).ok().flatten();
    for cell in old.iter().flat_map(|o| &o.cells) {
        if let CellStatus::Waiting { run_dir, .. } = &cell.status {
            waiting::discard(run_dir);
        }
    }
    GridIntent::new(&ask.grid, ask.command.clone(), ask.skipped.clone())
}

/// What becomes of one plan of a launch, decided before anything is written for it.
#[derive(Debug, PartialEq)]
enum Decision {
    /// Already submitted as `job_id`: skipped, and waited on while that job is still queued.
    Recorded { job_id: String, still_queued: bool },
    /// A pending or running job already uses its checkpoint folder or job name: a grid skips
    /// the cell and waits on that job. `other_run` names the run whose folder a link makes
    /// this one.
    Occupied {
        job_id: String,
        state: String,
        other_run: Option<String>,
    },
    /// No room in its QOS, or the cell its lane waits behind waits: not submitted now.
    Waits,
    /// Submitted now, after the job its lane waits on, if any.
    Submit { dependency: Option<Dependency> },
}

impl Decision {
    /// What the decision makes of `plan`, for `--json` (a submission's job id is added once
    /// sbatch gives it).
    fn submission(&self, plan: &Plan) -> Submission {
        match self {
            Decision::Recorded { job_id, .. } => {
                Submission::of(plan, Outcome::Recorded, Some(job_id.clone()))
            }
            Decision::Occupied {
                job_id,
                state,
                other_run,
            } => Submission {
                state: Some(state.clone()),
                other_run: other_run.clone(),
                ..Submission::of(plan, Outcome::Occupied, Some(job_id.clone()))
            },
            Decision::Waits => Submission::of(plan, Outcome::Waiting, None),
            Decision::Submit { dependency } => Submission {
                // As the ledger records it.
                dependency: (dependency.as_ref())
                    .map(|Dependency::AfterAny(job)| format!("afterany:{job}")),
                ..Submission::of(plan, Outcome::Submitted, None)
            },
        }
    }
}

/// What a launch knows when it decides its next plan: the plans decided so far.
struct Progress {
    order: Order,
    /// One run (a single launch or a chain): a plan that cannot go is refused, not skipped.
    single: bool,
    /// What is left in each QOS that limits a user's submitted jobs.
    room: Room,
    /// The job each plan decided so far is, or waits as; `None` where there is nothing to wait
    /// for.
    job_ids: Vec<Option<String>>,
    /// The plans (by index) left waiting for room.
    waiting: Vec<usize>,
}

impl Progress {
    /// What becomes of plan `i`, given its record, the queued job using its folder or name
    /// (`occupant`) and the queue: pure, but for taking the plan's room in its QOS. A single
    /// run whose folder or name is in use is refused here.
    fn decide(
        &mut self,
        i: usize,
        plan: &Plan,
        record: Option<&Record>,
        occupant: Option<Occupant>,
        queued: &[QueuedJob],
    ) -> Result<Decision> {
        if let Some(record) = record {
            // A job that has left the queue is over: waiting on it would only make sbatch
            // refuse an id it has forgotten.
            return Ok(Decision::Recorded {
                job_id: record.job_id.clone(),
                still_queued: queued.iter().any(|j| j.id == record.job_id),
            });
        }
        if let Some(occupant) = occupant {
            return occupied(plan, occupant, self.single);
        }
        // A cell whose lane still waits waits behind it: cells go in the order asked.
        let lane_waits = (self.order.waits_on(i)).is_some_and(|j| self.waiting.contains(&j));
        if lane_waits || !self.room.take(&plan.job.qos) {
            return Ok(Decision::Waits);
        }
        let dependency = (self.order.waits_on(i))
            .and_then(|j| self.job_ids[j].clone())
            .map(Dependency::AfterAny);
        Ok(Decision::Submit { dependency })
    }

    /// Plan `i` is carried out: it is, or waits as, `job_id`; `waits` for room.
    fn carried_out(&mut self, i: usize, job_id: Option<String>, waits: bool) {
        self.job_ids.push(job_id);
        if waits {
            self.waiting.push(i);
        }
    }
}

/// A plan whose folder or name `occupant` uses: skipped in a grid, refused for a single run,
/// with what gives the run a folder of its own.
fn occupied(plan: &Plan, occupant: Occupant, single: bool) -> Result<Decision> {
    let Occupant { job, shared } = occupant;
    // Another run's name only when a link makes its folder this one.
    let other = shared.filter(|(run, _)| *run != plan.target);
    // What gives this run a folder of its own: a cell's job name does not.
    let own = match plan.grid {
        Some(_) => "run it as a new cell with --as NEW_CELL",
        None => "pick another --job-name",
    };
    match (other, single) {
        (None, true) => Err(Error::AlreadyQueued {
            target: plan.target.clone(),
            job_id: job.id.clone(),
            state: job.state.clone(),
            job_name: job.name.clone(),
            fix: own,
        }),
        (Some((run, folder)), true) => Err(Error::CheckpointInUse(Box::new(InUse {
            target: plan.target.clone(),
            folder,
            job_id: job.id.clone(),
            state: job.state.clone(),
            run,
            fix: own,
        }))),
        (other, false) => Ok(Decision::Occupied {
            job_id: job.id.clone(),
            state: job.state.clone(),
            other_run: other.map(|(run, _)| run),
        }),
    }
}

/// What carries a launch's decisions out: the SLURM client, what the submissions share, where
/// they are told, and the jobs submitted so far (a grid that fails part way names them).
struct Launcher<'a> {
    slurm: &'a Slurm,
    context: &'a Context,
    out: &'a mut dyn Write,
    /// More than one plan: a failed submission is a partial one.
    grid: bool,
    submitted: Vec<(String, String)>,
}

impl Launcher<'_> {
    /// Carries out what was decided for `plan`: says it, prepares a waiting cell's folder, or
    /// submits. Returns the job the plan is or waits as, and the cell's status for the intent.
    fn carry_out(
        &mut self,
        decision: Decision,
        plan: &Plan,
        files: &[RenderedFile],
    ) -> Result<(Option<String>, CellStatus)> {
        let target = &plan.target;
        match decision {
            Decision::Recorded {
                job_id,
                still_queued,
            } => {
                let line = format!("{target}: already submitted as job {job_id}; skipped\n");
                emit(self.out, &line)?;
                Ok((
                    still_queued.then(|| job_id.clone()),
                    CellStatus::Recorded { job_id },
                ))
            }
            Decision::Occupied {
                job_id,
                state,
                other_run,
            } => {
                let line = match other_run {
                    Some(run) => format!(
                        "{target}: its checkpoint folder is in use by job {job_id} ({state}) of {run}; skipped\n"
                    ),
                    None => {
                        format!("{target}: already queued as job {job_id} ({state}); skipped\n")
                    }
                };
                emit(self.out, &line)?;
                Ok((Some(job_id.clone()), CellStatus::Recorded { job_id }))
            }
            Decision::Waits => Ok((None, self.wait(plan, files)?)),
            Decision::Submit { dependency } => {
                let job_id = self.submit(plan, files, dependency)?;
                let status = CellStatus::Submitted {
                    job_id: job_id.clone(),
                };
                Ok((Some(job_id), status))
            }
        }
    }

    /// A plan left waiting for room in its QOS: a `grid --all` cell's folder is prepared, so
    /// that `tend` submits it when there is room.
    fn wait(&mut self, plan: &Plan, files: &[RenderedFile]) -> Result<CellStatus> {
        let asked = self.context.ask.is_some();
        if asked {
            waiting::prepare(plan, files, self.context.skyrl_commit.clone())?;
        }
        let (target, qos) = (&plan.target, &plan.job.qos);
        emit(
            self.out,
            &match asked {
                true => format!("{target}: waits for room in QOS {qos}\n"),
                false => format!("{target}: not submitted: QOS {qos} is full\n"),
            },
        )?;
        Ok(CellStatus::Waiting {
            run_dir: plan.paths.run_dir.clone(),
            qos: qos.clone(),
        })
    }

    /// Submits `plan` after `dependency` and says where it runs; returns its job id. In a grid,
    /// a failed submission names the ones before it.
    fn submit(
        &mut self,
        plan: &Plan,
        files: &[RenderedFile],
        dependency: Option<Dependency>,
    ) -> Result<String> {
        let done = match submit(plan, files, self.slurm, dependency.as_ref(), self.context) {
            Ok(done) => done,
            Err(e) if self.grid => {
                return Err(Error::GridPartial {
                    submitted: std::mem::take(&mut self.submitted),
                    failed_cell: plan.target.clone(),
                    source: Box::new(e),
                });
            }
            Err(e) => return Err(e),
        };
        let after = match &dependency {
            Some(Dependency::AfterAny(job)) => format!(", after job {job}"),
            None => String::new(),
        };
        emit(
            self.out,
            &format!(
                "{}: job {}{after}\n  run folder  {}\n  checkpoints {}\n",
                plan.target, done.job_id, plan.paths.run_dir, plan.paths.checkpoint_dir
            ),
        )?;
        (self.submitted).push((plan.target.clone(), done.job_id.clone()));
        Ok(done.job_id)
    }
}
