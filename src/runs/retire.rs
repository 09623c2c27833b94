//! `rlctl retire RUN...`: a recorded run that must run again afresh, or be dropped, is made
//! history. Its pending and running jobs are cancelled, its resolved checkpoint folder is moved
//! aside (`<folder>.retired-<last job id>`), and one retirement line is appended to the ledger:
//! the run then counts as not recorded (`grid --all` plans its cell afresh, in a new run
//! folder, on a fresh checkpoint folder), while every folder and every ledger line stays.
//!
//! The question is asked without the run root's turn (cron's `tend` must not wait on a person);
//! then, under the turn, the ledger and the queue are read again before anything is done.

use super::probe::Queue;
use super::select::select_runs;
use crate::error::{Error, Result};
use crate::slurm::Slurm;
use crate::store::ledger::{Ledger, Retirement, Run};
use crate::submit::occupancy::Occupancy;
use crate::util::fs::{Folder, resolve};
use crate::util::out::{confirm, emit, previewing};
use crate::util::quote::sh;
use crate::util::turn::Turn;
use camino::{Utf8Path, Utf8PathBuf};
use schemars::JsonSchema;
use serde::Serialize;
use std::io::Write;

/// Retires every run `names` mean; several runs are confirmed first, as `cancel` does.
pub fn retire(
    slurm: &Slurm,
    ledger: &Ledger,
    run_root: &Utf8Path,
    names: &[String],
    yes: bool,
    out: &mut dyn Write,
) -> Result<Retired> {
    for name in names {
        plain(name)?;
    }
    let runs = chosen(ledger, names)?;
    let mut retired = Retired {
        confirmed: true,
        cancelled: Vec::new(),
        runs: Vec::new(),
    };
    if (runs.len() > 1 || previewing()) && !confirm(&question(slurm, &runs)?, yes)? {
        retired.confirmed = false;
        emit(out, "retired nothing\n")?;
        return Ok(retired);
    }
    let confirmed: Vec<String> = runs.into_iter().map(|r| r.name).collect();
    let turn = Turn::take(run_root)?;
    // Read again under the turn: what a launch or a pass did meanwhile is seen. Only the runs
    // the question named.
    let runs: Vec<Run> = (chosen(ledger, names)?.into_iter())
        .filter(|r| confirmed.contains(&r.name))
        .collect();
    let occupancy = Occupancy::read(&turn, slurm, ledger)?;
    let live: Vec<&str> = (runs.iter().flat_map(|r| &r.records))
        .filter(|r| occupancy.holds(&r.job_id))
        .map(|r| r.job_id.as_str())
        .collect();
    for run in &runs {
        not_shared(run, &occupancy)?;
    }
    if !live.is_empty() {
        slurm.cancel(&live)?;
        emit(
            out,
            &format!("cancelled job{} {}\n", plural(live.len()), live.join(", ")),
        )?;
        retired.cancelled = live.iter().map(|id| (*id).to_owned()).collect();
    }
    for run in &runs {
        retired.runs.push(retire_one(ledger, run, out)?);
    }
    Ok(retired)
}

/// What a retire did: the queued jobs it cancelled, and each run retired.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Retired {
    /// False when several runs were asked about and the answer was no: nothing was done.
    pub confirmed: bool,
    pub cancelled: Vec<String>,
    pub runs: Vec<RetiredRun>,
}

/// One run retired: its jobs, and where its checkpoint folder went (none when it had none).
#[derive(Debug, Serialize, JsonSchema)]
pub struct RetiredRun {
    pub run: String,
    pub jobs: Vec<String>,
    pub checkpoint_dir: String,
    pub moved_to: Option<String>,
    /// The command that runs it afresh (`grid CELL` or `launch PRESET`), for the text's hint.
    #[serde(skip)]
    pub again: String,
}

/// The question for several runs: each, with the queued jobs retiring it cancels.
fn question(slurm: &Slurm, runs: &[Run]) -> Result<String> {
    let queued = Queue::read(slurm)?;
    let mut listing = String::new();
    for run in runs {
        let live: Vec<String> = (run.records.iter())
            .filter_map(|r| Some(format!("job {} ({})", r.job_id, queued.state(&r.job_id)?)))
            .collect();
        let live = match live.is_empty() {
            true => String::new(),
            false => format!(": cancels {}", live.join(", ")),
        };
        listing.push_str(&format!("  {}{live}\n", run.name));
    }
    Ok(format!(
        "retire these {} runs (their jobs cancelled, their checkpoint folders moved aside)?\n{listing}",
        runs.len()
    ))
}

/// A folder that another run's live job uses (a link made them one) is never moved: refused
/// before anything is done.
fn not_shared(run: &Run, occupancy: &Occupancy) -> Result<()> {
    let folder = Folder::of(&run.latest().checkpoint_dir);
    match (occupancy.live()).find(|(_, r, f)| r.run() != run.name && f.is(&folder)) {
        Some((job, record, _)) => Err(Error::Unsupported(format!(
            "{}: its checkpoint folder resolves to `{}`, which job {} ({}) of {} uses: nothing was \
             retired; wait for that job, or `rlctl cancel {}`",
            run.name,
            folder.path,
            job.id,
            job.state,
            record.run(),
            record.run()
        ))),
        None => Ok(()),
    }
}

/// Moves `run`'s checkpoint folder aside and records the retirement; a retirement the ledger
/// does not take puts the folder back.
fn retire_one(ledger: &Ledger, run: &Run, out: &mut dyn Write) -> Result<RetiredRun> {
    let moved = move_aside(run)?;
    if let Err(e) = ledger.retire(&Retirement::new(run, moved.clone())) {
        // Not recorded as retired: its folder goes back, or the next launch would not see it.
        if let Some(to) = &moved {
            let _ = std::fs::rename(to, resolve(&run.latest().checkpoint_dir));
        }
        return Err(e);
    }
    let jobs: Vec<&str> = run.records.iter().map(|r| r.job_id.as_str()).collect();
    let folder = match &moved {
        Some(to) => format!("its checkpoints moved to {to}"),
        None => format!(
            "it had no checkpoint folder (`{}`)",
            run.latest().checkpoint_dir
        ),
    };
    emit(
        out,
        &format!(
            "{}: retired (job{} {}); {folder}; its run folders and ledger records are kept\n",
            run.name,
            plural(jobs.len()),
            jobs.join(", ")
        ),
    )?;
    Ok(RetiredRun {
        run: run.name.clone(),
        jobs: jobs.iter().map(|id| (*id).to_owned()).collect(),
        checkpoint_dir: run.latest().checkpoint_dir.to_string(),
        moved_to: moved.map(|to| to.to_string()),
        again: match run.latest().grid {
            Some(_) => format!("rlctl grid {}", sh(&run.latest().target)),
            None => format!("rlctl launch {}", sh(&run.latest().target)),
        },
    })
}

/// A run name, never a path: a path given here would read as a run of that name.
fn plain(name: &str) -> Result<()> {
    let path_like = name.is_empty()
        || name.starts_with('/')
        || name.ends_with('/')
        || name.contains("//")
        || name.split('/').any(|part| part.starts_with('.'));
    if path_like {
        return Err(Error::BadFlag {
            flag: "RUN",
            value: name.to_owned(),
            reason: "a run is named as `rlctl status` lists it (`preset`, `preset/job-name`, \
                     `grid/cell`), never by a path"
                .to_owned(),
        });
    }
    Ok(())
}

/// Every run `names` mean, each once and with all its records (a job id means its whole run).
fn chosen(ledger: &Ledger, names: &[String]) -> Result<Vec<Run>> {
    let mut runs: Vec<Run> = Vec::new();
    for name in names {
        for run in select_runs(ledger, Some(name))? {
            if runs.iter().any(|r| r.name == run.name) {
                continue;
            }
            let whole = (select_runs(ledger, Some(&run.name))?.into_iter())
                .find(|r| r.name == run.name)
                .unwrap_or(run);
            runs.push(whole);
        }
    }
    Ok(runs)
}

/// Moves the run's resolved checkpoint folder to `<folder>.retired-<last job id>`; `None` when
/// there is no folder. An earlier folder of that name is never replaced.
fn move_aside(run: &Run) -> Result<Option<Utf8PathBuf>> {
    let last = run.latest();
    let folder = resolve(&last.checkpoint_dir);
    if std::fs::symlink_metadata(&folder).is_err() {
        return Ok(None);
    }
    let to = Utf8PathBuf::from(format!("{folder}.retired-{}", last.job_id));
    if std::fs::symlink_metadata(&to).is_ok() {
        return Err(Error::Unsupported(format!(
            "{}: `{to}` exists already, and its checkpoint folder `{folder}` would go there: move \
             one of them, then retire again",
            run.name
        )));
    }
    std::fs::rename(&folder, &to).map_err(|e| Error::io("move", &folder, e))?;
    Ok(Some(to))
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
