//! The names of the metrics rlctl reads from SkyRL's metric lines, each spelled once: the
//! alerts, `watch`, `status`, the `metrics` table and the grid report all name them from here.

/// Policy entropy, nats per token: the collapse guard.
pub const ENTROPY: &str = "policy/policy_entropy";
/// Gradient norm before clipping.
pub const GRAD_NORM: &str = "policy/raw_grad_norm";
/// Gradient norm after clipping: read when a run does not log [`GRAD_NORM`].
pub const GRAD_NORM_CLIPPED: &str = "policy/grad_norm";
/// The policy's loss.
pub const POLICY_LOSS: &str = "policy/policy_loss";
/// Where the policy's metrics live; the off-policy log-ratio ones have [`LOG_RATIO`] in their
/// names.
pub const POLICY_PREFIX: &str = "policy/";
pub const LOG_RATIO: &str = "log_ratio";

/// Mean raw reward of a train step's samples.
pub const REWARD: &str = "reward/avg_raw_reward";
/// A train step's pass@N is `reward/avg_pass_at_<N>`.
pub const PASS_AT_PREFIX: &str = "reward/avg_pass_at_";

/// On-policy distillation: mean per-token KL from the student to the teacher (should fall).
pub const TOKEN_KL: &str = "distill/token_kl_mean";
/// On-policy distillation: the teacher's mean log-probability of the sampled tokens.
pub const TEACHER_LOGPROB: &str = "teacher/chosen_logprob_mean";

/// Wall seconds of a whole train step, and of its parts.
pub const STEP_TIME: &str = "timing/step";
pub const GENERATE_TIME: &str = "timing/generate";
pub const TRAIN_TIME: &str = "timing/policy_train";
pub const SYNC_TIME: &str = "timing/sync_weights";

/// Mean generated tokens per sample of a train step: with the samples per step and the step
/// time, the effective tokens/s.
pub const AVG_NUM_TOKENS: &str = "generate/avg_num_tokens";

/// Eval metrics are `eval/<set>/<name>`; this set pools all the others.
pub const EVAL_ALL: &str = "all";
/// The mean score of the eval steps over all sets.
pub const EVAL_SCORE: &str = "eval/all/avg_score";

/// N of a train pass@N key.
pub fn train_pass_at(key: &str) -> Option<u64> {
    key.strip_prefix(PASS_AT_PREFIX)?.parse().ok()
}

/// The set and k of an eval pass@k key, `eval/<set>/pass_at_<k>`.
pub fn eval_pass_at(key: &str) -> Option<(&str, u64)> {
    let (set, k) = key.strip_prefix("eval/")?.rsplit_once("/pass_at_")?;
    (!set.is_empty()).then_some((set, k.parse().ok()?))
}
