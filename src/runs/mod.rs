//! Following runs after submission: which recorded jobs a name means, what state SLURM says they
//! are in, and the `status`, `cancel`, `logs`, `metrics` and `report` commands.

pub mod alerts;
pub mod clean;
pub mod estimate;
pub mod grids;
pub mod metrics;
pub mod recorded;
pub mod report;
pub mod retire;
pub mod seen;
pub mod stall;
pub mod tend;
pub mod wandb_sync;
pub mod watch;

use crate::error::{Error, Result, closest};
use crate::render::{finished_status, last_slot};
use crate::runs::alerts::Thresholds;
use crate::runs::metrics::Series;
use crate::runs::metrics::keys::{ENTROPY, REWARD};
use crate::runs::metrics::pulse::Pulse;
use crate::runs::report::CellReport;
use crate::runs::stall::Stall;
use crate::submit::ledger::{Ledger, Record, Run};
use crate::submit::slurm::{Accounted, Slurm};
use crate::util::fmt::{Digits, MISSING, cell, duration};
use crate::util::out::{confirm, emit as write};
use crate::util::table::{Table, left, right};
use camino::{Utf8Path, Utf8PathBuf};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Write;

/// Every run a name means, with all its records (every submission and chain link): a run
/// (`preset`, `preset/job-name`, `grid/cell`), a preset or grid (all its runs), a job name or
/// cell written bare, or a job id (that exact submission).
///
/// The ledger is read a line at a time, and only the lines that mention the name are parsed and
/// kept: a run's records all carry its group and member (and the name is one of them, both
/// joined, or a job id), so those lines hold every record of every run the name means.
pub fn select_runs(ledger: &Ledger, name: Option<&str>) -> Result<Vec<Run>> {
    let Some(name) = name else {
        return ledger.runs();
    };
    let runs = ledger.runs_where(|line| mentions(line, name))?;
    if let Some(record) = (runs.iter().flat_map(|r| &r.records))
        .rev()
        .find(|r| r.job_id == name)
    {
        return Ok(vec![Run {
            name: record.run(),
            records: vec![record.clone()],
        }]);
    }
    let chosen: Vec<Run> = (runs.into_iter())
        .filter(|run| {
            let r = run.latest();
            run.name == name || r.group == name || r.member == name
        })
        .collect();
    if chosen.is_empty() {
        let names = ledger.names()?;
        let mut known: Vec<&str> = (names.iter())
            .flat_map(|(run, group)| [run.as_str(), group.as_str()])
            .collect();
        known.sort_unstable();
        known.dedup();
        return Err(Error::UnknownName {
            kind: "recorded run",
            name: name.to_owned(),
            suggestion: closest(name, known.iter().copied()),
            known: Vec::new(),
        });
    }
    Ok(chosen)
}

/// Whether a ledger line may be a record of a run `name` means: it holds the name as JSON writes
/// it, or, for `group/member`, both sides of one of its slashes. A name JSON would escape is
/// looked for in every line.
pub(crate) fn mentions(line: &[u8], name: &str) -> bool {
    use memchr::memmem::find;
    if name
        .chars()
        .any(|c| c == '"' || c == '\\' || c.is_control())
    {
        return true;
    }
    let name = name.as_bytes();
    find(line, name).is_some()
        || (memchr::memchr_iter(b'/', name))
            .any(|i| find(line, &name[..i]).is_some() && find(line, &name[i + 1..]).is_some())
}

/// The newest record of every run a name means (see [`select_runs`]).
pub fn select(ledger: &Ledger, name: Option<&str>) -> Result<Vec<Record>> {
    Ok(select_runs(ledger, name)?
        .iter()
        .map(|r| r.latest().clone())
        .collect())
}

/// The user's pending and running jobs, id -> state, from one `squeue --me`.
pub fn queue(slurm: &Slurm) -> Result<BTreeMap<String, String>> {
    Ok(slurm
        .queued()?
        .into_iter()
        .map(|j| (j.id, j.state))
        .collect())
}

/// The job a run is at: the link that is running, else the next pending one, else its newest
/// submission; with its place `(k, K)` in its chain when it is one of several links.
pub fn current<'a>(
    run: &'a Run,
    queue: &BTreeMap<String, String>,
) -> (&'a Record, Option<(usize, usize)>) {
    let live = |r: &&Record| queue.contains_key(&r.job_id);
    let running = |r: &&Record| queue.get(&r.job_id).is_some_and(|s| s != "PENDING");
    let record = (run.records.iter().find(running))
        .or_else(|| run.records.iter().find(live))
        .unwrap_or_else(|| run.latest());
    // Links point back at the job before them with `afterany:<id>`.
    let before = |r: &Record| {
        let id = r.dependency.as_deref()?.strip_prefix("afterany:")?;
        run.records.iter().find(|p| p.job_id == id)
    };
    let after = |r: &Record| {
        let want = format!("afterany:{}", r.job_id);
        (run.records.iter()).find(|n| n.dependency.as_deref() == Some(want.as_str()))
    };
    let (mut k, mut total) = (1, 1);
    let mut at = record;
    while let Some(prev) = before(at) {
        (k, total, at) = (k + 1, total + 1, prev);
    }
    let mut at = record;
    while let Some(next) = after(at) {
        (total, at) = (total + 1, next);
    }
    (record, (total > 1).then_some((k, total)))
}

/// One record's state: squeue's while SLURM holds the job, then sacct's, then the log's.
#[derive(Debug, Clone, Serialize)]
pub struct RunState {
    pub target: String,
    pub job_id: String,
    pub state: String,
    /// `squeue`, `sacct`, `log` or `none`.
    pub source: &'static str,
    pub step: u64,
    pub total: Option<u64>,
    pub secs_per_step: Option<f64>,
    pub reward: Option<f64>,
    pub entropy: Option<f64>,
    /// Whether the entropy collapsed, by `watch`'s rule with its default thresholds (`None`
    /// without a verdict): for scripts reading `status --json`.
    pub collapse: Option<bool>,
    /// `k/K` when the job is link k of a chain of K (`launch --chain K`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    /// Seconds left at the recent pace, for a job SLURM still holds (none for a stalled one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eta_s: Option<f64>,
    /// How long a running job's log has gained no step, past its limit (see [`stall`]), once
    /// [`RunState::judge_stall`] has looked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stall: Option<Stall>,
    /// Which job of the run since a person launched it: 1 for the launch, one more for each
    /// `tend` resubmission (`tend --max-attempts` counts these).
    pub attempt: u32,
    /// The slots (SLURM allocations: `--until-done` requeues, a node failure's requeue) the job
    /// has had so far, where [`run_states`] asked accounting and it knows them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slot: Option<u32>,
    /// The most slots the job may take (`--until-done --max-slots`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_slots: Option<u32>,
    /// GPU-hours of all the run's jobs and attempts, where [`run_states`] asked accounting.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_hours: Option<f64>,
    /// The samples a train step generates, from the run's knobs (for effective tokens/s).
    #[serde(skip)]
    pub samples_per_step: Option<f64>,
    #[serde(skip)]
    pub series: Series,
    #[serde(skip)]
    pub pulse: Pulse,
}

impl RunState {
    /// Marks a job SLURM runs whose log went quiet past its limit as stalled (`floor_s` is the
    /// profile's `[watch] stall_floor_s`): it reaches no end, so it has no ETA.
    pub fn judge_stall(&mut self, floor_s: u64) {
        let running = if self.source == "squeue" {
            self.state.as_str()
        } else {
            ""
        };
        self.stall = stall::of_job(running, &self.series, &self.pulse, floor_s);
        if self.stall.is_some() {
            self.eta_s = None;
        }
    }
}

/// States of many records with one squeue call and at most one sacct call.
pub fn states(slurm: &Slurm, records: &[Record]) -> Result<Vec<RunState>> {
    states_in(&queue(slurm)?, slurm, records)
}

/// [`states`] with the queue already read.
pub fn states_in(
    queue: &BTreeMap<String, String>,
    slurm: &Slurm,
    records: &[Record],
) -> Result<Vec<RunState>> {
    // SLURM is asked before the logs are read: a job seen ended has written all its lines.
    let (jobs, _) = job_states_in(queue, slurm, records, &[]);
    states_of(records, jobs)
}

/// The state of each run's newest record, and the GPU-hours and attempts of all its records
/// (every submission, chain link and requeued attempt), from one squeue call and one sacct call,
/// which asks for every job of the runs. An attempt's GPUs are accounting's `gres/gpu`, else its
/// nodes x `gpus_per_node`; a run accounting knows none of is `None`.
pub fn run_states(slurm: &Slurm, runs: &[Run], gpus_per_node: u32) -> Result<Vec<RunState>> {
    let queue = queue(slurm)?;
    let latest: Vec<&Record> = runs.iter().map(|r| r.latest()).collect();
    run_states_in(&queue, slurm, runs, &latest, gpus_per_node)
}

/// [`run_states`] with the queue already read, of the record `shown[i]` of each run `runs[i]`.
pub fn run_states_in(
    queue: &BTreeMap<String, String>,
    slurm: &Slurm,
    runs: &[Run],
    shown: &[&Record],
    gpus_per_node: u32,
) -> Result<Vec<RunState>> {
    let records: Vec<Record> = shown.iter().map(|r| (*r).clone()).collect();
    let every: Vec<&str> = (runs.iter().flat_map(|r| &r.records))
        .map(|r| r.job_id.as_str())
        .collect();
    let (jobs, accounted) = job_states_in(queue, slurm, &records, &every);
    let mut states = states_of(&records, jobs)?;
    for (state, run) in states.iter_mut().zip(runs) {
        state.gpu_hours = gpu_hours(&run.records, &accounted, gpus_per_node);
        let slots = (accounted.get(&state.job_id)).map_or(0, |a| a.attempts.len());
        state.slot = (slots > 0).then_some(slots as u32);
    }
    Ok(states)
}

/// GPU-seconds of every attempt of the records' jobs, in hours; `None` when accounting has none.
fn gpu_hours(
    records: &[Record],
    accounted: &BTreeMap<String, Accounted>,
    gpus_per_node: u32,
) -> Option<f64> {
    let attempts: Vec<_> = (records.iter())
        .filter_map(|r| accounted.get(&r.job_id))
        .flat_map(|a| &a.attempts)
        .collect();
    let gpus = |a: &crate::submit::slurm::Attempt| {
        a.gpus.or_else(|| Some(a.nodes? * u64::from(gpus_per_node)))
    };
    let seconds: Option<f64> = (attempts.iter())
        .map(|a| Some(a.elapsed_s as f64 * gpus(a)? as f64))
        .sum();
    seconds.filter(|_| !attempts.is_empty()).map(|s| s / 3600.0)
}

fn states_of(records: &[Record], jobs: Vec<JobState>) -> Result<Vec<RunState>> {
    let mut out = Vec::new();
    for (record, JobState { state, source, .. }) in records.iter().zip(jobs) {
        let (series, pulse) = read_log(&record.log)?;
        let progress = alerts::progress(&series, record.max_steps);
        // An ended job has no time left to estimate.
        let eta_s = progress.eta_secs.filter(|_| source == "squeue");
        let last = |key: &str| {
            series
                .values(metrics::Kind::Train, key)
                .next_back()
                .map(|v| v.1)
        };
        out.push(RunState {
            target: record.target.clone(),
            job_id: record.job_id.clone(),
            state,
            source,
            step: progress.step,
            total: progress.total,
            secs_per_step: progress.secs_per_step,
            reward: last(REWARD),
            entropy: last(ENTROPY),
            collapse: alerts::collapsed(&series, &Thresholds::default()),
            link: None,
            eta_s,
            stall: None,
            attempt: record.attempt,
            slot: None,
            max_slots: record.max_slots,
            gpu_hours: None,
            samples_per_step: report::samples_per_step(|k| record.knobs.get(k).cloned()),
            series,
            pulse,
        });
    }
    Ok(out)
}

/// Each record's job state and where it came from (see [`RunState::source`]): squeue's while
/// SLURM holds the job, then sacct's, then the log's; one squeue and at most one sacct call.
pub fn job_states(slurm: &Slurm, records: &[Record]) -> Result<Vec<(String, &'static str)>> {
    Ok(job_states_in(&queue(slurm)?, slurm, records, &[])
        .0
        .into_iter()
        .map(|j| (j.state, j.source))
        .collect())
}

/// [`job_states_with_exit`] with the queue already read.
pub fn job_states_given(
    queue: &BTreeMap<String, String>,
    slurm: &Slurm,
    records: &[Record],
) -> Vec<JobState> {
    job_states_in(queue, slurm, records, &[]).0
}

/// A job's state, where it came from, and sacct's exit code when sacct answered.
#[derive(Debug, Clone)]
pub struct JobState {
    pub state: String,
    pub source: &'static str,
    pub exit_code: Option<String>,
}

/// [`job_states`] with sacct's exit codes. Accounting that does not answer is said once on
/// stderr, and its jobs' states come from their logs, never guessed.
pub fn job_states_with_exit(slurm: &Slurm, records: &[Record]) -> Result<Vec<JobState>> {
    Ok(job_states_in(&queue(slurm)?, slurm, records, &[]).0)
}

/// The records' job states, and accounting's answer for the ended ones and for `also`, in one
/// sacct call.
fn job_states_in(
    queued: &BTreeMap<String, String>,
    slurm: &Slurm,
    records: &[Record],
    also: &[&str],
) -> (Vec<JobState>, BTreeMap<String, Accounted>) {
    let mut ask: Vec<&str> = records
        .iter()
        .filter(|r| !queued.contains_key(&r.job_id))
        .map(|r| r.job_id.as_str())
        .chain(also.iter().copied())
        .collect();
    ask.sort_unstable();
    ask.dedup();
    let accounted = slurm.accounted(&ask).unwrap_or_else(|reason| {
        static SAID: std::sync::Once = std::sync::Once::new();
        SAID.call_once(|| {
            crate::say!(
                "rlctl: warning: SLURM accounting is unreachable ({reason}); ended jobs' states come \
                 from their logs, `unknown` where the log does not say: check slurmdbd (`sacctmgr ping`), \
                 or pass --sacct PATH"
            );
        });
        BTreeMap::new()
    });
    let mut out = Vec::new();
    for record in records {
        out.push(if let Some(state) = queued.get(&record.job_id) {
            JobState {
                state: state.clone(),
                source: "squeue",
                exit_code: None,
            }
        } else if let Some(acct) = accounted.get(&record.job_id) {
            JobState {
                state: acct.state.clone(),
                source: "sacct",
                exit_code: acct.exit_code.clone(),
            }
        } else {
            let (state, source) = log_state(&record.log, &record.job_id);
            JobState {
                state,
                source,
                exit_code: None,
            }
        });
    }
    (out, accounted)
}

/// What the job's own log says about how it ended: the wrapper's last line, or SLURM's own
/// `*** JOB N ON node CANCELLED AT time ***`, which for a job out of time ends `DUE TO TIME
/// LIMIT` (TIMEOUT), for a failed node `DUE TO NODE FAILURE` (NODE_FAIL) and for a preempted
/// job `DUE TO PREEMPTION` (PREEMPTED), all three of which `tend` resumes. Only the job's last slot counts: an earlier slot that requeued the job (or that a
/// node failure ended) did not end the run. Anything else is `unknown`: a log cut short, or a
/// slot that requeued the job and was not started again, says nothing of how the job ended.
fn log_state(log: &Utf8Path, job_id: &str) -> (String, &'static str) {
    let Ok(text) = log_end(log) else {
        return ("unknown".into(), "none");
    };
    if let Some(rc) = finished_status(&text, job_id) {
        let state = if rc == "0" { "COMPLETED" } else { "FAILED" };
        return (state.into(), "log");
    }
    let last = last_slot(&text, job_id);
    if let Some(line) = last.lines().rev().find(|l| l.contains("CANCELLED AT")) {
        // slurmstepd's own words: `… DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***`.
        let state = if line.contains("DUE TO TIME LIMIT") {
            "TIMEOUT"
        } else if line.contains("DUE TO NODE FAILURE") {
            "NODE_FAIL"
        } else if line.contains("DUE TO PREEMPTION") {
            "PREEMPTED"
        } else {
            "CANCELLED"
        };
        return (state.into(), "log");
    }
    ("unknown".into(), "log")
}

/// How much of a log's end [`log_state`] reads: the wrapper's last line and SLURM's are near the
/// end, and a log of gigabytes is not read for them.
const LOG_END: u64 = 1024 * 1024;

/// The whole lines of the last [`LOG_END`] bytes of `log`.
pub(crate) fn log_end(log: &Utf8Path) -> std::io::Result<String> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(log)?;
    let start = file.metadata()?.len().saturating_sub(LOG_END);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    // A line cut by the start is not a line.
    let from = match start {
        0 => 0,
        _ => memchr::memchr(b'\n', &bytes).map_or(bytes.len(), |i| i + 1),
    };
    Ok(String::from_utf8_lossy(&bytes[from..]).into_owned())
}

/// The run's metric lines; a log not written yet is an empty series.
pub fn read_series(log: &Utf8Path) -> Result<Series> {
    read_log(log).map(|(series, _)| series)
}

/// [`read_series`], and the log's pulse (for [`stall`]).
pub fn read_log(log: &Utf8Path) -> Result<(Series, Pulse)> {
    match std::fs::File::open(log) {
        // Only what the log gained since the last reader, by the cache next to it.
        Ok(file) => {
            metrics::cache::read_with_pulse(log, file).map_err(|e| Error::io("read", log, e))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Ok((Series::default(), Pulse::default()))
        }
        Err(e) => Err(Error::io("read", log, e)),
    }
}

/// The `status` table: a row per run.
pub fn status_table(states: &[RunState]) -> String {
    let num = |v: Option<f64>| cell(v, Digits::Sig(3));
    // Wide enough for the usual values, so that the layout holds from PENDING to COMPLETED.
    let mut table = Table::new([
        left().min(6),
        right().min(8),
        left().min(11),
        right().min(9),
        right().min(7),
        right().min(7),
        right().min(7),
        right().min(7),
        right().min(4),
        right().min(7),
        right().min(6),
    ]);
    table.row([
        "run", "job", "state", "step", "s/step", "reward", "entropy", "attempt", "slot", "ETA",
        "GPU-h",
    ]);
    for s in states {
        let step = match s.total {
            Some(total) => format!("{}/{total}", s.step),
            None => s.step.to_string(),
        };
        let slot = match (s.slot, s.max_slots) {
            (Some(k), Some(n)) => format!("{k}/{n}"),
            (Some(k), None) => k.to_string(),
            (None, _) => MISSING.to_owned(),
        };
        let mut state = match &s.link {
            Some(link) => format!("{} link {link}", s.state),
            None => s.state.clone(),
        };
        if let Some(stall) = &s.stall {
            state.push_str(&format!(", stalled: {stall}"));
        }
        table.row([
            s.target.clone(),
            s.job_id.clone(),
            state,
            step,
            num(s.secs_per_step),
            num(s.reward),
            num(s.entropy),
            s.attempt.to_string(),
            slot,
            s.eta_s.map_or_else(|| MISSING.to_owned(), duration),
            num(s.gpu_hours),
        ]);
    }
    table.render()
}

/// Every pending or running job of the selected runs (all links of a chain, every submission),
/// cancelled in one scancel call: a run stopped halfway would start its next link. Several
/// runs are confirmed first.
pub fn cancel(slurm: &Slurm, runs: &[Run], yes: bool, out: &mut dyn Write) -> Result<()> {
    let queued = queue(slurm)?;
    let live: Vec<&Record> = (runs.iter().flat_map(|r| &r.records))
        .filter(|r| queued.contains_key(&r.job_id))
        .collect();
    if live.is_empty() {
        return write(
            out,
            "nothing to cancel: no job of these runs is pending or running\n",
        );
    }
    let mut listing = Table::new([left(), left(), left()]).indent(2).gap(1);
    for r in &live {
        let state = &queued[&r.job_id];
        listing.row([r.run(), format!("job {}", r.job_id), format!("({state})")]);
    }
    let listing = listing.render();
    let mut names: Vec<String> = live.iter().map(|r| r.run()).collect();
    names.dedup();
    if names.len() > 1
        && !confirm(
            &format!(
                "cancel these {} jobs of {} runs?\n{listing}",
                live.len(),
                names.len()
            ),
            yes,
        )?
    {
        return write(out, "cancelled nothing\n");
    }
    let ids: Vec<&str> = live.iter().map(|r| r.job_id.as_str()).collect();
    slurm.cancel(&ids)?;
    write(out, &format!("cancelled:\n{listing}"))
}

/// `rlctl report GRID`: the grid's table on stdout, and the table and plots in `dir`; `base` is
/// the target of the run with the grid's base configuration, if one is recorded.
pub fn report(
    grid: &str,
    states: &[RunState],
    base: Option<&str>,
    dir: &Utf8Path,
    out: &mut dyn Write,
) -> Result<Vec<Utf8PathBuf>> {
    let cells: Vec<CellReport> = states
        .iter()
        .map(|s| CellReport {
            name: s.target.rsplit('/').next().unwrap_or(&s.target),
            state: &s.state,
            series: &s.series,
            gpu_hours: s.gpu_hours,
            samples_per_step: s.samples_per_step,
            base: base == Some(s.target.as_str()),
        })
        .collect();
    let text = report::markdown(grid, &cells);
    write(out, &text)?;
    let mut written =
        report::plots(grid, &cells, dir).map_err(|e| Error::io("write plots into", dir, e))?;
    let md = dir.join(format!("{grid}.md"));
    crate::util::fs::write_atomic(&md, &text, 0o644)?;
    written.insert(0, md);
    Ok(written)
}
