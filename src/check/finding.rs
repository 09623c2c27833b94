//! A preflight finding as a value: its check, the config keys it is about and a message that
//! refers to those keys rather than spelling them, so that the one printer of findings (the
//! text lines and `check --json`) spells each key as the plan's trainer does.

use crate::check::Check;
use crate::schema::Schema;
use std::borrow::Cow;

/// SkyRL's top-level config sections, MarinSkyRL's and upstream's: a dotted name in a message
/// is a config key when it starts with one (the unit test holds it to the shipped key lists).
const SECTIONS: [&str; 7] = [
    "data",
    "deepspeed_config",
    "environment",
    "generator",
    "rollout",
    "teacher",
    "trainer",
];

/// One piece of a message: prose, or a config key under rlctl's (MarinSkyRL's) name.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(String),
    Key(String),
}

/// A finding's message: prose with the keys it names kept as keys until it is printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message(Vec<Piece>);

impl Message {
    /// The message a check wrote. Every check names a config key in backticks, under rlctl's
    /// name: alone (`` `trainer.max_steps` ``), as an override (`` `trainer.max_steps=3` ``) or
    /// among other words (`` `a.b` x `c.d` ``); those names become keys, read once, here.
    pub fn new(text: &str) -> Message {
        let mut pieces = Vec::new();
        let mut prose = String::new();
        for (i, part) in text.split('`').enumerate() {
            if i > 0 {
                prose.push('`');
            }
            // Even parts lie outside backticks.
            let mut rest = if i % 2 == 0 {
                prose.push_str(part);
                ""
            } else {
                part
            };
            while let Some((at, len)) = next_key(rest) {
                prose.push_str(&rest[..at]);
                if !prose.is_empty() {
                    pieces.push(Piece::Text(std::mem::take(&mut prose)));
                }
                pieces.push(Piece::Key(rest[at..at + len].to_owned()));
                rest = &rest[at + len..];
            }
            prose.push_str(rest);
        }
        if !prose.is_empty() {
            pieces.push(Piece::Text(prose));
        }
        Message(pieces)
    }

    /// The keys the message names, under rlctl's names, each once, in the order it names them.
    pub fn keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = Vec::new();
        for piece in &self.0 {
            if let Piece::Key(key) = piece
                && !keys.contains(key)
            {
                keys.push(key.clone());
            }
        }
        keys
    }

    /// The message with each key spelt by `spell`.
    pub fn spelt<'a>(&'a self, spell: impl Fn(&'a str) -> Cow<'a, str>) -> String {
        (self.0.iter())
            .map(|piece| match piece {
                Piece::Text(text) => Cow::Borrowed(text.as_str()),
                Piece::Key(key) => spell(key),
            })
            .collect()
    }
}

/// Where the next config key of `text` (the inside of backticks) starts, and its length: a
/// dotted name in one of [`SECTIONS`], not the tail of a longer name (`a.trainer.x`).
fn next_key(text: &str) -> Option<(usize, usize)> {
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.';
    let mut from = 0;
    while from < text.len() {
        let at = from + text[from..].find(|c: char| c.is_ascii_alphabetic() || c == '_')?;
        let len = text[at..]
            .find(|c: char| !is_name(c))
            .unwrap_or(text.len() - at);
        let name = text[at..at + len].trim_end_matches('.');
        let after_name = text[..at].chars().next_back().is_some_and(is_name);
        let section = name.split_once('.').map(|(top, _)| top);
        if !after_name
            && section.is_some_and(|s| SECTIONS.contains(&s))
            && !name.split('.').any(str::is_empty)
        {
            return Some((at, name.len()));
        }
        from = at + len;
    }
    None
}

/// What one check found about a plan.
#[derive(Debug, Clone)]
pub struct Finding {
    pub check: Check,
    /// The config keys it is about, under rlctl's names.
    pub keys: Vec<String>,
    pub message: Message,
}

impl Finding {
    /// A finding whose keys are the ones its message names.
    pub fn new(check: Check, message: impl AsRef<str>) -> Finding {
        let message = Message::new(message.as_ref());
        Finding {
            check,
            keys: message.keys(),
            message,
        }
    }

    /// A finding said under rlctl's names as written: about keys the trainer never sees (what
    /// a plan leaves out of the job), which the user finds in the preset under those names.
    pub fn in_rlctl_names(check: Check, message: impl AsRef<str>) -> Finding {
        let text = message.as_ref();
        Finding {
            check,
            keys: Message::new(text).keys(),
            message: Message(vec![Piece::Text(text.to_owned())]),
        }
    }

    /// The message in the trainer's names (MarinSkyRL's, or upstream's renames).
    pub fn said(&self, schema: &Schema) -> String {
        self.message.spelt(|key| schema.trainer_key(key))
    }

    /// The finding's `[check] message` line, in the trainer's names.
    pub fn line(&self, schema: &Schema) -> String {
        format!("[{}] {}", self.check, self.said(schema))
    }

    /// The finding as `check --json` gives it, in the trainer's names.
    pub fn found(&self, level: &'static str, target: &str, schema: &Schema) -> Found {
        Found {
            code: self.check,
            level,
            target: target.to_owned(),
            keys: (self.keys.iter())
                .map(|k| schema.trainer_key(k).into_owned())
                .collect(),
            message: self.said(schema),
        }
    }
}

/// One finding of a plan, as `check --json` gives it.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct Found {
    /// The check family that found it (`slots`, `schema`, ...): stable, the `[family]` of the
    /// text.
    pub code: Check,
    /// `problem`, `warning` (a problem `--allow` let through), `note` or `skipped`.
    pub level: &'static str,
    /// The preset or cell it is about.
    pub target: String,
    /// The config keys it is about, as the plan's trainer spells them (upstream's names on an
    /// upstream checkout), each once; empty when it is about no key.
    pub keys: Vec<String>,
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn upper(key: &str) -> Cow<'_, str> {
        Cow::Owned(key.to_uppercase())
    }

    #[test]
    fn keys_in_backticks_are_keys_and_the_rest_is_prose() {
        let text = "`trainer.train_batch_size=4` x `generator.n_samples_per_prompt=2` \
                    are fewer than 8 in trainer.x: raise `+trainer.train_batch_size`.";
        let m = Message::new(text);
        assert_eq!(
            m.keys(),
            ["trainer.train_batch_size", "generator.n_samples_per_prompt"]
        );
        assert_eq!(m.spelt(Cow::Borrowed), text);
        assert_eq!(
            m.spelt(upper),
            "`TRAINER.TRAIN_BATCH_SIZE=4` x `GENERATOR.N_SAMPLES_PER_PROMPT=2` \
             are fewer than 8 in trainer.x: raise `+TRAINER.TRAIN_BATCH_SIZE`."
        );
    }

    #[test]
    fn files_modules_values_and_tails_of_names_are_not_keys() {
        for text in [
            "`config.json` of `skyrl_train.entrypoints.main_base`",
            "`a.trainer.max_steps` and `trainer.` and `x=Qwen/Qwen2.5-0.5B`",
            "unbalanced ` trainer",
            "",
        ] {
            let m = Message::new(text);
            assert!(m.keys().is_empty(), "{text}: {:?}", m.keys());
            assert_eq!(m.spelt(upper), text);
        }
        let m = Message::new("`${generator.backend}` and `generator.engine_init_kwargs.a`");
        assert_eq!(
            m.keys(),
            ["generator.backend", "generator.engine_init_kwargs.a"]
        );
    }

    #[test]
    fn the_sections_are_those_of_the_shipped_key_lists() {
        for list in [
            include_str!("../../presets/schemas/marinskyrl-a559688.keys"),
            include_str!("../../presets/schemas/skyrl-0.4.0.keys"),
        ] {
            let lines = list
                .lines()
                .filter(|l| !l.trim().is_empty() && !l.starts_with('#'));
            for line in lines {
                let top = line.split(['.', ' ', '=']).next().unwrap_or_default();
                assert!(SECTIONS.contains(&top), "{line}");
            }
        }
    }
}
