//! The tools' inputs, typed (their JSON Schemas are what the agent sees), and each turned into
//! rlctl's own command line: every string one argv word, a positional never taken for a flag.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// An input the command line cannot carry; said to the agent as is.
pub type Refusal = String;

/// A value given where rlctl expects a name or a `key=value`: never a flag, never a line break.
fn word(what: &str, value: &str) -> Result<String, Refusal> {
    if value.is_empty() || value.starts_with('-') {
        return Err(format!(
            "{what} `{value}` must be a name (it may not be empty or start with `-`)"
        ));
    }
    if value.chars().any(char::is_control) {
        return Err(format!(
            "{what} may not hold a line break or control character"
        ));
    }
    Ok(value.to_owned())
}

/// `--flag=VALUE` as one word: the value can never be read as a flag of its own.
fn flag(words: &mut Vec<String>, name: &str, value: Option<&str>) -> Result<(), Refusal> {
    if let Some(value) = value {
        if value.chars().any(char::is_control) {
            return Err(format!(
                "--{name} may not hold a line break or control character"
            ));
        }
        words.push(format!("--{name}={value}"));
    }
    Ok(())
}

fn switch(words: &mut Vec<String>, name: &str, on: Option<bool>) {
    if on == Some(true) {
        words.push(format!("--{name}"));
    }
}

/// The plan flags and hydra overrides `plan`, `launch`, `grid`, `check`, `estimate` and `show`
/// take, as on rlctl's command line.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct PlanFlags {
    /// Hydra overrides for the trainer, each `key=value` (e.g. `trainer.epochs=2`).
    #[serde(default)]
    pub overrides: Vec<String>,
    /// Nodes to run on (default: the preset's).
    pub nodes: Option<u32>,
    /// SLURM QOS (default: the preset's or grid's).
    pub qos: Option<String>,
    /// Wall-clock limit, HH:MM:SS or D-HH:MM:SS.
    pub time: Option<String>,
    /// SLURM job name; for a preset it also names the checkpoint folder.
    pub job_name: Option<String>,
    /// `fresh` (the default) or `latest`: resume from the newest whole checkpoint.
    pub resume: Option<String>,
    /// Named preflight checks turned into warnings (as `--allow`).
    #[serde(default)]
    pub allow: Vec<String>,
}

impl PlanFlags {
    /// The flags, then `--` and the overrides (appended last by [`PlanFlags::finish`]).
    fn push(&self, words: &mut Vec<String>) -> Result<(), Refusal> {
        flag(words, "nodes", self.nodes.map(|n| n.to_string()).as_deref())?;
        flag(words, "qos", self.qos.as_deref())?;
        flag(words, "time", self.time.as_deref())?;
        flag(words, "job-name", self.job_name.as_deref())?;
        flag(words, "resume", self.resume.as_deref())?;
        for allow in &self.allow {
            flag(words, "allow", Some(allow))?;
        }
        Ok(())
    }

    fn finish(&self, words: &mut Vec<String>) -> Result<(), Refusal> {
        if !self.overrides.is_empty() {
            words.push("--".to_owned());
            for o in &self.overrides {
                words.push(word("override", o)?);
            }
        }
        Ok(())
    }
}

/// A preset or cell and its plan flags (`check`, `estimate`, `show`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Target {
    /// A run preset or a grid cell (see the `list` tool).
    pub name: String,
    #[serde(flatten)]
    pub flags: PlanFlags,
}

impl Target {
    pub fn words(&self, command: &str) -> Result<Vec<String>, Refusal> {
        let mut words = vec![command.to_owned(), word("name", &self.name)?];
        self.flags.push(&mut words)?;
        self.flags.finish(&mut words)?;
        Ok(words)
    }
}

/// What `plan` and `launch` submit: a preset, its flags and overrides.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LaunchSpec {
    /// The run preset, e.g. gsm8k-canary (see the `list` tool).
    pub preset: String,
    /// Jobs chained one after another (each resuming the last), or `auto`; default 1.
    pub chain: Option<String>,
    /// Keep the run going across wall-time slots under one job id.
    pub until_done: Option<bool>,
    #[serde(flatten)]
    pub flags: PlanFlags,
}

impl LaunchSpec {
    pub fn words(&self, dry_run: bool) -> Result<Vec<String>, Refusal> {
        let mut words = vec!["launch".to_owned(), word("preset", &self.preset)?];
        flag(&mut words, "chain", self.chain.as_deref())?;
        switch(&mut words, "until-done", self.until_done);
        switch(&mut words, "dry-run", Some(dry_run));
        self.flags.push(&mut words)?;
        self.flags.finish(&mut words)?;
        Ok(words)
    }
}

/// `launch`'s input: what to submit, and the token `plan` or an unconfirmed call returned.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LaunchInput {
    #[serde(flatten)]
    pub spec: LaunchSpec,
    /// The `confirm` token a call with these very inputs returned; without it nothing is
    /// submitted and the dry run is returned with a token.
    pub confirm: Option<String>,
}

/// What `grid` submits: one cell, or every cell of a grid.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct GridSpec {
    /// The cell, by name or as GRID/CELL.
    pub cell: Option<String>,
    /// Every cell of this grid instead of one cell.
    pub all: Option<String>,
    /// With `all`: cells left out.
    #[serde(default)]
    pub skip: Vec<String>,
    /// Run the cell as a new cell of this name.
    pub as_cell: Option<String>,
    #[serde(flatten)]
    pub flags: PlanFlags,
}

impl GridSpec {
    pub fn words(&self, dry_run: bool) -> Result<Vec<String>, Refusal> {
        let mut words = vec!["grid".to_owned()];
        match (&self.cell, &self.all) {
            (Some(cell), None) => words.push(word("cell", cell)?),
            (None, Some(grid)) => flag(&mut words, "all", Some(&word("grid", grid)?))?,
            _ => return Err("give either `cell` or `all` (a grid), not both".to_owned()),
        }
        for skip in &self.skip {
            flag(&mut words, "skip", Some(skip))?;
        }
        flag(&mut words, "as", self.as_cell.as_deref())?;
        switch(&mut words, "dry-run", Some(dry_run));
        self.flags.push(&mut words)?;
        self.flags.finish(&mut words)?;
        Ok(words)
    }
}

/// `grid`'s input.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct GridInput {
    #[serde(flatten)]
    pub spec: GridSpec,
    /// The `confirm` token a call with these very inputs returned.
    pub confirm: Option<String>,
}

/// No input.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct Nothing {}

/// One run, named as `status` lists it (preset, preset/job-name, grid/cell, job id).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct OneRun {
    /// A run, grid or job id.
    pub run: String,
}

/// `status`'s input.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct StatusInput {
    /// A run, grid or preset; every recorded run without it.
    pub run: Option<String>,
}

/// `wait`'s input.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct WaitInput {
    /// Runs, grids or presets to wait for.
    pub runs: Vec<String>,
    /// `COMPLETED` (the default) or `RUNNING`.
    pub until: Option<String>,
    /// Wait until each run's logged train step reaches this.
    pub step: Option<u64>,
    /// Seconds to wait at most (capped by the server's call timeout); call again to go on.
    pub timeout_s: Option<u64>,
}

/// `logs`' input.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LogsInput {
    /// A run or job id.
    pub run: String,
    /// Only the last N lines (default 200).
    pub tail: Option<usize>,
    /// Only the last Python traceback or error lines.
    pub errors: Option<bool>,
}

impl LogsInput {
    pub fn words(&self) -> Result<Vec<String>, Refusal> {
        let mut words = vec!["logs".to_owned(), word("run", &self.run)?];
        match self.errors {
            Some(true) => words.push("--errors".to_owned()),
            _ => words.push(format!("--tail={}", self.tail.unwrap_or(200))),
        }
        Ok(words)
    }
}

/// `report`'s input.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ReportInput {
    /// A grid, or recorded runs.
    pub names: Vec<String>,
    /// Every column, not only the compact table's.
    pub wide: Option<bool>,
}

/// `diff`'s input.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct DiffInput {
    /// A recorded run, else a preset or cell.
    pub a: String,
    /// The run, preset or cell to compare it with.
    pub b: String,
    /// Every knob, not only those that differ.
    pub all: Option<bool>,
}

/// `cancel`'s input.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CancelInput {
    /// A run, a grid or a job id.
    pub run: String,
    /// The `confirm` token a call with this very input returned.
    pub confirm: Option<String>,
}

/// `retire`'s input.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RetireInput {
    /// Runs, grids or job ids.
    pub runs: Vec<String>,
    /// The `confirm` token a call with these very inputs returned.
    pub confirm: Option<String>,
}

/// `clean`'s input.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CleanInput {
    /// A grid, a run or a job id.
    pub run: String,
    /// Remove the exported models too (by default they stay).
    pub exports: Option<bool>,
    /// The `confirm` token a call with these very inputs returned.
    pub confirm: Option<String>,
}

/// `command` and each of `names` as a word.
pub fn named(command: &str, what: &str, names: &[String]) -> Result<Vec<String>, Refusal> {
    if names.is_empty() {
        return Err(format!("give at least one {what}"));
    }
    let mut words = vec![command.to_owned()];
    for name in names {
        words.push(word(what, name)?);
    }
    Ok(words)
}

impl WaitInput {
    /// `wait`'s words, its timeout at most `cap` seconds.
    pub fn words(&self, cap: u64) -> Result<Vec<String>, Refusal> {
        let mut words = named("wait", "run", &self.runs)?;
        flag(&mut words, "until", self.until.as_deref())?;
        flag(
            &mut words,
            "step",
            self.step.map(|n| n.to_string()).as_deref(),
        )?;
        let timeout = self.timeout_s.unwrap_or(cap).clamp(1, cap);
        words.push(format!("--timeout={timeout}s"));
        Ok(words)
    }
}

impl ReportInput {
    pub fn words(&self) -> Result<Vec<String>, Refusal> {
        let mut words = named("report", "name", &self.names)?;
        switch(&mut words, "wide", self.wide);
        Ok(words)
    }
}

impl DiffInput {
    pub fn words(&self) -> Result<Vec<String>, Refusal> {
        let mut words = named("diff", "name", &[self.a.clone(), self.b.clone()])?;
        switch(&mut words, "all", self.all);
        Ok(words)
    }
}

impl CleanInput {
    pub fn words(&self) -> Result<Vec<String>, Refusal> {
        let mut words = vec!["clean".to_owned(), word("run", &self.run)?];
        switch(&mut words, "exports", self.exports);
        Ok(words)
    }
}

/// Inputs without their `confirm`, as one canonical JSON text: what a token is bound to.
pub fn canonical<T: Serialize>(inputs: &T) -> String {
    let mut value = serde_json::to_value(inputs).unwrap_or_default();
    if let Some(map) = value.as_object_mut() {
        map.remove("confirm");
    }
    // serde_json's map is sorted by key (no preserve_order): one text for equal inputs.
    value.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_never_taken_for_a_flag() {
        let spec = LaunchSpec {
            preset: "--help".into(),
            chain: None,
            until_done: None,
            flags: PlanFlags::default(),
        };
        assert!(spec.words(true).unwrap_err().contains("start with `-`"));
        let spec = LaunchSpec {
            preset: "gsm8k-canary".into(),
            chain: Some("2".into()),
            until_done: None,
            flags: PlanFlags {
                qos: Some("--wipe".into()),
                overrides: vec!["trainer.epochs=2".into()],
                ..PlanFlags::default()
            },
        };
        assert_eq!(
            spec.words(true).unwrap(),
            [
                "launch",
                "gsm8k-canary",
                "--chain=2",
                "--dry-run",
                "--qos=--wipe",
                "--",
                "trainer.epochs=2"
            ]
        );
        assert!(named("retire", "run", &["a\nb".into()]).is_err());
    }
}
