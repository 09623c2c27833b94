//! The keys skyrl 0.4.0's `from_cli_overrides` refuses by name, with its reasons, and the one it
//! renames (`trainer.use_sample_packing`).

use super::{Refusal, Stage, refuse};
use crate::yaml::{Map, Y};

const ROPE_PATHS: [&str; 14] = [
    "trainer.rope_scaling",
    "trainer.rope_theta",
    "trainer.rope_parameters",
    "generator.rope_scaling",
    "generator.rope_theta",
    "generator.rope_parameters",
    "generator.inference_engine.rope_scaling",
    "generator.inference_engine.rope_theta",
    "generator.inference_engine.rope_parameters",
    "generator.inference_engine.engine_init_kwargs.rope_scaling",
    "generator.inference_engine.engine_init_kwargs.rope_theta",
    "generator.inference_engine.engine_init_kwargs.rope_parameters",
    "generator.inference_engine.engine_init_kwargs.hf_overrides.rope_scaling",
    "generator.inference_engine.engine_init_kwargs.hf_overrides.rope_theta",
];

/// Keys 0.4.0 retired outright, in the order it checks them, each with what to do instead.
const RETIRED: [(&str, &str); 3] = [
    (
        "generator.inference_engine.enable_http_endpoint",
        "SkyRL always uses the HTTP/vLLM inference path; remove the override",
    ),
    (
        "generator.inference_engine.override_existing_update_group",
        "the vLLM-native inference path manages update groups; remove the override",
    ),
    (
        "generator.inference_engine.remote_urls",
        "use `external_proxy_url` and `external_server_urls` for external inference servers",
    ),
];

const HF_ROPE: &str = "generator.inference_engine.engine_init_kwargs.hf_overrides.rope_parameters";
const ASYNC_ENGINE: &str = "generator.inference_engine.async_engine";

fn get<'a>(tree: &'a Map, path: &str) -> Option<&'a Y> {
    let mut node: Option<&Y> = None;
    let mut map = tree;
    for seg in path.split('.') {
        let value = &map.iter().find(|(k, _)| k.key_text() == seg)?.1;
        node = Some(value);
        if let Y::Map(inner) = value {
            map = inner;
        } else {
            map = const { &Vec::new() };
        }
    }
    node
}

fn remove(tree: &mut Map, path: &str) {
    let (parent, last) = path.rsplit_once('.').unwrap_or(("", path));
    let mut map = tree;
    for seg in parent.split('.').filter(|s| !s.is_empty()) {
        match map.iter_mut().find(|(k, _)| k.key_text() == seg) {
            Some((_, Y::Map(inner))) => map = inner,
            _ => return,
        }
    }
    map.retain(|(k, _)| k.key_text() != last);
}

fn removed(message: &str) -> Result<(), Refusal> {
    refuse(
        Stage::Removed,
        format!("upstream SkyRL 0.4.0 refuses this key: {message}"),
    )
}

/// 0.4.0's checks in its order, on the merged items; the async-engine switch, when on, and the
/// old sample-packing name are rewritten as 0.4.0 rewrites them.
pub(super) fn check(tree: &mut Map) -> Result<(), Refusal> {
    if let Some(path) = ROPE_PATHS.iter().find(|p| get(tree, p).is_some()) {
        return removed(&format!(
            "`{path}`: set `{HF_ROPE}` and `trainer.policy.model_config_kwargs.rope_parameters` (or \
             `trainer.policy.megatron_config.transformer_config_kwargs.rope_parameters`) instead"
        ));
    }
    if let Some(inference) = get(tree, HF_ROPE) {
        let megatron = matches!(get(tree, "trainer.strategy"), Some(Y::Str(s)) if s == "megatron");
        let trainer_path = if megatron {
            "trainer.policy.megatron_config.transformer_config_kwargs.rope_parameters"
        } else {
            "trainer.policy.model_config_kwargs.rope_parameters"
        };
        if get(tree, trainer_path) != Some(inference) {
            return removed(&format!(
                "`{HF_ROPE}` must match `{trainer_path}`; give both the same value"
            ));
        }
    }
    if let Some(value) = get(tree, ASYNC_ENGINE) {
        match value {
            Y::Bool(true) => remove(tree, ASYNC_ENGINE),
            Y::Str(s) if s.eq_ignore_ascii_case("true") => remove(tree, ASYNC_ENGINE),
            Y::Bool(false) => {
                return removed(
                    "`async_engine=false`: SkyRL always uses the async HTTP/vLLM inference path; remove the override",
                );
            }
            Y::Str(s) if s.eq_ignore_ascii_case("false") => {
                return removed(
                    "`async_engine=false`: SkyRL always uses the async HTTP/vLLM inference path; remove the override",
                );
            }
            _ => return removed("`async_engine` is no longer a config field; remove the override"),
        }
    }
    if let Some((path, fix)) = RETIRED.iter().find(|(path, _)| get(tree, path).is_some()) {
        return removed(&format!("`{path}`: {fix}"));
    }
    if let Some(Y::Map(trainer)) = tree
        .iter_mut()
        .find(|(k, _)| k.key_text() == "trainer")
        .map(|(_, v)| v)
        && let Some(at) = trainer
            .iter()
            .position(|(k, _)| k.key_text() == "use_sample_packing")
    {
        if trainer
            .iter()
            .any(|(k, _)| k.key_text() == "remove_microbatch_padding")
        {
            return removed(
                "give only `trainer.remove_microbatch_padding`, not the old name \
                 `trainer.use_sample_packing` as well",
            );
        }
        let (_, value) = trainer.remove(at);
        trainer.push((Y::Str("remove_microbatch_padding".to_owned()), value));
    }
    Ok(())
}
