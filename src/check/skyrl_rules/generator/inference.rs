//! Upstream skyrl's `validate_inference_engine_cfg` and `_validate_new_inference_cfg`, with the
//! speculative decoding that `trainer.mtp` turns on: FP8 weight sync, LoRA's sync mode,
//! prefill/decode disaggregation, vLLM's executor, routed experts, the engines' external URLs.
//! MarinSkyRL has none of these keys; upstream-only keys keep upstream's names.

use super::Values;

const IE: &str = "generator.inference_engine";
/// `skyrl.backends.skyrl_train.weight_sync.fp8`'s wire formats, and its "resolve it" value.
const WIRE_FORMATS: [&str; 2] = ["blockwise", "mxfp8"];
const AUTO_FP8: &str = "auto";

pub fn check(v: &Values, problems: &mut Vec<String>) {
    let megatron = v.text("trainer.strategy").as_deref() == Some("megatron");
    let weight_sync = v.show("generator.weight_sync_backend");
    let lora_rank = v.int("trainer.policy.model.lora.rank").unwrap_or(0);
    let merge_lora = v.truthy("trainer.policy.megatron_config.lora_config.merge_lora");
    fp8_weight_sync(
        v,
        megatron,
        &weight_sync,
        lora_rank > 0 && !merge_lora,
        problems,
    );
    lora_sync_mode(v, megatron, &weight_sync, lora_rank, merge_lora, problems);
    prefill_decode(v, problems);
    executor(v, megatron, problems);
    if v.truthy(&format!("{IE}.offload_kv_for_weight_sync")) {
        let key = format!("{IE}.offload_kv_for_weight_sync");
        if v.truthy("trainer.placement.colocate_all") {
            problems.push(format!(
                "`{key}=true` is for engines on their own GPUs; colocated engines already sleep around a weight \
                 sync: turn it off, or set `trainer.placement.colocate_all=false`"
            ));
        }
        if lora_rank != 0 {
            problems.push(format!(
                "`{key}=true` does not support LoRA weight sync: turn it off, or set `trainer.policy.model.lora.rank=0`"
            ));
        }
        if weight_sync == "delta" {
            problems.push(format!(
                "`{key}=true` does not support `generator.weight_sync_backend=delta`: use nccl"
            ));
        }
    }
    speculative(v, megatron, problems);
    external_engines(v, problems);
}

fn fp8_weight_sync(
    v: &Values,
    megatron: bool,
    weight_sync: &str,
    adapters_only: bool,
    problems: &mut Vec<String>,
) {
    let key = format!("{IE}.fp8_weight_sync_mode");
    if !v.is_set(&key) {
        return;
    }
    let mode = v.show(&key);
    if mode == AUTO_FP8 {
        // Megatron resolves it from the policy's fp8_recipe, which rlctl does not read; without
        // one upstream refuses to guess.
        problems.push(format!(
            "`{key}=auto` resolves only from a Megatron policy's fp8_recipe: set `{key}` to blockwise or mxfp8"
        ));
        return;
    }
    if !WIRE_FORMATS.contains(&mode.as_str()) {
        problems.push(format!(
            "`{key}={mode}` is not one of blockwise, mxfp8, auto: set one of them, or null (no FP8 weight sync)"
        ));
        return;
    }
    if !megatron {
        problems.push(format!(
            "`{key}={mode}` (FP8 weight sync) needs `trainer.strategy=megatron`: set it, or `{key}=null`"
        ));
    }
    if matches!(weight_sync, "sharded_rdt" | "delta") {
        problems.push(format!(
            "`{key}={mode}` cannot travel over `generator.weight_sync_backend={weight_sync}`: use nccl"
        ));
    }
    if adapters_only {
        problems.push(format!(
            "`{key}={mode}` needs full-weight updates, but Megatron LoRA without merge_lora syncs adapters only: set \
             `trainer.policy.megatron_config.lora_config.merge_lora=true`"
        ));
    }
}

fn lora_sync_mode(
    v: &Values,
    megatron: bool,
    weight_sync: &str,
    rank: i64,
    merge_lora: bool,
    problems: &mut Vec<String>,
) {
    let key = "trainer.policy.model.lora.sync_mode";
    match v.show(key).as_str() {
        "disk" => {}
        "memory" => {
            if !megatron {
                problems.push(format!(
                    "`{key}=memory` is implemented for `trainer.strategy=megatron` only: set it, or `{key}=disk`"
                ));
            }
            if rank <= 0 || merge_lora {
                problems.push(format!(
                    "`{key}=memory` needs `trainer.policy.model.lora.rank` > 0 and \
                     `trainer.policy.megatron_config.lora_config.merge_lora=false`: set them, or `{key}=disk`"
                ));
            }
            if weight_sync != "nccl" {
                problems.push(format!(
                    "`{key}=memory` needs `generator.weight_sync_backend=nccl`, not {weight_sync}: set it, or `{key}=disk`"
                ));
            }
        }
        other => problems.push(format!(
            "`{key}={other}` is not disk or memory: set one of them"
        )),
    }
}

/// Prefill/decode disaggregation: at least one prefill and one decode engine.
fn prefill_decode(v: &Values, problems: &mut Vec<String>) {
    let pd = v.truthy(&format!("{IE}.enable_pd"));
    if pd {
        let prefill = v.int(&format!("{IE}.num_prefill")).unwrap_or(0);
        let engines = v.int("generator.num_inference_engines").unwrap_or(0);
        if prefill <= 0 || prefill >= engines || engines < 2 {
            problems.push(format!(
                "`{IE}.enable_pd=true` needs 0 < `{IE}.num_prefill={prefill}` < `generator.num_inference_engines={engines}` (at least \
                 one prefill and one decode engine): set them so"
            ));
        }
    }
    let role_kwargs = v.truthy(&format!("{IE}.prefill_init_kwargs"))
        || v.truthy(&format!("{IE}.decode_init_kwargs"));
    if role_kwargs && !pd {
        problems.push(format!(
            "`{IE}.prefill_init_kwargs` / `decode_init_kwargs` take effect only with `{IE}.enable_pd=true`: set it, or \
             remove them"
        ));
    } else if role_kwargs && v.truthy("generator.engine_init_kwargs") {
        problems.push(
            "`generator.engine_init_kwargs` cannot be combined with `prefill_init_kwargs` / `decode_init_kwargs`: \
             move its entries into both"
                .to_owned(),
        );
    }
}

/// vLLM's distributed executor, and what rollout router replay needs of it.
fn executor(v: &Values, megatron: bool, problems: &mut Vec<String>) {
    let key = format!("{IE}.distributed_executor_backend");
    let backend = v.show(&key);
    if !matches!(backend.as_str(), "mp" | "ray") {
        problems.push(format!(
            "`{key}={backend}` is not mp or ray: set one of them"
        ));
    }
    let routed = format!("{IE}.enable_return_routed_experts");
    if v.truthy(&routed) {
        if backend != "mp" {
            problems.push(format!(
                "`{routed}=true` (rollout router replay) can hang with the ray executor: set `{key}=mp`"
            ));
        }
        if !megatron {
            problems.push(format!(
                "`{routed}=true` (rollout router replay) needs `trainer.strategy=megatron`: set it, or turn it off"
            ));
        }
        let replay = "trainer.policy.megatron_config.moe_enable_routing_replay";
        if !v.truthy(replay) {
            problems.push(format!(
                "`{routed}=true` returns expert indices nobody consumes: set `{replay}=true`, or turn it off"
            ));
        }
    }
    let tp = v.int("generator.inference_engine_tensor_parallel_size");
    let pp = v.int("generator.inference_engine_pipeline_parallel_size");
    let per_node = v.int("trainer.placement.policy_num_gpus_per_node");
    if let (Some(tp), Some(pp), Some(per_node)) = (tp, pp, per_node)
        && v.truthy("trainer.placement.colocate_all")
        && tp * pp > per_node
        && backend == "mp"
    {
        problems.push(format!(
            "an engine of tensor x pipeline parallel {tp} x {pp} = {} GPUs spans nodes of {per_node}, which vLLM's mp \
             executor cannot: set `{key}=ray`, or make the engines smaller",
            tp * pp
        ));
    }
}

/// Speculative decoding drafts with the policy's MTP head, which only Megatron trains;
/// `trainer.mtp.enabled` turns it on (unless SKYRL_DISABLE_SPEC=1 keeps the rollout plain).
fn speculative(v: &Values, megatron: bool, problems: &mut Vec<String>) {
    let spec = format!("{IE}.speculative_config");
    let mut drafts = v.is_set(&spec);
    if v.truthy("trainer.mtp.enabled") {
        let tokens = "trainer.mtp.num_speculative_tokens";
        if v.int(tokens).is_none_or(|n| n < 1) {
            problems.push(format!(
                "`trainer.mtp.enabled=true` needs `{tokens}` of 1 or more, not {}: set it",
                v.show(tokens)
            ));
            return;
        }
        let layers = "trainer.policy.megatron_config.mtp_num_layers";
        if v.int(layers) == Some(0) {
            problems.push(format!(
                "`trainer.mtp.enabled=true` but `{layers}=0` turns the MTP heads off: remove that override, or turn \
                 MTP off"
            ));
            return;
        }
        let plain = (v.plan.env.iter().rev())
            .find(|(k, _)| k == "SKYRL_DISABLE_SPEC")
            .is_some_and(|(_, value)| value == "1");
        drafts |= !plain;
    }
    if drafts && !megatron {
        problems.push(format!(
            "speculative decoding (`{spec}`, or `trainer.mtp.enabled=true`) drafts with the policy's MTP head, which \
             needs `trainer.strategy=megatron`: set it, or turn speculative decoding off"
        ));
    }
}

/// Engines the driver does not start are reached by URL; colocated engines must be its own.
fn external_engines(v: &Values, problems: &mut Vec<String>) {
    let proxy = format!("{IE}.external_proxy_url");
    let servers = format!("{IE}.external_server_urls");
    let external = v.is_set(&proxy) || v.is_set(&servers);
    if external && v.truthy("trainer.placement.colocate_all") {
        problems.push(format!(
            "`{proxy}` / `{servers}` cannot be used with `trainer.placement.colocate_all=true` (colocated engines \
             share the trainer's placement groups): set `trainer.placement.colocate_all=false`, or remove the URLs"
        ));
    }
    if !v.truthy("generator.run_engines_locally") && !external {
        problems.push(format!(
            "`generator.run_engines_locally=false` needs the engines' address: set `{servers}` (or `{proxy}`), or \
             `generator.run_engines_locally=true`"
        ));
    }
}
