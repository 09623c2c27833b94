//! The run store: what rlctl keeps of the runs it submitted, under the run root. The ledger of
//! records (`ledger`) and a record's checkpoint folder (`checkpoints`), its records grouped by knob fingerprint for the speeds (`recorded`), the
//! intents a submission keeps before sbatch answers (`unrecorded`) and a grid's asked cells
//! (`intent`). Below `check`, so that preflight reads what was recorded; it knows plans (a record
//! is made of one) and the SLURM client, and nothing of the stages that write it.

pub mod checkpoints;
pub mod intent;
pub mod ledger;
pub mod recorded;
pub mod unrecorded;
