//! rlctl: typed presets -> one resolved plan -> preflight checks -> rendered sbatch and run
//! scripts -> sbatch -> the runs it follows. Each folder is one stage; imports only go down:
//! `cli`/`cmd` -> `preset` -> `plan` -> `check` / `render` -> `stage` / `submit` -> `runs`, with
//! `schema`, `util` and `slurm` (the SLURM client) as leaves any stage may use, and `store` (the
//! run store: ledger, groups, intents) below `check`, so that preflight reads what was recorded.

pub mod check;
pub mod checkpoint;
pub mod cli;
pub mod cmd;
pub mod error;
pub mod exit;
pub mod mcp;
pub mod plan;
pub mod preset;
pub mod render;
pub mod runs;
pub mod schema;
pub mod slurm;
pub mod stage;
pub mod store;
pub mod submit;
pub mod util;
