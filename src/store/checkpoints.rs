//! A record's checkpoint folder: where SkyRL keeps the run's saves, what they hold, and the
//! step a new attempt resumes from ([`crate::checkpoint`] judges them).

use crate::store::ledger::Record;
use camino::Utf8PathBuf;

impl Record {
    /// Where SkyRL keeps this run's checkpoints (`trainer.ckpt_path`, which rlctl always
    /// sets): the `global_step_*` folders and the `latest_ckpt_global_step.txt` pointer.
    pub fn ckpt_path(&self) -> Utf8PathBuf {
        crate::plan::ckpt_path_in(&self.checkpoint_dir)
    }

    /// What the run's checkpoint folder holds: its pointer, and each step folder judged whole
    /// or not ([`crate::checkpoint`]).
    pub fn checkpoints(&self) -> crate::checkpoint::Folder {
        crate::checkpoint::Folder::read(&self.ckpt_path(), self.saves())
    }

    /// What each whole step of the run holds: its LoRA adapter when the run trains LoRA, as
    /// recorded, or (a record of an older rlctl) as its knobs set it.
    pub fn saves(&self) -> crate::checkpoint::Expect {
        let rank = (self.knobs.get(crate::checkpoint::LORA_RANK))
            .and_then(|v| v.trim().parse::<i64>().ok());
        crate::checkpoint::Expect {
            lora: self.lora || rank.is_some_and(|r| r > 0),
        }
    }

    /// The step a new attempt resumes from (the newest whole checkpoint, whatever the pointer
    /// says), or why none is safe: what the job's wrapper decides at its start, decided alike.
    pub fn resume_decision(&self) -> crate::checkpoint::Decision {
        let interval =
            (self.knobs.get("trainer.ckpt_interval")).and_then(|v| v.trim().parse().ok());
        crate::checkpoint::decide(&self.checkpoints(), interval)
    }
}
