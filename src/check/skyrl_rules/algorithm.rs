//! The algorithm's names and switches: the advantage estimators and policy losses the
//! entrypoint registers, loss reductions, GAE's critic, KL's two homes, TIS, checkpoint count.

use super::Values;

/// What MarinSkyRL's ppo_utils.py registers for every entrypoint. skyrl-train 0.3.1 lacks
/// `rloo_n` and `rloo_n_pbs`.
const ESTIMATORS: [&str; 6] = ["gae", "grpo", "rloo", "rloo_n", "rloo_n_pbs", "reinforce++"];
const POLICY_LOSSES: [&str; 7] = [
    "regular",
    "dual_clip",
    "gspo",
    "cispo",
    "clip_cov",
    "kl_cov",
    "sapo",
];

/// What an entrypoint module registers on import, on top of ppo_utils.py's names.
struct Entrypoint {
    module: &'static str,
    estimators: &'static [&'static str],
    losses: &'static [&'static str],
}

/// The entrypoints whose names are known. Another entrypoint may register anything, so its
/// names are not checked.
const ENTRYPOINTS: [Entrypoint; 3] = [
    Entrypoint {
        module: super::MAIN_BASE,
        estimators: &[],
        losses: &[],
    },
    Entrypoint {
        module: "examples.on_policy_distillation.main_on_policy_distill",
        estimators: &["no_op"],
        losses: &["importance_sampling"],
    },
    Entrypoint {
        module: "examples.on_policy_distillation_logits.main_on_policy_distill_logits",
        estimators: &["no_op"],
        losses: &["importance_sampling"],
    },
];

/// MarinSkyRL adds `seq_mean_token_sum_norm_global` to skyrl-train 0.3.1's three.
const LOSS_REDUCTIONS: [&str; 4] = [
    "token_mean",
    "sequence_mean",
    "seq_mean_token_sum_norm",
    "seq_mean_token_sum_norm_global",
];

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
    super::one_of(
        v,
        key,
        &LOSS_REDUCTIONS,
        "SkyRL's loss reductions",
        problems,
    );
    tis(v, problems);
}

fn registered_names(v: &Values, problems: &mut Vec<String>) {
    let module = v.entry_module();
    let Some(this) = ENTRYPOINTS.iter().find(|e| e.module == module) else {
        return;
    };
    let key = "trainer.algorithm.advantage_estimator";
    registered(v, key, &ESTIMATORS, this, |e| e.estimators, problems);
    let key = "trainer.algorithm.policy_loss_type";
    registered(v, key, &POLICY_LOSSES, this, |e| e.losses, problems);
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
    let elsewhere = ENTRYPOINTS
        .iter()
        .find(|e| own(e).contains(&value.as_str()))
        .map(|e| format!("; `{value}` is registered by `{}`", e.module))
        .unwrap_or_default();
    let why = format!("what `{}` registers{elsewhere}", this.module);
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
