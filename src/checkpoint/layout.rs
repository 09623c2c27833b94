//! Checkpoint folders laid out as SkyRL's save writes them (`save_checkpoints`, the FSDP
//! strategy's per-rank files, Megatron's torch_dist `.metadata`), for tests.

use super::POINTER_FILE;
use camino::Utf8Path;

fn file(path: &Utf8Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, b"torch").unwrap();
}

/// One model's FSDP folder, saved on `world` ranks.
pub fn fsdp_model(dir: &Utf8Path, world: u64) {
    std::fs::create_dir_all(dir.join("huggingface")).unwrap();
    for rank in 0..world {
        for kind in ["model", "optim", "extra_state"] {
            file(&dir.join(format!("{kind}_world_size_{world}_rank_{rank}.pt")));
        }
    }
    let config = format!("{{\"fsdp_strategy\": \"fsdp2\", \"world_size\": {world}}}");
    std::fs::write(dir.join("fsdp_config.json"), config).unwrap();
}

/// The FSDP strategy's `lora_adapter/` in a model's folder: its two files, as rank 0 writes them
/// (`_save_lora_adapters`; a unit test of `checkpoint` runs the wheel's own).
pub fn lora_adapter(dir: &Utf8Path) {
    file(&dir.join("lora_adapter/adapter_model.safetensors"));
    std::fs::write(dir.join("lora_adapter/adapter_config.json"), "{\"r\": 8}").unwrap();
}

/// A whole FSDP `global_step_{step}` on `world` ranks, with a critic when asked.
pub fn fsdp_step(root: &Utf8Path, step: u64, world: u64, critic: bool) {
    let dir = root.join(format!("global_step_{step}"));
    fsdp_model(&dir.join("policy"), world);
    if critic {
        fsdp_model(&dir.join("critic"), world);
    }
    file(&dir.join("data.pt"));
    file(&dir.join("trainer_state.pt"));
}

/// A Megatron `global_step_{step}`: torch_dist shards, and `.metadata` once finalized.
pub fn megatron_step(root: &Utf8Path, step: u64, finalized: bool) {
    let dir = root.join(format!("global_step_{step}"));
    file(&dir.join("policy/__0_0.distcp"));
    file(&dir.join("policy/common.pt"));
    if finalized {
        file(&dir.join("policy/.metadata"));
    }
    file(&dir.join("trainer_state.pt"));
}

pub fn pointer(root: &Utf8Path, text: &str) {
    std::fs::write(root.join(POINTER_FILE), text).unwrap();
}
