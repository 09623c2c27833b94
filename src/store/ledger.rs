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
    /// Where `trainer.ckpt_path` led when the job was submitted, links followed: a later
    /// `--wipe` reached through a link deletes only a folder the run's own jobs wrote (see
    /// `check::borrowed`). Absent in records of an older rlctl.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ckpt_resolved: Option<Utf8PathBuf>,
    /// The job's SLURM log, `%x_%j.out` filled in.
    pub log: Utf8PathBuf,
    pub dependency: Option<String>,
    /// `trainer.max_steps`, else the estimated steps of its epochs: the denominator of progress.
    pub max_steps: Option<u64>,
    /// `--until-done --max-slots N`: the most slots the job requeues itself for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_slots: Option<u32>,
    /// Which job of the run since a person launched it: 1 for a launch (each link of a
    /// chain too), then one more for each `tend` resubmission that followed it.
    #[serde(default = "first_attempt", skip_serializing_if = "is_first_attempt")]
    pub attempt: u32,
    /// The step whose checkpoint a `tend` resubmission resumed from: the next resubmission
    /// needs a later one, or the run makes no progress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resumed_from: Option<u64>,
    /// The hydra knobs the trainer got, but for the ones rlctl sets per submission.
    pub knobs: Knobs,
    /// The layer that set each of `knobs` ([`Origin::layer`]); empty in older records.
    #[serde(default, skip_serializing_if = "no_layers")]
    pub layers: Knobs,
    pub sbatch: Vec<String>,
    pub submitted_unix: i64,
    /// What the hang watchdog expects of the job before its first step (see `runs::stall`):
    /// the plan's estimated seconds per step (the preset's reference, carried over to the
    /// plan's work), the profile's `slurm.startup_s` and the job's nodes. Absent in records of
    /// an older rlctl.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_s_per_step: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup_s: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<u32>,
    /// `startup_s` is a p95 measured on these nodes (`runs::phases`), not the profile's.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub startup_measured: bool,
    /// Whether the job's trainer prints a per-step line rlctl reads from its first step on
    /// (MarinSkyRL's `WANDB_MIRROR`, or rlctl's progress callback on upstream SkyRL): only then
    /// is a job with no step yet judged as starting up rather than "progress unknown".
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub prints_steps: bool,
    /// Whether the run trains the policy with LoRA (`trainer.policy.model.lora.rank > 0`, its
    /// default filled in): a whole step then holds its adapter ([`crate::checkpoint::Expect`]).
    /// Absent in records of an older rlctl, which [`Record::saves`] reads from `knobs`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub lora: bool,
    /// The SkyRL the job ran (`marin`, `upstream`): a checkpoint folder is resumed only by the
    /// flavour that saved it. Absent in records of an older rlctl (unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flavour: Option<crate::schema::flavour::Flavour>,
    pub rlctl_version: String,
    /// `git rev-parse HEAD` of the SkyRL checkout, when it is a git repository.
    pub skyrl_commit: Option<String>,
}

/// A record's knobs (or their layers), shared by the records of a run that have the same (see
/// [`Ledger::runs_where`]): a run of 50,000 resubmissions holds its knobs once, not 50,000
/// times.
pub type Knobs = std::sync::Arc<BTreeMap<String, String>>;

fn no_layers(layers: &Knobs) -> bool {
    layers.is_empty()
}

fn first_attempt() -> u32 {
    1
}

fn is_first_attempt(n: &u32) -> bool {
    *n == 1
}

/// What identifies a run's hyperparameters: every knob but the resume mode and paths.
pub fn knob_fingerprint(plan: &Plan) -> BTreeMap<String, String> {
    fingerprinted(plan)
        .map(|k| (k.key.clone(), k.value.hydra_text()))
        .collect()
}

/// The layer that set each knob of [`knob_fingerprint`].
pub fn knob_layers(plan: &Plan) -> BTreeMap<String, String> {
    fingerprinted(plan)
        .map(|k| (k.key.clone(), k.origin.layer().to_owned()))
        .collect()
}

fn fingerprinted(plan: &Plan) -> impl Iterator<Item = &crate::schema::knob::Knob> {
    plan.knobs.iter().filter(|k| k.origin != Origin::Rlctl)
}

impl Record {
    pub fn new(
        plan: &Plan,
        job_id: &str,
        sbatch: &[String],
        dependency: Option<String>,
        skyrl_commit: Option<String>,
    ) -> Record {
        let (group, member) = group_member(plan);
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
            ckpt_resolved: Some(crate::util::fs::resolve(&plan.paths.ckpt_path)),
            log: plan.log_file(job_id),
            dependency,
            max_steps,
            max_slots: plan.until_done.map(|u| u.max_slots),
            attempt: 1,
            resumed_from: None,
            knobs: knob_fingerprint(plan).into(),
            layers: knob_layers(plan).into(),
            sbatch: sbatch.to_vec(),
            submitted_unix: unix_now(),
            expected_s_per_step: crate::plan::estimate::expected_s_per_step(plan),
            startup_s: Some(plan.startup_s),
            nodes: Some(plan.job.nodes),
            startup_measured: plan.startup_measured,
            // Both flavours' jobs print one: MarinSkyRL itself, upstream through the progress
            // callback every upstream plan's run script registers.
            prints_steps: true,
            lora: plan.saves.lora,
            flavour: Some(plan.flavour),
            rlctl_version: env!("CARGO_PKG_VERSION").to_owned(),
            skyrl_commit,
        }
    }

    /// The run this job is a submission of: its target; for a preset run under another job
    /// name, `preset/job-name`, also where an older rlctl recorded the target as `preset`.
    pub fn run(&self) -> String {
        run_name(&self.target, &self.group, &self.member, self.grid.is_some())
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

/// A retirement line (`rlctl retire`): the run's records before it are history. The run counts
/// as not recorded (a grid plans its cell afresh, `status` shows only later records); its
/// records stay in the ledger, and still count as speed data for estimates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Retirement {
    /// The run retired ([`Record::run`]); first, so that [`is_retirement`] knows the line.
    pub retired: String,
    /// Every job of the run up to the retirement, oldest first.
    pub jobs: Vec<String>,
    pub unix: i64,
    /// Where its resolved checkpoint folder was moved, if it had one.
    pub moved_to: Option<Utf8PathBuf>,
}

impl Retirement {
    pub fn new(run: &Run, moved_to: Option<Utf8PathBuf>) -> Retirement {
        Retirement {
            retired: run.name.clone(),
            jobs: run.records.iter().map(|r| r.job_id.clone()).collect(),
            unix: unix_now(),
            moved_to,
        }
    }
}

/// Whether a ledger line is a [`Retirement`]'s, from its first bytes alone: every other line
/// is a record, or not a ledger line at all.
pub fn is_retirement(line: &[u8]) -> bool {
    line.trim_ascii_start().starts_with(b"{\"retired\":")
}

/// Makes `record` hold the knobs and layers of `earlier` (the record of its run before it) where
/// they are the same: a run's resubmissions repeat them, and each copy would cost kilobytes.
fn share(record: &mut Record, earlier: &Record) {
    if record.knobs == earlier.knobs {
        record.knobs = earlier.knobs.clone();
    }
    if record.layers == earlier.layers {
        record.layers = earlier.layers.clone();
    }
}

/// The run a retirement line retires, if the line is one.
fn retired(line: &[u8]) -> Option<String> {
    if !is_retirement(line) {
        return None;
    }
    #[derive(Deserialize)]
    struct Retired<'a> {
        #[serde(borrow)]
        retired: std::borrow::Cow<'a, str>,
    }
    let r: Retired = serde_json::from_slice(line.trim_ascii()).ok()?;
    Some(r.retired.into_owned())
}

/// A line of the ledger as the readers that follow retirements see it.
// Handed over one at a time, never stored: boxing the record would cost an allocation a line.
#[allow(clippy::large_enum_variant)]
enum Entry {
    Record(Record),
    Retired(String),
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
        self.append_line(serde_json::to_string(record).expect("records serialize"))
    }

    /// Appends a retirement line, as [`Ledger::append`] appends a record.
    pub fn retire(&self, retirement: &Retirement) -> Result<()> {
        self.append_line(serde_json::to_string(retirement).expect("retirements serialize"))
    }

    fn append_line(&self, mut line: String) -> Result<()> {
        let dir = self.path.parent().expect("absolute");
        std::fs::create_dir_all(dir).map_err(|e| Error::io("create", dir, e))?;
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

    /// Refuses, before anything is queued, a ledger this user cannot append to (a read-only
    /// ledger of another user on a shared run root): a job queued then would have no record.
    /// A missing ledger is made by the first append; its folder's writability is proven by the
    /// submission's intent, written beside it before sbatch.
    pub fn appendable(&self) -> Result<()> {
        let opened = std::fs::OpenOptions::new().append(true).open(&self.path);
        match opened {
            Ok(_) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Error::LedgerNotAppendable {
                path: self.path.clone(),
                reason: e.to_string(),
            }),
        }
    }

    /// The ledger file.
    pub fn path(&self) -> &Utf8Path {
        &self.path
    }

    /// Calls `each` with the number (1 the first), offset and bytes of every line of `file` (the
    /// ledger, opened) from byte `offset` (a line's start) on, its newline included; the last
    /// may lack one. One line is held at a time: a ledger of gigabytes costs its longest line.
    fn each_line(
        &self,
        file: &mut std::fs::File,
        offset: u64,
        mut each: impl FnMut(usize, u64, &[u8]),
    ) -> Result<()> {
        use std::io::{BufRead, BufReader, Seek, SeekFrom};
        let read = |e| Error::io("read", &self.path, e);
        file.seek(SeekFrom::Start(offset)).map_err(read)?;
        let mut reader = BufReader::with_capacity(1 << 16, file);
        let mut line = Vec::new();
        let (mut number, mut at) = (0, offset);
        loop {
            line.clear();
            let n = reader.read_until(b'\n', &mut line).map_err(read)?;
            if n == 0 {
                return Ok(());
            }
            number += 1;
            each(number, at, &line);
            at += n as u64;
            // A line of a megabyte (a record edited by hand) is not kept for the next.
            if line.capacity() > 1 << 20 {
                line = Vec::new();
            }
        }
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
        let mut end = offset;
        self.each_line(file, offset, |_, start, line| {
            if line.last() != Some(&b'\n') {
                return;
            }
            end = start + line.len() as u64;
            if line.trim_ascii().is_empty() || is_retirement(line) {
                return;
            }
            if let Err(e) = each(start, line) {
                crate::say!(
                    "rlctl: warning: {} at byte {start}: not a ledger record ({e}); skipped",
                    self.path
                );
            }
        })?;
        Ok(end)
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

    /// Calls `each` with every record whose line `wanted` says may be one it wants, oldest
    /// first, the ledger read a line at a time; a missing ledger is an empty one. A line that is
    /// not a record (torn by a full disk, edited by hand) is skipped with a warning naming it:
    /// one bad line never hides the others. A line `wanted` passes over is not parsed, but for
    /// one not shaped as a record (`{...}`), which is warned about all the same.
    /// Retirement lines are passed over: every record is history or not alike here (see
    /// [`Ledger::runs_where`] for the runs as they stand).
    pub fn each_record(
        &self,
        wanted: impl FnMut(&[u8]) -> bool,
        mut each: impl FnMut(Record),
    ) -> Result<()> {
        self.each_entry(wanted, |entry| {
            if let Entry::Record(record) = entry {
                each(record)
            }
        })
    }

    /// [`Ledger::each_record`], with the retirement lines too (each one, whatever `wanted`
    /// says: a prefix compared per line, and few are parsed).
    fn each_entry(
        &self,
        mut wanted: impl FnMut(&[u8]) -> bool,
        mut each: impl FnMut(Entry),
    ) -> Result<()> {
        let mut file = match std::fs::File::open(&self.path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(Error::io("read", &self.path, e)),
        };
        self.each_line(&mut file, 0, |number, _, line| {
            let line = line.trim_ascii();
            if line.is_empty() {
                return;
            }
            if is_retirement(line) {
                match retired(line) {
                    Some(run) => each(Entry::Retired(run)),
                    None => crate::say!(
                        "rlctl: warning: {}:{number}: not a retirement line; skipped",
                        self.path
                    ),
                }
                return;
            }
            let shaped = line.first() == Some(&b'{') && line.last() == Some(&b'}');
            if shaped && !wanted(line) {
                return;
            }
            match serde_json::from_slice(line) {
                Ok(record) => each(Entry::Record(record)),
                Err(e) => crate::say!(
                    "rlctl: warning: {}:{number}: not a ledger record ({e}); skipped",
                    self.path
                ),
            }
        })
    }

    /// Every record, oldest first (see [`Ledger::each_record`]).
    pub fn records(&self) -> Result<Vec<Record>> {
        let mut records = Vec::new();
        self.each_record(|_| true, |r| records.push(r))?;
        Ok(records)
    }

    /// The records whose job id `wanted` accepts, oldest first, read line by line: memory
    /// holds those records, never the whole ledger. Lines that are not records are skipped
    /// here; [`Ledger::records`] names them.
    pub fn records_of(&self, wanted: impl Fn(&str) -> bool) -> Result<Vec<Record>> {
        #[derive(Deserialize)]
        struct JobOf<'a> {
            #[serde(borrow)]
            job_id: std::borrow::Cow<'a, str>,
        }
        let mut file = match std::fs::File::open(&self.path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
            Err(e) => return Err(Error::io("read", &self.path, e)),
        };
        let mut out = Vec::new();
        self.each_line(&mut file, 0, |_, _, line| {
            // A retired run's jobs are still its jobs: only the retirement line is passed over.
            let Ok(head) = serde_json::from_slice::<JobOf>(line) else {
                return;
            };
            if wanted(&head.job_id)
                && let Ok(record) = serde_json::from_slice::<Record>(line)
            {
                out.push(record);
            }
        })?;
        Ok(out)
    }

    /// The records submitted at `since` (unix seconds) or later, oldest first; each line read
    /// for its time first, and parsed whole only when recent.
    pub fn records_since(&self, since: i64) -> Result<Vec<Record>> {
        #[derive(Deserialize)]
        struct When {
            #[serde(default)]
            submitted_unix: i64,
        }
        let mut file = match std::fs::File::open(&self.path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
            Err(e) => return Err(Error::io("read", &self.path, e)),
        };
        let mut out = Vec::new();
        self.each_line(&mut file, 0, |_, _, line| {
            if serde_json::from_slice::<When>(line).is_ok_and(|w| w.submitted_unix >= since)
                && let Ok(record) = serde_json::from_slice::<Record>(line)
            {
                out.push(record);
            }
        })?;
        Ok(out)
    }

    /// Every run with all its records, in first-submission order.
    pub fn runs(&self) -> Result<Vec<Run>> {
        self.runs_where(|_| true)
    }

    /// The runs of the records whose lines `wanted` passes (see [`Ledger::each_record`]), with
    /// those records, in first-submission order: only they are held.
    /// A retired run's records before its retirement are left out: a run retired and not
    /// submitted since is no run.
    pub fn runs_where(&self, wanted: impl FnMut(&[u8]) -> bool) -> Result<Vec<Run>> {
        let mut runs: Vec<Run> = Vec::new();
        let mut at: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
        self.each_entry(wanted, |entry| match entry {
            Entry::Retired(name) => {
                // Emptied in place, dropped at the end; a later record starts it anew.
                if let Some(i) = at.remove(&name) {
                    runs[i].records.clear();
                }
            }
            Entry::Record(mut record) => {
                let name = record.run();
                match at.get(&name) {
                    Some(&i) => {
                        if let Some(last) = runs[i].records.last() {
                            share(&mut record, last);
                        }
                        runs[i].records.push(record)
                    }
                    None => {
                        at.insert(name.clone(), runs.len());
                        runs.push(Run {
                            name,
                            records: vec![record],
                        });
                    }
                }
            }
        })?;
        runs.retain(|r| !r.records.is_empty());
        Ok(runs)
    }

    /// The newest record of each run, in first-submission order; only those are held. A run
    /// retired and not submitted since has none.
    pub fn latest(&self) -> Result<Vec<Record>> {
        let mut latest: Vec<Option<Record>> = Vec::new();
        let mut at: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
        self.each_entry(
            |_| true,
            |entry| match entry {
                Entry::Retired(name) => {
                    if let Some(i) = at.remove(&name) {
                        latest[i] = None;
                    }
                }
                Entry::Record(record) => match at.get(&record.run()) {
                    Some(&i) => latest[i] = Some(record),
                    None => {
                        at.insert(record.run(), latest.len());
                        latest.push(Some(record));
                    }
                },
            },
        )?;
        Ok(latest.into_iter().flatten().collect())
    }

    /// The name of every run and the group of its newest record, in first-submission order,
    /// each line read for those fields alone: what a name that means no run is compared with.
    pub fn names(&self) -> Result<Vec<(String, String)>> {
        #[derive(Deserialize)]
        struct Names<'a> {
            #[serde(borrow)]
            target: std::borrow::Cow<'a, str>,
            #[serde(borrow)]
            group: std::borrow::Cow<'a, str>,
            #[serde(borrow)]
            member: std::borrow::Cow<'a, str>,
            #[serde(borrow)]
            grid: Option<std::borrow::Cow<'a, str>>,
        }
        let Ok(mut file) = std::fs::File::open(&self.path) else {
            return Ok(Vec::new());
        };
        let mut names: Vec<Option<(String, String)>> = Vec::new();
        let mut at: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
        self.each_line(&mut file, 0, |_, _, line| {
            // A retired run is no run to suggest, until it is submitted again.
            if let Some(gone) = retired(line) {
                if let Some(i) = at.remove(&gone) {
                    names[i] = None;
                }
                return;
            }
            let Ok(n) = serde_json::from_slice::<Names>(line) else {
                return;
            };
            let name = run_name(&n.target, &n.group, &n.member, n.grid.is_some());
            match at.get(&name) {
                Some(&i) => names[i] = Some((name, n.group.into_owned())),
                None => {
                    at.insert(name.clone(), names.len());
                    names.push(Some((name, n.group.into_owned())));
                }
            }
        })?;
        Ok(names.into_iter().flatten().collect())
    }
}

/// The run a submission with these fields is of (see [`Record::run`]).
/// The first folder level of a plan's run, and the second: the cell of a grid, else the job
/// name.
fn group_member(plan: &Plan) -> (String, String) {
    match (&plan.grid, plan.target.split_once('/')) {
        (Some(_), Some((grid, cell))) => (grid.to_owned(), cell.to_owned()),
        (_, split) => (
            split
                .map_or(plan.target.as_str(), |(preset, _)| preset)
                .to_owned(),
            plan.job.name.clone(),
        ),
    }
}

/// The run a plan's jobs are submissions of, as [`Record::run`] names it.
pub fn run_of(plan: &Plan) -> String {
    let (group, member) = group_member(plan);
    run_name(&plan.target, &group, &member, plan.grid.is_some())
}

pub fn run_name(target: &str, group: &str, member: &str, grid: bool) -> String {
    if !grid && member != group {
        format!("{group}/{member}")
    } else {
        target.to_owned()
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

/// Seconds since the Unix epoch, now (0 before it): what records and intents are stamped with.
pub(crate) fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}
