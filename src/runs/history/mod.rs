//! One history per run: the steps of every job that wrote the run's checkpoint folder (chain
//! links, `tend` resubmissions, manual resumes; `--until-done` slots are one job and one log),
//! joined in job order, for every reader of a run's steps (`metrics`, `report`, `status`,
//! `watch`, `tend`'s alerts).
//!
//! A job that resumed from a checkpoint trains the steps after it again, and the steps an
//! earlier job logged past that checkpoint belong to a trajectory the run left: the later job's
//! first train step cuts every earlier job's steps from there on, whatever it logs next (see
//! [`join`]). Each log is read through its own step cache, one log at a time: memory holds the
//! joined steps and one log's, never every log.

pub mod row;

use crate::error::Result;
use crate::runs::log::read_log;
use crate::runs::metrics::pulse::Pulse;
use crate::runs::metrics::{Series, Step};
use crate::store::ledger::{Record, Run};
use crate::util::fs::Folder;
use camino::{Utf8Path, Utf8PathBuf};
use std::collections::HashSet;

/// The jobs whose logs make the history of `run` as it stood at its job `upto`: the run's
/// records up to `upto` (its ledger order, every submission and chain link) that wrote the same
/// checkpoint folder, judged as one folder (links followed), each job once. A later record
/// (a chain link still to run) is not yet history.
pub fn jobs<'r>(run: &'r Run, upto: &'r Record) -> Vec<&'r Record> {
    let end = (run.records.iter())
        .rposition(|r| r.job_id == upto.job_id)
        .unwrap_or(run.records.len());
    let mut folder: Option<Folder> = None;
    let mut same = |r: &Record| {
        // Most records spell the folder alike: only another spelling is resolved.
        r.checkpoint_dir == upto.checkpoint_dir || {
            let mine = folder.get_or_insert_with(|| Folder::of(&upto.checkpoint_dir));
            Folder::of(&r.checkpoint_dir).is(mine)
        }
    };
    // A job recorded twice (or two records naming one log) is read once; `upto` last.
    let (mut ids, mut logs) = (
        HashSet::from([upto.job_id.as_str()]),
        HashSet::from([upto.log.as_path()]),
    );
    let mut jobs: Vec<&Record> = (run.records[..end].iter())
        .filter(|r| same(r) && ids.insert(r.job_id.as_str()) && logs.insert(r.log.as_path()))
        .collect();
    jobs.push(upto);
    jobs
}

/// The joined steps of a run's jobs, with what each job's log added.
#[derive(Debug, Clone, Default)]
pub struct History {
    pub series: Series,
    /// Per job (in the order read): its first and last train step, if it logged one.
    pub parts: Vec<Option<(u64, u64)>>,
    /// The last job's own log's pulse (a hang is the running job's).
    pub pulse: Pulse,
}

impl History {
    /// The step the last job resumed from, once it logged a step: the step before its first,
    /// when that is after step 0 (a job that starts over resumed from nothing).
    pub fn resumed_from(&self) -> Option<u64> {
        let (first, _) = (*self.parts.last()?)?;
        first.checked_sub(1).filter(|&s| s > 0)
    }
}

/// The history of `jobs` (see [`jobs`]), their logs read oldest first.
pub fn read(jobs: &[&Record]) -> Result<History> {
    read_logs(jobs.iter().map(|r| r.log.as_path()))
}

/// The history the logs `logs` make, oldest first; a log not written yet adds nothing.
pub fn read_logs<'p>(logs: impl IntoIterator<Item = &'p Utf8Path>) -> Result<History> {
    let mut history = History::default();
    for log in logs {
        let (series, pulse) = read_log(log)?;
        history.parts.push(train_span(&series));
        join(&mut history.series, series);
        history.pulse = pulse;
    }
    Ok(history)
}

/// The logs of `jobs`, oldest first: what a reader that reads the history again keeps.
pub fn logs(jobs: &[&Record]) -> Vec<Utf8PathBuf> {
    jobs.iter().map(|r| r.log.clone()).collect()
}

/// The first and last train step numbers of a log's steps.
fn train_span(series: &Series) -> Option<(u64, u64)> {
    let first = series.train.iter().map(|s| s.step).min()?;
    let last = series.train.iter().map(|s| s.step).max()?;
    Some((first, last))
}

/// Adds a later job's steps `newer` to the history `joined`: from its first train step on,
/// every step the earlier jobs logged (train or eval) is left, and the later job's take their
/// place; a step of the same number it logged again (an eval at the step it resumed from) is
/// its. A job with no train step cuts nothing.
pub fn join(joined: &mut Series, newer: Series) {
    let cut = newer.train.iter().map(|s| s.step).min();
    for (mine, theirs) in [
        (&mut joined.train, newer.train),
        (&mut joined.eval, newer.eval),
    ] {
        let again: HashSet<u64> = theirs.iter().map(|s| s.step).collect();
        mine.retain(|s: &Step| cut.is_none_or(|c| s.step < c) && !again.contains(&s.step));
        mine.extend(theirs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::metrics::Kind;

    fn steps(kind: Kind, from: u64, to: u64, value: f64) -> Vec<Step> {
        (from..=to)
            .map(|step| Step {
                kind,
                step,
                metrics: [("v".to_owned(), value)].into_iter().collect(),
                rounded: false,
            })
            .collect()
    }

    fn series(train: (u64, u64, f64), eval: Option<(u64, f64)>) -> Series {
        Series {
            train: steps(Kind::Train, train.0, train.1, train.2),
            eval: eval.map_or_else(Vec::new, |(s, v)| steps(Kind::Eval, s, s, v)),
        }
    }

    fn values(s: &Series) -> Vec<(u64, f64)> {
        s.values(Kind::Train, "v").collect()
    }

    #[test]
    fn a_resumed_job_replaces_the_steps_after_its_checkpoint() {
        let mut joined = series((1, 12, 1.0), Some((10, 1.0)));
        join(&mut joined, series((11, 20, 2.0), Some((10, 2.0))));
        let want: Vec<(u64, f64)> = (1..=20)
            .map(|s| (s, if s <= 10 { 1.0 } else { 2.0 }))
            .collect();
        assert_eq!(values(&joined), want);
        assert_eq!(joined.eval.len(), 1);
        assert_eq!(joined.eval[0].get("v"), Some(2.0));
    }

    #[test]
    fn a_job_still_behind_the_earlier_one_cuts_what_the_run_left() {
        let mut joined = series((1, 17, 1.0), None);
        join(&mut joined, series((11, 12, 2.0), None));
        assert_eq!(joined.last_train_step(), Some(12));
        assert_eq!(joined.train.len(), 12);
    }

    #[test]
    fn a_job_with_no_step_yet_cuts_nothing() {
        let mut joined = series((1, 12, 1.0), None);
        join(&mut joined, Series::default());
        assert_eq!(joined.train.len(), 12);
    }

    fn record(job_id: &str, folder: &str) -> Record {
        serde_json::from_value(serde_json::json!({
            "job_id": job_id, "target": "p", "group": "p", "member": "p", "job_name": "p",
            "run_dir": "/runs/p/001", "checkpoint_dir": folder,
            "log": format!("/runs/p/001/p_{job_id}.out"), "knobs": {}, "sbatch": [],
            "submitted_unix": 0, "rlctl_version": "0",
        }))
        .unwrap()
    }

    fn ids(jobs: &[&Record]) -> Vec<String> {
        jobs.iter().map(|r| r.job_id.clone()).collect()
    }

    #[test]
    fn the_jobs_of_a_history_are_those_on_its_folder_up_to_the_job_each_once() {
        let run = Run {
            name: "p".into(),
            records: vec![
                record("1", "/ckpt/p"),
                record("2", "/elsewhere/p"),
                record("1", "/ckpt/p"),
                record("3", "/ckpt/p"),
                record("4", "/ckpt/p"),
            ],
        };
        assert_eq!(ids(&jobs(&run, &run.records[3])), ["1", "3"]);
        assert_eq!(ids(&jobs(&run, &run.records[4])), ["1", "3", "4"]);
        assert_eq!(ids(&jobs(&run, &run.records[1])), ["2"], "its own folder's");
    }

    #[test]
    fn resumed_from_is_the_step_before_the_last_jobs_first() {
        let history = History {
            parts: vec![Some((1, 12)), Some((11, 17))],
            ..History::default()
        };
        assert_eq!(history.resumed_from(), Some(10));
        let waiting = History {
            parts: vec![Some((1, 12)), Some((11, 17)), None],
            ..History::default()
        };
        assert_eq!(waiting.resumed_from(), None, "not yet known");
        let fresh = History {
            parts: vec![Some((1, 12))],
            ..History::default()
        };
        assert_eq!(fresh.resumed_from(), None);
    }
}
