//! The `disk-room` check: the checkpoint filesystem must hold the plan's checkpoints before the
//! job waits in the queue. A save that meets a full disk kills the run at its first
//! checkpoint (or at once, when even its log cannot be written), hours after the launch.
//!
//! What a save writes is SkyRL 0.4.0's FSDP strategy (`save_checkpoint`): each rank writes its
//! shard of the model's state dict (`model_world_size_W_rank_R.pt`, the fp32 parameters FSDP
//! trains, unless `trainer.policy.inference_only_init` loads them in bf16), of the optimizer's
//! (`optim_…`: AdamW's two fp32 moments per trained parameter; with LoRA only the adapters
//! train) and a small `extra_state_…`; rank 0 adds `huggingface/` (config, tokenizer). The
//! shards add up to the whole model, whatever the world size. A critic saves the same way.
//! SkyRL deletes old steps only after the new one is whole, so `max_ckpts_to_keep=K` holds
//! K+1 steps at once. HF exports (`hf_save_interval`) are never deleted.

use crate::check::model_size;
use crate::check::skyrl_rules::Values;
use crate::plan::Plan;
use crate::util::fmt::human;
use crate::util::fs::{Room, room};

/// Per save and role: the tokenizer and config in `huggingface/`, `extra_state_*`, `data.pt`
/// and `trainer_state.pt` (a Qwen tokenizer alone is 11 MB).
const SMALL_FILES: u64 = 64 << 20;

/// How many steps SkyRL keeps (-1: all).
const KEEP: &str = "trainer.max_ckpts_to_keep";

/// What the check says: a refusal, a warning, or why it could not judge.
#[derive(Debug, Clone, PartialEq)]
pub enum Said {
    Problem(String),
    Warning(String),
    Skipped(String),
}

/// What the plan writes, in bytes, and how many of each at most at once.
#[derive(Debug, Clone, PartialEq)]
pub struct Need {
    /// One checkpoint step: every role's shards and small files.
    pub per_save: u64,
    /// The steps on disk at once; `None` when every step is kept and the run's steps are unknown.
    pub held: Option<u64>,
    /// Why `held` is what it is, for the message.
    pub held_why: String,
    /// One HF export, and how many the run writes (0: none).
    pub per_export: u64,
    pub exports: u64,
    /// What the figures come from (models, sizes), for the message.
    pub basis: String,
}

/// The check on `plan`: its [`Need`] against the free space where it writes.
pub fn check(values: &Values, plan: &Plan) -> Vec<Said> {
    let need = match need(values, plan) {
        Ok(Some(need)) => need,
        Ok(None) => return Vec::new(),
        Err(why) => return vec![Said::Skipped(why)],
    };
    let ckpt = room(&plan.paths.ckpt_path);
    let export = room(&plan.paths.export_path);
    match ckpt {
        Some(ckpt) => decide(&need, &ckpt, export.as_ref()),
        None => vec![Said::Skipped(format!(
            "the free space of `{}` could not be read",
            plan.paths.ckpt_path
        ))],
    }
}

/// Refuses when the checkpoint filesystem cannot hold one save (with the first export when it
/// shares it), warns when it cannot hold all it keeps (and every export); the export
/// filesystem alike when it is another.
pub fn decide(need: &Need, ckpt: &Room, export: Option<&Room>) -> Vec<Said> {
    let shared = export.is_none_or(|e| e.device == ckpt.device);
    let exports_all = need.per_export * need.exports;
    let first_export = if need.exports > 0 { need.per_export } else { 0 };
    let (one, all) = match shared {
        true => (
            need.per_save + first_export,
            need.held.map(|n| n * need.per_save + exports_all),
        ),
        false => (need.per_save, need.held.map(|n| n * need.per_save)),
    };
    // The most steps that fit beside the exports: keeping one fewer leaves room for the next.
    let beside = if shared { exports_all } else { 0 };
    let fits = (ckpt.free.saturating_sub(beside)).checked_div(need.per_save);
    let smaller = match fits {
        Some(n) if n >= 2 => format!("`{KEEP}={}` fits", n - 1),
        _ => format!("a smaller `{KEEP}`"),
    };
    let fix = format!(
        "free space there, keep fewer checkpoints ({smaller}), or point the profile's \
         storage.checkpoint_root at a filesystem with room"
    );
    let mut said = Vec::new();
    if need.per_save > 0 || (shared && first_export > 0) {
        said.extend(judge(ckpt, one, all, &need.held_why, need, &fix));
    }
    if let Some(export) = export.filter(|_| !shared && need.exports > 0) {
        let all = Some(exports_all);
        let why = format!("{} HF exports, never deleted", need.exports);
        let fix = "free space there, or export less often (a larger `trainer.hf_save_interval`)";
        said.extend(judge(export, need.per_export, all, &why, need, fix));
    }
    said
}

/// One filesystem's verdict: `one` must fit, `all` should.
fn judge(
    room: &Room,
    one: u64,
    all: Option<u64>,
    held_why: &str,
    need: &Need,
    fix: &str,
) -> Option<Said> {
    let (free, at) = (human(room.free), &room.at);
    if room.free < one {
        return Some(Said::Problem(format!(
            "one checkpoint of this plan needs about {} ({}), but the filesystem of `{at}` has {free} free: \
             the job would fail at its first save; {fix}",
            human(one),
            need.basis
        )));
    }
    match all {
        Some(all) if room.free < all => Some(Said::Warning(format!(
            "the checkpoints this plan keeps need about {} ({held_why}; {} each: {}), but the filesystem of \
             `{at}` has {free} free: the run would fail at a later save; {fix}",
            human(all),
            human(need.per_save),
            need.basis
        ))),
        Some(_) => None,
        None => Some(Said::Skipped(format!(
            "{held_why}: the room for all of them was not checked ({} each, {free} free in `{at}`)",
            human(need.per_save)
        ))),
    }
}

/// What the plan writes; `Ok(None)` when it saves nothing, `Err` when its size is unknown.
pub fn need(values: &Values, plan: &Plan) -> Result<Option<Need>, String> {
    let interval = values.int("trainer.ckpt_interval").unwrap_or(0);
    let hf_interval = values.int("trainer.hf_save_interval").unwrap_or(0);
    if interval <= 0 && hf_interval <= 0 {
        return Ok(None);
    }
    let strategy = values.text("trainer.strategy").unwrap_or_default();
    if !strategy.starts_with("fsdp") {
        return Err(format!(
            "the size of a `trainer.strategy={strategy}` checkpoint is not estimated: the room \
             on the checkpoint filesystem was not checked"
        ));
    }
    let mut roles = vec![("policy", "trainer.policy")];
    if values.uses_critic() {
        roles.push(("critic", "trainer.critic"));
    }
    let (mut per_save, mut per_export, mut basis) = (0, 0, Vec::new());
    for (role, prefix) in roles {
        let model = values.get(&format!("{prefix}.model.path"));
        let Some((size, source)) = model.and_then(|m| model_size::estimate(&m, values.hf_cache))
        else {
            return Err(format!(
                "the {role}'s model size is unknown (no config.json in the HF cache, no size in its name): \
                 the room on the checkpoint filesystem was not checked"
            ));
        };
        let params = size.params_b * 1e9;
        // The critic is always built in fp32 (`bf16=False`).
        let weight = match role == "policy" && values.truthy("trainer.policy.inference_only_init") {
            true => 2.0,
            false => 4.0,
        };
        let lora = values
            .int(&format!("{prefix}.model.lora.rank"))
            .unwrap_or(0)
            > 0;
        let moments = if lora { 0.0 } else { 8.0 };
        per_save += (params * (weight + moments)) as u64 + SMALL_FILES;
        per_export += (params * weight) as u64 + SMALL_FILES;
        basis.push(format!(
            "{role}: {:.2}B parameters from {source}, {weight} B each{}",
            size.params_b,
            if lora { "" } else { " + 8 B of Adam moments" }
        ));
    }
    let (steps, _) = crate::plan::estimate::steps(plan);
    let count = |every: i64| steps.map(|s| s.div_ceil(every as u64));
    let (held, held_why) = match (interval > 0, values.int(KEEP).unwrap_or(-1)) {
        (false, _) => (Some(0), "no checkpoint saved".to_owned()),
        (true, keep) if keep > 0 => held(keep as u64, count(interval), keep),
        (true, _) => match count(interval) {
            Some(n) => (
                Some(n),
                format!("`{KEEP}=-1` keeps all {n} saves of the run"),
            ),
            None => (
                None,
                format!("`{KEEP}=-1` keeps every save, and the run's steps are unknown"),
            ),
        },
    };
    let exports = if hf_interval > 0 {
        count(hf_interval).unwrap_or(1)
    } else {
        0
    };
    Ok(Some(Need {
        per_save: if interval > 0 { per_save } else { 0 },
        held,
        held_why,
        per_export,
        exports,
        basis: basis.join("; "),
    }))
}

/// Steps on disk at once with `keep` kept: the new one is whole before the oldest goes.
fn held(keep: u64, saves: Option<u64>, shown: i64) -> (Option<u64>, String) {
    let at_once = saves.map_or(keep + 1, |s| s.min(keep + 1));
    (
        Some(at_once),
        format!(
            "{at_once} at once with `{KEEP}={shown}`: SkyRL deletes the oldest only once the new one is whole"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use camino::Utf8PathBuf;

    const GIB: u64 = 1 << 30;

    fn need(per_save: u64, held: Option<u64>, per_export: u64, exports: u64) -> Need {
        Need {
            per_save,
            held,
            held_why: "why".into(),
            per_export,
            exports,
            basis: "basis".into(),
        }
    }

    fn room(free: u64, device: u64) -> Room {
        Room {
            at: Utf8PathBuf::from(format!("/fs{device}")),
            free,
            device,
        }
    }

    #[test]
    fn refuses_when_one_save_does_not_fit() {
        let said = decide(&need(18 * GIB, Some(3), 0, 0), &room(100 << 10, 1), None);
        let [Said::Problem(m)] = said.as_slice() else {
            panic!("{said:?}")
        };
        assert!(
            m.contains("18.0 GiB") && m.contains("100.0 KiB free"),
            "{m}"
        );
        assert!(
            m.contains("`/fs1`") && m.contains("storage.checkpoint_root"),
            "{m}"
        );
    }

    #[test]
    fn warns_when_one_fits_but_not_all_it_keeps() {
        let said = decide(&need(18 * GIB, Some(3), 0, 0), &room(40 * GIB, 1), None);
        let [Said::Warning(m)] = said.as_slice() else {
            panic!("{said:?}")
        };
        assert!(m.contains("54.0 GiB") && m.contains("40.0 GiB free"), "{m}");
        // Two steps fit in 40 GiB: keeping one does (the new one is written beside it).
        assert!(m.contains("(`trainer.max_ckpts_to_keep=1` fits)"), "{m}");
        assert!(decide(&need(18 * GIB, Some(3), 0, 0), &room(54 * GIB, 1), None).is_empty());
    }

    #[test]
    fn exports_count_where_they_are_written() {
        // Shared filesystem: one save and the first export must fit together.
        let n = need(10 * GIB, Some(2), 4 * GIB, 5);
        let said = decide(&n, &room(12 * GIB, 1), Some(&room(12 * GIB, 1)));
        assert!(matches!(said.as_slice(), [Said::Problem(_)]), "{said:?}");
        // Another filesystem for exports: the checkpoint one holds its two steps, the export
        // one only three of its five exports.
        let said = decide(&n, &room(20 * GIB, 1), Some(&room(12 * GIB, 2)));
        let [Said::Warning(m)] = said.as_slice() else {
            panic!("{said:?}")
        };
        assert!(m.contains("20.0 GiB") && m.contains("`/fs2`"), "{m}");
    }

    #[test]
    fn all_kept_with_unknown_steps_is_said() {
        let said = decide(&need(GIB, None, 0, 0), &room(40 * GIB, 1), None);
        assert!(matches!(said.as_slice(), [Said::Skipped(_)]), "{said:?}");
        // One save that does not fit is refused all the same.
        let said = decide(&need(GIB, None, 0, 0), &room(GIB / 2, 1), None);
        assert!(matches!(said.as_slice(), [Said::Problem(_)]), "{said:?}");
    }

    #[test]
    fn steps_held_at_once() {
        assert_eq!(held(2, Some(10), 2).0, Some(3));
        assert_eq!(held(2, None, 2).0, Some(3));
        assert_eq!(held(5, Some(2), 5).0, Some(2));
    }
}
