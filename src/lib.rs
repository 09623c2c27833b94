//! rlctl: typed presets -> one resolved plan -> rendered sbatch and run scripts -> sbatch.

pub mod alerts;
pub mod cli;
pub mod cluster;
pub mod commands;
pub mod doctor;
pub mod error;
pub mod job_env;
pub mod knob;
pub mod knob_layers;
pub mod library;
pub mod metrics;
pub mod model_size;
pub mod overrides;
pub mod plan;
pub mod preflight;
pub mod preset;
pub mod quote;
pub mod render;
pub mod report;
pub mod schema;
pub mod schema_import;
pub mod skyrl_rules;
pub mod slurm;
pub mod submit;
pub mod walltime;
