//! `validate_batch_sizes`: each prompt of a train batch becomes `n_samples_per_prompt`
//! samples, split over the data-parallel workers with Python's `//` (rounding down); a worker's
//! train batch must hold whole mini batches, and a mini batch whole micro batches.

use super::{Values, floor_div, py_mod};

pub fn check(v: &Values, problems: &mut Vec<String>) {
    let (Some(train), Some(n)) = (
        v.int("trainer.train_batch_size"),
        v.int("generator.n_samples_per_prompt"),
    ) else {
        return;
    };
    let megatron = v.text("trainer.strategy").as_deref() == Some("megatron");
    let mut ok = positive_sizes(v, train, problems);
    let micro = v.int("trainer.micro_train_batch_size_per_gpu");
    let policy = Model {
        role: "policy",
        mini_key: "trainer.policy_mini_batch_size",
    };
    let policy_dp = policy.dp(v, megatron, problems);
    match (policy_dp, micro) {
        (Some(dp), Some(micro)) if ok => ok = policy.split(v, train, n, dp, micro, problems),
        _ => ok = false,
    }
    let critic = Model {
        role: "critic",
        mini_key: "trainer.critic_mini_batch_size",
    };
    // SkyRL sizes the critic by its sequence parallel size, under every strategy, and divides
    // by it even when there is no critic.
    let critic_dp = critic.dp(v, false, problems);
    if v.uses_critic() {
        match (critic_dp, micro) {
            (Some(dp), Some(micro)) if ok => ok = critic.split(v, train, n, dp, micro, problems),
            _ => ok = false,
        }
    }
    let (Some(policy_dp), true) = (policy_dp, ok) else {
        return;
    };
    let mut lcm = policy_dp;
    let mut ref_dp = None;
    if v.uses_ref() {
        let model = Model {
            role: "ref",
            mini_key: "",
        };
        let Some(dp) = model.dp(v, megatron, problems) else {
            return;
        };
        ref_dp = Some(dp);
        lcm = python_lcm(lcm, dp);
    }
    // MarinSkyRL compares the prompts of a train batch with the lcm; skyrl-train 0.3.1 and
    // upstream skyrl compare its samples (train_batch_size x n_samples_per_prompt).
    if v.upstream() {
        if train.checked_mul(n).is_some_and(|samples| samples < lcm) {
            problems.push(format!(
                "`trainer.train_batch_size={train}` x `generator.n_samples_per_prompt={n}` samples are fewer than \
                 {lcm}, the least common multiple of the data-parallel sizes: every worker needs a sample; raise \
                 `trainer.train_batch_size`"
            ));
        }
    } else if train < lcm {
        let sizes = match ref_dp {
            Some(r) => format!("policy {policy_dp}, ref {r}"),
            None => format!("policy {policy_dp}"),
        };
        problems.push(format!(
            "`trainer.train_batch_size={train}` is below {lcm}, the least common multiple of the data-parallel sizes \
             ({sizes}): every worker needs a prompt; raise `trainer.train_batch_size` to at least {lcm}"
        ));
    }
}

/// The sizes SkyRL asserts positive, before any arithmetic with them.
fn positive_sizes(v: &Values, train: i64, problems: &mut Vec<String>) -> bool {
    let mut ok = true;
    let mut minis = vec!["trainer.policy_mini_batch_size"];
    if v.uses_critic() {
        minis.push("trainer.critic_mini_batch_size");
    }
    for key in minis {
        let Some(mini) = v.int(key) else {
            ok = false;
            continue;
        };
        if train < mini {
            ok = false;
            problems.push(if train <= 0 {
                format!(
                    "`trainer.train_batch_size={train}` must be positive: set it to a multiple of `{key}={mini}`"
                )
            } else {
                format!(
                    "`trainer.train_batch_size={train}` is smaller than `{key}={mini}`: a train batch holds whole \
                     mini batches; raise the train batch, or set `{key}={train}`"
                )
            });
        }
        if mini <= 0 {
            ok = false;
            problems.push(format!(
                "`{key}={mini}` must be positive: set it to a divisor of `trainer.train_batch_size={train}`"
            ));
        }
    }
    for key in [
        "trainer.micro_train_batch_size_per_gpu",
        "trainer.micro_forward_batch_size_per_gpu",
    ] {
        if v.int(key).is_none_or(|m| m <= 0) {
            ok = false;
            problems.push(format!(
                "`{key}={}` must be positive: set it to 1 or more",
                v.show(key)
            ));
        }
    }
    ok
}

/// A trained model (policy, critic) or the ref, as validate_batch_sizes sizes it.
struct Model {
    role: &'static str,
    mini_key: &'static str,
}

impl Model {
    fn int(&self, v: &Values, key: &str) -> Option<i64> {
        v.int(&format!("trainer.{}", key.replace("ROLE", self.role)))
    }

    /// Data-parallel workers: GPUs over Megatron's pipeline x context x tensor parallel, or
    /// over Ulysses' sequence parallel, rounded down (0 when there are fewer GPUs). None, with
    /// the reason, where Python raises.
    fn dp(&self, v: &Values, megatron: bool, problems: &mut Vec<String>) -> Option<i64> {
        let role = self.role;
        let gpus = self.int(v, "placement.ROLE_num_gpus_per_node")?;
        let nodes = self.int(v, "placement.ROLE_num_nodes")?;
        let world = gpus.checked_mul(nodes)?;
        if megatron {
            let [pp, cp, tp] = [
                "ROLE.megatron_config.pipeline_model_parallel_size",
                "ROLE.megatron_config.context_parallel_size",
                "ROLE.megatron_config.tensor_model_parallel_size",
            ]
            .map(|k| self.int(v, k));
            let (pp, cp, tp) = (pp?, cp?, tp?);
            let model = pp.checked_mul(cp)?.checked_mul(tp)?;
            if py_mod(world, model) != Some(0) {
                problems.push(format!(
                    "the {role}'s Megatron pipeline x context x tensor parallel sizes ({pp} x {cp} x {tp} = {model}) \
                     must divide its {world} GPUs ({nodes} node(s) x {gpus}): change `trainer.{role}.megatron_config`"
                ));
                return None;
            }
            return floor_div(world, model);
        }
        let sp_key = format!("trainer.{role}.sequence_parallel_size");
        let sp = v.int(&sp_key)?;
        let dp = floor_div(world, sp);
        if dp.is_none() {
            problems.push(format!("`{sp_key}=0` must be at least 1: set it to 1"));
        }
        dp
    }

    /// Mini and micro batches per worker; false when a size is refused.
    fn split(
        &self,
        v: &Values,
        train: i64,
        n: i64,
        dp: i64,
        micro: i64,
        problems: &mut Vec<String>,
    ) -> bool {
        let (role, mini_key) = (self.role, self.mini_key);
        let Some(mini) = v.int(mini_key) else {
            return false;
        };
        let mut ok = true;
        if py_mod(train, mini) != Some(0) {
            ok = false;
            problems.push(format!(
                "`trainer.train_batch_size={train}` is not a multiple of `{mini_key}={mini}`: make the train batch a \
                 multiple of the mini batch"
            ));
        }
        let (Some(samples), Some(train_samples)) = (mini.checked_mul(n), train.checked_mul(n))
        else {
            return false;
        };
        let Some(per_gpu) = floor_div(samples, dp) else {
            problems.push(format!(
                "the {role}'s {} GPUs over `trainer.{role}.sequence_parallel_size` leave no data-parallel worker: \
                 set `trainer.{role}.sequence_parallel_size` to at most its GPUs",
                v.int(&format!("trainer.placement.{role}_num_gpus_per_node")).unwrap_or(0)
                    * v.int(&format!("trainer.placement.{role}_num_nodes")).unwrap_or(0)
            ));
            return false;
        };
        if per_gpu <= 0 && n <= 0 {
            problems.push(format!(
                "`generator.n_samples_per_prompt={n}` must be positive: set it to 1 or more"
            ));
            return false;
        }
        if per_gpu <= 0 {
            problems.push(format!(
                "the {role}'s mini batch of {samples} samples (`{mini_key}={mini}` x \
                 `generator.n_samples_per_prompt={n}`) is fewer than its {dp} data-parallel workers: raise \
                 `{mini_key}` to at least {}",
                (dp + n - 1) / n
            ));
            return false;
        }
        // `per_gpu // micro > 0`, SkyRL's next assert, follows from this one with micro > 0.
        if py_mod(per_gpu, micro) != Some(0) {
            ok = false;
            let what = if role == "policy" {
                "each policy worker".to_owned()
            } else {
                format!("each {role} worker")
            };
            problems.push(format!(
                "{what} gets {per_gpu} samples per mini batch (`{mini_key}={mini}` x \
                 `generator.n_samples_per_prompt={n}` / {dp} workers), which is not a multiple of \
                 `trainer.micro_train_batch_size_per_gpu={micro}`: pick a micro batch that divides {per_gpu}"
            ));
        }
        let train_per_gpu = floor_div(train_samples, dp).unwrap_or(0);
        // Where train is a multiple of mini this only fails when the rounding down differs;
        // otherwise the message above already says it.
        if py_mod(train_per_gpu, per_gpu) != Some(0) && py_mod(train, mini) == Some(0) {
            ok = false;
            problems.push(format!(
                "each {role} worker gets {train_per_gpu} samples per train batch but {per_gpu} per mini batch (both \
                 rounded down over {dp} workers), not a whole number of mini batches: make \
                 `trainer.train_batch_size` x `generator.n_samples_per_prompt` and `{mini_key}` x \
                 `generator.n_samples_per_prompt` multiples of {dp}"
            ));
        }
        ok
    }
}

/// Python's math.lcm of two ints: non-negative, 0 when either is 0.
fn python_lcm(a: i64, b: i64) -> i64 {
    fn gcd(a: i64, b: i64) -> i64 {
        if b == 0 { a.abs() } else { gcd(b, a % b) }
    }
    if a == 0 || b == 0 {
        return 0;
    }
    (a / gcd(a, b) * b).abs()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lcm_as_python_computes_it() {
        assert_eq!(python_lcm(4, 6), 12);
        assert_eq!(python_lcm(4, 4), 4);
        assert_eq!(python_lcm(-4, 6), 12);
        assert_eq!(python_lcm(0, 6), 0);
    }
}
