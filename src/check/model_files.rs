//! Whether a model folder holds what vLLM and the trainer load (config.json, a tokenizer, every
//! weight file): the one verdict `stage --status` and the `offline` check give, so that `check`
//! never passes a model `stage` calls incomplete.

use camino::{Utf8Path, Utf8PathBuf};

/// The HF cache's snapshot of `repo` that is complete, else what the most complete one lacks
/// (or that none is there).
pub fn cached_model(cache: &Utf8Path, repo: &str) -> Result<Utf8PathBuf, String> {
    let snapshots = cache
        .join(format!("models--{}", repo.replace('/', "--")))
        .join("snapshots");
    let Ok(entries) = snapshots.read_dir_utf8() else {
        return Err(format!("not in the HF cache `{cache}`"));
    };
    let mut best: Option<Vec<String>> = None;
    let mut dirs: Vec<Utf8PathBuf> = entries.flatten().map(|e| e.into_path()).collect();
    dirs.sort();
    for dir in dirs.into_iter().filter(|d| d.is_dir()) {
        let missing = model_folder_missing(&dir);
        if missing.is_empty() {
            return Ok(dir);
        }
        if best.as_ref().is_none_or(|b| missing.len() < b.len()) {
            best = Some(missing);
        }
    }
    match best {
        Some(missing) => Err(format!("incomplete: no {}", missing.join(", "))),
        None => Err(format!("not in the HF cache `{cache}`")),
    }
}

/// What a model folder lacks of what vLLM and the trainer load: config.json, a tokenizer, and
/// every weight file (each shard the index names, or the single file).
pub fn model_folder_missing(dir: &Utf8Path) -> Vec<String> {
    let has = |name: &str| dir.join(name).is_file();
    let mut missing = Vec::new();
    if !has("config.json") {
        missing.push("config.json".to_owned());
    }
    if !has("tokenizer_config.json") {
        missing.push("tokenizer_config.json".to_owned());
    }
    if !["tokenizer.json", "tokenizer.model", "vocab.json"]
        .iter()
        .any(|f| has(f))
    {
        missing.push("tokenizer.json".to_owned());
    }
    let index = [
        "model.safetensors.index.json",
        "pytorch_model.bin.index.json",
    ]
    .into_iter()
    .find(|f| has(f));
    match index {
        Some(index) => match shards(&dir.join(index)) {
            Some(shards) => {
                let absent: Vec<String> = shards.into_iter().filter(|s| !has(s)).collect();
                match absent.len() {
                    0 => {}
                    1 => missing.extend(absent),
                    n => missing.push(format!("{n} weight shards ({}, ...)", absent[0])),
                }
            }
            None => missing.push(format!("a readable {index}")),
        },
        None if has("model.safetensors") || has("pytorch_model.bin") => {}
        None => missing.push("model.safetensors".to_owned()),
    }
    missing
}

/// The shard files a weight index names, each once.
fn shards(index: &Utf8Path) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(index).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    let mut files: Vec<String> = json
        .get("weight_map")?
        .as_object()?
        .values()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    files.sort();
    files.dedup();
    Some(files)
}
