//! The keys one flavour of SkyRL renamed from the other, worked out from the two key lists
//! rather than typed by hand, so that a new list brings its own table.
//!
//! Two keys, each missing from the other list, are one key renamed when they sit in the same
//! top-level section, and one is the other with a section inserted (`generator.backend` →
//! `generator.inference_engine.backend`), or both spell the same words (a word split off into a
//! section: `generator.num_inference_engines` → `generator.inference_engine.num_engines`), or
//! one has one word more (`trainer.max_steps` → `trainer.max_training_steps`); their defaults
//! are of kinds that fit, and neither has another such partner. The first two are preferred
//! over one word more.

use crate::schema::value::{JsonValue, parse_default};
use std::collections::{BTreeSet, HashSet};

/// `(MarinSkyRL key, upstream key)` pairs, in the Marin list's order.
pub fn rename_pairs<'a>(
    marin: impl Iterator<Item = (&'a str, &'a str)>,
    upstream: impl Iterator<Item = (&'a str, &'a str)>,
) -> Vec<(String, String)> {
    let marin: Vec<(&str, &str)> = marin.collect();
    let upstream: Vec<(&str, &str)> = upstream.collect();
    let in_marin: HashSet<&str> = marin.iter().map(|(k, _)| *k).collect();
    let in_upstream: HashSet<&str> = upstream.iter().map(|(k, _)| *k).collect();
    let only_marin: Vec<Side> = (marin.iter())
        .filter(|(k, _)| !in_upstream.contains(k))
        .map(|&(k, d)| Side::of(k, d))
        .collect();
    let only_upstream: Vec<Side> = (upstream.iter())
        .filter(|(k, _)| !in_marin.contains(k))
        .map(|&(k, d)| Side::of(k, d))
        .collect();
    let partners = |from: &Side, among: &[Side]| -> Vec<usize> {
        let fits = |strict: bool| -> Vec<usize> {
            (among.iter().enumerate())
                .filter(|(_, other)| from.matches(other, strict))
                .map(|(i, _)| i)
                .collect()
        };
        let same_words = fits(true);
        if same_words.is_empty() {
            fits(false)
        } else {
            same_words
        }
    };
    let mut pairs = Vec::new();
    for m in &only_marin {
        let [u] = partners(m, &only_upstream)[..] else {
            continue;
        };
        let back = partners(&only_upstream[u], &only_marin);
        if back.len() == 1 && only_marin[back[0]].key == m.key {
            pairs.push((m.key.to_owned(), only_upstream[u].key.to_owned()));
        }
    }
    pairs
}

struct Side<'a> {
    key: &'a str,
    top: &'a str,
    words: BTreeSet<String>,
    kind: Option<Kind>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Bool,
    Number,
    Text,
    List,
    Dict,
}

impl<'a> Side<'a> {
    fn of(key: &'a str, default: &str) -> Side<'a> {
        Side {
            key,
            top: key.split('.').next().unwrap_or(key),
            words: key.split(['.', '_']).map(singular).collect(),
            kind: kind_of(default),
        }
    }

    /// Whether `other` is this key renamed: the same words or a section inserted (`strict`),
    /// or one word more on either side.
    fn matches(&self, other: &Side, strict: bool) -> bool {
        if self.top != other.top || !kinds_fit(self.kind, other.kind) {
            return false;
        }
        if strict {
            return self.words == other.words || section_inserted(self.key, other.key);
        }
        let (small, big) = if self.words.len() < other.words.len() {
            (&self.words, &other.words)
        } else {
            (&other.words, &self.words)
        };
        big.len() == small.len() + 1 && small.is_subset(big)
    }
}

/// Whether one key is the other with one more section on its way to the same leaf.
fn section_inserted(a: &str, b: &str) -> bool {
    let (a, b): (Vec<&str>, Vec<&str>) = (a.split('.').collect(), b.split('.').collect());
    let (short, long) = if a.len() < b.len() { (a, b) } else { (b, a) };
    long.len() == short.len() + 1
        && short.last() == long.last()
        && (0..long.len() - 1).any(|skip| {
            let rest = long
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != skip)
                .map(|(_, s)| s);
            rest.eq(short.iter())
        })
}

/// A word without its plural `s`: `engines` and `engine` are one word.
fn singular(word: &str) -> String {
    match word.strip_suffix('s') {
        Some(stem) if stem.len() >= 3 && !stem.ends_with('s') => stem.to_owned(),
        _ => word.to_owned(),
    }
}

/// The kind of a default; `None` (null, an interpolation, `???`) fits any kind.
fn kind_of(default: &str) -> Option<Kind> {
    match parse_default(default).ok()? {
        JsonValue::Bool(_) => Some(Kind::Bool),
        JsonValue::Int(_) | JsonValue::Float(_) => Some(Kind::Number),
        JsonValue::Str(s) if s == "???" => None,
        JsonValue::Str(_) => Some(Kind::Text),
        JsonValue::Array(_) => Some(Kind::List),
        JsonValue::Object(_) => Some(Kind::Dict),
        JsonValue::Null | JsonValue::Interp(_) => None,
    }
}

fn kinds_fit(a: Option<Kind>, b: Option<Kind>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(
        marin: &[(&'static str, &'static str)],
        upstream: &[(&'static str, &'static str)],
    ) -> Vec<(String, String)> {
        rename_pairs(marin.iter().copied(), upstream.iter().copied())
    }

    #[test]
    fn a_section_inserted_a_word_split_off_and_one_word_more_are_renames() {
        let found = pairs(
            &[
                ("generator.backend", "\"vllm\""),
                ("generator.num_inference_engines", "1"),
                ("trainer.max_steps", "null"),
                ("trainer.epochs", "1"),
            ],
            &[
                ("generator.inference_engine.backend", "\"vllm\""),
                ("generator.inference_engine.num_engines", "1"),
                ("trainer.max_training_steps", "null"),
                ("trainer.epochs", "1"),
            ],
        );
        assert_eq!(
            found,
            [
                ("generator.backend", "generator.inference_engine.backend"),
                (
                    "generator.num_inference_engines",
                    "generator.inference_engine.num_engines"
                ),
                ("trainer.max_steps", "trainer.max_training_steps"),
            ]
            .map(|(a, b)| (a.to_owned(), b.to_owned()))
        );
    }

    #[test]
    fn kinds_that_differ_or_two_partners_make_no_rename() {
        assert!(pairs(&[("a.x_y", "true")], &[("a.x_y_z", "\"t\"")]).is_empty());
        assert!(pairs(&[("a.x_y", "1")], &[("a.x_y_z", "1"), ("a.x_y_w", "1")]).is_empty());
        assert!(pairs(&[("a.x_y", "1")], &[("b.x_y_z", "1")]).is_empty());
    }
}
