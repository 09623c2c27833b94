//! The one error type of rlctl: every message names what is wrong and what to do instead, and
//! echoes what the user typed clipped ([`clip`]).

use camino::Utf8PathBuf;
use std::fmt;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{file}: {message}")]
    PresetSyntax { file: String, message: String },

    #[error("{file}: {message}")]
    PresetInvalid { file: String, message: String },

    #[error(
        "unknown {kind} `{}`{}{}",
        clip(name),
        did_you_mean(suggestion),
        known_list(known)
    )]
    UnknownName {
        kind: &'static str,
        name: String,
        suggestion: Option<String>,
        known: Vec<String>,
    },

    #[error(
        "`{}` is ambiguous: it is {}; name one of them",
        clip(name),
        or_list(candidates)
    )]
    Ambiguous {
        name: String,
        candidates: Vec<String>,
    },

    #[error("presets extend each other in a circle: {}", chain.join(" -> "))]
    ExtendsCycle { chain: Vec<String> },

    #[error("override `{}`: {reason}", clip(arg))]
    BadOverride { arg: String, reason: String },

    #[error("invalid {flag} `{}`: {reason}", clip(value))]
    BadFlag {
        flag: &'static str,
        value: String,
        reason: String,
    },

    #[error("{0}")]
    Unsupported(String),

    /// A name of the wrong kind where another was asked for (a grid where a cell is wanted).
    #[error("`{name}` is a {is}, not a {wanted}: {fix}")]
    WrongKind {
        name: String,
        is: &'static str,
        wanted: &'static str,
        /// The command that runs what the name names.
        fix: String,
    },

    /// `--presets DIR` that cannot be a presets folder; `problem` says why.
    #[error("--presets `{dir}` {problem}")]
    BadPresetsDir {
        dir: Utf8PathBuf,
        problem: &'static str,
    },

    /// A record rlctl writes (submission, waiting cell, grid intent) that did not serialize.
    #[error("{0}")]
    Serialize(toml::ser::Error),

    /// A job of the same job name is queued, and a second one would share its checkpoint folder.
    #[error(
        "{target} is already queued as job {job_id} ({state}) under the job name `{job_name}`, and a second job would write to \
         its checkpoint folder: wait for it, `scancel {job_id}`, or {fix}"
    )]
    AlreadyQueued {
        target: String,
        job_id: String,
        state: String,
        job_name: String,
        /// What gives the run a folder of its own (`pick another --job-name`).
        fix: &'static str,
    },

    /// Another recorded run's queued job uses the checkpoint folder this run resolves to
    /// (boxed: the error type stays small).
    #[error("{0}")]
    CheckpointInUse(Box<InUse>),

    /// More jobs submitted together than the QOS lets a user have at once.
    #[error(
        "QOS {qos} lets a user have {limit} jobs submitted (pending or running) at once, and these {wanted} \
         jobs are submitted together: chain fewer slots, or pick another QOS with --qos"
    )]
    QosTooSmall {
        qos: String,
        limit: u32,
        wanted: u32,
    },

    /// The QOS's submit limit, with the user's jobs already there, leaves no room for these.
    #[error("{}", qos_full(qos, *limit, *used, *wanted))]
    QosFull {
        qos: String,
        limit: u32,
        used: u32,
        wanted: u32,
    },

    /// A resume of a recorded run with other knobs than it ran with, not asked for.
    #[error(
        "{} ran as job {} with other knobs ({}): a resume continues a run with the knobs it ran with. Resume it \
         with them: `{}` (a resume without overrides takes them); or resume with these knobs anyway with \
         --change-knobs (the checks of a resume still apply); or run them as a run of their own with \
         --job-name NEW",
        .0.run, .0.job_id, .0.changes.join("; "), .0.recorded
    )]
    ResumeChangesKnobs(Box<ChangedRun>),

    /// Recorded cells of a controlled grid whose knobs now differ from what they ran with.
    #[error("{}", cells.iter().map(ChangedCell::to_string).collect::<Vec<_>>().join("\n"))]
    ControlledGridChanged { cells: Vec<ChangedCell> },

    /// The run folder was created by someone else between the check and the creation.
    #[error(
        "run folder `{run_dir}` appeared while rlctl was preparing it (another launch of the same run?); launch again"
    )]
    RunFolderAppeared { run_dir: Utf8PathBuf },

    /// sbatch exited 0 but printed no id: the job probably exists, so its folder is kept.
    #[error(
        "sbatch printed no job id for `{command}`: stdout was {stdout:?}\nsbatch succeeded, so the job is probably queued and its run folder `{run_dir}` is kept; find \
         its id with `squeue --me` and do not launch it again before checking"
    )]
    QueuedWithoutId {
        command: String,
        stdout: String,
        run_dir: Utf8PathBuf,
    },

    /// Another command held the run root's turn for longer than a command waits for it.
    #[error(
        "gave up after {waited_s} s waiting for the run root's lock `{lock}`, held by {}: if that \
         command is hung, end it (`kill PID`) and run this again; `RLCTL_LOCK_WAIT_S` sets how \
         long a command waits (600 s unless set)",
        holder.as_deref().unwrap_or("another process (`fuser -v` on the folder names it)")
    )]
    TurnNotFree {
        lock: Utf8PathBuf,
        holder: Option<String>,
        waited_s: u64,
    },

    /// The ledger cannot be appended to: a job queued now would have no record.
    #[error(
        "the ledger `{path}` cannot be appended to ({reason}), so nothing was submitted: a job \
         queued now would have no record for `status` and `tend`. Ask its owner to let you write \
         it (`chmod g+w {path}`), or use a run root of your own (`storage.run_root` in your \
         cluster profile)"
    )]
    LedgerNotAppendable { path: Utf8PathBuf, reason: String },

    /// A run folder's `sbatch.sh` that rlctl did not render, so it cannot be set to resume.
    #[error(
        "`{path}` is not a wrapper rlctl rendered (no `first_slot=` line): relaunch the run with \
         `rlctl launch ... --resume latest`"
    )]
    NotAWrapper { path: Utf8PathBuf },

    /// A waiting cell's `waiting.toml` that does not parse.
    #[error(
        "`{path}` is not a waiting cell's record ({reason}); run `rlctl grid --all` of its grid again"
    )]
    BadWaiting { path: Utf8PathBuf, reason: String },

    /// A grid's `grid.toml` that does not parse.
    #[error(
        "`{path}` is not a grid's record of what `grid --all` was asked ({reason}); run `rlctl grid --all \
         {grid}` again to write it anew (the cells in the ledger are kept and skipped)"
    )]
    BadIntent {
        path: Utf8PathBuf,
        grid: String,
        reason: String,
    },

    /// A grid's `grid.toml` of another format version, or written for another grid.
    #[error(
        "`{path}` is of version {found_version} for grid `{found_grid}`, not version {version} for `{grid}`: run `rlctl grid --all \
         {grid}` again to write it anew"
    )]
    IntentMismatch {
        path: Utf8PathBuf,
        found_version: u32,
        found_grid: String,
        version: u32,
        grid: String,
    },

    #[error("cannot {action} `{path}`: {source}")]
    Io {
        action: &'static str,
        path: Utf8PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A recorded run's log file is not there: a job that has not started, or a log moved away.
    #[error(
        "{target} (job {job_id}) has no log at `{log}` (no such file): the job may not have started yet; `rlctl status {target}` shows its state"
    )]
    NoLog {
        target: String,
        job_id: String,
        log: Utf8PathBuf,
    },

    #[error("template `{name}` failed to render: {message}")]
    Template { name: String, message: String },

    #[error(
        "cannot run `{program}`: {reason}; put it on PATH or pass {flag} PATH (or set {variable})"
    )]
    SlurmMissing {
        program: String,
        flag: &'static str,
        variable: &'static str,
        reason: String,
    },

    /// A SLURM client (sbatch, squeue, sacct, scancel) that ran and failed: named, with its
    /// command line cut to a readable length and the end of what it said on stderr.
    #[error(
        "{program} failed: `{command}` ({status}){}",
        stderr_block(program, stderr)
    )]
    SlurmFailed {
        /// The program's own name (`scancel`), whatever path it was run from.
        program: String,
        command: String,
        status: String,
        stderr: String,
    },

    /// A SLURM client still running at its time limit, killed: what that leaves undone.
    #[error(
        "{program} did not answer within {seconds} s (`{command}`), and was stopped: {}",
        timed_out_means(program)
    )]
    SlurmTimedOut {
        program: String,
        command: String,
        seconds: u64,
    },

    #[error("sbatch printed no job id for `{command}`: stdout was {stdout:?}")]
    SbatchNoJobId { command: String, stdout: String },

    #[error("preflight found {} problem{} {}; nothing was written or submitted:{}", problems.len(), if problems.len() == 1 { "" } else { "s" }, if targets.len() == 1 { format!("in {}", targets[0]) } else { format!("in {} plans", targets.len()) }, lines(problems))]
    Preflight {
        targets: Vec<String>,
        /// One line each, already naming the check and, for several plans, the plan.
        problems: Vec<String>,
    },

    #[error("{count} alert{} raised; see above", if *count == 1 { "" } else { "s" })]
    Alerts { count: usize },

    /// A check that ran and found problems (doctor's, for one), already listed above.
    #[error("{0}")]
    Problems(String),

    /// A question the command could not answer (SLURM could not say, time ran out): exit 2.
    #[error("{0}")]
    Undecided(String),

    /// A submission on the shipped cluster profile: its account and folders are its author's.
    #[error(
        "{doing} on the cluster profile `{cluster}`, the embedded default: it names account {account} and the \
         folders of {work}, not yours; nothing was submitted or written. Write your own profile with `{init}` \
         (`sacctmgr -nP show assoc user=$USER format=account` lists your accounts), then run this again; \
         --dry-run shows the scripts without one"
    )]
    NotYourProfile {
        /// What was refused: `launch`, `grid`, `tend`.
        doing: &'static str,
        cluster: String,
        account: String,
        work: String,
        /// The `rlctl init` command line that writes the user's own profile.
        init: String,
    },

    /// A `--chain` whose link `failed` (from 1) sbatch refused: the links before it are queued.
    #[error("{}", chain_partial(queued, *failed, *links, resubmit, source))]
    ChainPartial {
        /// The job ids of the links submitted, in order.
        queued: Vec<String>,
        failed: usize,
        links: usize,
        /// The command that submits the missing links, on the same checkpoint folder.
        resubmit: String,
        source: Box<Error>,
    },

    #[error("{}", grid_partial(submitted, failed_cell, source))]
    GridPartial {
        submitted: Vec<(String, String)>,
        failed_cell: String,
        source: Box<Error>,
    },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A stable name of the kind of error, for `--json`'s error object (kebab-case; a new
    /// kind gets a new code, a code is never renamed).
    pub fn code(&self) -> &'static str {
        match self {
            Error::PresetSyntax { .. } => "preset-syntax",
            Error::PresetInvalid { .. } => "preset-invalid",
            Error::UnknownName { .. } => "unknown-name",
            Error::Ambiguous { .. } => "ambiguous",
            Error::ExtendsCycle { .. } => "extends-cycle",
            Error::BadOverride { .. } => "bad-override",
            Error::BadFlag { .. } => "bad-flag",
            Error::Unsupported { .. } => "unsupported",
            Error::WrongKind { .. } => "wrong-kind",
            Error::BadPresetsDir { .. } => "bad-presets-dir",
            Error::Serialize { .. } => "serialize",
            Error::AlreadyQueued { .. } => "already-queued",
            Error::CheckpointInUse { .. } => "checkpoint-in-use",
            Error::QosTooSmall { .. } => "qos-too-small",
            Error::QosFull { .. } => "qos-full",
            Error::ResumeChangesKnobs { .. } => "resume-changes-knobs",
            Error::ControlledGridChanged { .. } => "controlled-grid-changed",
            Error::RunFolderAppeared { .. } => "run-folder-appeared",
            Error::QueuedWithoutId { .. } => "queued-without-id",
            Error::TurnNotFree { .. } => "turn-not-free",
            Error::LedgerNotAppendable { .. } => "ledger-not-appendable",
            Error::NotAWrapper { .. } => "not-a-wrapper",
            Error::BadWaiting { .. } => "bad-waiting",
            Error::BadIntent { .. } => "bad-intent",
            Error::IntentMismatch { .. } => "intent-mismatch",
            Error::Io { .. } => "io",
            Error::NoLog { .. } => "no-log",
            Error::Template { .. } => "template",
            Error::SlurmMissing { .. } => "slurm-missing",
            Error::SlurmFailed { .. } => "slurm-failed",
            Error::SlurmTimedOut { .. } => "slurm-timed-out",
            Error::SbatchNoJobId { .. } => "sbatch-no-job-id",
            Error::Preflight { .. } => "preflight",
            Error::Alerts { .. } => "alerts",
            Error::Problems { .. } => "problems",
            Error::Undecided { .. } => "undecided",
            Error::NotYourProfile { .. } => "not-your-profile",
            Error::ChainPartial { .. } => "chain-partial",
            Error::GridPartial { .. } => "grid-partial",
        }
    }

    pub fn io(action: &'static str, path: impl Into<Utf8PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            action,
            path: path.into(),
            source,
        }
    }

    /// A write to a reader that has gone away (`rlctl metrics run | head`): not a failure.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::BrokenPipe)
    }

    /// An unknown name, with the closest known one offered when it is close enough to be a typo.
    pub fn unknown<'a>(
        kind: &'static str,
        name: &str,
        known: impl IntoIterator<Item = &'a str>,
    ) -> Self {
        let known: Vec<String> = known.into_iter().map(str::to_owned).collect();
        Error::UnknownName {
            kind,
            name: name.to_owned(),
            suggestion: closest(name, known.iter().map(String::as_str)),
            known,
        }
    }
}

/// A checkpoint folder that a queued job of another recorded run uses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{target}: its checkpoint folder resolves to `{folder}`, which job {job_id} ({state}) of {run} uses, and two \
     jobs never write one folder: wait for it, `scancel {job_id}`, or {fix}"
)]
pub struct InUse {
    pub target: String,
    pub folder: Utf8PathBuf,
    pub job_id: String,
    pub state: String,
    /// The recorded run the job belongs to.
    pub run: String,
    /// What gives the run a folder of its own (`pick another --job-name`).
    pub fix: &'static str,
}

/// A recorded cell of a controlled grid and how its knobs changed (`key: was -> is`), with the
/// commands that change it without altering it: each the grid command as asked, changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedCell {
    /// `grid/cell`.
    pub target: String,
    pub job_id: String,
    pub diffs: Vec<String>,
    /// The change run as a new cell (`--as`).
    pub as_new: String,
    /// The command as asked, to run once the cell is retired.
    pub again: String,
    /// The grid run without the cell (`--skip`).
    pub skip: String,
}

impl fmt::Display for ChangedCell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let target = &self.target;
        write!(
            f,
            "{target} ran as job {} with other knobs ({}): a controlled grid never alters a cell mid-series; run the \
             change as a new cell, e.g. `{}`; or, to run this cell afresh, `rlctl retire {target}` (its jobs \
             cancelled, its folders kept, the ledger keeps its history), then `{}`; or run the grid without it: `{}`",
            self.job_id,
            self.diffs.join("; "),
            self.as_new,
            self.again,
            self.skip,
        )
    }
}

/// A `--resume latest` whose knobs differ from the run's recorded ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedRun {
    /// The run, as `status` names it.
    pub run: String,
    pub job_id: String,
    /// `key: recorded -> asked`, each.
    pub changes: Vec<String>,
    /// The resume with the recorded knobs.
    pub recorded: String,
}

pub use rlctl_grammar::text::{ECHO_CHARS, clip};

/// A SkyRL config folder the YAML reader could not read, as rlctl's own kinds of error.
impl From<rlctl_grammar::import::Error> for Error {
    fn from(error: rlctl_grammar::import::Error) -> Self {
        use rlctl_grammar::import::Error as Import;
        match error {
            Import::Missing(message) => Error::Unsupported(message),
            Import::Syntax { file, message } => Error::PresetSyntax {
                file: file.into_string(),
                message,
            },
            Import::Invalid { file, message } => Error::PresetInvalid {
                file: file.into_string(),
                message,
            },
            Import::Io { path, source } => Error::io("read", path, source),
        }
    }
}

/// The candidate most like `name`, if any is near enough to be what the user meant.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<String> {
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(name, c), c))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c.to_owned())
}

fn did_you_mean(suggestion: &Option<String>) -> String {
    match suggestion {
        Some(s) => format!(": did you mean `{s}`?"),
        None => String::new(),
    }
}

fn known_list(known: &[String]) -> String {
    if known.is_empty() {
        return String::new();
    }
    if known.len() > 12 {
        return " (see `rlctl list`)".to_owned();
    }
    format!(" (known: {})", known.join(", "))
}

fn or_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|i| format!("`{i}`")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => quoted.join(""),
    }
}

fn lines(items: &[String]) -> String {
    items.iter().map(|i| format!("\n  {i}")).collect()
}

/// The last [`STDERR_LINES`] lines a failed program printed on stderr, indented (its last line
/// says why it failed; a scancel of a thousand jobs may print a line for each); one line inline.
/// What a SLURM client stopped at its time limit leaves undone, and what to do.
fn timed_out_means(program: &str) -> &'static str {
    match program {
        "sbatch" => {
            "the job may have been queued all the same: look at `squeue --me` before submitting again \
             (slurmctld is busy or unreachable)"
        }
        "scancel" => {
            "the jobs may still be running: look at `squeue --me` and cancel them again \
             (slurmctld is busy or unreachable)"
        }
        _ => "slurmctld is busy or unreachable; nothing was changed, try again later",
    }
}

fn stderr_block(program: &str, stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    match lines[..] {
        [] => return format!("; {program} printed nothing on stderr"),
        // One line stays on the error's line (inside a warning's parentheses, for sacct).
        [line] => return format!(": {}", clip(line.trim())),
        _ => {}
    }
    let from = lines.len().saturating_sub(STDERR_LINES);
    let mut out = String::from(":");
    if from > 0 {
        out.push_str(&format!("\n  ({from} earlier lines)"));
    }
    for line in &lines[from..] {
        out.push_str("\n  ");
        out.push_str(&clip(line.trim_end()));
    }
    out
}

/// How many of a failed SLURM client's last stderr lines its error shows.
const STDERR_LINES: usize = 4;

fn qos_full(qos: &str, limit: u32, used: u32, wanted: u32) -> String {
    let jobs = match wanted {
        1 => "this job".to_owned(),
        n => format!("these {n} jobs"),
    };
    let ended = match used + wanted - limit {
        1 => "one has".to_owned(),
        k => format!("{k} have"),
    };
    format!(
        "QOS {qos} lets a user have {limit} jobs submitted (pending or running) at once, and you have \
         {used} there: sbatch would refuse {jobs}; launch again once {ended} ended, or pick another QOS \
         with --qos"
    )
}

fn grid_partial(submitted: &[(String, String)], failed: &str, source: &Error) -> String {
    struct Lines<'a>(&'a [(String, String)]);
    impl fmt::Display for Lines<'_> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            for (cell, job) in self.0 {
                write!(f, "\n  {cell}: job {job}")?;
            }
            Ok(())
        }
    }
    if submitted.is_empty() {
        return format!("cell `{failed}` was not submitted, and no cell was: {source}");
    }
    format!(
        "cell `{failed}` was not submitted: {source}\nthese cells were submitted before it and are queued:{}",
        Lines(submitted)
    )
}

fn chain_partial(
    queued: &[String],
    failed: usize,
    links: usize,
    resubmit: &str,
    source: &Error,
) -> String {
    if queued.is_empty() {
        return format!(
            "link 1 of {links} was not submitted, and no link of the chain was: {source}\nfix the cause and launch the chain again"
        );
    }
    let jobs: Vec<String> = (queued.iter().enumerate())
        .map(|(i, job)| format!("{} (job {job})", i + 1))
        .collect();
    let missing = match links - queued.len() {
        1 => format!("link {links} is missing"),
        _ => format!("links {failed} to {links} are missing"),
    };
    let last = &queued[queued.len() - 1];
    let (s, are) = if queued.len() == 1 {
        ("", "is")
    } else {
        ("s", "are")
    };
    format!(
        "link {failed} of {links} was not submitted: {source}\n\
         link{s} {} {are} queued; {missing}.\n\
         Once job {last} has ended, submit the rest on the same checkpoint folder:\n  {resubmit}\n\
         or `scancel {}` and launch the whole chain again",
        jobs.join(", "),
        queued.join(" "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_input_is_clipped_with_its_size() {
        assert_eq!(clip("trainer.epochs=2"), "trainer.epochs=2");
        let exact = "é".repeat(ECHO_CHARS);
        assert_eq!(clip(&exact), exact);
        let huge = format!("{}x", "é".repeat(ECHO_CHARS));
        assert_eq!(
            clip(&huge),
            format!("{}… ({} bytes)", "é".repeat(ECHO_CHARS), huge.len())
        );
    }
}
