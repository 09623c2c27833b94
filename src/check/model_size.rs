//! How big a model is: from its `config.json` when it is on disk, else from its name.

use crate::schema::knob::Scalar;
use camino::{Utf8Path, Utf8PathBuf};

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelSize {
    /// Total parameters, in billions.
    pub params_b: f64,
    /// A mixture of experts: every expert's weights are resident, though few are active.
    pub moe: bool,
}

impl ModelSize {
    /// bf16 weights, in GiB.
    pub fn bf16_gib(self) -> f64 {
        self.params_b * 1e9 * 2.0 / (1u64 << 30) as f64
    }
}

/// Where a model's `config.json` is: a local folder, or the HF cache's newest snapshot.
pub fn config_json(model: &str, hf_cache: &Utf8Path) -> Option<Utf8PathBuf> {
    if model.starts_with('/') {
        let path = Utf8Path::new(model).join("config.json");
        return path.is_file().then_some(path);
    }
    let snapshots = hf_cache
        .join(format!("models--{}", model.replace('/', "--")))
        .join("snapshots");
    let mut found: Vec<Utf8PathBuf> = snapshots
        .read_dir_utf8()
        .ok()?
        .flatten()
        .map(|e| e.path().join("config.json"))
        .filter(|p| p.is_file())
        .collect();
    found.sort();
    found.pop()
}

/// Parameter count from the architecture in config.json (embeddings, attention, MLP or experts).
pub fn from_config(text: &str) -> Option<ModelSize> {
    let json: serde_json::Value = serde_json::from_str(text).ok()?;
    let get = |key: &str| json.get(key).and_then(serde_json::Value::as_f64);
    let hidden = get("hidden_size")?;
    let layers = get("num_hidden_layers")?;
    let vocab = get("vocab_size")?;
    let heads = get("num_attention_heads")?;
    let kv_heads = get("num_key_value_heads").unwrap_or(heads);
    let head_dim = get("head_dim").unwrap_or(hidden / heads);
    let tied = json
        .get("tie_word_embeddings")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false);
    let attention = hidden * head_dim * (2.0 * heads + 2.0 * kv_heads);
    let experts = get("num_experts")
        .or(get("num_local_experts"))
        .or(get("n_routed_experts"));
    let mlp = match experts {
        Some(n) if n > 1.0 => {
            let per_expert = get("moe_intermediate_size").or(get("intermediate_size"))?;
            n * 3.0 * hidden * per_expert
        }
        _ => 3.0 * hidden * get("intermediate_size")?,
    };
    let embeddings = vocab * hidden * if tied { 1.0 } else { 2.0 };
    Some(ModelSize {
        params_b: (layers * (attention + mlp) + embeddings) / 1e9,
        moe: experts.is_some_and(|n| n > 1.0),
    })
}

/// Size from a name such as `Qwen/Qwen3-32B` or `Qwen3-30B-A3B` (total, then active).
pub fn from_name(model: &str) -> Option<ModelSize> {
    let name = model.rsplit('/').next()?;
    let mut sizes = Vec::new();
    for part in name.split(['-', '_']) {
        let lower = part.to_ascii_lowercase();
        let (active, number) = match lower.strip_prefix('a') {
            Some(rest) if rest.ends_with('b') => (true, rest),
            _ => (false, lower.as_str()),
        };
        if let Some(n) = number.strip_suffix('b').and_then(|n| n.parse::<f64>().ok()) {
            sizes.push((active, n));
        }
    }
    let total = sizes.iter().find(|(active, _)| !active)?.1;
    Some(ModelSize {
        params_b: total,
        moe: sizes.iter().any(|(active, _)| *active),
    })
}

/// The model's size and where it came from, for messages.
pub fn estimate(model: &Scalar, hf_cache: &Utf8Path) -> Option<(ModelSize, String)> {
    let model = model.as_str()?;
    if let Some(path) = config_json(model, hf_cache) {
        let text = std::fs::read_to_string(&path).ok()?;
        if let Some(size) = from_config(&text) {
            return Some((size, format!("its config.json ({path})")));
        }
    }
    from_name(model).map(|size| (size, "its name".to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_from_names() {
        assert_eq!(
            from_name("Qwen/Qwen3-32B"),
            Some(ModelSize {
                params_b: 32.0,
                moe: false
            })
        );
        assert_eq!(
            from_name("Qwen/Qwen3-30B-A3B"),
            Some(ModelSize {
                params_b: 30.0,
                moe: true
            })
        );
        assert_eq!(
            from_name("Qwen/Qwen2.5-1.5B-Instruct"),
            Some(ModelSize {
                params_b: 1.5,
                moe: false
            })
        );
        assert_eq!(from_name("/models/my-finetune"), None);
    }

    #[test]
    fn size_from_a_qwen3_32b_config() {
        // Qwen3-32B's published architecture.
        let config = r#"{"architectures": ["Qwen3ForCausalLM"], "hidden_size": 5120,
            "intermediate_size": 25600, "num_attention_heads": 64, "num_hidden_layers": 64,
            "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151936,
            "tie_word_embeddings": false, "rope_scaling": null}"#;
        let size = from_config(config).unwrap();
        assert!((size.params_b - 32.8).abs() < 0.3, "{size:?}");
        assert!(!size.moe);
        assert!(size.bf16_gib() > 60.0);
    }

    #[test]
    fn size_from_a_moe_config() {
        let config = r#"{"hidden_size": 2048, "moe_intermediate_size": 768, "intermediate_size": 6144,
            "num_experts": 128, "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128,
            "num_hidden_layers": 48, "vocab_size": 151936, "tie_word_embeddings": false}"#;
        let size = from_config(config).unwrap();
        assert!(size.moe);
        assert!((size.params_b - 30.5).abs() < 1.0, "{size:?}");
    }
}
