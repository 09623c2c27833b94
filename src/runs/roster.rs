//! The roster of recorded runs (`<run_root>/.roster`): each run's name, its jobs, where their
//! records are in the ledger and its newest job's log, read from the ledger a few fields a line
//! and kept with the ledger's [`Mark`], so that a `tend` pass over every run reads only the
//! ledger lines appended since the last one, and parses in full only the records of the runs it
//! judges: not the thousands that ended long ago, sealed with nothing left to do.
//!
//! A cache: only a faster read, never another answer. A run is what [`Ledger::runs`] makes of
//! the ledger (a retirement empties a run, a later record starts it anew); a roster that cannot
//! be read, cut short, corrupted or of another layout is built again from the ledger, and a
//! ledger rewritten or cut is read again from its start. A record the roster names that does not
//! read back as one, or a ledger whose last line is not whole, is answered by the whole ledger.

use crate::error::{Error, Result};
use crate::runs::probe::Queue;
use crate::runs::sealed::Sealed;
use crate::store::ledger::{Ledger, Record, Run, is_retirement, run_name};
use crate::util::mark::{Mark, Since, load_kept, store_kept};
use camino::Utf8PathBuf;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};

/// The roster's layout; a roster of another is read as none.
const FORMAT: u32 = 1;

/// The roster's file name in the run root.
pub const FILE: &str = ".roster";

/// One run as the roster keeps it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Entry {
    pub name: String,
    /// Each record's job id and the offset of its line in the ledger, oldest first; none once
    /// the run was retired (a later record starts a new entry).
    pub jobs: Vec<(String, u64)>,
    /// The newest record's log.
    pub log: Utf8PathBuf,
}

impl Entry {
    /// The newest job's id.
    pub fn latest(&self) -> Option<&str> {
        self.jobs.last().map(|(id, _)| id.as_str())
    }

    /// The run with its records, each read back from its line; `None` when one does not read
    /// back as the record the roster took it for.
    pub fn run(&self, ledger: &mut File) -> Option<Run> {
        let mut records = Vec::with_capacity(self.jobs.len());
        for (job_id, offset) in &self.jobs {
            ledger.seek(SeekFrom::Start(*offset)).ok()?;
            let mut line = Vec::new();
            BufReader::new(&mut *ledger)
                .read_until(b'\n', &mut line)
                .ok()?;
            let record: Record = serde_json::from_slice(line.trim_ascii()).ok()?;
            if record.job_id != *job_id || record.run() != self.name {
                return None;
            }
            records.push(record);
        }
        (!records.is_empty()).then(|| Run {
            name: self.name.clone(),
            records,
        })
    }
}

/// The fields of a record line the roster reads.
#[derive(Deserialize)]
struct Light<'a> {
    #[serde(borrow)]
    job_id: Cow<'a, str>,
    #[serde(borrow)]
    target: Cow<'a, str>,
    #[serde(borrow)]
    group: Cow<'a, str>,
    #[serde(borrow)]
    member: Cow<'a, str>,
    #[serde(borrow)]
    grid: Option<Cow<'a, str>>,
    #[serde(borrow)]
    log: Cow<'a, str>,
}

/// The run a retirement line retires.
#[derive(Deserialize)]
struct Retired<'a> {
    #[serde(borrow)]
    retired: Cow<'a, str>,
}

/// Every run of the ledger, in first-submission order, as [`Ledger::runs`] makes them.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Roster {
    runs: Vec<Entry>,
}

impl Roster {
    /// Adds the ledger lines of `file` from `offset` on; returns the offset after the last one,
    /// or `None` when the last line is not whole (an append under way: the ledger is read whole).
    fn read_from(&mut self, file: &mut File, offset: u64) -> std::io::Result<Option<u64>> {
        let mut at: HashMap<String, usize> = (self.runs.iter().enumerate())
            .filter(|(_, e)| !e.jobs.is_empty())
            .map(|(i, e)| (e.name.clone(), i))
            .collect();
        file.seek(SeekFrom::Start(offset))?;
        let mut reader = BufReader::with_capacity(1 << 16, file);
        let (mut line, mut end) = (Vec::new(), offset);
        loop {
            line.clear();
            let n = reader.read_until(b'\n', &mut line)?;
            if n == 0 {
                return Ok(Some(end));
            }
            if line.last() != Some(&b'\n') {
                return Ok(None);
            }
            let start = end;
            end += n as u64;
            let text = line.trim_ascii();
            if is_retirement(text) {
                if let Ok(r) = serde_json::from_slice::<Retired>(text)
                    && let Some(i) = at.remove(r.retired.as_ref())
                {
                    self.runs[i].jobs.clear();
                }
                continue;
            }
            // A line that is not a record is skipped, as every ledger reader skips it.
            let Ok(light) = serde_json::from_slice::<Light>(text) else {
                continue;
            };
            let name = run_name(
                &light.target,
                &light.group,
                &light.member,
                light.grid.is_some(),
            );
            let job = (light.job_id.into_owned(), start);
            match at.get(&name) {
                Some(&i) => {
                    self.runs[i].jobs.push(job);
                    self.runs[i].log = Utf8PathBuf::from(light.log.as_ref());
                }
                None => {
                    at.insert(name.clone(), self.runs.len());
                    self.runs.push(Entry {
                        name,
                        jobs: vec![job],
                        log: Utf8PathBuf::from(light.log.as_ref()),
                    });
                }
            }
        }
    }
}

/// Every recorded run of `ledger` (kept at `<ledger's folder>/.roster`), in first-submission
/// order; `None` when the ledger's last line is not whole (the caller reads the whole ledger).
pub fn entries(ledger: &Ledger) -> Result<Option<Vec<Entry>>> {
    let path = ledger.path();
    let io = |e| Error::io("read", path, e);
    let mut file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Some(Vec::new())),
        Err(e) => return Err(io(e)),
    };
    let meta = file.metadata().map_err(io)?;
    let kept_at = path.with_file_name(FILE);
    let kept = load_kept(&kept_at, FORMAT)
        .and_then(|(mark, body)| Some((mark, serde_json::from_slice::<Roster>(&body).ok()?)));
    let (mut roster, from) = match kept {
        Some((mark, roster)) => match mark.since(&mut file, &meta).map_err(io)? {
            Since::Unchanged => return Ok(Some(active(roster))),
            Since::Appended(offset) => (roster, offset),
            Since::Anew => (Roster::default(), 0),
        },
        None => (Roster::default(), 0),
    };
    let Some(end) = roster.read_from(&mut file, from).map_err(io)? else {
        return Ok(None);
    };
    // Marked with the size and times taken before the lines were read: a ledger appended to
    // meanwhile is read on from `end` next time. One that cannot be kept is a slower next pass.
    let mark = Mark::new(&mut file, &meta, end).map_err(io)?;
    if let Ok(body) = serde_json::to_vec(&roster) {
        let _ = store_kept(&kept_at, FORMAT, mark, &body);
    }
    Ok(Some(active(roster)))
}

/// The runs of `roster` that have a record (a retired run not submitted since is no run).
fn active(roster: Roster) -> Vec<Entry> {
    (roster.runs.into_iter())
        .filter(|e| !e.jobs.is_empty())
        .collect()
}

/// The runs of the roster's `entries` a pass judges, read from their records, and how many runs
/// there are: every run but those sealed with an end that leaves a pass nothing to do or say
/// (see [`dormant`]); `resumable` are the ends `tend` resumes. `None` when a record does not read back as the roster took it.
pub fn live(
    ledger: &Ledger,
    entries: Vec<Entry>,
    index: &Sealed,
    queue: &Queue,
    resumable: &[&str],
) -> Option<(Vec<Run>, usize)> {
    let total = entries.len();
    let mut file = None;
    let mut runs = Vec::new();
    for entry in entries
        .iter()
        .filter(|e| !dormant(e, index, queue, resumable))
    {
        if file.is_none() {
            file = Some(std::fs::File::open(ledger.path()).ok()?);
        }
        runs.push(entry.run(file.as_mut()?)?);
    }
    Some((runs, total))
}

/// Whether a pass would judge the run quiet without reading anything of it: sealed on
/// accounting's word for its newest job, SLURM holding none of its jobs, its end neither one
/// that resumes (one of `resumable`) nor a failure (said every pass, for a person to look at).
fn dormant(entry: &Entry, index: &Sealed, queue: &Queue, resumable: &[&str]) -> bool {
    let Some(seal) = index.seal_of(&entry.name) else {
        return false;
    };
    let (job_id, log) = seal.sealed_job();
    let state = seal.job().state;
    !seal.is_settled()
        && entry.latest() == Some(job_id)
        && entry.log.as_path() == log
        && !entry.jobs.iter().any(|(id, _)| queue.holds(id))
        && !resumable.contains(&state.as_str())
        && !matches!(state.as_str(), "FAILED" | "OUT_OF_MEMORY")
}
