//! `validate_generator_cfg`: prompt lengths, remote engines, vLLM's batched mode, wandb, the
//! SGLang backend's limits, logprobs, the HTTP endpoint, engine parallelism, and (MarinSkyRL's
//! own) vLLM decode context parallel.

mod inference;

use super::Values;
use crate::check::model_size;
use crate::schema::knob::Scalar;

pub fn check(v: &Values, problems: &mut Vec<String>) {
    // Upstream has none of MarinSkyRL's remote-URL, batched-engine, SGLang, HTTP-endpoint and
    // decode-context-parallel rules, and its own inference-engine rules (inference.rs).
    let marin = !v.upstream();
    prompt_lengths(v, problems);
    if marin {
        remote_engines(v, problems);
        batched_offline_engine(v, problems);
    }
    wandb(v, problems);
    if marin {
        sglang(v, problems);
    }
    logprobs(v, problems);
    if marin {
        http_endpoint(v, problems);
    }
    expert_parallel(v, problems);
    if marin {
        decode_context_parallel(v, problems);
    } else {
        inference::check(v, problems);
    }
}

fn sglang_backend(v: &Values) -> bool {
    v.text("generator.backend").as_deref() == Some("sglang")
}

fn local_engines(v: &Values) -> bool {
    v.truthy("generator.run_engines_locally")
}

/// One turn reads exactly the prompt; several turns read the prompt and what came after it.
fn prompt_lengths(v: &Values, problems: &mut Vec<String>) {
    let input_key = "generator.max_input_length";
    // Upstream's `__post_init__` sets an unset input length to the prompt length (its key list
    // shows the default's value after that, 512).
    let derived = v.upstream() && !v.plan.knobs.iter().any(|k| k.path() == input_key);
    let input_key = if derived {
        "trainer.max_prompt_length"
    } else {
        input_key
    };
    let (Some(turns), Some(input), Some(prompt)) = (
        v.int("generator.max_turns"),
        v.int(input_key),
        v.int("trainer.max_prompt_length"),
    ) else {
        return;
    };
    if turns == 1 && input != prompt {
        problems.push(format!(
            "single-turn generation (`generator.max_turns=1`) needs `generator.max_input_length` equal to \
             `trainer.max_prompt_length`, but they are {input} and {prompt}: drop the \
             `generator.max_input_length` override (it defaults to the prompt length) or set it to {prompt}"
        ));
    } else if turns != 1 && input < prompt {
        problems.push(format!(
            "multi-turn generation (`generator.max_turns={turns}`) needs `generator.max_input_length={input}` at \
             least `trainer.max_prompt_length={prompt}`: set `generator.max_input_length={prompt}` or more"
        ));
    }
}

fn remote_engines(v: &Values, problems: &mut Vec<String>) {
    if local_engines(v) {
        return;
    }
    let (Some(engines), Some(urls)) = (
        v.int("generator.num_inference_engines"),
        v.list_len("generator.remote_inference_engine_urls"),
    ) else {
        return;
    };
    if engines != urls as i64 {
        problems.push(format!(
            "with `generator.run_engines_locally=false` SkyRL talks to one remote engine per URL, but \
             `generator.num_inference_engines={engines}` and `generator.remote_inference_engine_urls` lists {urls}: \
             set `generator.num_inference_engines={urls}`"
        ));
    }
}

fn batched_offline_engine(v: &Values, problems: &mut Vec<String>) {
    if !v.truthy("generator.async_engine")
        && v.text("generator.backend").as_deref() == Some("vllm")
        && !v.truthy("generator.batched")
    {
        problems.push(
            "`generator.async_engine=false` with the vLLM backend needs `generator.batched=true`: set it, or async_engine=true"
                .to_owned(),
        );
    }
}

fn wandb(v: &Values, problems: &mut Vec<String>) {
    // SkyRL compares the logger with the one string "wandb", and reads the key from the
    // environment the job inherits.
    if v.text("trainer.logger").as_deref() == Some("wandb")
        && std::env::var_os("WANDB_API_KEY").is_none_or(|k| k.is_empty())
    {
        problems.push(
            "`trainer.logger=wandb` needs WANDB_API_KEY in the environment you launch from (the job \
             logs offline; `rlctl tend --sync-wandb` uploads from the login node): export it, or set \
             `trainer.logger=console` (metrics still reach the log as WANDB_MIRROR lines)"
                .to_owned(),
        );
    }
}

/// What SkyRL does not support on SGLang engines.
fn sglang(v: &Values, problems: &mut Vec<String>) {
    if !sglang_backend(v) {
        return;
    }
    let mut refuse = |what: String, fix: &str| {
        problems.push(format!(
            "{what} is not supported with `generator.backend=sglang`: {fix}, or use `generator.backend=vllm`"
        ));
    };
    let tp = v.int("generator.inference_engine_tensor_parallel_size");
    if local_engines(v) && tp != Some(1) {
        refuse(
            format!(
                "`generator.inference_engine_tensor_parallel_size={}` on local engines",
                v.show("generator.inference_engine_tensor_parallel_size")
            ),
            "set it to 1",
        );
    }
    if !v.truthy("generator.use_conversation_multi_turn") {
        refuse(
            "`generator.use_conversation_multi_turn=false`".to_owned(),
            "set it to true",
        );
    }
    for key in [
        "generator.sampling_params.stop",
        "generator.eval_sampling_params.stop",
    ] {
        if v.is_set(key) {
            refuse(format!("`{key}={}`", v.show(key)), "set it to null");
        }
    }
    for key in [
        "generator.sampling_params.min_new_tokens",
        "generator.eval_sampling_params.min_new_tokens",
    ] {
        if v.value(key).is_some() {
            refuse(format!("`{key}`"), "remove it");
        }
    }
    for key in [
        "generator.inference_engine_data_parallel_size",
        "generator.inference_engine_expert_parallel_size",
    ] {
        if v.int(key).is_some_and(|n| n != 1) {
            refuse(format!("`{key}={}`", v.show(key)), "set it to 1");
        }
    }
}

/// vLLM returns the chosen token's logprob only (`logprobs=0`), and only from local engines.
fn logprobs(v: &Values, problems: &mut Vec<String>) {
    let key = "generator.sampling_params.logprobs";
    // Python's isinstance(x, int) holds for booleans too: true is 1, false is 0.
    let n = match v.value(key) {
        None | Some(Scalar::Null) => return,
        Some(Scalar::Int(n)) => n,
        Some(Scalar::Bool(b)) => i64::from(b),
        Some(_) => {
            problems.push(format!(
                "`{key}={}` must be an integer: set `{key}=0` (the chosen token's logprob) or null",
                v.show(key)
            ));
            return;
        }
    };
    let most = v.names().most_logprobs;
    if n > most {
        problems.push(format!(
            "`{key}={}` asks for the top {n} logprobs, but SkyRL takes only the chosen token's: set `{key}={most}`",
            v.show(key)
        ));
    }
    if !local_engines(v) && !v.upstream() {
        problems.push(format!(
            "`{key}` is not supported by remote engines (`generator.run_engines_locally=false`): set `{key}=null`"
        ));
    }
}

fn http_endpoint(v: &Values, problems: &mut Vec<String>) {
    if !v.truthy("generator.enable_http_endpoint") {
        return;
    }
    if sglang_backend(v) {
        problems.push(
            "`generator.enable_http_endpoint=true` is not supported with `generator.backend=sglang`: use \
             `generator.backend=vllm` or turn the endpoint off"
                .to_owned(),
        );
    }
    if !v.truthy("generator.async_engine") {
        problems.push(
            "`generator.enable_http_endpoint=true` needs `generator.async_engine=true`: set it, or turn the endpoint off"
                .to_owned(),
        );
    }
}

fn expert_parallel(v: &Values, problems: &mut Vec<String>) {
    let (Some(ep), Some(dp), Some(tp)) = (
        v.int("generator.inference_engine_expert_parallel_size"),
        v.int("generator.inference_engine_data_parallel_size"),
        v.int("generator.inference_engine_tensor_parallel_size"),
    ) else {
        return;
    };
    if ep > 1 && dp * tp != ep {
        problems.push(format!(
            "inference expert parallelism needs data parallel x tensor parallel = expert parallel, but \
             `generator.inference_engine_data_parallel_size={dp}` x `generator.inference_engine_tensor_parallel_size={tp}` \
             = {} is not `generator.inference_engine_expert_parallel_size={ep}`: make the product {ep}",
            dp * tp
        ));
    }
}

/// MarinSkyRL's `_validate_dcp_cfg` (skyrl-train 0.3.1 has no decode context parallel).
fn decode_context_parallel(v: &Values, problems: &mut Vec<String>) {
    let key = "generator.inference_engine_decode_context_parallel_size";
    let (Some(dcp), Some(tp)) = (
        v.int(key),
        v.int("generator.inference_engine_tensor_parallel_size"),
    ) else {
        return;
    };
    if dcp < 1 {
        problems.push(format!(
            "`{key}={dcp}` must be at least 1: set it to 1 (off)"
        ));
        return;
    }
    if dcp == 1 {
        return;
    }
    let tp_key = "generator.inference_engine_tensor_parallel_size";
    let splits = tp > 0 && tp % dcp == 0 && dcp <= tp;
    if !splits {
        problems.push(format!(
            "vLLM's decode context parallel splits each engine's tensor-parallel group, so `{key}={dcp}` must divide \
             `{tp_key}={tp}`: pick a divisor of {tp}, or 1 (off)"
        ));
    }
    if v.text("generator.backend").as_deref() != Some("vllm") {
        problems.push(format!(
            "`{key}={dcp}` needs `generator.backend=vllm` (SGLang has no decode context parallel): set it, or `{key}=1`"
        ));
    }
    if splits
        && let Some(Scalar::Str(model)) = v.value("trainer.policy.model.path")
        && let Some(kv_heads) = kv_heads(&model, v)
    {
        let max = tp / kv_heads;
        let fix = if max >= 2 {
            format!("set `{key}` to at most {max}")
        } else {
            format!("at this tensor parallel size it cannot help; set `{key}=1`")
        };
        if dcp > max {
            problems.push(format!(
                "`{key}={dcp}` is over the kv-head bound of `{model}`: tensor parallel {tp} // {kv_heads} kv head(s) = \
                 {max}; beyond it the KV cache is only duplicated: {fix}"
            ));
        }
    }
    let replay = [
        "generator.enable_return_routed_experts",
        "generator.engine_init_kwargs.enable_return_routed_experts",
        "trainer.policy.fsdp_config.moe_router_replay",
    ]
    .into_iter()
    .find(|k| v.truthy(k));
    let bypass = (v.plan.env.iter().rev())
        .find(|(k, _)| k == "VLLM_ALLOW_ROUTED_EXPERTS_DCP")
        .is_some_and(|(_, value)| value == "1");
    if let Some(replay) = replay
        && !bypass
    {
        problems.push(format!(
            "`{key}={dcp}` and router capture (`{replay}=true`) cannot be on together (vLLM refuses DCP with \
             return_routed_experts): turn one off"
        ));
    }
}

/// The kv-head count DCP's bound uses, from the model's staged config.json: 1 for a
/// multi-head latent attention model (DeepSeek, Kimi), else `num_key_value_heads`, else
/// `num_attention_heads`, of the text config when there is one. None when the config is not
/// on disk: MarinSkyRL then skips the bound too.
fn kv_heads(model: &str, v: &Values) -> Option<i64> {
    let path = model_size::config_json(model, v.hf_cache)?;
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    let mla = ["kv_lora_rank", "q_lora_rank"]
        .iter()
        .any(|k| json.get(k).is_some_and(|x| !x.is_null()))
        || json
            .get("architectures")
            .and_then(|a| a.as_array())
            .is_some_and(|archs| {
                archs.iter().filter_map(|a| a.as_str()).any(|a| {
                    let a = a.to_ascii_lowercase();
                    a.contains("deepseek") || a.contains("kimi")
                })
            });
    if mla {
        return Some(1);
    }
    let text = json
        .get("text_config")
        .filter(|t| t.is_object())
        .unwrap_or(&json);
    ["num_key_value_heads", "num_attention_heads"]
        .iter()
        .find_map(|k| text.get(k).and_then(|x| x.as_i64()))
        .filter(|&n| n > 0)
}
