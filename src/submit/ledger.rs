//! The run ledger: one record per submitted job, in its run folder (`submission.toml`) and as
//! one JSON line in `<run_root>/ledger.jsonl`, the index every follow-up command reads.

use crate::error::{Error, Result};
use crate::plan::Plan;
use crate::schema::knob::Origin;
use camino::{Utf8Path, Utf8PathBuf};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub job_id: String,
    /// `preset` or `grid/cell`.
    pub target: String,
    /// The preset or grid name, and the job name or cell within it.
    pub group: String,
    pub member: String,
    pub grid: Option<String>,
    pub job_name: String,
    pub run_dir: Utf8PathBuf,
    pub checkpoint_dir: Utf8PathBuf,
    /// The job's SLURM log, `%x_%j.out` filled in.
    pub log: Utf8PathBuf,
    pub dependency: Option<String>,
    /// `trainer.max_steps`, else the estimated steps of its epochs: the denominator of progress.
    pub max_steps: Option<u64>,
    /// `--until-done --max-slots N`: the most slots the job requeues itself for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_slots: Option<u32>,
    /// The hydra knobs the trainer got, but for the ones rlctl sets per submission.
    pub knobs: BTreeMap<String, String>,
    pub sbatch: Vec<String>,
    pub submitted_unix: i64,
    pub rlctl_version: String,
    /// `git rev-parse HEAD` of the SkyRL checkout, when it is a git repository.
    pub skyrl_commit: Option<String>,
}

/// What identifies a run's hyperparameters: every knob but the resume mode and paths.
pub fn knob_fingerprint(plan: &Plan) -> BTreeMap<String, String> {
    plan.knobs
        .iter()
        .filter(|k| k.origin != Origin::Rlctl)
        .map(|k| (k.key.clone(), k.value.hydra_text()))
        .collect()
}

impl Record {
    pub fn new(
        plan: &Plan,
        job_id: &str,
        sbatch: &[String],
        dependency: Option<String>,
        skyrl_commit: Option<String>,
    ) -> Record {
        // The first folder level, and the second: the cell of a grid, else the job name.
        let (group, member) = match (&plan.grid, plan.target.split_once('/')) {
            (Some(_), Some((grid, cell))) => (grid.to_owned(), cell.to_owned()),
            (_, split) => (
                split
                    .map_or(plan.target.as_str(), |(preset, _)| preset)
                    .to_owned(),
                plan.job.name.clone(),
            ),
        };
        // `trainer.max_steps`, else the epochs' steps over the staged data: progress's denominator.
        let max_steps = crate::plan::estimate::steps(plan).0;
        Record {
            job_id: job_id.to_owned(),
            target: plan.target.clone(),
            grid: plan.grid.clone(),
            group,
            member,
            job_name: plan.job.name.clone(),
            run_dir: plan.paths.run_dir.clone(),
            checkpoint_dir: plan.paths.checkpoint_dir.clone(),
            log: plan.log_file(job_id),
            dependency,
            max_steps,
            max_slots: plan.until_done.map(|u| u.max_slots),
            knobs: knob_fingerprint(plan),
            sbatch: sbatch.to_vec(),
            submitted_unix: unix_now(),
            rlctl_version: env!("CARGO_PKG_VERSION").to_owned(),
            skyrl_commit,
        }
    }

    /// The run this job is a submission of: its target; for a preset run under another job
    /// name, `preset/job-name`, also where an older rlctl recorded the target as `preset`.
    pub fn run(&self) -> String {
        if self.grid.is_none() && self.member != self.group {
            format!("{}/{}", self.group, self.member)
        } else {
            self.target.clone()
        }
    }
}

/// Every record of one run (all its submissions and chain links), oldest first.
#[derive(Debug, Clone)]
pub struct Run {
    pub name: String,
    pub records: Vec<Record>,
}

impl Run {
    pub fn latest(&self) -> &Record {
        self.records.last().expect("a run has a record")
    }
}

#[derive(Debug, Clone)]
pub struct Ledger {
    path: Utf8PathBuf,
}

impl Ledger {
    pub fn at(run_root: &Utf8Path) -> Ledger {
        Ledger {
            path: run_root.join("ledger.jsonl"),
        }
    }

    /// Appends one record as one line, in one write under an exclusive lock, so concurrent
    /// launches never interleave their lines. A torn last line (a disk that filled mid-write)
    /// is ended first, so the new record starts on a line of its own.
    pub fn append(&self, record: &Record) -> Result<()> {
        let dir = self.path.parent().expect("absolute");
        std::fs::create_dir_all(dir).map_err(|e| Error::io("create", dir, e))?;
        let mut line = serde_json::to_string(record).expect("records serialize");
        line.push('\n');
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(&self.path)
            .map_err(|e| Error::io("open", &self.path, e))?;
        file.lock().map_err(|e| Error::io("lock", &self.path, e))?;
        if ends_torn(&mut file).map_err(|e| Error::io("read", &self.path, e))? {
            line.insert(0, '\n');
        }
        file.write_all(line.as_bytes())
            .map_err(|e| Error::io("append to", &self.path, e))
    }

    /// The ledger file.
    pub fn path(&self) -> &Utf8Path {
        &self.path
    }

    /// Calls `each` with the offset and bytes of every complete line of `file` (the ledger,
    /// opened) from byte `offset` (a line's start) on, and returns the offset after the last
    /// complete line: a line still without its newline is left for the next reader. A line that
    /// `each` cannot read as a record is skipped with a warning, as in [`Ledger::records`].
    pub fn lines_from(
        &self,
        file: &mut std::fs::File,
        offset: u64,
        mut each: impl FnMut(u64, &[u8]) -> serde_json::Result<()>,
    ) -> Result<u64> {
        use std::io::{Read, Seek, SeekFrom};
        let mut bytes = Vec::new();
        file.seek(SeekFrom::Start(offset))
            .and_then(|_| file.read_to_end(&mut bytes))
            .map_err(|e| Error::io("read", &self.path, e))?;
        let complete = memchr::memrchr(b'\n', &bytes).map_or(0, |i| i + 1);
        let mut at = 0;
        for line in bytes[..complete].split_inclusive(|&b| b == b'\n') {
            let start = offset + at as u64;
            at += line.len();
            if line.trim_ascii().is_empty() {
                continue;
            }
            if let Err(e) = each(start, line) {
                crate::say!(
                    "rlctl: warning: {} at byte {start}: not a ledger record ({e}); skipped",
                    self.path
                );
            }
        }
        Ok(offset + complete as u64)
    }

    /// The record whose line starts at byte `offset`, if there is one there.
    pub fn record_at(&self, offset: u64) -> Option<Record> {
        use std::io::{BufRead, BufReader, Seek, SeekFrom};
        let mut file = std::fs::File::open(&self.path).ok()?;
        file.seek(SeekFrom::Start(offset)).ok()?;
        let mut line = Vec::new();
        BufReader::new(file).read_until(b'\n', &mut line).ok()?;
        serde_json::from_slice(&line).ok()
    }

    /// Every record, oldest first; a missing ledger is an empty one. A line that is not a
    /// record (torn by a full disk, edited by hand) is skipped with a warning naming it: one bad
    /// line never hides the others.
    pub fn records(&self) -> Result<Vec<Record>> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
            Err(e) => return Err(Error::io("read", &self.path, e)),
        };
        let mut records = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str(line) {
                Ok(record) => records.push(record),
                Err(e) => crate::say!(
                    "rlctl: warning: {}:{}: not a ledger record ({e}); skipped",
                    self.path,
                    i + 1
                ),
            }
        }
        Ok(records)
    }

    /// Every run with all its records, in first-submission order.
    pub fn runs(&self) -> Result<Vec<Run>> {
        let mut runs: Vec<Run> = Vec::new();
        let mut at: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
        for record in self.records()? {
            let name = record.run();
            match at.get(&name) {
                Some(&i) => runs[i].records.push(record),
                None => {
                    at.insert(name.clone(), runs.len());
                    runs.push(Run {
                        name,
                        records: vec![record],
                    });
                }
            }
        }
        Ok(runs)
    }

    /// The newest record of each run, in first-submission order.
    pub fn latest(&self) -> Result<Vec<Record>> {
        Ok(self.runs()?.iter().map(|r| r.latest().clone()).collect())
    }
}

/// Whether the file's last byte is not a newline (an append that stopped mid-line).
fn ends_torn(file: &mut std::fs::File) -> std::io::Result<bool> {
    use std::io::{Read, Seek, SeekFrom};
    if file.metadata()?.len() == 0 {
        return Ok(false);
    }
    file.seek(SeekFrom::End(-1))?;
    let mut last = [0u8];
    file.read_exact(&mut last)?;
    Ok(last[0] != b'\n')
}

/// `git rev-parse HEAD` of a checkout, if it is one.
pub fn git_commit(dir: &Utf8Path) -> Option<String> {
    if !dir.join(".git").exists() {
        return None;
    }
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}
