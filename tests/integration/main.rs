//! The fast suite: one test binary, one module per area, each test running the real rlctl
//! binary (or the library where the binary cannot show it). The real SLURM cluster's tests are
//! their own binary, `tests/real_slurm.rs`.

#[path = "../common/mod.rs"]
mod common;

mod account;
mod before_the_queue;
mod big_ledger;
mod board;
mod caches;
mod clean;
mod deep;
mod deep_upstream;
mod diff;
mod discover;
mod disk_room;
mod docs;
mod doctor;
mod dry_run;
mod estimate;
mod exit;
mod grid_over;
mod history;
mod hostile;
mod hydra_grammar;
mod identity;
mod json_out;
mod launch;
mod layout;
mod ledger;
mod log_cache;
mod logs;
mod messages;
mod metrics;
mod onboard;
mod output;
mod preflight;
mod presets;
mod profiles;
mod qos_limits;
mod quoting;
mod real_runs;
mod report;
mod report_plots;
mod resume_knobs;
mod resume_saved_by;
mod retire;
mod schema;
mod schema_messages;
mod scripts;
mod sealed;
mod skyrl_rules;
mod skyrl_rules_upstream;
mod slots;
mod staging;
mod stall;
mod tend;
mod unrecorded;
mod until_done;
mod upstream;
mod upstream_schema;
mod wait;
mod wandb;
mod watermark;
mod wrong_answers;
