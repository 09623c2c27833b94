//! The `data-rows` check: SkyRL's train dataloader drops the last partial batch, so a training
//! set of fewer rows than `trainer.train_batch_size` has no step in an epoch: the job waits in
//! the queue, loads every model and trains nothing.

use crate::plan::Plan;
use crate::plan::estimate::{parquet_staged, stage_command};
use camino::Utf8Path;

/// Fewer staged rows than one batch. Files not staged are the `offline` check's to report.
pub(super) fn check(plan: &Plan) -> Option<String> {
    let s = &plan.schedule;
    let batch = s.train_batch_size.filter(|b| *b > 0)?;
    if s.train_data.is_empty() {
        return None;
    }
    let mut rows = 0;
    for file in &s.train_data {
        rows += parquet_staged(Utf8Path::new(file)).ok()?;
    }
    (rows < batch as u64).then(|| {
        format!(
            "`data.train_data` holds {rows} rows ({}), fewer than trainer.train_batch_size={batch}: the \
             train dataloader drops the partial batch, so the trainer would run no step; set \
             trainer.train_batch_size (and trainer.policy_mini_batch_size) to {rows} or less, or stage the \
             whole dataset (`{}`)",
            s.train_data.join(", "),
            stage_command(plan)
        )
    })
}
