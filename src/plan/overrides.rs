//! The user's `-- KEY=VALUE` arguments: hydra overrides only, never environment knobs.

use crate::error::{Error, Result, closest};
use crate::plan::sequence::{self, Entry};
use crate::schema::Schema;
use crate::schema::flavour::Flavour;
use crate::schema::grammar::{self, Config, Override, Prefix, Problem, Stage, from_toml};
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

/// Parses the arguments after `--`, in order, refusing what hydra would refuse of each (its
/// grammar, its function calls, sweeps, values OmegaConf will not store). A key given twice
/// folds into one override with the effect hydra gives the pair; each key reaches the trainer
/// once.
pub fn parse(args: &[String]) -> Result<Vec<Knob>> {
    parse_for(args, Flavour::Marin)
}

/// [`parse`] with the grammar of the checkout's own parser: hydra's for MarinSkyRL; for
/// upstream skyrl, whose `from_cli_overrides` reads OmegaConf's dotlist, only the shape
/// (`KEY=VALUE`, a dotted key, no environment knob) is judged here, and the values are left to
/// the dotlist's verdict on the job's whole command line ([`Schema::check_trainer_args`]), so
/// `trainer.project_name=a,b` (a sweep to hydra, the string `a,b` to the dotlist) and
/// `trainer.run_name=café` pass there as they pass upstream.
pub fn parse_for(args: &[String], flavour: Flavour) -> Result<Vec<Knob>> {
    let mut entries: Vec<Entry> = Vec::new();
    for arg in args {
        let entry = parse_one(arg, flavour)?;
        match flavour {
            Flavour::Marin => sequence::push(&mut entries, entry)?,
            // OmegaConf merges the items in order: a key given again takes the later value.
            Flavour::Upstream => {
                entries.retain(|e| e.knob.path() != entry.knob.path());
                entries.push(entry);
            }
        }
    }
    Ok(entries.into_iter().map(|e| e.knob).collect())
}

fn parse_one(arg: &str, flavour: Flavour) -> Result<Entry> {
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
    let verdict = grammar::check(arg);
    if path.is_empty() || matches!(&verdict, Err(r) if r.stage == Stage::Key) {
        return Err(bad(format!(
            "`{path}` is not a hydra key: keys are dotted names such as `trainer.train_batch_size`"
        )));
    }
    // SkyRL's keys are lower case: an upper-case bare key is an old wrapper's environment knob
    // (hydra would refuse it as a key the config lacks).
    if prefix.is_empty() && !path.contains('.') && path.chars().any(|c| c.is_ascii_uppercase()) {
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
    let parsed = match (verdict, flavour) {
        (Ok(parsed), _) => parsed,
        (Err(r), Flavour::Marin) => return Err(bad(r.reason())),
        // Hydra's refusal of the value is not upstream's: the dotlist judges it later.
        (Err(_), Flavour::Upstream) => Override {
            prefix: prefix_of(key),
            key: path.to_owned(),
            package: None,
            value: None,
        },
    };
    if let Some(package) = &parsed.package {
        return Err(bad(format!(
            "hydra refuses it unless `{}` is a config group (Override {arg} looks like a config group \
             override, but config group '{}' does not exist); rlctl sets config values, not group \
             choices: drop `@{package}` and set the section's keys, e.g. `{}.KEY=VALUE`",
            parsed.key, parsed.key, parsed.key
        )));
    }
    // `~key=` deletes only a key whose value is the empty string; rlctl writes a bare `~key`
    // for an empty value, so the empty string is written out.
    let value = match (prefix, arg.contains('='), value.is_empty()) {
        ("~", true, true) => "''",
        _ => value,
    };
    Ok(Entry {
        arg: arg.to_owned(),
        knob: Knob {
            key: key.to_owned(),
            value: KnobValue::Verbatim(value.to_owned()),
            origin: Origin::CommandLine,
        },
        parsed,
    })
}

/// OmegaConf's resolution of the composed config: SkyRL's key list with every knob applied in
/// order. An interpolation to a key that is not there (or to `???`, or to itself) fails when
/// SkyRL resolves its config on start-up, so it is refused here, naming the knob that caused it.
pub fn check_interpolations(knobs: &[Knob], schema: &Schema) -> Result<()> {
    let mut config = Config::from_schema(schema);
    for (i, knob) in knobs.iter().enumerate() {
        let (prefix, value) = match &knob.value {
            KnobValue::Typed(v) => (prefix_of(&knob.key), Some(from_toml(v))),
            KnobValue::Verbatim(_) => match grammar::check(&knob.hydra_arg()) {
                Ok(o) => (o.prefix, o.value),
                Err(_) => continue,
            },
        };
        config.apply(knob.path(), prefix, value.as_ref(), i);
    }
    for problem in config.problems() {
        let blamed = problem.origin.or_else(|| {
            let missing = problem.failure.missing.as_deref()?;
            knobs.iter().rposition(|k| {
                let p = k.path();
                missing == p || missing.starts_with(&format!("{p}."))
            })
        });
        // SkyRL's own defaults are not the command line's to answer for.
        let Some(i) = blamed else { continue };
        return Err(unresolved(&knobs[i], &problem, schema));
    }
    Ok(())
}

fn prefix_of(key: &str) -> Prefix {
    if key.starts_with("++") {
        Prefix::ForceAdd
    } else if key.starts_with('+') {
        Prefix::Add
    } else if key.starts_with('~') {
        Prefix::Delete
    } else {
        Prefix::Change
    }
}

fn unresolved(knob: &Knob, problem: &Problem, schema: &Schema) -> Error {
    let failure = &problem.failure;
    let at = if problem.origin.is_some() && problem.key == knob.path() {
        String::new()
    } else {
        format!(": SkyRL's `{}` is `{}`", problem.key, problem.value)
    };
    let fix = match &failure.missing {
        Some(missing) if failure.message.contains("Missing mandatory value") => {
            format!("give `{missing}` a value, not `???`")
        }
        Some(missing) if problem.origin.is_none() => format!(
            "`{}` depends on `{missing}`: keep it, or override `{}` as well",
            problem.key, problem.key
        ),
        Some(missing) => {
            let suggestion = closest(missing, schema.keys().map(|(k, _)| k))
                .map(|s| format!(" (did you mean `{s}`?)"))
                .unwrap_or_default();
            format!(
                "`{missing}` is not a key of SkyRL's config{suggestion}; if SkyRL has it and the key \
                 list `{}` lacks it, refresh the list with `rlctl schema import`; for a literal `${{`, \
                 write `\\${{` inside quotes",
                schema.name
            )
        }
        None if failure.message.contains("Unsupported interpolation type") => {
            "SkyRL has OmegaConf's resolvers (oc.env, oc.select, oc.create, oc.decode, \
             oc.deprecated, oc.dict.keys, oc.dict.values) and hydra's (now, hydra, python_version)"
                .to_owned()
        }
        None if failure.message.contains("Recursive") => {
            "an interpolation cannot lead back to the key that holds it".to_owned()
        }
        None => "fix the interpolation's keys or arguments".to_owned(),
    };
    let reason = format!(
        "OmegaConf refuses it when SkyRL resolves its config{at} ({}); {fix}",
        failure.message
    );
    match knob.origin {
        Origin::CommandLine => Error::BadOverride {
            arg: knob.hydra_arg(),
            reason,
        },
        ref origin => Error::Unsupported(format!(
            "{origin} sets `{}`, and {reason}",
            knob.hydra_arg()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(arg: &str) -> String {
        parse(&[arg.to_owned()]).unwrap_err().to_string()
    }

    #[test]
    fn upstream_values_are_left_to_the_dotlist() {
        let args = |a: &[&str]| a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let comma = args(&["trainer.project_name=a,b"]);
        // A sweep to hydra; the string `a,b` to upstream's dotlist.
        assert!(parse_for(&comma, Flavour::Marin).is_err());
        let knobs = parse_for(&comma, Flavour::Upstream).unwrap();
        assert_eq!(knobs[0].hydra_arg(), "trainer.project_name=a,b");
        // The shape is still judged: a bare word is no override on either.
        assert!(parse_for(&args(&["oops"]), Flavour::Upstream).is_err());
        let twice = parse_for(
            &args(&["trainer.run_name=café", "trainer.run_name=x"]),
            Flavour::Upstream,
        )
        .unwrap();
        assert_eq!(twice.len(), 1);
        assert_eq!(twice[0].hydra_arg(), "trainer.run_name=x");
    }

    #[test]
    fn dotted_and_plus_keys_pass_verbatim() {
        let knobs = parse(&[
            "trainer.epochs=2".to_owned(),
            "+generator.engine_init_kwargs.max_model_len=2048".to_owned(),
            "trainer.run_name= 'a b'".to_owned(),
        ])
        .unwrap();
        assert_eq!(knobs[0].hydra_arg(), "trainer.epochs=2");
        assert_eq!(
            knobs[1].path(),
            "generator.engine_init_kwargs.max_model_len"
        );
        assert_eq!(knobs[2].hydra_arg(), "trainer.run_name= 'a b'");
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

    fn args(list: &[&str]) -> Result<Vec<String>> {
        let list: Vec<String> = list.iter().map(|s| (*s).to_owned()).collect();
        parse(&list).map(|knobs| knobs.iter().map(Knob::hydra_arg).collect())
    }

    #[test]
    fn hydra_refusals_say_what_hydra_says_and_how_to_quote() {
        assert_eq!(
            err("trainer.project_name=a,b"),
            "override `trainer.project_name=a,b`: hydra refuses it (Ambiguous value for argument \
             'trainer.project_name=a,b'); a comma outside quotes or brackets is a sweep, which needs \
             --multirun: for one string quote the value ('trainer.project_name=\"a,b\"'), for a list \
             use brackets ('trainer.project_name=[a,b]'); for several runs write a grid (see `rlctl \
             grid --help`)"
        );
        assert!(err("trainer.project_name=a=b").contains(r#"'trainer.project_name="a=b"'"#));
        assert!(err("trainer.project_name=${oops").contains(r#"'trainer.project_name="\${oops"'"#));
        assert!(err("trainer.project_name='${oops'").contains("GrammarParseError"));
        assert!(err("trainer.project_name=choice(a,b)").contains("requires --multirun"));
        assert!(err("trainer.project_name=nope(1)").contains("Unknown function 'nope'"));
        assert!(err("trainer.seed@pkg=1").contains("config group"));
    }

    #[test]
    fn keys_follow_hydras_grammar() {
        assert!(parse(&["+trainer.my-key=1".to_owned()]).is_ok());
        assert!(parse(&["+a/b=1".to_owned()]).is_ok());
        // Lower-case bare keys are left to the schema check, which knows the top-level sections.
        assert!(parse(&["data={train_data:[x]}".to_owned()]).is_ok());
        assert!(err("+trainer.01=1").contains("not a hydra key"));
    }

    #[test]
    fn a_key_given_twice_folds_as_hydra_applies_the_pair() {
        assert_eq!(args(&["+t.k=1", "t.k=2"]).unwrap(), ["+t.k=2"]);
        assert_eq!(args(&["+t.k=1", "++t.k=2"]).unwrap(), ["+t.k=2"]);
        assert_eq!(args(&["t.k=1", "++t.k=2"]).unwrap(), ["t.k=2"]);
        assert_eq!(args(&["a.b=1", "+t.k=1", "~t.k"]).unwrap(), ["a.b=1"]);
        assert_eq!(args(&["~t.k", "+t.k=2"]).unwrap(), ["t.k=2"]);
        assert_eq!(args(&["t.k=5", "~t.k=5.0"]).unwrap(), ["~t.k"]);
        assert_eq!(
            args(&["+t.k={a:1,b:{c:2}}", "++t.k={b:{d:3}}"]).unwrap(),
            ["+t.k={a:1,b:{c:2,d:3}}"]
        );
        assert_eq!(args(&["t.k=null", "+t.k=2"]).unwrap(), ["t.k=2"]);
        let refused = |list: &[&str]| args(list).unwrap_err().to_string();
        assert!(refused(&["t.k=1", "+t.k=2"]).contains("An item is already at 't.k'"));
        assert!(refused(&["~t.k", "t.k=2"]).contains("Could not override 't.k'"));
        assert!(refused(&["~t.k", "~t.k"]).contains("'t.k' does not exist"));
        assert!(refused(&["t.k=5", "~t.k=6"]).contains("is 5 and not 6"));
        assert!(refused(&["+t.k={a:1}", "t.k={b:2}"]).contains("Key 'b' is not in struct"));
    }

    #[test]
    fn deleting_an_empty_value_keeps_the_value() {
        assert_eq!(args(&["~t.k="]).unwrap(), ["~t.k=''"]);
        assert_eq!(args(&["~t.k"]).unwrap(), ["~t.k"]);
    }

    #[test]
    fn malformed_arguments_are_refused() {
        assert!(err("trainer.epochs").contains("expected KEY=VALUE"));
        assert!(err("+++a.b=1").contains("not a hydra prefix"));
        assert!(err("trainer..epochs=1").contains("not a hydra key"));
        assert!(err("=1").contains("not a hydra key"));
    }
}
