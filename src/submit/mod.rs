//! Putting plans in the queue: the checks across plans (controlled grids, preflight), the
//! order jobs wait in, and the submission loop (or the dry run).

pub mod ledger;
pub mod run_dir;
pub mod slurm;

use crate::error::{Error, Result};
use crate::plan::Plan;
use crate::preset::cluster::Cluster;
use crate::render::print_files;
use crate::render::render;
use crate::submit::ledger::{Ledger, Record, knob_fingerprint};
use crate::submit::run_dir::{Context, submit};
use crate::submit::slurm::{Dependency, Slurm};
use crate::util::out::emit;
use crate::util::quote::sh_join;
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
    }
}

/// A controlled grid never changes a recorded cell's hyperparameters mid-series.
pub fn controlled(plans: &[Plan], recorded: &[Record]) -> Result<()> {
    let mut changed = Vec::new();
    for plan in plans {
        let Some(record) = recorded.iter().find(|r| r.target == plan.target) else {
            continue;
        };
        let now = knob_fingerprint(plan);
        let mut diffs = Vec::new();
        for key in record
            .knobs
            .keys()
            .chain(now.keys())
            .collect::<std::collections::BTreeSet<_>>()
        {
            let (was, is) = (record.knobs.get(key), now.get(key));
            if was != is {
                let show = |v: Option<&String>| v.map_or("(unset)".to_owned(), |v| v.clone());
                diffs.push(format!("{key}: {} -> {}", show(was), show(is)));
            }
        }
        if !diffs.is_empty() {
            let cell = plan.target.rsplit('/').next().unwrap_or_default();
            changed.push(format!(
                "{} ran as job {} with other knobs ({}): a controlled grid never alters a cell mid-series; run the \
                 change as a new cell, e.g. `rlctl grid {} --as {cell}-v2 ...`",
                plan.target,
                record.job_id,
                diffs.join("; "),
                plan.target
            ));
        }
    }
    if changed.is_empty() {
        return Ok(());
    }
    Err(Error::Unsupported(changed.join("\n")))
}

/// Submits plans in order (or prints them, with --dry-run); plan i depends on plan i-8. A
/// plan whose job name is already pending or running is not submitted twice: a grid skips it
/// (and chains on the queued job), a single launch is refused.
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
        eprintln!("rlctl: dry run: nothing was written and nothing was submitted");
        return Ok(());
    }
    let queued = slurm.queued()?;
    let mut job_ids: Vec<String> = Vec::new();
    let mut submitted: Vec<(String, String)> = Vec::new();
    for (i, (plan, files)) in plans.iter().zip(&renders).enumerate() {
        if let Some(record) = recorded[i] {
            emit(
                out,
                &format!(
                    "{}: already submitted as job {}; skipped\n",
                    plan.target, record.job_id
                ),
            )?;
            job_ids.push(record.job_id.clone());
            continue;
        }
        if let Some(job) = queued.iter().find(|j| j.name == plan.job.name) {
            if order == Order::Chain || plans.len() == 1 {
                return Err(Error::Unsupported(format!(
                    "{} is already queued as job {} ({}) under the job name `{}`, and a second job would write to its \
                     checkpoint folder: wait for it, `scancel {}`, or pick another --job-name",
                    plan.target, job.id, job.state, job.name, job.id
                )));
            }
            emit(
                out,
                &format!(
                    "{}: already queued as job {} ({}); skipped\n",
                    plan.target, job.id, job.state
                ),
            )?;
            job_ids.push(job.id.clone());
            continue;
        }
        let dependency = order
            .waits_on(i)
            .map(|j| Dependency::AfterAny(job_ids[j].clone()));
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
                job_ids.push(done.job_id.clone());
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
    Ok(())
}
