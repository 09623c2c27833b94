//! SkyRL's own `validate_cfg` rules, checked before the queue wait instead of after it.

use crate::plan::Plan;
use crate::schema::Schema;
use crate::schema::knob::Scalar;

/// A knob's effective value: the plan's, else SkyRL's default.
pub struct Values<'a> {
    pub plan: &'a Plan,
    pub schema: &'a Schema,
}

impl Values<'_> {
    pub fn get(&self, key: &str) -> Option<Scalar> {
        match self.plan.knobs.iter().rev().find(|k| k.path() == key) {
            Some(knob) => Some(knob.value.scalar()),
            None => self.schema.default_scalar(key),
        }
    }

    pub fn int(&self, key: &str) -> Option<i64> {
        self.get(key)?.as_int()
    }

    pub fn bool(&self, key: &str) -> Option<bool> {
        self.get(key)?.as_bool()
    }

    pub fn text(&self, key: &str) -> Option<String> {
        match self.get(key)? {
            Scalar::Str(s) => Some(s),
            Scalar::List(s) => Some(s),
            _ => None,
        }
    }
}

/// Every rule SkyRL would raise on, as a message that names the keys and the fix.
pub fn check(v: &Values) -> Vec<String> {
    let mut problems = Vec::new();
    if v.bool("trainer.algorithm.use_kl_in_reward") == Some(true)
        && v.bool("trainer.algorithm.use_kl_loss") == Some(true)
    {
        problems.push(
            "`trainer.algorithm.use_kl_in_reward=true` and `trainer.algorithm.use_kl_loss=true` cannot both be on \
             (SkyRL's validate_cfg refuses it): set one of them to false"
                .to_owned(),
        );
    }
    placement(v, &mut problems);
    batch_sizes(v, &mut problems);
    if v.bool("generator.async_engine") == Some(false)
        && v.text("generator.backend").as_deref() == Some("vllm")
        && v.bool("generator.batched") != Some(true)
    {
        problems.push(
            "`generator.async_engine=false` with the vLLM backend needs `generator.batched=true`: set it, or async_engine=true"
                .to_owned(),
        );
    }
    if v.text("trainer.logger")
        .is_some_and(|l| l.contains("wandb"))
        && std::env::var_os("WANDB_API_KEY").is_none()
    {
        problems.push(
            "`trainer.logger=wandb` needs WANDB_API_KEY, and compute nodes have no internet anyway: set \
             `trainer.logger=console` (metrics still reach the log as WANDB_MIRROR lines)"
                .to_owned(),
        );
    }
    problems
}

fn placement(v: &Values, problems: &mut Vec<String>) {
    let (Some(gpus), Some(nodes), Some(engines), Some(tp)) = (
        v.int("trainer.placement.policy_num_gpus_per_node"),
        v.int("trainer.placement.policy_num_nodes"),
        v.int("generator.num_inference_engines"),
        v.int("generator.inference_engine_tensor_parallel_size"),
    ) else {
        return;
    };
    let policy_gpus = gpus * nodes;
    let engine_gpus = engines * tp;
    if v.bool("trainer.placement.colocate_all") == Some(true) {
        if policy_gpus != engine_gpus {
            let fit = if tp > 0 && policy_gpus % tp == 0 {
                format!(
                    ": set `generator.num_inference_engines={}`",
                    policy_gpus / tp
                )
            } else {
                String::new()
            };
            problems.push(format!(
                "with `trainer.placement.colocate_all=true` the policy's {policy_gpus} GPUs ({nodes} node(s) x {gpus}) must \
                 equal the engines' `generator.num_inference_engines` x `generator.inference_engine_tensor_parallel_size` \
                 = {engines} x {tp} = {engine_gpus}{fit}"
            ));
        }
        return;
    }
    let total = i64::from(v.plan.job.gpus_per_node) * i64::from(v.plan.job.nodes);
    let ref_gpus = if v.bool("trainer.placement.colocate_policy_ref") == Some(false) {
        v.int("trainer.placement.ref_num_gpus_per_node")
            .unwrap_or(0)
            * v.int("trainer.placement.ref_num_nodes").unwrap_or(1)
    } else {
        0
    };
    if policy_gpus + ref_gpus + engine_gpus > total {
        problems.push(format!(
            "without colocation the policy ({policy_gpus} GPUs), ref ({ref_gpus}) and inference engines ({engines} x {tp} = \
             {engine_gpus}) need {} GPUs, but the job has {total}: Ray would wait for them forever; lower \
             `generator.num_inference_engines` or the placement's GPUs",
            policy_gpus + ref_gpus + engine_gpus
        ));
    }
}

fn batch_sizes(v: &Values, problems: &mut Vec<String>) {
    let (Some(train), Some(mini), Some(micro), Some(n), Some(gpus), Some(nodes)) = (
        v.int("trainer.train_batch_size"),
        v.int("trainer.policy_mini_batch_size"),
        v.int("trainer.micro_train_batch_size_per_gpu"),
        v.int("generator.n_samples_per_prompt"),
        v.int("trainer.placement.policy_num_gpus_per_node"),
        v.int("trainer.placement.policy_num_nodes"),
    ) else {
        return;
    };
    if mini <= 0 || micro <= 0 || n <= 0 {
        problems.push(
            "`trainer.policy_mini_batch_size`, `trainer.micro_train_batch_size_per_gpu` and \
             `generator.n_samples_per_prompt` must be positive"
                .to_owned(),
        );
        return;
    }
    if train % mini != 0 {
        problems.push(format!(
            "`trainer.train_batch_size={train}` is not a multiple of `trainer.policy_mini_batch_size={mini}`: \
             make the train batch a multiple of the mini batch"
        ));
    }
    let sp = v
        .int("trainer.policy.sequence_parallel_size")
        .unwrap_or(1)
        .max(1);
    let dp = (gpus * nodes / sp).max(1);
    let samples = mini * n;
    if samples % dp != 0 || samples / dp == 0 {
        problems.push(format!(
            "the mini batch's {samples} samples (`trainer.policy_mini_batch_size={mini}` x \
             `generator.n_samples_per_prompt={n}`) do not split evenly over the {dp} data-parallel policy workers"
        ));
        return;
    }
    let per_gpu = samples / dp;
    if per_gpu % micro != 0 {
        problems.push(format!(
            "each policy worker gets {per_gpu} samples per mini batch (`trainer.policy_mini_batch_size={mini}` x \
             `generator.n_samples_per_prompt={n}` / {dp} workers), which is not a multiple of \
             `trainer.micro_train_batch_size_per_gpu={micro}`: pick a micro batch that divides {per_gpu}"
        ));
    }
}
