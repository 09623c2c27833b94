//! The algorithm's names and switches: the advantage estimators and policy losses the
//! entrypoint registers, loss reductions, GAE's critic, KL's two homes, TIS (upstream: off-policy
//! correction), step-wise trajectories, checkpoint count.

use super::Values;
use super::names::Entrypoint;

/// The policy losses TIS (truncated importance sampling) is implemented for.
const TIS_LOSSES: [&str; 2] = ["regular", "dual_clip"];

pub fn check(v: &Values, problems: &mut Vec<String>) {
    if v.text("trainer.algorithm.advantage_estimator").as_deref() == Some("gae") && !v.uses_critic()
    {
        problems.push(
            "`trainer.algorithm.advantage_estimator=gae` (PPO) needs a critic: set `trainer.critic.model.path`, \
             or use `trainer.algorithm.advantage_estimator=grpo`"
                .to_owned(),
        );
    }
    if v.truthy("trainer.algorithm.use_kl_in_reward") && v.truthy("trainer.algorithm.use_kl_loss") {
        problems.push(
            "`trainer.algorithm.use_kl_in_reward=true` and `trainer.algorithm.use_kl_loss=true` cannot both be on \
             (SkyRL's validate_cfg refuses it): set one of them to false"
                .to_owned(),
        );
    }
    if v.int("trainer.max_ckpts_to_keep") == Some(0) {
        problems.push(
            "`trainer.max_ckpts_to_keep=0` would keep no checkpoint: set a positive count to keep the last N, or -1 \
             to keep them all"
                .to_owned(),
        );
    }
    registered_names(v, problems);
    let key = "trainer.algorithm.loss_reduction";
    let reductions = v.names().loss_reductions;
    super::one_of(v, key, reductions, "SkyRL's loss reductions", problems);
    if v.upstream() {
        if v.text(key).as_deref() == Some("seq_mean_token_sum_norm")
            && !v.is_set("trainer.algorithm.max_seq_len")
        {
            problems.push(
                "`trainer.algorithm.loss_reduction=seq_mean_token_sum_norm` divides by a sequence length upstream \
                 skyrl does not guess: set `trainer.algorithm.max_seq_len` (often the model's context window)"
                    .to_owned(),
            );
        }
        off_policy_correction(v, problems);
        step_wise(v, problems);
        language_model_only(v, problems);
    } else {
        tis(v, problems);
    }
}

fn registered_names(v: &Values, problems: &mut Vec<String>) {
    let module = v.entry_module();
    let names = v.names();
    let Some(this) = names.entrypoints.iter().find(|e| e.module == module) else {
        return;
    };
    let key = "trainer.algorithm.advantage_estimator";
    registered(v, key, names.estimators, this, |e| e.estimators, problems);
    let key = "trainer.algorithm.policy_loss_type";
    registered(v, key, names.policy_losses, this, |e| e.losses, problems);
}

/// The knob names a function of the registry: ppo_utils.py's `base`, or the entrypoint's own.
fn registered(
    v: &Values,
    key: &str,
    base: &[&str],
    this: &Entrypoint,
    own: fn(&Entrypoint) -> &'static [&'static str],
    problems: &mut Vec<String>,
) {
    let names: Vec<&str> = base.iter().chain(own(this)).copied().collect();
    let value = v.show(key);
    // A name only another entrypoint registers: the plan runs the wrong entrypoint for it.
    let elsewhere = (v.names().entrypoints.iter())
        .find(|e| own(e).contains(&value.as_str()))
        .map(|e| format!("; `{value}` is registered by `{}`", e.module))
        .unwrap_or_default();
    let why = format!("what {} registers{elsewhere}", this.registrar());
    super::one_of(v, key, &names, &why, problems);
}

fn tis(v: &Values, problems: &mut Vec<String>) {
    if !v.truthy("trainer.algorithm.use_tis") {
        return;
    }
    let cap = "trainer.algorithm.tis_imp_ratio_cap";
    // Python's `cap <= 0`: a NaN cap passes it, a null one raises.
    if v.float(cap).is_none_or(|c| c <= 0.0) {
        problems.push(format!(
            "`trainer.algorithm.use_tis=true` needs a positive `{cap}`, not {}: set e.g. `{cap}=2.0`",
            v.show(cap)
        ));
    }
    if v.text("generator.backend").as_deref() == Some("sglang") {
        problems.push(
            "`trainer.algorithm.use_tis=true` is not supported with `generator.backend=sglang`: use \
             `generator.backend=vllm`"
                .to_owned(),
        );
    }
    let loss = v.show("trainer.algorithm.policy_loss_type");
    if !TIS_LOSSES.contains(&loss.as_str()) {
        problems.push(format!(
            "`trainer.algorithm.use_tis=true` is implemented for the regular and dual_clip policy losses only, not \
             `trainer.algorithm.policy_loss_type={loss}`: set `trainer.algorithm.policy_loss_type=regular`, or \
             `trainer.algorithm.use_tis=false`"
        ));
    }
}

/// Upstream turns `use_tis` into token-level off-policy correction, then checks its two names;
/// the covariance losses do not take a correction.
fn off_policy_correction(v: &Values, problems: &mut Vec<String>) {
    let ratio = "trainer.algorithm.off_policy_correction.tis_ratio_type";
    let mask = "trainer.algorithm.off_policy_correction.sequence_mask_metric";
    let tis = v.truthy("trainer.algorithm.use_tis");
    if !tis && v.truthy(ratio) && !matches!(v.text(ratio).as_deref(), Some("token" | "sequence")) {
        problems.push(format!(
            "`{ratio}={}` is not token or sequence: set one of them, or null (no correction)",
            v.show(ratio)
        ));
    }
    if v.truthy(mask) && !matches!(v.text(mask).as_deref(), Some("product" | "geometric")) {
        problems.push(format!(
            "`{mask}={}` is not product or geometric: set one of them, or null (no mask)",
            v.show(mask)
        ));
    }
    let corrects = tis || v.is_set(ratio) || v.is_set(mask);
    let loss = v.show("trainer.algorithm.policy_loss_type");
    if corrects && matches!(loss.as_str(), "clip_cov" | "kl_cov") {
        let by = if tis {
            "`trainer.algorithm.use_tis=true` (upstream: token-level off-policy correction)"
                .to_owned()
        } else {
            "off-policy correction (`trainer.algorithm.off_policy_correction`)".to_owned()
        };
        problems.push(format!(
            "{by} does not support `trainer.algorithm.policy_loss_type={loss}`: use another policy loss (e.g. \
             regular), or turn the correction off"
        ));
    }
}

/// Step-wise training broadcasts one advantage per trajectory: only outcome estimators fit.
fn step_wise(v: &Values, problems: &mut Vec<String>) {
    let step_wise = v.truthy("generator.step_wise_trajectories");
    let estimator = v.show("trainer.algorithm.advantage_estimator");
    if step_wise && matches!(estimator.as_str(), "gae" | "reinforce++") {
        problems.push(format!(
            "`trainer.algorithm.advantage_estimator={estimator}` gives per-token advantages, which \
             `generator.step_wise_trajectories=true` collapses: use grpo, rloo or maxrl, or turn step-wise off"
        ));
    }
    let reduction = "trainer.algorithm.loss_reduction";
    if step_wise && v.text(reduction).as_deref() == Some("token_mean_legacy") {
        problems.push(format!(
            "`{reduction}=token_mean_legacy` is not supported with `generator.step_wise_trajectories=true`: set \
             `{reduction}=token_mean`"
        ));
    }
    if v.truthy("generator.merge_stepwise_output") {
        if v.truthy("generator.inference_engine.enable_return_routed_experts") {
            problems.push(
                "`generator.merge_stepwise_output=true` does not merge routed experts: turn off \
                 `generator.inference_engine.enable_return_routed_experts` or the merging"
                    .to_owned(),
            );
        }
        if !step_wise {
            problems.push(
                "`generator.merge_stepwise_output=true` merges step-wise outputs: set \
                 `generator.step_wise_trajectories=true`, or turn the merging off"
                    .to_owned(),
            );
        }
    }
}

/// A language-model-only policy needs language-model-only engines (and ref, when it runs).
fn language_model_only(v: &Values, problems: &mut Vec<String>) {
    if !v.truthy("trainer.policy.language_model_only") {
        return;
    }
    for key in [
        "generator.inference_engine.language_model_only",
        "trainer.ref.language_model_only",
    ] {
        if key.starts_with("trainer.ref") && !v.uses_ref() {
            continue;
        }
        if !v.truthy(key) {
            problems.push(format!(
                "`trainer.policy.language_model_only=true` needs `{key}=true` too: set it, or turn it off for the policy"
            ));
        }
    }
}
