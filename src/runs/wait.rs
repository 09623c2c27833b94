//! `rlctl wait`: blocks until recorded runs reach a condition (their end, their start, a step),
//! saying each change. Each round asks SLURM as `status` does, within its budget: one `squeue`
//! for all the runs, then `sacct` only for the jobs that left the queue (see [`Probe`]), then the
//! logs of the runs' histories through their caches. What a round saw is judged by the pure
//! [`decide`]; [`wait`] carries it out, and its [`Outcome`] prints as text or JSON.

use crate::error::{Error, Result};
use crate::runs::alerts::AlertKind;
use crate::runs::probe::{Probe, Queue, Warning};
use crate::runs::state;
use crate::slurm::{QueuedJob, Slurm};
use crate::store::ledger::Run;
use crate::util::fmt::duration;
use crate::util::out::emit;
use crate::util::quote::sh_join;
use crate::util::versioned::line;
use schemars::JsonSchema;
use serde::Serialize;
use std::io::Write;
use std::time::{Duration, Instant};

/// Rounds in a row whose `squeue` may fail before the wait gives up (a slurmctld restarting
/// does not end an hours-long wait); the first round's failure ends it at once.
const SQUEUE_TRIES: u32 = 3;

/// The alerts that end a wait (exit 1): a run that diverged or whose entropy collapsed trains
/// on to no use. The others (a reward stall, a grad spike) are shown and waited through.
const FATAL: [AlertKind; 2] = [AlertKind::Diverged, AlertKind::EntropyCollapse];

/// What the runs are waited for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Until {
    /// The run's end, COMPLETED.
    Completed,
    /// The run's job started (or already ran to COMPLETED).
    Running,
    /// The run's logged train step (its whole history's) reaches N.
    Step(u64),
}

impl std::fmt::Display for Until {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Until::Completed => f.write_str("COMPLETED"),
            Until::Running => f.write_str("RUNNING"),
            Until::Step(n) => write!(f, "step {n}"),
        }
    }
}

/// One run as a round saw it: the job it is at (see [`Queue::current`]) and its history's step.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Seen {
    pub run: String,
    pub job_id: String,
    pub state: String,
    /// `squeue` while SLURM holds the job, else `sacct`, `log` or `none`.
    pub source: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    pub step: u64,
    pub total: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<String>,
    /// A running job whose log went quiet past its limit: a hang.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stall: Option<String>,
    pub alerts: Vec<AlertKind>,
}

/// Where one run stands against the condition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    Waiting,
    Reached,
    /// Ended, hung or broke without reaching it: why.
    Missed(String),
    /// SLURM cannot say where it is: why.
    Unknown(String),
}

impl Standing {
    fn word(&self) -> &'static str {
        match self {
            Standing::Waiting => "waiting",
            Standing::Reached => "reached",
            Standing::Missed(_) => "missed",
            Standing::Unknown(_) => "unknown",
        }
    }

    fn why(&self) -> Option<&str> {
        match self {
            Standing::Missed(why) | Standing::Unknown(why) => Some(why),
            _ => None,
        }
    }
}

/// States of a job SLURM still works on: one accounting says of a job squeue no longer lists
/// is the two catching up with each other, and the next round tells.
fn active(state: &str) -> bool {
    matches!(
        state,
        "PENDING"
            | "RUNNING"
            | "CONFIGURING"
            | "COMPLETING"
            | "SUSPENDED"
            | "REQUEUED"
            | "REQUEUE_HOLD"
            | "REQUEUE_FED"
            | "RESIZING"
            | "SIGNALING"
            | "STAGE_OUT"
            | "STOPPED"
    )
}

/// Where `seen` stands against `until`.
pub fn standing(until: Until, seen: &Seen) -> Standing {
    let held = seen.source == "squeue";
    let completed = !held && seen.state == "COMPLETED";
    let reached = match until {
        Until::Completed => completed,
        Until::Running => {
            completed || (held && matches!(seen.state.as_str(), "RUNNING" | "COMPLETING"))
        }
        Until::Step(n) => seen.step >= n,
    };
    let name = sh_join(&[seen.run.as_str()]);
    let at = step_of(seen);
    match () {
        () if reached => Standing::Reached,
        () if held => match (&seen.stall, seen.alerts.iter().find(|a| FATAL.contains(a))) {
            (Some(stall), _) => Standing::Missed(format!(
                "{} (job {}) hangs at {at}: {stall}; `rlctl tend` cancels it and resumes the run from its checkpoint",
                seen.run, seen.job_id
            )),
            (None, Some(alert)) => Standing::Missed(format!(
                "{} (job {}) raised {alert} at {at}: `rlctl watch {name} --once` says more, `rlctl cancel {name}` stops it",
                seen.run, seen.job_id
            )),
            (None, None) => Standing::Waiting,
        },
        () if seen.state == "unknown" => Standing::Unknown(format!(
            "SLURM no longer holds {} (job {}), and neither accounting nor its log says how it ended: \
             check slurmdbd (`sacctmgr ping`) and `rlctl logs {name}`",
            seen.run, seen.job_id
        )),
        () if active(&seen.state) => Standing::Waiting,
        () => Standing::Missed(missed(until, seen, &at, &name)),
    }
}

/// Why a run that ended did not reach `until`, and what to look at.
fn missed(until: Until, seen: &Seen, at: &str, name: &str) -> String {
    let exit = (seen.exit_code.as_ref()).map_or_else(String::new, |c| format!(" (exit code {c})"));
    let look = match seen.state != "COMPLETED" {
        true => format!("`rlctl logs {name} --errors` says why"),
        false => format!("`rlctl status {name}` shows it"),
    };
    format!(
        "{} (job {}) ended {}{exit} at {at}, before {until}: {look}",
        seen.run, seen.job_id, seen.state
    )
}

/// `step 3/20`, or `step 3` without a known total.
fn step_of(seen: &Seen) -> String {
    match seen.total {
        Some(total) => format!("step {}/{total}", seen.step),
        None => format!("step {}", seen.step),
    }
}

/// What one round saw: where each run stands (a run reached in an earlier round stays reached,
/// not asked again), and whether the `--timeout` has passed.
pub struct Round<'a> {
    pub standings: &'a [Standing],
    pub timed_out: bool,
}

/// What the wait does after a round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Poll again.
    Waiting,
    /// Every run reached the condition: exit 0.
    Reached,
    /// A run ended (or hung, or broke) without reaching it: exit 1, at once.
    Missed,
    /// SLURM could not say where a run is: exit 2.
    Unknown,
    /// The `--timeout` passed first: exit 2.
    Timeout,
}

/// The round's verdict: a run that missed ends the wait first, then one that cannot be told;
/// all reached is reached; else the timeout, else another round.
pub fn decide(round: &Round) -> Verdict {
    let any = |f: fn(&Standing) -> bool| round.standings.iter().any(f);
    if any(|s| matches!(s, Standing::Missed(_))) {
        Verdict::Missed
    } else if any(|s| matches!(s, Standing::Unknown(_))) {
        Verdict::Unknown
    } else if round.standings.iter().all(|s| *s == Standing::Reached) {
        Verdict::Reached
    } else if round.timed_out {
        Verdict::Timeout
    } else {
        Verdict::Waiting
    }
}

/// How to wait.
pub struct Options {
    pub until: Until,
    pub timeout: Option<Duration>,
    pub interval: Duration,
    /// One JSON event a line in place of the text lines.
    pub json: bool,
    /// The profile's `[watch] stall_floor_s` and `[node] gpus`.
    pub stall_floor_s: u64,
    pub gpus_per_node: u32,
}

/// One run being waited for: what it was last seen as and where it stands.
struct Watched<'r> {
    run: &'r Run,
    seen: Option<Seen>,
    standing: Standing,
}

/// How the wait ended: the verdict, each run as last seen, and what it took.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub verdict: Verdict,
    pub until: Until,
    pub runs: Vec<(Option<Seen>, Standing)>,
    /// Why the wait ended when it was not reached (the first run's why, the timeout's, or why
    /// SLURM could not answer).
    pub why: Option<String>,
    pub rounds: u32,
    pub waited_s: f64,
}

/// Waits for `runs` as `options` say, printing each change to `out`; `first` is a queue the
/// caller already read this moment (round one's), and `warn` says what SLURM could not tell.
pub fn wait(
    slurm: &Slurm,
    runs: &[Run],
    first: Option<Vec<QueuedJob>>,
    options: &Options,
    warn: &dyn Fn(&[Warning]),
    out: &mut dyn Write,
) -> Result<Outcome> {
    let start = Instant::now();
    let mut watched: Vec<Watched> = (runs.iter())
        .map(|run| Watched {
            run,
            seen: None,
            standing: Standing::Waiting,
        })
        .collect();
    let (mut rounds, mut failures, mut first) = (0, 0, first);
    loop {
        rounds += 1;
        let queue = match first.take() {
            Some(jobs) => Ok(Queue::of(&jobs)),
            None => Queue::read(slurm),
        };
        let broken = match queue {
            Ok(queue) => {
                failures = 0;
                look(slurm, queue, &mut watched, options, warn, out)?;
                None
            }
            Err(e) => {
                failures += 1;
                let give_up = rounds == 1 || failures >= SQUEUE_TRIES;
                // The error ends the wait with its words; a hiccup is said and waited through.
                if !give_up {
                    crate::util::out::warn(&format!("{e}; asking again in the next round"));
                }
                give_up.then(|| e.to_string())
            }
        };
        let timed_out = options.timeout.is_some_and(|t| start.elapsed() >= t);
        let standings: Vec<Standing> = watched.iter().map(|w| w.standing.clone()).collect();
        let verdict = match broken {
            Some(_) => Verdict::Unknown,
            None => decide(&Round {
                standings: &standings,
                timed_out,
            }),
        };
        if verdict != Verdict::Waiting {
            let outcome = Outcome::of(verdict, options, watched, broken, rounds, start);
            emit(out, &outcome.render(options.json))?;
            return Ok(outcome);
        }
        let left =
            (options.timeout).map_or(options.interval, |t| t.saturating_sub(start.elapsed()));
        std::thread::sleep(options.interval.min(left));
    }
}

/// One round's look at the runs not yet reached, from the queue read for it: accounting asked
/// only of the jobs that left it; each change printed.
fn look(
    slurm: &Slurm,
    queue: Queue,
    watched: &mut [Watched],
    options: &Options,
    warn: &dyn Fn(&[Warning]),
    out: &mut dyn Write,
) -> Result<()> {
    let open = |w: &&mut Watched| w.standing != Standing::Reached;
    let records: Vec<_> = (watched.iter_mut().filter(open))
        .map(|w| queue.current(w.run).0)
        .collect();
    let probe = Probe::read(slurm, Some(queue), &records, &[])?;
    warn(&probe.warnings);
    for w in watched.iter_mut().filter(open) {
        let seen = see(&probe, w.run, options)?;
        w.standing = standing(options.until, &seen);
        if w.seen.as_ref() != Some(&seen) {
            emit(out, &change(&seen, options.json))?;
            out.flush()
                .map_err(|e| Error::io("write", "standard output", e))?;
        }
        w.seen = Some(seen);
    }
    Ok(())
}

/// The run as the probe and its logs show it: the row `status` shows, its stall judged.
fn see(probe: &Probe, run: &Run, options: &Options) -> Result<Seen> {
    let (record, link) = probe.queue.current(run);
    let mut row = state::row(probe, run, record, options.gpus_per_node, false)?;
    row.judge_stall(record, options.stall_floor_s);
    Ok(Seen {
        run: run.name.clone(),
        job_id: row.job_id,
        state: row.state,
        source: row.source,
        reason: row.reason,
        link: link.map(|(k, total)| format!("{k}/{total}")),
        step: row.step,
        total: row.total,
        exit_code: probe.known(record).and_then(|j| j.exit_code),
        stall: row.stall.map(|s| s.to_string()),
        alerts: row.alerts,
    })
}

/// A change's line: `12:00:30 UTC gsm8k-canary: job 1001 RUNNING, step 3/20`, or its JSON event.
fn change(seen: &Seen, json: bool) -> String {
    if json {
        return line(&ChangeEvent {
            event: "change",
            unix: unix(),
            seen,
        });
    }
    format!("{} {}\n", crate::runs::board::clock(), described(seen))
}

/// `gsm8k-canary: job 1001 PENDING (Priority) link 1/2, step 0/20`, and a stall or alerts.
fn described(seen: &Seen) -> String {
    let mut text = format!("{}: job {} {}", seen.run, seen.job_id, seen.state);
    if let Some(reason) = &seen.reason {
        text.push_str(&format!(" ({reason})"));
    }
    if let Some(link) = &seen.link {
        text.push_str(&format!(" link {link}"));
    }
    text.push_str(&format!(", {}", step_of(seen)));
    if let Some(stall) = &seen.stall {
        text.push_str(&format!(", stalled: {stall}"));
    }
    if !seen.alerts.is_empty() {
        let kinds: Vec<&str> = seen.alerts.iter().map(|a| a.as_str()).collect();
        text.push_str(&format!(", alerts: {}", kinds.join(",")));
    }
    text
}

fn unix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Outcome {
    fn of(
        verdict: Verdict,
        options: &Options,
        watched: Vec<Watched>,
        broken: Option<String>,
        rounds: u32,
        start: Instant,
    ) -> Outcome {
        let runs: Vec<(Option<Seen>, Standing)> =
            watched.into_iter().map(|w| (w.seen, w.standing)).collect();
        let first_why = |word: &str| {
            (runs.iter().map(|(_, s)| s))
                .find(|s| s.word() == word)
                .and_then(|s| s.why().map(str::to_owned))
        };
        let waited_s = start.elapsed().as_secs_f64();
        let why = match verdict {
            Verdict::Missed => first_why("missed"),
            Verdict::Unknown => broken.or_else(|| first_why("unknown")),
            Verdict::Timeout => Some(timed_out(options, &runs)),
            Verdict::Reached | Verdict::Waiting => None,
        };
        Outcome {
            verdict,
            until: options.until,
            runs,
            why,
            rounds,
            waited_s,
        }
    }

    /// The exit the outcome asks for: reached is success, a missed run a problem (1), anything
    /// that could not be told a failure (2).
    pub fn result(&self) -> Result<()> {
        let why = self.why.clone().unwrap_or_default();
        match self.verdict {
            Verdict::Reached | Verdict::Waiting => Ok(()),
            Verdict::Missed => Err(Error::Problems(why)),
            Verdict::Unknown | Verdict::Timeout => Err(Error::Undecided(why)),
        }
    }

    /// The last line: the text summary, or the `outcome` event.
    fn render(&self, json: bool) -> String {
        if json {
            return self.json();
        }
        let n = self.runs.len();
        let reached = self
            .runs
            .iter()
            .filter(|(_, s)| *s == Standing::Reached)
            .count();
        let word = match self.verdict {
            Verdict::Reached => "reached",
            Verdict::Missed => "missed",
            Verdict::Unknown => "could not tell",
            Verdict::Timeout => "timed out",
            Verdict::Waiting => "waiting",
        };
        format!(
            "{} {word}: {reached} of {n} run{} at {} after {} ({} round{})\n",
            crate::runs::board::clock(),
            if n == 1 { "" } else { "s" },
            self.until,
            duration(self.waited_s),
            self.rounds,
            if self.rounds == 1 { "" } else { "s" },
        )
    }

    /// The `outcome` event: the verdict, its exit status, why, and every run's last look.
    pub fn json(&self) -> String {
        let runs = (self.runs.iter())
            .map(|(seen, standing)| Last {
                seen,
                standing: standing.word(),
                why: standing.why(),
            })
            .collect();
        let exit = match self.verdict {
            Verdict::Reached | Verdict::Waiting => 0,
            Verdict::Missed => 1,
            Verdict::Unknown | Verdict::Timeout => 2,
        };
        let event = OutcomeEvent {
            event: "outcome",
            unix: unix(),
            verdict: self.verdict,
            exit,
            until: self.until.to_string(),
            why: &self.why,
            rounds: self.rounds,
            waited_s: self.waited_s,
            runs,
        };
        line(&event)
    }
}

/// `wait --json`'s event for a run that changed: `"event": "change"`, and the run as seen.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ChangeEvent<'a> {
    pub event: &'static str,
    pub unix: u64,
    #[serde(flatten)]
    pub seen: &'a Seen,
}

/// `wait --json`'s last event: `"event": "outcome"`, the verdict, its exit status, why, and
/// every run's last look.
#[derive(Debug, Serialize, JsonSchema)]
pub struct OutcomeEvent<'a> {
    pub event: &'static str,
    pub unix: u64,
    pub verdict: Verdict,
    pub exit: u8,
    pub until: String,
    pub why: &'a Option<String>,
    pub rounds: u32,
    pub waited_s: f64,
    pub runs: Vec<Last<'a>>,
}

/// A run's last look in the outcome: where it stands, and why when it missed.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Last<'a> {
    #[serde(flatten)]
    pub seen: &'a Option<Seen>,
    pub standing: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<&'a str>,
}

/// Why a wait that timed out ended, with where each run not reached is.
fn timed_out(options: &Options, runs: &[(Option<Seen>, Standing)]) -> String {
    let timeout = options.timeout.map_or(0.0, |t| t.as_secs_f64());
    let open: Vec<String> = (runs.iter())
        .filter(|(_, s)| *s != Standing::Reached)
        .filter_map(|(seen, _)| seen.as_ref().map(described))
        .collect();
    format!(
        "the runs did not reach {} within {}: {}; `rlctl wait` again waits on",
        options.until,
        duration(timeout),
        open.join("; ")
    )
}

/// Refuses a `--step` some run never logs: past its `trainer.max_steps`.
pub fn check_step(runs: &[Run], step: u64) -> Result<()> {
    let short = (runs.iter()).find_map(|r| Some((r, r.latest().max_steps.filter(|&m| m < step)?)));
    match short {
        None => Ok(()),
        Some((run, max)) => Err(Error::BadFlag {
            flag: "--step",
            value: step.to_string(),
            reason: format!(
                "{} trains {max} steps (trainer.max_steps), so it never logs step {step}: give at most {max}",
                run.name
            ),
        }),
    }
}

#[cfg(test)]
mod tests;
