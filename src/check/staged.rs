//! The `offline` check of what a job reads: its models in the offline HF cache, its parquet
//! files staged by the one verdict `stage` and `estimate` use too.

use crate::check::skyrl_rules::Values;
use crate::check::{DATA_KEYS, MODEL_KEYS, list_items, model_files, model_size};
use crate::plan::estimate::{parquet_staged, stage_command};
use crate::schema::knob::Scalar;
use camino::Utf8Path;

/// The model(s) and parquet files a job reads offline must be staged before it queues.
pub(super) fn files(values: &Values, hf_cache: &Utf8Path) -> Vec<String> {
    let mut problems = Vec::new();
    for key in MODEL_KEYS {
        let Some(Scalar::Str(model)) = values.get(key) else {
            continue;
        };
        if model.starts_with("${") {
            continue;
        }
        if model.starts_with('/') {
            let missing = model_files::model_folder_missing(Utf8Path::new(&model));
            if !missing.is_empty() {
                problems.push(format!(
                    "`{key}`: `{model}` has no {}: copy the whole model folder there first",
                    missing.join(", ")
                ));
            }
            continue;
        }
        match model_files::cached_model(hf_cache, &model) {
            Ok(_) => {}
            // Some of it is there: `stage` fetches the rest, as `stage --status` says.
            Err(why) if model_size::config_json(&model, hf_cache).is_some() => {
                problems.push(format!(
                    "`{key}`: `{model}` is {why} in the offline HF cache `{hf_cache}`: on the login \
                     node run `{}` (or `HF_HUB_CACHE={hf_cache} hf download {model}`)",
                    stage_command(values.plan)
                ));
            }
            Err(_) => problems.push(format!(
                "`{key}`: `{model}` is not in the offline HF cache `{hf_cache}`: on the login node run \
                 `HF_HUB_CACHE={hf_cache} hf download {model}`"
            )),
        }
    }
    for key in DATA_KEYS {
        let Some(text) = values.text(key) else {
            continue;
        };
        for file in list_items(&text) {
            if let Err(why) = parquet_staged(Utf8Path::new(&file)) {
                problems.push(format!(
                    "`{key}`: `{file}` {why}: on the login node run `{}` (SkyRL's \
                     examples/<dataset>/<dataset>_dataset.py --output_dir writes it)",
                    stage_command(values.plan)
                ));
            }
        }
    }
    problems
}
