//! What each training strategy supports: Ulysses sequence parallel, FSDP1's offload, DeepSpeed
//! stage 3, Megatron's limits, LoRA's backends, (MarinSkyRL's own) FSDP2 context parallel, and
//! (upstream's own) the torch profiler.

use super::Values;
use crate::schema::knob::Scalar;

pub fn check(v: &Values, problems: &mut Vec<String>) {
    let strategy = v.text("trainer.strategy").unwrap_or_default();
    ulysses_only(v, problems);
    if strategy == "megatron" {
        megatron(v, problems);
    }
    lora(v, &strategy, problems);
    if v.upstream() {
        torch_profiler(v, problems);
    }
    // Upstream has no FSDP1 offload or DeepSpeed rule, and no FSDP2 context parallel.
    if !v.upstream() {
        fsdp1_offload(v, &strategy, problems);
        deepspeed(v, &strategy, problems);
        context_parallel(v, &strategy, problems);
    }
}

fn ulysses_only(v: &Values, problems: &mut Vec<String>) {
    let key = "trainer.sequence_parallel_backend";
    if v.text(key).as_deref() != Some("ulysses") {
        problems.push(format!(
            "`{key}={}`: SkyRL supports only Ulysses sequence parallelism: set `{key}=ulysses`",
            v.show(key)
        ));
    }
}

fn fsdp1_offload(v: &Values, strategy: &str, problems: &mut Vec<String>) {
    if strategy != "fsdp" {
        return;
    }
    for role in ["policy", "critic"] {
        let key = format!("trainer.{role}.fsdp_config.cpu_offload");
        if v.truthy(&key) {
            problems.push(format!(
                "`{key}=true` (forward-pass CPU offload) is not supported by FSDP1 (`trainer.strategy=fsdp`): \
                 use `trainer.strategy=fsdp2`, or `{key}=false`"
            ));
        }
    }
}

fn deepspeed(v: &Values, strategy: &str, problems: &mut Vec<String>) {
    if strategy != "deepspeed" {
        return;
    }
    let stage = "trainer.policy.deepspeed_config.zero_optimization.stage";
    if v.int(stage) != Some(3) {
        problems.push(format!(
            "SkyRL supports only DeepSpeed ZeRO stage 3, but the policy's `{stage}` is {}: set \
             `deepspeed_config.train.zero_optimization.stage=3`",
            v.show(stage)
        ));
    }
    for role in ["policy", "critic"] {
        let key = format!("trainer.{role}.optimizer_config.offload_after_step");
        if !v.truthy(&key) {
            problems.push(format!(
                "`{key}=false` is not supported with `trainer.strategy=deepspeed`: set `{key}=true`"
            ));
        }
    }
}

/// `validate_megatron_cfg`, without its flash-attn version rule: that version is the
/// container's, which no knob decides.
fn megatron(v: &Values, problems: &mut Vec<String>) {
    let backends = v.names().megatron_sync;
    let sync = v.show("generator.weight_sync_backend");
    if !backends.contains(&sync.as_str()) {
        problems.push(format!(
            "`trainer.strategy=megatron` syncs weights over {} only, but `generator.weight_sync_backend={sync}`: \
             set `generator.weight_sync_backend=nccl`",
            backends.join(", ")
        ));
    }
    let replay = "trainer.policy.megatron_config.moe_enable_routing_replay";
    let routed = "generator.inference_engine.enable_return_routed_experts";
    if v.upstream() && v.truthy(replay) && !v.truthy(routed) {
        problems.push(format!(
            "`{replay}=true` (rollout router replay) needs the engines' expert indices: set `{routed}=true`"
        ));
    }
    if v.text("generator.backend").as_deref() != Some("vllm") {
        problems.push(format!(
            "`trainer.strategy=megatron` works with vLLM engines only, but `generator.backend={}`: set \
             `generator.backend=vllm`",
            v.show("generator.backend")
        ));
    }
    if v.is_set("trainer.critic.model.path") {
        problems.push(
            "`trainer.strategy=megatron` trains without a critic (GRPO-style) only: set \
             `trainer.critic.model.path=null`, or use `trainer.strategy=fsdp2` for a critic"
                .to_owned(),
        );
    }
    for role in ["policy", "ref"] {
        let cp = format!("trainer.{role}.megatron_config.context_parallel_size");
        let packing = v.names().sample_packing;
        if v.int(&cp).is_some_and(|n| n > 1) && !v.truthy(packing) {
            problems.push(format!(
                "Megatron context parallel (`{cp}={}`) needs sample packing: set `{packing}=true`, or `{cp}=1`",
                v.show(&cp)
            ));
        }
        let sp = format!("trainer.{role}.sequence_parallel_size");
        if v.int(&sp) != Some(1) {
            problems.push(format!(
                "`{sp}={}`: Ulysses sequence parallel is not supported with `trainer.strategy=megatron`: set \
                 `{sp}=1` (Megatron's own parallelism is under `trainer.{role}.megatron_config`)",
                v.show(&sp)
            ));
        }
    }
}

/// LoRA adapters sync to vLLM engines from FSDP workers. MarinSkyRL refuses Megatron here,
/// which skyrl-train 0.3.1 allows.
fn lora(v: &Values, strategy: &str, problems: &mut Vec<String>) {
    let rank = "trainer.policy.model.lora.rank";
    if v.int(rank).is_none_or(|r| r <= 0) {
        return;
    }
    if v.text("generator.backend").as_deref() != Some("vllm") {
        problems.push(format!(
            "LoRA (`{rank}={}`) needs `generator.backend=vllm`: set it, or `{rank}=0`",
            v.show(rank)
        ));
    }
    if v.upstream() {
        upstream_lora(v, problems);
    } else if !matches!(strategy, "fsdp" | "fsdp2") {
        problems.push(format!(
            "LoRA (`{rank}={}`) needs `trainer.strategy=fsdp2` (or fsdp), not `{strategy}`: set it, or `{rank}=0`",
            v.show(rank)
        ));
    }
}

/// Upstream's LoRA on Megatron and over delta weight sync (it allows any strategy).
fn upstream_lora(v: &Values, problems: &mut Vec<String>) {
    let lora = "trainer.policy.megatron_config.lora_config";
    let shared = format!("{lora}.experts_shared_outer_loras");
    let kind = format!("{lora}.lora_type");
    if v.truthy(&shared) && v.text(&kind).as_deref() != Some("lora") {
        problems.push(format!(
            "`{shared}=true` needs `{kind}=lora`, not {}: set it, or turn the shared experts off",
            v.show(&kind)
        ));
    }
    if v.text("generator.weight_sync_backend").as_deref() == Some("delta") {
        problems.push(
            "LoRA does not sync over `generator.weight_sync_backend=delta` yet: use nccl"
                .to_owned(),
        );
    }
}

/// MarinSkyRL's `_validate_cp_cfg`: torch-native ring-SDPA context parallel on the FSDP2 mesh,
/// per role, whether the role runs or not.
fn context_parallel(v: &Values, strategy: &str, problems: &mut Vec<String>) {
    for role in ["policy", "ref", "critic"] {
        let key = format!("trainer.{role}.fsdp_config.context_parallel_size");
        let Some(cp) = v.int(&key) else {
            continue;
        };
        if cp < 1 {
            problems.push(format!(
                "`{key}={cp}` must be at least 1: set it to 1 (off)"
            ));
            continue;
        }
        if cp == 1 {
            continue;
        }
        let mut refuse = |what: String| {
            problems.push(format!(
                "context parallel (`{key}={cp}`) {what}, or set `{key}=1`"
            ));
        };
        if strategy != "fsdp2" {
            refuse(format!(
                "runs on FSDP2 only, not `trainer.strategy={strategy}`: set `trainer.strategy=fsdp2`"
            ));
        }
        let sp = format!("trainer.{role}.sequence_parallel_size");
        if v.int(&sp) != Some(1) {
            refuse(format!(
                "and Ulysses sequence parallel both shard the sequence: set `{sp}=1`"
            ));
        }
        let style = format!("trainer.{role}.fsdp_config.cp_style");
        if v.text(&style).as_deref() != Some("ring_sdpa") {
            refuse(format!(
                "supports `{style}=ring_sdpa` only, not `{}`: set it",
                v.show(&style)
            ));
        }
        let rotate = format!("trainer.{role}.fsdp_config.cp_rotate_method");
        if !matches!(v.text(&rotate).as_deref(), Some("allgather" | "all_to_all")) {
            refuse(format!(
                "rotates with `{rotate}=allgather` or `all_to_all`, not `{}`: set one",
                v.show(&rotate)
            ));
        }
        if v.truthy("trainer.use_sample_packing") {
            refuse(
                "does not support sample packing yet: set `trainer.use_sample_packing=false`"
                    .to_owned(),
            );
        }
        let world = [
            format!("trainer.placement.{role}_num_gpus_per_node"),
            format!("trainer.placement.{role}_num_nodes"),
        ]
        .iter()
        .map(|k| v.int(k))
        .try_fold(1i64, |product, n| Some(product * n?));
        if let Some(world) = world
            && super::py_mod(world, cp) != Some(0)
        {
            refuse(format!(
                "must divide the {role}'s {world} GPUs: pick a divisor of {world}"
            ));
        }
    }
}

/// Upstream's `TorchProfilerConfig.validate`, for the policy: a profile needs ranks, a local
/// folder (Ray workers run in a temporary one), known activities and export, a schedule, and no
/// FSDP manual offload under colocation (its tensor swaps crash under the profiler). The first
/// three keys are MarinSkyRL's (under its Megatron config), the rest upstream's own.
fn torch_profiler(v: &Values, problems: &mut Vec<String>) {
    let marin = "trainer.policy.megatron_config.torch_profiler_config";
    if !v.truthy(&format!("{marin}.enable")) {
        return;
    }
    let mut refuse = |what: String| {
        problems.push(format!(
            "`{marin}.enable=true` {what}, or turn profiling off"
        ));
    };
    for (field, fix) in [
        ("ranks", "list the ranks to profile, e.g. [0]"),
        ("save_path", "set an absolute path on shared storage"),
    ] {
        let key = format!("{marin}.{field}");
        if !v.truthy(&key) {
            refuse(format!("needs `{key}`, not {}: {fix}", v.show(&key)));
        }
    }
    let own = "trainer.policy.torch_profiler_config";
    let activities = format!("{own}.activities");
    if !v.truthy(&activities) {
        refuse(format!(
            "records nothing with `{activities}=[]`: list cpu and/or cuda"
        ));
    } else if let Some(text) = v.text(&activities)
        && let Some(items) = crate::schema::value::list_items(&text)
        && let Some(bad) = items.iter().find(|a| {
            let name = a.trim().trim_matches(['"', '\'']).to_ascii_lowercase();
            !matches!(name.as_str(), "cpu" | "cuda")
        })
    {
        refuse(format!(
            "takes cpu and cuda activities only, not {bad} in `{activities}`: remove it"
        ));
    }
    let export = format!("{own}.export_type");
    match v.show(&export).as_str() {
        "chrome_trace" => {}
        "stacks" if !v.truthy(&format!("{own}.with_stack")) => refuse(format!(
            "with `{export}=stacks` needs `{own}.with_stack=true`: set it"
        )),
        "stacks" => {}
        other => refuse(format!(
            "exports chrome_trace or stacks, not `{export}={other}`: set one"
        )),
    }
    for (field, least) in [
        ("skip_first", 0),
        ("wait", 0),
        ("warmup", 0),
        ("repeat", 0),
        ("active", 1),
    ] {
        let key = format!("{own}.{field}");
        if v.int(&key).is_some_and(|n| n < least) {
            refuse(format!(
                "needs `{key}` of at least {least}, not {}: raise it",
                v.show(&key)
            ));
        }
    }
    let strategy = v.text("trainer.strategy").unwrap_or_default();
    let offload = "trainer.policy.fsdp_config.cpu_offload";
    let colocated = v.truthy("trainer.placement.colocate_all")
        || v.truthy("trainer.placement.colocate_policy_ref");
    if matches!(strategy.as_str(), "fsdp" | "fsdp2")
        && v.value(offload) == Some(Scalar::Bool(false))
        && colocated
    {
        refuse(format!(
            "crashes colocated FSDP's manual CPU offload (its tensor swaps conflict with the profiler): set \
             `{offload}=true`, or `trainer.placement.colocate_all=false` and `trainer.placement.colocate_policy_ref=false`"
        ));
    }
}
