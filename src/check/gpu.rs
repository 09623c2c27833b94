//! The `gpu` check: vLLM's memory ceiling, a policy too big for one node, a teacher too big
//! for its tensor-parallel GPUs.

use crate::check::skyrl_rules::Values;
use crate::check::{Allow, Check, Raw, model_size};
use crate::plan::Plan;
use crate::preset::cluster::{Cluster, Node};
use crate::schema::knob::Scalar;

/// GiB of each GPU's vLLM share that the weights must leave free: activations at vLLM's default
/// 8,192 batched tokens (the teacher's prompt logprobs hold full-vocabulary logits for them,
/// 8,192 x 151,936 x 4 bytes = 4.6 GiB for Qwen3), the CUDA context and NCCL's buffers, and a
/// KV cache of more than a few sequences.
const VLLM_RESERVE_GIB: f64 = 8.0;

/// Pushes each GPU memory problem the plan's models and utilizations would hit on this node.
pub fn check(cluster: &Cluster, plan: &Plan, values: &Values, found: &mut Vec<Raw>) {
    let teacher = values
        .get("teacher.model_path")
        .filter(|m| *m != Scalar::Null);
    above_ceiling(&cluster.node, values, teacher.is_some(), found);
    policy_on_one_node(cluster, plan, values, found);
    if let Some(teacher) = teacher {
        teacher_fits(cluster, &teacher, values, found);
    }
}

/// A vLLM `gpu_memory_utilization` (the generator's, and the teacher's when there is one)
/// above the GPU's ceiling.
fn above_ceiling(node: &Node, values: &Values, teacher: bool, found: &mut Vec<Raw>) {
    let mut utilizations = vec!["generator.gpu_memory_utilization"];
    if teacher {
        utilizations.push("teacher.gpu_memory_utilization");
    }
    for key in utilizations {
        if let Some(u) = values.get(key).and_then(|v| v.as_float())
            && u > node.max_gpu_memory_utilization
        {
            found.push((
                    Check::Gpu,
                    Some(Allow::GpuMemAboveCeiling),
                    format!(
                        "`{key}={u}` is above the {} ceiling of {}: vLLM runs out of memory in eval; set `{key}={}`",
                        node.gpu_type, node.max_gpu_memory_utilization, node.max_gpu_memory_utilization
                    ),
                ));
        }
    }
}

/// A policy too big for one node, when the plan asks for one.
fn policy_on_one_node(cluster: &Cluster, plan: &Plan, values: &Values, found: &mut Vec<Raw>) {
    let (node, hf) = (&cluster.node, &cluster.storage.hf_home);
    if let Some(model) = values.get("trainer.policy.model.path")
        && let Some((size, source)) = model_size::estimate(&model, hf)
        && plan.job.nodes == 1
        && size.params_b >= node.max_params_b_one_node
    {
        found.push((
                    Check::Gpu,
                    Some(Allow::ModelTooBigForOneNode),
                    format!(
                        "the policy `{}` has about {:.1}B parameters{} (from {source}): on one node of {} x {} a model \
                         of {}B or more runs out of memory (FSDP backward, weight sync); use --nodes 2",
                        model.as_str().unwrap_or_default(),
                        size.params_b,
                        if size.moe { ", a mixture of experts," } else { "" },
                        node.gpus,
                        node.gpu_type,
                        node.max_params_b_one_node
                    ),
                ));
    }
}

/// A teacher whose weights do not fit its tensor-parallel GPUs' vLLM share, with the smallest
/// tensor-parallel size that fits.
fn teacher_fits(cluster: &Cluster, teacher: &Scalar, values: &Values, found: &mut Vec<Raw>) {
    let (node, hf) = (&cluster.node, &cluster.storage.hf_home);
    let tp = values
        .int("teacher.inference_engine_tensor_parallel_size")
        .unwrap_or(1);
    let utilization = values
        .get("teacher.gpu_memory_utilization")
        .and_then(|u| u.as_float())
        .unwrap_or(node.max_gpu_memory_utilization);
    if let Some((size, source)) = model_size::estimate(teacher, hf) {
        // vLLM may use only `utilization` of each GPU, and the weights must leave room in
        // it for the activations and a KV cache.
        let gib = size.bf16_gib();
        let per_gpu = f64::from(node.gpu_mem_gib) * utilization;
        let for_weights = per_gpu - VLLM_RESERVE_GIB;
        let fits = |tp: i64| tp > 0 && gib / tp as f64 <= for_weights;
        if !fits(tp) {
            // Tensor parallelism splits attention heads, which come in powers of two.
            let gpus = i64::from(node.gpus);
            let fix = match (0..)
                .map(|k| 1i64 << k)
                .take_while(|n| *n <= gpus)
                .find(|n| fits(*n))
            {
                Some(n) => format!("set `teacher.inference_engine_tensor_parallel_size={n}`"),
                None => format!(
                    "it does not fit even at the node's {gpus} GPUs: choose a smaller teacher"
                ),
            };
            found.push((
                Check::Gpu,
                None,
                format!(
                    "the teacher `{}` has about {gib:.0} GiB of bf16 weights (from {source}): at tensor-parallel size {tp} that is \
                     {:.1} GiB per GPU, more than the {for_weights:.1} GiB vLLM has for weights on a {} ({per_gpu:.1} GiB at \
                     gpu_memory_utilization {utilization}, less {VLLM_RESERVE_GIB} GiB for activations and the KV cache); {fix}",
                    teacher.as_str().unwrap_or_default(),
                    gib / tp.max(1) as f64,
                    node.gpu_type,
                ),
            ));
        }
    }
}
