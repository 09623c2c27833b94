//! Following runs after submission, one idea per file: which recorded runs a name means
//! ([`select`]), what SLURM says of their jobs ([`probe`]), what their logs say ([`log`]) and
//! the steps of all of a run's jobs joined ([`history`]), a
//! run's row ([`state`]), and the commands that read them: `status`, `cancel`, `logs`, `watch` (a live table of several: [`board`]),
//! `wait`, `tend`, `metrics`, `report`, `clean`, `retire`.

pub mod alerts;
pub mod board;
pub mod cancel;
pub mod clean;
pub mod ended;
pub mod estimate;
pub mod grids;
pub mod history;
pub mod log;
pub mod logs;
pub mod metrics;
pub mod phases;
pub mod probe;
pub mod report;
pub mod retire;
pub mod roster;
pub mod sealed;
pub mod seen;
pub mod select;
pub mod settled;
pub mod stall;
pub mod state;
pub mod status;
pub mod tend;
pub mod wait;
pub mod wandb_sync;
pub mod watch;

pub use log::{read_log, read_series};
pub use probe::{JobState, Probe, Queue, Warning};
pub use select::{select, select_runs};
pub use state::RunState;
