//! What the schema says when hydra would refuse an override: the key, why, and the fix.

use super::hydra::Refusal;
use super::{Kind, Leaf, ROOT, Schema, join, leaf_text, list_index};
use crate::error::clip;
use crate::error::closest;
use crate::schema::knob::Knob;

/// What a message echoes of the override: the argument, its key and its value, each clipped.
struct Echo {
    arg: String,
    shown_path: String,
    value_text: String,
}

impl Schema {
    /// A node described for a message: `the integer 1024`, `the section trainer.placement`.
    pub(super) fn shown(&self, node: usize) -> String {
        let text = self
            .index
            .get(&self.nodes[node].path)
            .map(|&i| self.entries[i].text.as_str());
        match (&self.nodes[node].kind, text) {
            (Kind::Leaf(leaf), text) => {
                let text = text.map(str::to_owned).unwrap_or_else(|| leaf_text(leaf));
                match leaf {
                    Leaf::Null => "null".to_owned(),
                    Leaf::Missing => "`???` (a value to be given)".to_owned(),
                    Leaf::Bool(_) => format!("the boolean {text}"),
                    Leaf::Int(_) => format!("the integer {text}"),
                    Leaf::Float(_) => format!("the float {text}"),
                    Leaf::Str(_) => format!("the string {text}"),
                    Leaf::Interp(_) => format!("the interpolation {text}"),
                }
            }
            (Kind::List(_), Some(text)) => format!("the list {text}"),
            (Kind::List(items), None) => format!("a list of {} elements", items.len()),
            (Kind::Dict { .. }, Some(text)) => format!("the dict {text}"),
            (Kind::Dict { children, .. }, None) => {
                format!("a section of {} keys", children.len())
            }
        }
    }

    /// Why hydra would refuse `knob` (its key split in `segs`), and the override that works.
    pub(super) fn refusal_message(&self, knob: &Knob, segs: &[&str], refusal: Refusal) -> String {
        // What the user typed is echoed clipped; the lookups use it whole.
        let path = knob.path();
        let echo = Echo {
            arg: clip(&knob.hydra_arg()).into_owned(),
            shown_path: clip(path).into_owned(),
            value_text: clip(&knob.value.hydra_text()).into_owned(),
        };
        let Echo {
            arg,
            shown_path,
            value_text,
        } = &echo;
        match refusal {
            Refusal::Unknown {
                path: missing,
                parent,
            } => self.unknown_in(&echo, path, &missing, parent),
            Refusal::BelowLeaf { leaf } => self.below_leaf_message(knob, segs, leaf),
            Refusal::ListIndex { list, index } => self.not_in_list(&echo, list, &index),
            Refusal::MergeKind {
                node,
                value_is_list,
            } => {
                let node_path = &self.nodes[node].path;
                let (given, fix) = if value_is_list {
                    ("a list", "set its keys one by one")
                } else {
                    ("a dict", "give a list `[…]`")
                };
                format!(
                    "`{arg}`: `{node_path}` is {} in SkyRL's config, and hydra cannot merge {given} into it; {fix}",
                    self.shown(node)
                )
            }
            Refusal::MergeNewKey { dict, key } => self.new_key_in(&echo, dict, &key),
            Refusal::AlreadyThere { node } => {
                let at = &self.nodes[node].path;
                let bare = format!("{shown_path}={value_text}");
                format!(
                    "`{arg}`: `{at}` is already in SkyRL's config ({}), and hydra refuses to add it again (\"Could not append to config. An item is already at '{at}'\"); write `{bare}` without `+`, or `++{bare}`",
                    self.shown(node)
                )
            }
            Refusal::NothingToDelete { node } => self.nothing_to_delete(&echo, path, node),
            Refusal::DeleteValue { node } => {
                let at = self.deref(node).unwrap_or(node);
                let current = match self.default_text(&self.nodes[at].path) {
                    Some(text) => text.to_owned(),
                    None => self.leaf(at).map_or_else(|| self.shown(at), leaf_text),
                };
                format!(
                    "`{arg}`: hydra deletes `{shown_path}` only if its value is {value_text}, and SkyRL's default is {current}; write `~{shown_path}` to delete it whatever its value"
                )
            }
            Refusal::DeleteListItem { list } => {
                let list_path = &self.nodes[list].path;
                format!(
                    "`{arg}`: hydra cannot delete one element of a list; set the whole list instead: `{list_path}=[…]`"
                )
            }
        }
    }

    /// A key `missing` that the dict `parent` does not have: in a dict SkyRL passes on as it
    /// is, a new key needs `+`; anywhere else it is an unknown key.
    fn unknown_in(&self, echo: &Echo, path: &str, missing: &str, parent: usize) -> String {
        let Echo {
            arg,
            shown_path,
            value_text,
        } = echo;
        let passthrough = matches!(
            self.nodes[parent].kind,
            Kind::Dict {
                passthrough: true,
                ..
            }
        );
        if passthrough && parent != ROOT {
            let dict = &self.nodes[parent].path;
            let seg = &missing[missing.rfind('.').map_or(0, |i| i + 1)..];
            let near = self.sibling_near(parent, seg);
            let seg = clip(seg);
            let hint = match near {
                Some(near) => format!("did you mean `{near}`? To pass a new key, add it"),
                None => "add it".to_owned(),
            };
            return format!(
                "`{arg}`: `{dict}` is a dict SkyRL passes on as it is, and it has no key `{seg}`: {hint} with `+{shown_path}={value_text}` (a new key inside a dict needs `+`)"
            );
        }
        self.unknown_message(arg, path, value_text)
    }

    /// An index `index` that is not in the list `list`: how many elements it has.
    fn not_in_list(&self, echo: &Echo, list: usize, index: &str) -> String {
        let arg = &echo.arg;
        let list_path = &self.nodes[list].path;
        let len = match &self.nodes[list].kind {
            Kind::List(items) => items.len(),
            _ => 0,
        };
        let has = match len {
            0 => "has no elements".to_owned(),
            1 => "has 1 element (index 0)".to_owned(),
            n => format!("has {n} elements (index 0 to {})", n - 1),
        };
        let index_ok = list_index(index).is_some();
        let index = clip(index);
        let what = if index_ok {
            format!("index {index} is not in it")
        } else {
            format!("`{index}` is not an index")
        };
        format!(
            "`{arg}`: `{list_path}` is a list that {has} in SkyRL's config, and {what}; set the whole list: `{list_path}=[…]`"
        )
    }

    /// A key `key` that a `{…}` value would merge into the dict `dict`, which has no such key.
    fn new_key_in(&self, echo: &Echo, dict: usize, key: &str) -> String {
        let Echo {
            arg,
            shown_path,
            value_text,
        } = echo;
        let dict_path = &self.nodes[dict].path;
        let passthrough = matches!(
            self.nodes[dict].kind,
            Kind::Dict {
                passthrough: true,
                ..
            }
        );
        let near_key = self.sibling_near(dict, key);
        let known = self.child(dict, key).is_some();
        let key = clip(key);
        match near_key {
            Some(near) if !passthrough || !known => {
                let near = near.rsplit('.').next().unwrap_or(&near).to_owned();
                if passthrough {
                    format!(
                        "`{arg}`: `{dict_path}` has no key `{key}`: did you mean `{near}`? To pass a new key, write `+{shown_path}={value_text}` (hydra merges a `{{…}}` value into the dict, and only `+` lets it add keys)"
                    )
                } else {
                    format!("`{arg}`: `{dict_path}` has no key `{key}`: did you mean `{near}`?")
                }
            }
            _ if passthrough => format!(
                "`{arg}`: `{dict_path}` has no key `{key}` yet; write `+{shown_path}={value_text}` (hydra merges a `{{…}}` value into the dict, and only `+` lets it add keys)"
            ),
            _ => format!(
                "`{arg}`: `{dict_path}` has no key `{key}` in SkyRL's config ({}); to add one anyway, write `+{shown_path}={value_text}`",
                self.name
            ),
        }
    }

    /// `~key` where hydra finds nothing to delete: a key without a value, or no key at all.
    fn nothing_to_delete(&self, echo: &Echo, path: &str, node: Option<usize>) -> String {
        let (arg, shown_path) = (&echo.arg, &echo.shown_path);
        match node.map(|n| (n, self.leaf(n))) {
            Some((n, Some(Leaf::Null | Leaf::Missing))) => format!(
                "`{arg}`: `{shown_path}` is {} in SkyRL's config, and hydra cannot delete a key without a value (it answers \"Could not delete from config. '{shown_path}' does not exist.\"); leave the override out",
                self.shown(n)
            ),
            Some((n, _)) => format!(
                "`{arg}`: hydra finds no value at `{shown_path}` to delete ({} in SkyRL's config); leave the override out",
                self.shown(n)
            ),
            None => {
                let hint = self.suggestion(path).map_or_else(
                    || format!("SkyRL's config ({}) has no such key", self.name),
                    |s| format!("did you mean {s}?"),
                );
                format!("`{arg}`: there is no key `{shown_path}` to delete: {hint}")
            }
        }
    }

    pub(super) fn unknown_message(&self, arg: &str, path: &str, value_text: &str) -> String {
        let (arg, shown, value_text) = (clip(arg), clip(path), clip(value_text));
        match self.suggestion(path) {
            Some(s) => format!("`{arg}`: unknown key `{shown}`: did you mean {s}?"),
            None => format!(
                "`{arg}`: unknown key `{shown}`: SkyRL's config ({}) has no such key; to add a new key, write `+{shown}={value_text}`",
                self.name
            ),
        }
    }

    /// "did you mean" for a full key: every key that ends in the same name, closest first
    /// (`trainer.enforce_eager` → `generator.enforce_eager`); else the closest key with a close
    /// last name; else keys whose last name is very close to it.
    pub(super) fn suggestion(&self, path: &str) -> Option<String> {
        let keys = || self.entries.iter().map(|e| e.key.as_str());
        let last = |k: &str| k.rsplit('.').next().unwrap_or(k).to_owned();
        let name = last(path);
        let by_score = |mut picks: Vec<(f64, &str)>| {
            picks.sort_by(|a, b| b.0.total_cmp(&a.0));
            picks
                .into_iter()
                .map(|(_, k)| k.to_owned())
                .collect::<Vec<_>>()
        };
        let same: Vec<(f64, &str)> = keys()
            .filter(|k| last(k) == name && *k != path)
            .map(|k| (strsim::jaro_winkler(path, k), k))
            .collect();
        let mut picks = if !same.is_empty() {
            by_score(same)
        } else if let Some(best) = closest(
            path,
            // A shared `trainer.` makes any two keys look alike: the last names must be close.
            keys().filter(|k| strsim::jaro_winkler(&name, &last(k)) >= 0.8),
        ) {
            vec![best]
        } else {
            by_score(
                keys()
                    .map(|k| (strsim::jaro_winkler(&name, &last(k)), k))
                    .filter(|(score, _)| *score >= 0.9)
                    .collect(),
            )
        };
        picks.truncate(3);
        let quoted: Vec<String> = picks.iter().map(|k| format!("`{k}`")).collect();
        match quoted.split_last() {
            None => None,
            Some((only, [])) => Some(only.clone()),
            Some((last, rest)) => Some(format!("{} or {last}", rest.join(", "))),
        }
    }

    pub(super) fn sibling_near(&self, dict: usize, seg: &str) -> Option<String> {
        let Kind::Dict { children, .. } = &self.nodes[dict].kind else {
            return None;
        };
        closest(seg, children.iter().map(|(k, _)| k.as_str()))
            .map(|k| join(&self.nodes[dict].path, &k))
    }

    pub(super) fn below_leaf_message(&self, knob: &Knob, segs: &[&str], leaf: usize) -> String {
        let arg = clip(&knob.hydra_arg()).into_owned();
        let leaf_path = &self.nodes[leaf].path;
        let depth = if leaf_path.is_empty() {
            0
        } else {
            leaf_path.split('.').count()
        };
        let rest = segs[depth.min(segs.len())..].join(".");
        let value_text = clip(&knob.value.hydra_text()).into_owned();
        let next = clip(segs.get(depth).copied().unwrap_or_default());
        match self.leaf(leaf) {
            Some(Leaf::Null | Leaf::Missing) => format!(
                "`{arg}`: `{leaf_path}` is {} in SkyRL's config, so it has no key `{next}` yet; add it with `+{}={value_text}`",
                self.shown(leaf),
                clip(knob.path())
            ),
            Some(Leaf::Interp(text)) => {
                let target = self
                    .interpolation_target(leaf)
                    .map(|t| join(&self.nodes[t].path, &rest))
                    .filter(|t| self.lookup(t).is_some());
                let fix = match target {
                    Some(t) => format!("set the key it points to: `{}={value_text}`", clip(&t)),
                    None => format!("set `{leaf_path}` itself"),
                };
                format!(
                    "`{arg}`: `{leaf_path}` is the interpolation {text} in SkyRL's config, with no keys of its own; {fix}"
                )
            }
            _ => format!(
                "`{arg}`: `{leaf_path}` is {} in SkyRL's config, not a section, so it has no key `{next}`; set `{leaf_path}` itself",
                self.shown(leaf)
            ),
        }
    }

    /// `+a.b.c=…` accepted by hydra where `a.b` had a value: hydra replaces it by a new dict.
    pub(super) fn replaced_message(&self, knob: &Knob, leaf: usize) -> String {
        let arg = clip(&knob.hydra_arg()).into_owned();
        let leaf_path = &self.nodes[leaf].path;
        let rest = knob.path()[leaf_path.len()..].trim_start_matches('.');
        let value_text = clip(&knob.value.hydra_text()).into_owned();
        match self.leaf(leaf) {
            Some(Leaf::Interp(text)) => {
                let fix = match self.interpolation_target(leaf) {
                    Some(t) => {
                        let target = join(&self.nodes[t].path, rest);
                        let plus = if self.lookup(&target).is_some() {
                            ""
                        } else {
                            "+"
                        };
                        let target = clip(&target);
                        format!("set the key it points to: `{plus}{target}={value_text}`")
                    }
                    None => format!("set `{leaf_path}` itself"),
                };
                format!(
                    "`{arg}`: `{leaf_path}` is the interpolation {text} in SkyRL's config, and a key below it makes hydra replace it by a new dict; {fix}"
                )
            }
            _ => format!(
                "`{arg}`: `{leaf_path}` is {} in SkyRL's config, and a key below it makes hydra replace it by a new dict; set `{leaf_path}` itself",
                self.shown(leaf)
            ),
        }
    }
}
