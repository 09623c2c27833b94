//! OmegaConf's dotlist as upstream SkyRL reads a command line: `SkyRLTrainConfig.from_cli_overrides
//! (argv)` of skyrl 0.4.0 refuses a `+` prefix, hands the items to `OmegaConf.from_cli` (each split
//! at its first `=`, the key a dotted path, the value one YAML document: an unquoted comma is
//! plain text), refuses the keys 0.4.0 retired, resolves every `${...}` against the command line's
//! own items, and builds its dataclasses, which refuse a key no class has at every level
//! ("Invalid fields {...} for <Class>"). Value rules of the dataclasses (`__post_init__`) are not
//! the grammar's. This crate's tests/omegaconf_dotlist.rs proves it against the real wheel.

mod removed;

use crate::KeyList;
use crate::hydra::{Config, Element, Prefix, storage_refusal};
use crate::yaml::{Map, Y, load_yaml};

/// One command-line item as OmegaConf stores it.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// The text before the first `=`.
    pub key: String,
    /// The key split as OmegaConf splits it (`a.b[0]` is `a`, `b`, `0`).
    pub path: Vec<String>,
    /// The value as OmegaConf's YAML loader reads it; null for an item without `=`.
    pub value: Y,
}

/// Where upstream SkyRL refuses a command line, in the order it checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// A `+key=value` item.
    Plus,
    /// OmegaConf could not read the item (YAML syntax, a tag nothing constructs).
    Dotlist,
    /// A key 0.4.0 retired and refuses by name.
    Removed,
    /// An interpolation that does not resolve against the command line's items.
    Resolve,
    /// A key no config class has.
    Fields,
}

impl Stage {
    pub fn name(self) -> &'static str {
        match self {
            Stage::Plus => "plus",
            Stage::Dotlist => "dotlist",
            Stage::Removed => "removed",
            Stage::Resolve => "resolve",
            Stage::Fields => "fields",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    pub stage: Stage,
    /// What is wrong and the fix.
    pub message: String,
}

fn refuse<T>(stage: Stage, message: String) -> Result<T, Refusal> {
    Err(Refusal { stage, message })
}

/// The config's classes as far as keys go: the field names of the class at a path.
pub trait Fields {
    /// The fields when `path` is a config class (a dataclass section), `None` when it is a
    /// value (any sub-key of a dict-typed field passes).
    fn fields(&self, path: &[&str]) -> Option<Vec<String>>;
}

/// One argv item as upstream SkyRL reads it, before any key is checked against the config.
pub fn upstream_check(arg: &str) -> Result<Item, Refusal> {
    if arg.starts_with('+') {
        return refuse(
            Stage::Plus,
            format!(
                "`{}`: upstream SkyRL refuses `+`: drop it if the key exists, or subclass the \
                 config dataclass to add a field (\"The '+' prefix for adding new config fields \
                 is not supported\")",
                crate::text::clip(arg)
            ),
        );
    }
    let (key, value) = match arg.split_once('=') {
        None => (arg, Y::Null),
        Some((key, text)) => (key, read_value(arg, text)?),
    };
    Ok(Item {
        key: key.to_owned(),
        path: split_key(key),
        value,
    })
}

fn read_value(arg: &str, text: &str) -> Result<Y, Refusal> {
    if let Some(c) = text.chars().find(|&c| !yaml_printable(c)) {
        return refuse(
            Stage::Dotlist,
            format!(
                "`{}`: YAML refuses the character U+{:04X} in a value; remove it",
                crate::text::clip(arg),
                u32::from(c)
            ),
        );
    }
    if let Some(at) = bare_tab(text) {
        return refuse(
            Stage::Dotlist,
            format!(
                "`{}`: a tab outside quotes (character {}) cannot start a YAML token, and \
                 OmegaConf reads the value as YAML; quote the value (key='\"text\"') or use \
                 spaces",
                crate::text::clip(arg),
                at + 1
            ),
        );
    }
    let value = load_yaml(text).map_err(|why| Refusal {
        stage: Stage::Dotlist,
        message: format!(
            "`{}`: OmegaConf reads the value as YAML and cannot: {why}; quote the value \
             (key='\"text\"') to pass it as a string",
            crate::text::clip(arg)
        ),
    })?;
    // What OmegaConf will not store: an interpolation it cannot parse, a null dict key.
    if let Some(says) = storage_refusal(&element(&value)) {
        return refuse(
            Stage::Dotlist,
            format!(
                "`{}`: OmegaConf will not store the value ({says}); fix the `${{...}}`, or \
                 escape it as `\\${{` to mean the text",
                crate::text::clip(arg)
            ),
        );
    }
    Ok(value)
}

/// Where a tab stands outside a quoted scalar (in characters): PyYAML's scanner skips only
/// spaces between tokens and ends a plain scalar at a tab, so such a tab is "found character
/// '\t' that cannot start any token". A quote opens a scalar only where a token starts.
fn bare_tab(text: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    let mut token_start = true;
    let mut chars = text.chars().enumerate().peekable();
    while let Some((i, c)) = chars.next() {
        match (quote, c) {
            (Some('\''), '\'') if chars.peek().is_some_and(|(_, n)| *n == '\'') => {
                chars.next();
            }
            (Some('"'), '\\') => {
                chars.next();
            }
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\t') => return Some(i),
            (None, '\'' | '"') if token_start => quote = Some(c),
            _ => {}
        }
        token_start = quote.is_none() && matches!(c, ' ' | '[' | '{' | ',' | ':');
    }
    None
}

/// PyYAML's reader accepts tab, newlines and printable Unicode only.
fn yaml_printable(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | ' '..='~' | '\u{85}' | '\u{A0}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}')
        || u32::from(c) >= 0x1_0000
}

/// OmegaConf's `split_key`: dots, and brackets (`a[b].c` is `a`, `b`, `c`).
pub fn split_key(key: &str) -> Vec<String> {
    let head_end = key
        .char_indices()
        .skip_while(|&(_, c)| c == '.')
        .find(|&(_, c)| c == '.' || c == '[')
        .map_or(key.len(), |(i, _)| i);
    let mut tokens: Vec<String> = key[..head_end].split('.').map(str::to_owned).collect();
    let mut rest = &key[head_end..];
    if rest.starts_with('[') && tokens.last().is_some_and(String::is_empty) {
        tokens.pop();
    }
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            tokens.push(after[..end].to_owned());
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix('[')
            && let Some(close) = after.find(']')
        {
            tokens.push(after[..close].to_owned());
            rest = &after[close + 1..];
        } else {
            // Python's findall skips what neither alternative matches, one character at a time.
            let mut chars = rest.chars();
            chars.next();
            rest = chars.as_str();
        }
    }
    tokens
}

/// Upstream SkyRL's verdict on a whole command line up to its dataclasses' value rules: the
/// items as OmegaConf stores them, in order.
pub fn check_argv<F: Fields + ?Sized>(fields: &F, argv: &[String]) -> Result<Vec<Item>, Refusal> {
    if let Some(plus) = argv.iter().find(|a| a.starts_with('+')) {
        upstream_check(plus)?;
    }
    let items = argv
        .iter()
        .map(|a| upstream_check(a))
        .collect::<Result<Vec<_>, _>>()?;
    let mut tree = merged(&items);
    removed::check(&mut tree)?;
    resolve(&tree)?;
    upstream_key_check(fields, &tree, &mut Vec::new())?;
    Ok(items)
}

/// The items merged as `OmegaConf.update(cfg, key, value, merge=True)` merges them.
pub fn merged(items: &[Item]) -> Map {
    let mut root = Map::new();
    for item in items {
        set(&mut root, &item.path, item.value.clone());
    }
    root
}

fn set(map: &mut Map, path: &[String], value: Y) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    let key = Y::Str(first.clone());
    let at = match map.iter().position(|(k, _)| *k == key) {
        Some(i) => i,
        None => {
            map.push((key, Y::Null));
            map.len() - 1
        }
    };
    let slot = &mut map[at].1;
    if rest.is_empty() {
        match (slot, value) {
            (Y::Map(old), Y::Map(new)) => merge_maps(old, new),
            (slot, value) => *slot = value,
        }
        return;
    }
    if !matches!(slot, Y::Map(_)) {
        *slot = Y::Map(Map::new());
    }
    if let Y::Map(inner) = slot {
        set(inner, rest, value);
    }
}

fn merge_maps(old: &mut Map, new: Map) {
    for (key, value) in new {
        match old.iter_mut().find(|(k, _)| *k == key) {
            Some((_, Y::Map(o))) if matches!(value, Y::Map(_)) => {
                let Y::Map(n) = value else { unreachable!() };
                merge_maps(o, n);
            }
            Some((_, slot)) => *slot = value,
            None => old.push((key, value)),
        }
    }
}

/// `OmegaConf.to_container(overrides, resolve=True)`: every `${...}` resolves against the
/// command line's own items, never against the config's defaults.
fn resolve(tree: &Map) -> Result<(), Refusal> {
    let mut config = Config::from_schema(&[][..] as &[(&str, &str)]).omegaconf_only();
    for (key, value) in tree {
        config.apply(&key.key_text(), Prefix::Change, Some(&element(value)), 0);
    }
    match config.problems().into_iter().next() {
        None => Ok(()),
        Some(p) if p.failure.message.contains("Unsupported interpolation type") => refuse(
            Stage::Resolve,
            format!(
                "`{}={}`: {}; upstream SkyRL reads its command line with OmegaConf alone, whose \
                 only resolvers are `oc.*` (`${{now:...}}`, `${{hydra:...}}` and \
                 `${{python_version:}}` are hydra's): write the value itself",
                p.key, p.value, p.failure.message
            ),
        ),
        Some(p) => refuse(
            Stage::Resolve,
            format!(
                "`{}={}`: {}; upstream SkyRL resolves `${{...}}` against the command line's own \
                 keys only, so give the key it names on the command line too, or write the value",
                p.key, p.value, p.failure.message
            ),
        ),
    }
}

fn element(value: &Y) -> Element {
    match value {
        Y::Null => Element::Null,
        Y::Bool(b) => Element::Bool(*b),
        Y::Int(i) => Element::Int(i.to_string()),
        Y::Float(x) => Element::Float(*x),
        Y::Str(s) => Element::Str(s.clone()),
        Y::Seq(items) => Element::List(items.iter().map(element).collect()),
        Y::Map(pairs) => Element::Dict(
            pairs
                .iter()
                .map(|(k, v)| (element(k), element(v)))
                .collect(),
        ),
    }
}

/// The dataclasses' key rule on the merged items: at every config class, each key must be one
/// of its fields; below a field that is not a class (a dict, a value), anything passes.
pub fn upstream_key_check<F: Fields + ?Sized>(
    fields: &F,
    tree: &Map,
    path: &mut Vec<String>,
) -> Result<(), Refusal> {
    let here: Vec<&str> = path.iter().map(String::as_str).collect();
    let Some(known) = fields.fields(&here) else {
        return Ok(());
    };
    let unknown: Vec<String> = (tree.iter())
        .map(|(k, _)| k.key_text())
        .filter(|k| !known.contains(k))
        .collect();
    if let Some(first) = unknown.first() {
        let at = |k: &str| {
            if here.is_empty() {
                k.to_owned()
            } else {
                format!("{}.{k}", here.join("."))
            }
        };
        let near = closest(first, &known).map_or_else(
            || format!("the keys there are {}", known.join(", ")),
            |c| format!("did you mean `{}`?", at(&c)),
        );
        let section = if here.is_empty() {
            "the top level".to_owned()
        } else {
            format!("`{}`", here.join("."))
        };
        return refuse(
            Stage::Fields,
            format!(
                "`{}`: upstream SkyRL's config has no such key at {section} (\"Invalid fields \
                 {{{}}}\"); {near}",
                at(first),
                unknown
                    .iter()
                    .map(|k| format!("'{k}'"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        );
    }
    for (key, value) in tree {
        if let Y::Map(inner) = value {
            path.push(key.key_text());
            upstream_key_check(fields, inner, path)?;
            path.pop();
        }
    }
    Ok(())
}

/// The field most like a misspelt key, when one is near enough.
fn closest(name: &str, candidates: &[String]) -> Option<String> {
    (candidates.iter())
        .map(|c| (strsim::jaro_winkler(name, c), c))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c.clone())
}

impl<K: KeyList + ?Sized> Fields for K {
    fn fields(&self, path: &[&str]) -> Option<Vec<String>> {
        section_fields(&self.key_defaults(), path)
    }
}

/// A key list read as config classes: a path with keys below it is a class, unless its name
/// ends in `kwargs` or its default is a dict (`{}`), which upstream types as a plain dict.
fn section_fields(keys: &[(&str, &str)], path: &[&str]) -> Option<Vec<String>> {
    let prefix: String = path.iter().map(|s| format!("{s}.")).collect();
    if path.last().is_some_and(|s| s.ends_with("kwargs")) {
        return None;
    }
    let mut out: Vec<String> = Vec::new();
    for (key, _) in keys {
        if !path.is_empty() && *key == prefix.trim_end_matches('.') {
            // A leaf of the list (a `{}` default too): a value, not a class.
            return None;
        }
        if let Some(rest) = key.strip_prefix(&prefix) {
            let field = rest.split('.').next().unwrap_or(rest).to_owned();
            if !out.contains(&field) {
                out.push(field);
            }
        }
    }
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests;
