//! The user's `-- KEY=VALUE` arguments: hydra overrides only, never environment knobs.

use crate::error::{Error, Result};
use crate::schema::knob::{Knob, KnobValue, Origin};

/// Keys rlctl always sets itself, last, so that no override can silently change them.
pub const FORCED_KEYS: [(&str, &str); 3] = [
    ("trainer.resume_mode", "use --resume fresh|latest"),
    (
        "trainer.ckpt_path",
        "rlctl computes the checkpoint folder per preset and cell; pick another with --job-name",
    ),
    (
        "trainer.export_path",
        "rlctl puts exports next to the checkpoints; pick another folder with --job-name",
    ),
];

/// The old wrappers' environment knobs, and what replaces each one in rlctl.
const ENV_KNOB_HINTS: [(&str, &str); 16] = [
    ("RESUME_MODE", "use --resume fresh|latest"),
    (
        "CLEAN_CKPT",
        "use --resume to choose between a fresh start and a resume",
    ),
    (
        "CKPT_DIR",
        "rlctl computes the checkpoint folder; pick another with --job-name",
    ),
    ("RUN_NAME", "use --job-name NAME"),
    ("JOB_NAME", "use --job-name NAME"),
    (
        "NUM_GPUS",
        "GPUs come from the cluster profile; use --nodes N for more",
    ),
    ("NODES", "use --nodes N"),
    ("MODEL_PATH", "override `trainer.policy.model.path=...`"),
    (
        "DATA_DIR",
        "the preset's [data] section names the dataset; override `data.train_data=[...]` and `data.val_data=[...]`",
    ),
    ("MAX_STEPS", "override `trainer.max_steps=N`"),
    ("EPOCHS", "override `trainer.epochs=N`"),
    ("TRAIN_BATCH_SIZE", "override `trainer.train_batch_size=N`"),
    (
        "MINI_BATCH_SIZE",
        "override `trainer.policy_mini_batch_size=N`",
    ),
    ("N_SAMPLES", "override `generator.n_samples_per_prompt=N`"),
    (
        "MAX_GEN_LEN",
        "override `generator.sampling_params.max_generate_length=N`",
    ),
    ("TOPK", "override `teacher.top_k_logprobs=N`"),
];

/// Parses the arguments after `--`, in order; each becomes exactly one hydra argument.
pub fn parse(args: &[String]) -> Result<Vec<Knob>> {
    args.iter().map(|arg| parse_one(arg)).collect()
}

fn parse_one(arg: &str) -> Result<Knob> {
    let bad = |reason: String| Error::BadOverride {
        arg: arg.to_owned(),
        reason,
    };
    let (key, value) = match arg.split_once('=') {
        Some((key, value)) => (key, value),
        None if arg.starts_with('~') => (arg, ""),
        None => {
            return Err(bad(
                "expected KEY=VALUE, a hydra override such as `trainer.epochs=2`".to_owned(),
            ));
        }
    };
    let prefix_len = key.len() - key.trim_start_matches(['+', '~']).len();
    let (prefix, path) = key.split_at(prefix_len);
    if !matches!(prefix, "" | "+" | "++" | "~") {
        return Err(bad(format!(
            "`{prefix}` is not a hydra prefix; use `+` to add a key, `++` to add or override, `~` to delete"
        )));
    }
    if !is_key_path(path) {
        return Err(bad(format!(
            "`{path}` is not a hydra key: keys are dotted names such as `trainer.train_batch_size`"
        )));
    }
    if prefix.is_empty() && !path.contains('.') {
        let hint = ENV_KNOB_HINTS
            .iter()
            .find(|(name, _)| *name == path)
            .map(|(_, hint)| (*hint).to_owned())
            .unwrap_or_else(|| {
                "hydra keys are dotted (`trainer.epochs=2`) or added with `+key=value`; \
                 settings of the job itself are flags (see `rlctl launch --help`)"
                    .to_owned()
            });
        return Err(bad(format!(
            "`{path}` is not a hydra key, and environment knobs are not passed after `--`: {hint}"
        )));
    }
    if let Some((_, hint)) = FORCED_KEYS.iter().find(|(forced, _)| *forced == path) {
        return Err(bad(format!("rlctl sets `{path}` itself: {hint}")));
    }
    Ok(Knob {
        key: key.to_owned(),
        value: KnobValue::Verbatim(value.to_owned()),
        origin: Origin::CommandLine,
    })
}

fn is_key_path(path: &str) -> bool {
    let mut segments = path.split('.');
    let first_ok = segments.next().is_some_and(|s| {
        s.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    });
    first_ok
        && segments
            .all(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(arg: &str) -> String {
        parse(&[arg.to_owned()]).unwrap_err().to_string()
    }

    #[test]
    fn dotted_and_plus_keys_pass_verbatim() {
        let knobs = parse(&[
            "trainer.epochs=2".to_owned(),
            "+generator.engine_init_kwargs.max_model_len=2048".to_owned(),
            "trainer.run_name=a b 'c'".to_owned(),
        ])
        .unwrap();
        assert_eq!(knobs[0].hydra_arg(), "trainer.epochs=2");
        assert_eq!(
            knobs[1].path(),
            "generator.engine_init_kwargs.max_model_len"
        );
        assert_eq!(knobs[2].hydra_arg(), "trainer.run_name=a b 'c'");
    }

    #[test]
    fn bare_environment_knobs_name_the_flag_to_use() {
        assert_eq!(
            err("RESUME_MODE=latest"),
            "override `RESUME_MODE=latest`: `RESUME_MODE` is not a hydra key, and environment \
             knobs are not passed after `--`: use --resume fresh|latest"
        );
        assert!(err("DATA_DIR=/x").contains("data.train_data"));
        assert!(err("FOO=1").contains("see `rlctl launch --help`"));
    }

    #[test]
    fn forced_keys_are_refused() {
        assert_eq!(
            err("trainer.resume_mode=latest"),
            "override `trainer.resume_mode=latest`: rlctl sets `trainer.resume_mode` itself: use --resume fresh|latest"
        );
        assert!(err("++trainer.ckpt_path=/scratch/x").contains("rlctl sets `trainer.ckpt_path`"));
    }

    #[test]
    fn malformed_arguments_are_refused() {
        assert!(err("trainer.epochs").contains("expected KEY=VALUE"));
        assert!(err("+++a.b=1").contains("not a hydra prefix"));
        assert!(err("trainer..epochs=1").contains("not a hydra key"));
        assert!(err("=1").contains("not a hydra key"));
    }
}
