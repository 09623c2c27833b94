//! What a run's checkpoint folder (`trainer.ckpt_path`) holds, read as SkyRL's save writes it,
//! and the one step a run resumes from: the newest whole `global_step_N`, whatever
//! `latest_ckpt_global_step.txt` says. A leaf: `launch`'s preflight, `tend` and the ledger read
//! checkpoints through it alone, and the job's wrapper applies the same rule in bash
//! (`templates/partials/checkpoint.sh`; a test holds the two to the same verdicts).
//!
//! SkyRL saves step N in this order (upstream `save_checkpoints`): `global_step_N/policy/` (and
//! `critic/`; a LoRA policy's `lora_adapter/` last of its folder), `data.pt`, `trainer_state.pt`,
//! then the pointer, opened with `"w"` and then written, so a kill between leaves it empty; a
//! kill before leaves it naming the step before.

use camino::{Utf8Path, Utf8PathBuf};

/// The file SkyRL writes last when it saves a step, and reads first when it resumes.
pub const POINTER_FILE: &str = "latest_ckpt_global_step.txt";

/// What the pointer file says, read as SkyRL reads it: `int(f.read().strip())`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pointer {
    /// No file: SkyRL starts from step 0 and loads nothing.
    Missing,
    /// A file with nothing but blanks in it: a save killed between opening it and writing it.
    Empty,
    /// Text that is not a step number (cut short), or why the file could not be read.
    Unreadable(String),
    Step(u64),
}

impl Pointer {
    /// The pointer, as a clause: `names step 120`, `is empty`.
    pub fn said(&self) -> String {
        match self {
            Pointer::Missing => "is missing".to_owned(),
            Pointer::Empty => "is empty".to_owned(),
            Pointer::Unreadable(text) => format!("holds `{text}`, not a step number"),
            Pointer::Step(n) => format!("names step {n}"),
        }
    }
}

/// Whether a `global_step_N` folder holds a checkpoint SkyRL can load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Whole,
    /// Not whole: the first thing found missing.
    Incomplete(String),
}

/// One `global_step_N` folder and its verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub step: u64,
    pub verdict: Verdict,
}

impl Step {
    pub fn name(&self) -> String {
        format!("global_step_{}", self.step)
    }

    pub fn is_whole(&self) -> bool {
        self.verdict == Verdict::Whole
    }
}

/// The knob that turns LoRA on for the policy (`0` disables it), in both flavours.
pub const LORA_RANK: &str = "trainer.policy.model.lora.rank";

/// What a whole step holds beyond what every save writes, by the run's settings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Expect {
    /// `trainer.policy.model.lora.rank > 0`: the FSDP strategy's `save_checkpoint` writes
    /// `policy/lora_adapter/` (`adapter_model.safetensors`, `adapter_config.json`, rank 0) after
    /// the rank files and `fsdp_config.json`, so a kill between leaves a step that looks whole
    /// without them. The critic's strategy is built without its model config (0.4.0's
    /// `FSDPCriticWorkerBase`), so it never writes one; Megatron writes per-rank `adapter_*.pt`
    /// files whose count rlctl does not know.
    pub lora: bool,
}

/// A checkpoint folder, read once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Folder {
    pub path: Utf8PathBuf,
    pub pointer: Pointer,
    /// Every `global_step_N` folder (folders only, as SkyRL counts them), in step order.
    pub steps: Vec<Step>,
}

/// What a run resumes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Nothing was saved (no `global_step_*` folder, no pointer): the run starts at step 0.
    Fresh,
    /// From the newest whole step; `repair` says why the pointer must first be made to name it
    /// (the job's wrapper rewrites it), `None` when it already does.
    Resume { step: u64, repair: Option<String> },
    /// No choice is safe: leave the run for a person, with why and what to do.
    Refuse(String),
}

impl Folder {
    /// Reads the pointer and judges every `global_step_N` folder of `ckpt_path` (a folder that
    /// does not exist holds nothing) by what the run's saves write ([`Expect`]).
    pub fn read(ckpt_path: &Utf8Path, expect: Expect) -> Folder {
        let mut steps: Vec<Step> = (ckpt_path.read_dir_utf8().into_iter().flatten().flatten())
            .filter_map(|e| {
                let n = e.file_name().strip_prefix("global_step_")?;
                // As SkyRL names them: `global_step_{N}`, no sign, no leading zero.
                let n = number(n).filter(|_| n == "0" || !n.starts_with('0'))?;
                e.path().is_dir().then(|| Step {
                    step: n,
                    verdict: judge_step(e.path(), expect),
                })
            })
            .collect();
        steps.sort_by_key(|s| s.step);
        Folder {
            path: ckpt_path.to_owned(),
            pointer: read_pointer(ckpt_path),
            steps,
        }
    }

    /// The newest whole step: the one a run resumes from.
    pub fn newest_whole(&self) -> Option<u64> {
        self.steps
            .iter()
            .rev()
            .find(|s| s.is_whole())
            .map(|s| s.step)
    }

    pub fn step(&self, n: u64) -> Option<&Step> {
        self.steps.iter().find(|s| s.step == n)
    }

    /// The step folders as a list: `global_step_10, global_step_20`.
    fn listing(&self) -> String {
        (self.steps.iter().map(Step::name))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The pointer file of a checkpoint folder, read as SkyRL reads it.
pub fn read_pointer(ckpt_path: &Utf8Path) -> Pointer {
    let path = ckpt_path.join(POINTER_FILE);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Pointer::Missing,
        Err(e) => return Pointer::Unreadable(format!("an unreadable file: {e}")),
    };
    let text = String::from_utf8_lossy(&bytes);
    let text = text.trim();
    if text.is_empty() {
        return Pointer::Empty;
    }
    match number(text) {
        Some(step) => Pointer::Step(step),
        None => Pointer::Unreadable(text.chars().take(40).collect()),
    }
}

/// A step number: 1 to 18 digits, nothing else (what the wrapper's bash reads alike).
fn number(text: &str) -> Option<u64> {
    let digits = (1..=18).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_digit());
    digits.then(|| text.parse().ok()).flatten()
}

/// Whether one `global_step_N` folder is whole: `trainer_state.pt` (written after every model),
/// and `policy/` (and `critic/` when there is one) whole, per [`model_missing`], with its LoRA
/// adapter per [`adapter_missing`].
pub fn judge_step(dir: &Utf8Path, expect: Expect) -> Verdict {
    if !non_empty(&dir.join("trainer_state.pt")) {
        return Verdict::Incomplete("no trainer_state.pt".to_owned());
    }
    if !dir.join("policy").is_dir() {
        return Verdict::Incomplete("no policy/".to_owned());
    }
    for role in ["policy", "critic"] {
        let model = dir.join(role);
        if !model.is_dir() {
            continue;
        }
        let lora = expect.lora && role == "policy";
        if let Some(why) =
            model_missing(&model, role).or_else(|| adapter_missing(&model, role, lora))
        {
            return Verdict::Incomplete(why);
        }
    }
    Verdict::Whole
}

/// What one model's folder lacks, `None` when it is whole. FSDP: `fsdp_config.json` names the
/// world size W, and every rank r of 0..W wrote `model_`, `optim_` and
/// `extra_state_world_size_{W}_rank_{r}.pt`. Megatron (torch_dist): its `.metadata`, written
/// when the save is finalized (with `async_dist_ckpt_save`, only at the next save).
fn model_missing(dir: &Utf8Path, role: &str) -> Option<String> {
    let config = dir.join("fsdp_config.json");
    if config.is_file() {
        // At most six digits, as the wrapper's bash reads it.
        let Some(world) = world_size(&config).filter(|w| (1..1_000_000).contains(w)) else {
            return Some(format!("{role}/fsdp_config.json names no world_size"));
        };
        for rank in 0..world {
            for kind in ["model", "optim", "extra_state"] {
                let name = format!("{kind}_world_size_{world}_rank_{rank}.pt");
                if !non_empty(&dir.join(&name)) {
                    return Some(format!("no {role}/{name}"));
                }
            }
        }
        return None;
    }
    if non_empty(&dir.join(".metadata")) {
        return None;
    }
    Some(format!(
        "{role}/ has neither fsdp_config.json (FSDP) nor .metadata (Megatron, written when its save is finalized)"
    ))
}

/// The LoRA adapter file an FSDP model's folder lacks, `None` when it is whole: both files of
/// `lora_adapter/` when the run trains LoRA (`lora`), or whenever the folder exists (a save
/// that began writing one must have finished it).
fn adapter_missing(dir: &Utf8Path, role: &str, lora: bool) -> Option<String> {
    let adapter = dir.join("lora_adapter");
    let fsdp = dir.join("fsdp_config.json").is_file();
    if !(adapter.exists() || (lora && fsdp)) {
        return None;
    }
    ["adapter_model.safetensors", "adapter_config.json"]
        .into_iter()
        .find(|name| !non_empty(&adapter.join(name)))
        .map(|name| format!("no {role}/lora_adapter/{name}"))
}

/// `world_size` of an `fsdp_config.json`.
fn world_size(config: &Utf8Path) -> Option<u64> {
    let text = std::fs::read_to_string(config).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    json.get("world_size")?.as_u64()
}

/// A file with something in it: a save killed after opening a file leaves it empty.
fn non_empty(path: &Utf8Path) -> bool {
    path.metadata().is_ok_and(|m| m.is_file() && m.len() > 0)
}

/// The step a run resumes from, or why none is safe: the newest whole step, whatever the
/// pointer says; never step 0 while a step folder exists. `ckpt_interval` (SkyRL's
/// `trainer.ckpt_interval`, when known): SkyRL refuses a folder whose newest `global_step_*` is
/// more than that past the step it resumes from ("Inconsistent checkpoint folder").
pub fn decide(folder: &Folder, ckpt_interval: Option<u64>) -> Decision {
    let ckpt = &folder.path;
    let Some(whole) = folder.newest_whole() else {
        if folder.steps.is_empty() {
            return match &folder.pointer {
                Pointer::Missing => Decision::Fresh,
                pointer => Decision::Refuse(format!(
                    "`{ckpt}/{POINTER_FILE}` {} but `{ckpt}` holds no global_step_* folder: its checkpoints \
                     were moved or deleted; put them back, or delete the pointer to start from step 0",
                    pointer.said()
                )),
            };
        }
        let newest = folder.steps.last().expect("a step");
        let why = match &newest.verdict {
            Verdict::Incomplete(why) => why.as_str(),
            Verdict::Whole => "",
        };
        return Decision::Refuse(format!(
            "`{ckpt}` holds {} and none is a whole checkpoint ({}: {why}): a start from step 0 would \
             overwrite them; move them out of the folder, or launch again with --wipe",
            folder.listing(),
            newest.name()
        ));
    };
    if let Some(interval) = ckpt_interval.filter(|i| *i > 0)
        && let Some(past) = (folder.steps.iter().rev()).find(|s| s.step > whole + interval)
    {
        return Decision::Refuse(format!(
            "`{ckpt}` holds {}, {} steps past global_step_{whole} (the newest whole checkpoint), more than \
             trainer.ckpt_interval={interval} allows: SkyRL refuses the folder (\"Inconsistent checkpoint \
             folder\"); move it out of the folder (another run or an unfinished save wrote it)",
            past.name(),
            past.step - whole
        ));
    }
    let repair = match &folder.pointer {
        Pointer::Step(n) if *n == whole => None,
        Pointer::Step(n) => Some(match folder.step(*n) {
            None => format!("`{POINTER_FILE}` names step {n}, which has no folder"),
            Some(Step {
                verdict: Verdict::Incomplete(why),
                ..
            }) => format!("`{POINTER_FILE}` names step {n}, which is not whole ({why})"),
            Some(_) => {
                format!("`{POINTER_FILE}` names step {n}, behind the newest whole step {whole}")
            }
        }),
        pointer => Some(format!("`{POINTER_FILE}` {}", pointer.said())),
    };
    Decision::Resume {
        step: whole,
        repair,
    }
}

/// Test folders in SkyRL's layout, shared by the unit tests here and the corpus test.
#[cfg(test)]
mod layout;

/// The wrapper's bash against [`decide`], on the same folders.
#[cfg(test)]
mod corpus;

#[cfg(test)]
mod tests {
    use super::layout::*;
    use super::*;

    const NONE: Expect = Expect { lora: false };

    fn folder(dir: &tempfile::TempDir) -> Folder {
        Folder::read(Utf8Path::from_path(dir.path()).unwrap(), Expect::default())
    }

    #[test]
    fn pointer_reads_as_skyrl_reads_it() {
        let dir = tempfile::tempdir().unwrap();
        let ckpt = Utf8Path::from_path(dir.path()).unwrap();
        assert_eq!(read_pointer(ckpt), Pointer::Missing);
        for (text, want) in [
            ("", Pointer::Empty),
            (" \n", Pointer::Empty),
            ("20\n", Pointer::Step(20)),
            ("x", Pointer::Unreadable("x".to_owned())),
            ("-3", Pointer::Unreadable("-3".to_owned())),
        ] {
            std::fs::write(ckpt.join(POINTER_FILE), text).unwrap();
            assert_eq!(read_pointer(ckpt), want, "{text:?}");
        }
    }

    #[test]
    fn a_step_is_whole_only_with_every_rank_and_its_trainer_state() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8Path::from_path(dir.path()).unwrap();
        fsdp_step(root, 10, 4, false);
        assert_eq!(
            judge_step(&root.join("global_step_10"), NONE),
            Verdict::Whole
        );
        std::fs::remove_file(root.join("global_step_10/policy/optim_world_size_4_rank_3.pt"))
            .unwrap();
        assert_eq!(
            judge_step(&root.join("global_step_10"), NONE),
            Verdict::Incomplete("no policy/optim_world_size_4_rank_3.pt".to_owned())
        );
        fsdp_step(root, 20, 2, true);
        std::fs::remove_file(root.join("global_step_20/critic/model_world_size_2_rank_1.pt"))
            .unwrap();
        assert!(!judge_step(&root.join("global_step_20"), NONE).eq(&Verdict::Whole));
        fsdp_step(root, 30, 1, false);
        std::fs::remove_file(root.join("global_step_30/trainer_state.pt")).unwrap();
        assert_eq!(
            judge_step(&root.join("global_step_30"), NONE),
            Verdict::Incomplete("no trainer_state.pt".to_owned())
        );
        megatron_step(root, 40, true);
        assert_eq!(
            judge_step(&root.join("global_step_40"), NONE),
            Verdict::Whole
        );
        megatron_step(root, 50, false);
        assert!(matches!(
            judge_step(&root.join("global_step_50"), NONE),
            Verdict::Incomplete(why) if why.contains(".metadata")
        ));
    }

    /// The policy's `lora_adapter/` written by the installed wheel's own `_save_lora_adapters`.
    fn wheel_lora_adapter(policy: &Utf8Path) {
        let oracle = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/lora_adapter_oracle.py");
        let out = std::process::Command::new("python3")
            .args([oracle, policy.as_str()])
            .output()
            .expect("python3 runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    #[test]
    fn a_lora_step_is_whole_only_with_the_adapter_skyrl_writes_last() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8Path::from_path(dir.path()).unwrap();
        let lora = Expect { lora: true };
        fsdp_step(root, 10, 2, true);
        let step = root.join("global_step_10");
        // Killed after fsdp_config.json, before the adapter: whole only to a run without LoRA.
        assert_eq!(judge_step(&step, NONE), Verdict::Whole);
        assert_eq!(
            judge_step(&step, lora),
            Verdict::Incomplete("no policy/lora_adapter/adapter_model.safetensors".to_owned())
        );
        wheel_lora_adapter(&step.join("policy"));
        assert_eq!(judge_step(&step, lora), Verdict::Whole);
        // The critic's strategy writes none (0.4.0 builds it without its model config).
        assert!(!step.join("critic/lora_adapter").exists());
        // A folder cut short says itself it is a LoRA save, flag or not.
        std::fs::write(step.join("policy/lora_adapter/adapter_config.json"), "").unwrap();
        for expect in [NONE, lora] {
            assert_eq!(
                judge_step(&step, expect),
                Verdict::Incomplete("no policy/lora_adapter/adapter_config.json".to_owned())
            );
        }
        // Megatron saves its adapters elsewhere: the flag asks nothing more of its steps.
        megatron_step(root, 20, true);
        assert_eq!(
            judge_step(&root.join("global_step_20"), lora),
            Verdict::Whole
        );
    }

    #[test]
    fn an_empty_pointer_over_whole_steps_resumes_from_the_newest() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8Path::from_path(dir.path()).unwrap();
        fsdp_step(root, 10, 2, false);
        fsdp_step(root, 20, 2, false);
        pointer(root, "");
        let f = folder(&dir);
        assert_eq!(f.pointer, Pointer::Empty);
        assert_eq!(f.newest_whole(), Some(20));
        assert!(matches!(
            decide(&f, Some(10)),
            Decision::Resume { step: 20, repair: Some(why) } if why.contains("is empty")
        ));
        pointer(root, "20");
        assert_eq!(
            decide(&folder(&dir), Some(10)),
            Decision::Resume {
                step: 20,
                repair: None
            }
        );
    }

    #[test]
    fn a_pointer_naming_an_incomplete_or_missing_step_resumes_from_the_newest_whole() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8Path::from_path(dir.path()).unwrap();
        fsdp_step(root, 10, 4, false);
        fsdp_step(root, 20, 4, false);
        std::fs::remove_file(root.join("global_step_20/policy/model_world_size_4_rank_3.pt"))
            .unwrap();
        pointer(root, "20");
        assert!(matches!(
            decide(&folder(&dir), Some(10)),
            Decision::Resume { step: 10, repair: Some(why) } if why.contains("rank_3")
        ));
        pointer(root, "120");
        assert!(matches!(
            decide(&folder(&dir), Some(10)),
            Decision::Resume { step: 10, repair: Some(why) } if why.contains("no folder")
        ));
    }

    #[test]
    fn never_from_step_0_over_step_folders() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8Path::from_path(dir.path()).unwrap();
        assert_eq!(decide(&folder(&dir), Some(10)), Decision::Fresh);
        fsdp_step(root, 40, 1, false);
        fsdp_step(root, 50, 1, false);
        assert!(matches!(
            decide(&folder(&dir), Some(10)),
            Decision::Resume { step: 50, repair: Some(why) } if why.contains("missing")
        ));
        std::fs::remove_dir_all(root.join("global_step_40")).unwrap();
        std::fs::remove_file(root.join("global_step_50/trainer_state.pt")).unwrap();
        assert!(matches!(
            decide(&folder(&dir), Some(10)),
            Decision::Refuse(_)
        ));
        std::fs::remove_dir_all(root.join("global_step_50")).unwrap();
        pointer(root, "50");
        assert!(matches!(
            decide(&folder(&dir), Some(10)),
            Decision::Refuse(_)
        ));
    }

    #[test]
    fn an_unfinished_save_too_far_past_the_newest_whole_step_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8Path::from_path(dir.path()).unwrap();
        fsdp_step(root, 10, 1, false);
        std::fs::create_dir_all(root.join("global_step_30")).unwrap();
        pointer(root, "10");
        assert!(matches!(
            decide(&folder(&dir), Some(10)),
            Decision::Refuse(why) if why.contains("Inconsistent checkpoint folder")
        ));
        assert!(matches!(
            decide(&folder(&dir), Some(20)),
            Decision::Resume {
                step: 10,
                repair: None
            }
        ));
    }
}
