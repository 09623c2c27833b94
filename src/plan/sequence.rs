//! One key given several times on one command line (`+key=1 key=2`): hydra applies the
//! overrides left to right, so the second sees what the first did. rlctl passes each key once,
//! so the pair folds into the one override with the same effect, or is refused with hydra's
//! words when hydra would refuse the second.

use crate::error::{Error, Result};
use crate::schema::grammar::{Element, Override, Prefix, render};
use crate::schema::knob::{Knob, KnobValue, Origin};

/// A command-line override with hydra's reading of it.
pub struct Entry {
    pub arg: String,
    pub knob: Knob,
    pub parsed: Override,
}

/// Adds `next` after the overrides before it; a key given before folds with it, and the fold
/// takes the later place.
pub fn push(entries: &mut Vec<Entry>, next: Entry) -> Result<()> {
    let Some(i) = entries
        .iter()
        .position(|e| e.knob.path() == next.knob.path())
    else {
        entries.push(next);
        return Ok(());
    };
    let prev = entries.remove(i);
    if let Some(folded) = fold(prev, next)? {
        entries.push(folded);
    }
    Ok(())
}

fn refuse(prev: &Entry, next: &Entry, says: String, fix: String) -> Error {
    Error::BadOverride {
        arg: next.arg.clone(),
        reason: format!("hydra refuses it after `{}` ({says}); {fix}", prev.arg),
    }
}

/// `prefix` + the path, with `value` as its hydra text.
fn entry(next: &Entry, prefix: Prefix, value: Option<Element>, text: String) -> Entry {
    let path = next.knob.path().to_owned();
    Entry {
        arg: next.arg.clone(),
        knob: Knob {
            key: format!("{}{path}", prefix.text()),
            value: KnobValue::Verbatim(text),
            origin: Origin::CommandLine,
        },
        parsed: Override {
            prefix,
            key: path,
            package: None,
            value,
        },
    }
}

/// `prev` and `next`, one key given twice, as the one override with hydra's effect of both;
/// `None` where they cancel out, an error where hydra refuses `next`.
fn fold(prev: Entry, next: Entry) -> Result<Option<Entry>> {
    use Prefix::*;
    let path = next.knob.path().to_owned();
    let text = |e: &Entry| match &e.knob.value {
        KnobValue::Verbatim(t) => t.clone(),
        other => other.hydra_text(),
    };
    let (a, b) = (prev.parsed.value.clone(), next.parsed.value.clone());
    match (prev.parsed.prefix, next.parsed.prefix) {
        (Delete, Delete) => Err(refuse(
            &prev,
            &next,
            format!("Could not delete from config. '{path}' does not exist."),
            format!("give `~{path}` once"),
        )),
        (Delete, Change) => Err(refuse(
            &prev,
            &next,
            format!("Could not override '{path}'. (Key '{path}' is not in struct)"),
            format!("add it back with `+{path}=...`, or drop `~{path}`"),
        )),
        // Deleted, then added afresh: a dict replaces the section instead of merging into it.
        (Delete, Add | ForceAdd) => {
            let prefix = if matches!(b, Some(Element::Dict(_))) {
                ForceAdd
            } else {
                Change
            };
            Ok(Some(entry(&next, prefix, b, text(&next))))
        }
        // A dict added by `+` is closed like the rest of the config: a plain override can
        // merge into it only keys it has.
        (Add, Change) => change_after_add(&prev, &next, a, b).map(Some),
        (p, Change | ForceAdd) => Ok(Some(merged(&next, p, a, b))),
        (p, Add) => {
            let b_is_container = matches!(b, Some(Element::List(_) | Element::Dict(_)));
            if a == Some(Element::Null) || b_is_container {
                return Ok(Some(merged(&next, p, a, b)));
            }
            Err(refuse(
                &prev,
                &next,
                format!("Could not append to config. An item is already at '{path}'."),
                format!(
                    "`{}` already sets `{path}`: drop the `+` (`{path}={}`), or give `{path}` once",
                    prev.arg,
                    text(&next)
                ),
            ))
        }
        (p, Delete) => delete_after(&prev, p, &next, a, b),
    }
}

/// `key=...` after `+key=...`: merged into the added value, unless it brings a key into an
/// added dict, which hydra closes like the rest of the config.
fn change_after_add(
    prev: &Entry,
    next: &Entry,
    a: Option<Element>,
    b: Option<Element>,
) -> Result<Entry> {
    let path = next.knob.path();
    if let (Some(Element::Dict(x)), Some(Element::Dict(y))) = (&a, &b)
        && let Some(key) = new_key(x, y)
    {
        return Err(refuse(
            prev,
            next,
            format!("Could not override '{path}'. (Key '{key}' is not in struct)"),
            format!(
                "add the key with `+{path}.{key}=...`, or write `++{}`",
                next.arg
            ),
        ));
    }
    Ok(merged(next, Prefix::Add, a, b))
}

/// `~key[=value]` after `prev` (prefix `p`): deletes what `prev` set, unless hydra would find
/// nothing there or another value; what `+` added and `~` deleted leaves nothing.
fn delete_after(
    prev: &Entry,
    p: Prefix,
    next: &Entry,
    a: Option<Element>,
    b: Option<Element>,
) -> Result<Option<Entry>> {
    let path = next.knob.path();
    if a == Some(Element::Null) {
        return Err(refuse(
            prev,
            next,
            format!("Could not delete from config. '{path}' does not exist."),
            format!(
                "`{}` left `{path}` null, which hydra cannot delete",
                prev.arg
            ),
        ));
    }
    if let (Some(a), Some(b)) = (&a, &b)
        && python_eq(a, b) == Some(false)
    {
        return Err(refuse(
            prev,
            next,
            format!(
                "Could not delete from config. The value of '{path}' is {} and not {}.",
                a.python_str(),
                b.python_str()
            ),
            format!("write `~{path}` without a value, or give `{path}` once"),
        ));
    }
    // Added here and deleted again: nothing happened to the config.
    if p == Prefix::Add {
        return Ok(None);
    }
    Ok(Some(entry(next, Prefix::Delete, None, String::new())))
}

/// The second value over the first: a dict merges into a dict, anything else replaces.
fn merged(next: &Entry, prefix: Prefix, a: Option<Element>, b: Option<Element>) -> Entry {
    match (a, b) {
        (Some(Element::Dict(a)), Some(Element::Dict(b))) => {
            let value = Element::Dict(merge(a, b));
            let text = render(&value);
            entry(next, prefix, Some(value), text)
        }
        (_, b) => {
            let text = match &next.knob.value {
                KnobValue::Verbatim(t) => t.clone(),
                other => other.hydra_text(),
            };
            entry(next, prefix, b, text)
        }
    }
}

/// A key of `y` that `x` lacks, at any depth where both hold a dict.
fn new_key(x: &[(Element, Element)], y: &[(Element, Element)]) -> Option<String> {
    y.iter()
        .find_map(|(k, v)| match x.iter().find(|(xk, _)| xk == k) {
            None => Some(k.python_str()),
            Some((_, Element::Dict(xv))) => match v {
                Element::Dict(yv) => new_key(xv, yv),
                _ => None,
            },
            Some(_) => None,
        })
}

fn merge(mut a: Vec<(Element, Element)>, b: Vec<(Element, Element)>) -> Vec<(Element, Element)> {
    for (k, v) in b {
        match a.iter_mut().find(|(ak, _)| *ak == k) {
            Some(slot) => {
                slot.1 = match (std::mem::replace(&mut slot.1, Element::Null), v) {
                    (Element::Dict(x), Element::Dict(y)) => Element::Dict(merge(x, y)),
                    (_, y) => y,
                }
            }
            None => a.push((k, v)),
        }
    }
    a
}

/// Python's `==` between two values; `None` when one is an interpolation rlctl cannot follow.
fn python_eq(a: &Element, b: &Element) -> Option<bool> {
    use crate::schema::grammar::Element as E;
    let num = |e: &E| match e {
        E::Bool(x) => Some(f64::from(u8::from(*x))),
        E::Int(i) => i.parse::<f64>().ok(),
        E::Float(x) => Some(*x),
        _ => None,
    };
    if let E::Str(s) = a
        && s.contains("${")
    {
        return None;
    }
    Some(match (a, b) {
        (E::List(x), E::List(y)) => {
            if x.len() != y.len() {
                return Some(false);
            }
            for (p, q) in x.iter().zip(y) {
                if !python_eq(p, q)? {
                    return Some(false);
                }
            }
            true
        }
        (E::Dict(x), E::Dict(y)) => {
            if x.len() != y.len() {
                return Some(false);
            }
            for (k, v) in x {
                match y.iter().find(|(yk, _)| yk == k) {
                    Some((_, w)) if python_eq(v, w)? => {}
                    _ => return Some(false),
                }
            }
            true
        }
        _ => match (num(a), num(b)) {
            (Some(x), Some(y)) => x == y,
            _ => a == b,
        },
    })
}
