//! The phase clock's file: each job's wrapper appends one line per phase of its start-up and
//! saves to `<run_dir>/phases/<job id>.tsv`, `<epoch s>\t<phase>\t<detail>`, on the node's clock.
//! The words the wrapper looks for in the log are defined here with the reader, so the two
//! agree; `runs::phases` turns the lines into what `status`, `estimate` and the watchdog use.

use camino::{Utf8Path, Utf8PathBuf};

/// How often the wrapper looks at the log and the checkpoint folder for the phases only the
/// trainer tells (a save's measured length is within this of the truth).
pub const EVERY_S: u64 = 2;

/// run.sh's first line, printed inside the container: the container is up.
pub const CONTAINER_UP: &str = "rlctl: the container is up";

/// SkyRL's line once the weight sync between the policy and its inference engines is set up
/// (`RayPPOTrainer.init_weight_sync_state`, at the start of `train()`): the engines are ready.
pub const ENGINES_READY: &str =
    "Initialized weight sync state for policy model and inference engines";

/// The start of the per-step line (MarinSkyRL's, or rlctl's progress module's on upstream).
pub const STEP_LINE: &str = "WANDB_MIRROR kind=train step=";

/// The phases a wrapper writes, in the order a slot goes through them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// The slot began (detail: its number).
    Slot,
    RayHead,
    /// Detail: the worker's number.
    RayWorker,
    Container,
    Engines,
    FirstStep,
    /// Detail: the step saved.
    SaveBegun,
    SaveEnded,
    /// The slot ends early, after a save, so that no save is cut by its limit (detail: the step).
    Stop,
    /// Detail: the wrapper's exit status.
    Exit,
}

impl Phase {
    fn parse(word: &str) -> Option<Phase> {
        Some(match word {
            "slot" => Phase::Slot,
            "ray_head" => Phase::RayHead,
            "ray_worker" => Phase::RayWorker,
            "container" => Phase::Container,
            "engines" => Phase::Engines,
            "first_step" => Phase::FirstStep,
            "save_begun" => Phase::SaveBegun,
            "save_ended" => Phase::SaveEnded,
            "stop" => Phase::Stop,
            "exit" => Phase::Exit,
            _ => return None,
        })
    }

    /// What a person reads for a job whose latest phase this is.
    pub fn words(self, detail: &str) -> String {
        match self {
            Phase::Slot => "slot started".to_owned(),
            Phase::RayHead => "ray head up".to_owned(),
            Phase::RayWorker => format!("ray worker {detail} up"),
            Phase::Container => "container up".to_owned(),
            Phase::Engines => "engines ready".to_owned(),
            Phase::FirstStep => "first step".to_owned(),
            Phase::SaveBegun => format!("saving step {detail}"),
            Phase::SaveEnded => format!("saved step {detail}"),
            Phase::Stop => format!("stopping after step {detail}'s save"),
            Phase::Exit => format!("exited ({detail})"),
        }
    }
}

/// One line of a phases file.
#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    pub unix_s: i64,
    pub phase: Phase,
    pub detail: String,
}

/// The phases file of job `job_id` whose run folder is `run_dir`.
pub fn file(run_dir: &Utf8Path, job_id: &str) -> Utf8PathBuf {
    run_dir.join("phases").join(format!("{job_id}.tsv"))
}

/// The most of a phases file read: a job writes a few lines per save, so this is thousands of
/// saves; a bigger file is not the wrapper's and is read no further.
const MOST_BYTES: u64 = 1 << 20;

/// The marks of a phases file, in order; lines that are not marks (a cut last line) are
/// skipped, and a missing file has none.
pub fn read(path: &Utf8Path) -> Vec<Mark> {
    use std::io::Read;
    let mut text = String::new();
    let Ok(file) = std::fs::File::open(path) else {
        return Vec::new();
    };
    if file.take(MOST_BYTES).read_to_string(&mut text).is_err() {
        return Vec::new();
    }
    text.lines().filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<Mark> {
    let mut fields = line.split('\t');
    let unix_s = fields.next()?.parse().ok()?;
    let phase = Phase::parse(fields.next()?)?;
    let detail = fields.next().unwrap_or_default().to_owned();
    Some(Mark {
        unix_s,
        phase,
        detail,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_that_are_not_marks_are_skipped() {
        let m = parse_line("1700000000\tray_worker\t3").unwrap();
        assert_eq!(
            (m.unix_s, m.phase, m.detail.as_str()),
            (1_700_000_000, Phase::RayWorker, "3")
        );
        assert_eq!(parse_line("17000\tslot").unwrap().detail, "");
        assert!(parse_line("17000\tnap\t1").is_none());
        assert!(parse_line("17x\tslot\t1").is_none());
        assert!(parse_line("").is_none());
    }
}
