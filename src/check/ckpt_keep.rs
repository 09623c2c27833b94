//! The `ckpt-keep` check: Megatron's `async_dist_ckpt_save=true` writes a step's shards from a
//! background process, finalized only at the next save, a load or shutdown, while SkyRL writes
//! the pointer and deletes old steps (`cleanup_old_checkpoints`) at once. With
//! `max_ckpts_to_keep` below 2 a kill in that window leaves no whole checkpoint at all: the
//! previous whole step is already deleted, the new one never finalized.

use crate::check::skyrl_rules::Values;

const ASYNC: &str = "trainer.policy.megatron_config.async_dist_ckpt_save";
const KEEP: &str = "trainer.max_ckpts_to_keep";

pub(super) fn check(values: &Values) -> Option<String> {
    if !values.truthy(ASYNC) {
        return None;
    }
    let keep = values.int(KEEP)?;
    (keep != -1 && keep < 2).then(|| {
        format!(
            "`{ASYNC}=true` with `{KEEP}={keep}`: SkyRL deletes the older checkpoints as soon as a save \
             starts, before the async shards of the new one are finalized, so a kill (time limit, node \
             failure) in between leaves no whole checkpoint to resume from; set `{KEEP}=2` or more \
             (or -1 to keep all), or `{ASYNC}=false`"
        )
    })
}
