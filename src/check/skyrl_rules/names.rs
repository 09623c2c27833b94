//! The names each SkyRL accepts, one row per flavour: what its registries hold (advantage
//! estimators and policy losses, ppo_utils.py's and each known entrypoint's), its loss
//! reductions, the strategies its entry module has workers for, Megatron's weight-sync
//! backends, its key for sample packing and how many logprobs it returns. A rule reads its
//! flavour's row ([`Values::names`](super::Values::names)) rather than branching on the flavour
//! for a list; a rule that only one flavour has stays a branch of its own.

use crate::schema::flavour::Flavour;

pub struct Names {
    /// What ppo_utils.py registers for every entrypoint.
    pub estimators: &'static [&'static str],
    pub policy_losses: &'static [&'static str],
    /// The entrypoints whose registrations are known, by MarinSkyRL's module names. Another
    /// entrypoint may register anything, so its names are not checked.
    pub entrypoints: &'static [Entrypoint],
    pub loss_reductions: &'static [&'static str],
    /// The strategies the entrypoint has workers for; anything else is a ValueError after Ray
    /// is up.
    pub strategies: &'static [&'static str],
    /// The weight-sync backends `trainer.strategy=megatron` takes.
    pub megatron_sync: &'static [&'static str],
    /// The switch Megatron's context parallel needs (sample packing, by its name here).
    pub sample_packing: &'static str,
    /// The most logprobs a sample returns (`generator.sampling_params.logprobs`): the chosen
    /// token's only.
    pub most_logprobs: i64,
}

/// What an entrypoint module registers on import, on top of ppo_utils.py's names.
pub struct Entrypoint {
    pub module: &'static str,
    /// How a message names what registers the names, when not by the module.
    pub by: Option<&'static str>,
    pub estimators: &'static [&'static str],
    pub losses: &'static [&'static str],
}

impl Entrypoint {
    /// What registers the names, as a message says it.
    pub fn registrar(&self) -> String {
        self.by
            .map_or_else(|| format!("`{}`", self.module), str::to_owned)
    }
}

/// MarinSkyRL @ a559688. skyrl-train 0.3.1 lacks `rloo_n`, `rloo_n_pbs` and the global loss
/// reduction.
const MARIN: Names = Names {
    estimators: &["gae", "grpo", "rloo", "rloo_n", "rloo_n_pbs", "reinforce++"],
    policy_losses: &[
        "regular",
        "dual_clip",
        "gspo",
        "cispo",
        "clip_cov",
        "kl_cov",
        "sapo",
    ],
    entrypoints: &[
        Entrypoint {
            module: super::MAIN_BASE,
            by: None,
            estimators: &[],
            losses: &[],
        },
        Entrypoint {
            module: "examples.on_policy_distillation.main_on_policy_distill",
            by: None,
            estimators: &["no_op"],
            losses: &["importance_sampling"],
        },
        Entrypoint {
            module: "examples.on_policy_distillation_logits.main_on_policy_distill_logits",
            by: None,
            estimators: &["no_op"],
            losses: &["importance_sampling"],
        },
    ],
    loss_reductions: &[
        "token_mean",
        "sequence_mean",
        "seq_mean_token_sum_norm",
        "seq_mean_token_sum_norm_global",
    ],
    strategies: &["fsdp", "fsdp2", "megatron", "deepspeed"],
    megatron_sync: &["nccl"],
    sample_packing: "trainer.use_sample_packing",
    most_logprobs: 0,
};

/// Upstream skyrl 0.4.0: its registries as `repopulate_all_registries` fills them (its own
/// entry module adds nothing; its OPD example adds `no_op`; other examples may, and are not
/// checked), no global loss reduction
/// but `token_mean_legacy` and `prompt_mean`, FSDP (`fsdp2` its old name) and Megatron workers
/// only, delta and sharded RDT weight sync, sample packing renamed to removing the micro
/// batches' padding, and 1 logprob taken as well as 0.
const UPSTREAM: Names = Names {
    estimators: &["grpo", "gae", "rloo", "reinforce++", "maxrl"],
    policy_losses: &[
        "regular",
        "dual_clip",
        "gspo",
        "cispo",
        "clip_cov",
        "kl_cov",
        "sapo",
        "cross_entropy",
        "importance_sampling",
        "dppo",
        "rollout_is",
    ],
    entrypoints: &[
        Entrypoint {
            module: super::MAIN_BASE,
            by: Some("upstream skyrl's ppo_utils.py"),
            estimators: &[],
            losses: &[],
        },
        // Upstream's OPD example, by MarinSkyRL's name of it (the rules know modules so).
        Entrypoint {
            module: "examples.on_policy_distillation.main_on_policy_distill",
            by: Some(
                "upstream skyrl's ppo_utils.py with `examples.train.on_policy_distillation.main_on_policy_distill`",
            ),
            estimators: &["no_op"],
            losses: &[],
        },
    ],
    loss_reductions: &[
        "token_mean",
        "token_mean_legacy",
        "sequence_mean",
        "seq_mean_token_sum_norm",
        "prompt_mean",
    ],
    strategies: &["fsdp", "fsdp2", "megatron"],
    megatron_sync: &["nccl", "delta", "sharded_rdt"],
    sample_packing: "trainer.remove_microbatch_padding",
    most_logprobs: 1,
};

/// The row of `flavour`.
pub fn of(flavour: Flavour) -> &'static Names {
    match flavour {
        Flavour::Marin => &MARIN,
        Flavour::Upstream => &UPSTREAM,
    }
}
