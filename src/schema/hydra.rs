//! Hydra's verdict on one override: the walk of hydra's `_apply_overrides_to_config` and
//! OmegaConf's `update`, `select` and `merge` in struct mode, with hydra's prefix rules (`+`
//! adds a key, `++` adds or overrides, `~` deletes).
//!
//! Hydra's quirks are kept: a `+` on a key whose value is null is accepted; `~` of a null key is
//! refused. tests/integration/schema.rs compares these verdicts with hydra itself.

use super::value::{Value, knob_value};
use super::{Kind, Leaf, ROOT, Schema, list_index};
use crate::schema::knob::{Knob, KnobValue, Scalar};

/// What hydra refuses, with what the message needs.
pub(super) enum Refusal {
    /// `path` (the first part of the key that is missing) is not in the section `parent`.
    Unknown { path: String, parent: usize },
    /// The walk reached a value that is not a section (`leaf`), and hydra's struct mode refused
    /// the key below it.
    BelowLeaf { leaf: usize },
    /// A list index that is not a number or not in the list.
    ListIndex { list: usize, index: String },
    /// A list merged into a dict, or a dict into a list.
    MergeKind { node: usize, value_is_list: bool },
    /// A `{...}` value with a key the dict lacks, merged in struct mode.
    MergeNewKey { dict: usize, key: String },
    /// `+key=value` on a key that has a value.
    AlreadyThere { node: usize },
    /// `~key` where hydra finds nothing (missing, null, or below a value).
    NothingToDelete { node: Option<usize> },
    /// `~key=value` where the value differs.
    DeleteValue { node: usize },
    /// `~list.N`: hydra cannot delete a list element.
    DeleteListItem { list: usize },
}

/// Where `Schema::update`'s walk down a key's segments is.
enum At {
    Node(usize),
    /// A new, empty dict: where the walk replaced a value or (forced) added a section.
    Fresh,
}

/// Where an accepted override lands, for the type rule.
pub(super) enum Landing {
    Node(usize),
    /// A key the config does not have; `replaced` is a value the walk replaced by a new dict.
    New {
        replaced: Option<usize>,
    },
    Deleted,
    Unchecked,
}

/// A `select` result: the node, nothing (hydra's None), or an error (a list index that is not
/// a number).
enum Selected {
    Node(usize),
    Nothing,
    Error,
}

impl Schema {
    /// OmegaConf's `select(cfg, key)` with hydra's arguments: interpolations on the way are
    /// followed; a missing key, a null, a `???`, or a key below a value give nothing.
    fn select(&self, segs: &[&str]) -> Selected {
        let mut node = ROOT;
        for seg in segs {
            // An interpolation rlctl cannot follow resolves to a string: not a section.
            let Some(at) = self.deref(node) else {
                return Selected::Nothing;
            };
            node = match &self.nodes[at].kind {
                Kind::Dict { .. } => match self.child(at, seg) {
                    Some(c) => c,
                    None => return Selected::Nothing,
                },
                Kind::List(items) => match list_index(seg) {
                    Some(i) => match items.get(i) {
                        Some(&c) => c,
                        None => return Selected::Nothing,
                    },
                    None => return Selected::Error,
                },
                Kind::Leaf(_) => return Selected::Nothing,
            };
        }
        match self.deref(node) {
            None => Selected::Node(node),
            Some(at) => match self.leaf(at) {
                Some(Leaf::Null | Leaf::Missing) => Selected::Nothing,
                _ => Selected::Node(node),
            },
        }
    }

    /// OmegaConf's `update(cfg, key, value, merge=True, force_add=force)`: where the value lands.
    fn update(&self, segs: &[&str], value: &Value, force: bool) -> Result<Landing, Refusal> {
        let (last, walk) = segs.split_last().expect("a key has one segment at least");
        let mut at = At::Node(ROOT);
        let mut replaced = None;
        for (i, seg) in walk.iter().enumerate() {
            at = match at {
                At::Fresh if force => At::Fresh,
                At::Fresh => {
                    return Err(Refusal::BelowLeaf {
                        leaf: replaced.expect("a fresh dict in struct mode replaced a value"),
                    });
                }
                At::Node(node) => {
                    let (next, leaf) = self.walk_into(node, seg, force, || segs[..=i].join("."))?;
                    replaced = leaf.or(replaced);
                    next
                }
            };
        }
        let node = match at {
            At::Fresh if force => return Ok(Landing::New { replaced }),
            At::Fresh => {
                return Err(Refusal::BelowLeaf {
                    leaf: replaced.expect("a fresh dict in struct mode replaced a value"),
                });
            }
            At::Node(node) => node,
        };
        let child = self.child(node, last);
        if let Kind::List(_) = self.nodes[node].kind
            && child.is_none()
        {
            return Err(Refusal::ListIndex {
                list: node,
                index: (*last).to_owned(),
            });
        }
        match child {
            Some(c) => {
                if value.is_container() && self.is_container(c) {
                    self.merge(c, value, force)?;
                }
                Ok(Landing::Node(c))
            }
            None if force => Ok(Landing::New { replaced }),
            None => Err(Refusal::Unknown {
                path: segs.join("."),
                parent: node,
            }),
        }
    }

    /// One segment `seg` of `update`'s walk down from container `node`: the container it names,
    /// or a fresh dict and the value that dict replaces. `path` is the key so far, for a refusal.
    fn walk_into(
        &self,
        node: usize,
        seg: &str,
        force: bool,
        path: impl Fn() -> String,
    ) -> Result<(At, Option<usize>), Refusal> {
        let child = self.child(node, seg);
        match (&self.nodes[node].kind, child) {
            (Kind::Dict { .. } | Kind::List(_), Some(c)) if self.is_container(c) => {
                Ok((At::Node(c), None))
            }
            (Kind::Dict { .. } | Kind::List(_), Some(c)) => Ok((At::Fresh, Some(c))),
            (Kind::Dict { .. }, None) if force => Ok((At::Fresh, None)),
            (Kind::Dict { .. }, None) => Err(Refusal::Unknown {
                path: path(),
                parent: node,
            }),
            (Kind::List(_), None) => Err(Refusal::ListIndex {
                list: node,
                index: seg.to_owned(),
            }),
            (Kind::Leaf(_), _) => unreachable!("the walk never stops on a value"),
        }
    }

    /// OmegaConf's merge of a value into a dict or list node (struct mode unless forced).
    fn merge(&self, dest: usize, value: &Value, force: bool) -> Result<(), Refusal> {
        match (&self.nodes[dest].kind, value) {
            (Kind::List(_), Value::List(_)) => Ok(()),
            (Kind::Dict { .. }, Value::Dict(items)) => {
                for (key, v) in items {
                    match self.child(dest, key) {
                        Some(c) if v.is_container() => {
                            // A dest interpolation to a section is merged as that section.
                            let target = match self.leaf(c) {
                                Some(Leaf::Interp(_)) => self.deref(c).unwrap_or(c),
                                _ => c,
                            };
                            if self.is_container(target) {
                                self.merge(target, v, force)?;
                            }
                        }
                        Some(_) => {}
                        None if force => {}
                        None => {
                            return Err(Refusal::MergeNewKey {
                                dict: dest,
                                key: key.clone(),
                            });
                        }
                    }
                }
                Ok(())
            }
            (_, v) => Err(Refusal::MergeKind {
                node: dest,
                value_is_list: matches!(v, Value::List(_)),
            }),
        }
    }

    /// Where hydra puts the override, or why it refuses it (the message names the fix).
    pub(super) fn key_verdict(&self, knob: &Knob) -> Result<Landing, String> {
        let path = knob.path();
        let prefix = &knob.key[..knob.key.len() - path.len()];
        let arg = knob.hydra_arg();
        if path == "hydra" || path.starts_with("hydra.") {
            // Hydra's own settings (hydra.run.dir, ...): not SkyRL's config, not in the list.
            return Ok(Landing::Unchecked);
        }
        let segs: Vec<&str> = path.split('.').collect();
        if segs.iter().any(|s| s.is_empty()) {
            return Err(format!(
                "`{arg}`: `{path}` is not a hydra key: keys are dotted names such as `trainer.epochs`"
            ));
        }
        let value = knob_value(&knob.value);
        let result = match prefix {
            "" => self.update(&segs, &value, false),
            "++" => self.update(&segs, &value, true),
            "+" => match self.select(&segs) {
                Selected::Node(node) if !value.is_container() => {
                    Err(Refusal::AlreadyThere { node })
                }
                Selected::Error => Err(Refusal::ListIndex {
                    list: self.list_on_path(&segs).unwrap_or(ROOT),
                    index: segs.last().copied().unwrap_or_default().to_owned(),
                }),
                _ => self.update(&segs, &value, true),
            },
            "~" => self.delete(&segs, &knob.value),
            other => {
                return Err(format!(
                    "`{arg}`: `{other}` is not a hydra prefix; use `+` to add a key, `++` to add or override, `~` to delete"
                ));
            }
        };
        result.map_err(|refusal| self.refusal_message(knob, &segs, refusal))
    }

    fn delete(&self, segs: &[&str], value: &KnobValue) -> Result<Landing, Refusal> {
        let node = match self.select(segs) {
            Selected::Node(node) => node,
            Selected::Nothing | Selected::Error => {
                return Err(Refusal::NothingToDelete {
                    node: self.lookup(&segs.join(".")),
                });
            }
        };
        let given = match value {
            KnobValue::Verbatim(text) if text.is_empty() => None,
            other => Some(knob_value(other)),
        };
        if let Some(given) = given
            && given != Value::Prim(Scalar::Null)
            && self.equals(node, &given) == Some(false)
        {
            return Err(Refusal::DeleteValue { node });
        }
        let (_, parent) = segs.split_last().expect("a key has one segment at least");
        if let Selected::Node(p) = self.select(parent)
            && let Some(p) = self.deref(p)
            && let Kind::List(_) = self.nodes[p].kind
        {
            return Err(Refusal::DeleteListItem { list: p });
        }
        Ok(Landing::Deleted)
    }

    /// Python's `value == config value` (1 == 1.0 == True); `None` when rlctl cannot tell.
    fn equals(&self, node: usize, value: &Value) -> Option<bool> {
        let node = self.deref(node)?;
        match (&self.nodes[node].kind, value) {
            (Kind::Leaf(leaf), Value::Prim(scalar)) => leaf_equals(leaf, scalar),
            (Kind::List(items), Value::List(values)) => {
                if items.len() != values.len() {
                    return Some(false);
                }
                let mut all = Some(true);
                for (&item, v) in items.iter().zip(values) {
                    match self.equals(item, v) {
                        Some(false) => return Some(false),
                        None => all = None,
                        Some(true) => {}
                    }
                }
                all
            }
            (Kind::Dict { children, .. }, Value::Dict(values)) => {
                if children.len() != values.len() {
                    return Some(false);
                }
                let mut all = Some(true);
                for (k, v) in values {
                    let Some(c) = self.child(node, k) else {
                        return Some(false);
                    };
                    match self.equals(c, v) {
                        Some(false) => return Some(false),
                        None => all = None,
                        Some(true) => {}
                    }
                }
                all
            }
            _ => Some(false),
        }
    }

    fn list_on_path(&self, segs: &[&str]) -> Option<usize> {
        (1..segs.len()).rev().find_map(|n| {
            let node = self.deref(self.lookup(&segs[..n].join("."))?)?;
            matches!(self.nodes[node].kind, Kind::List(_)).then_some(node)
        })
    }
}

/// Python's `==` between a config value and an override's value.
fn leaf_equals(leaf: &Leaf, scalar: &Scalar) -> Option<bool> {
    let number = |s: &Scalar| match s {
        Scalar::Bool(b) => Some(f64::from(u8::from(*b))),
        Scalar::Int(i) => Some(*i as f64),
        Scalar::Float(x) => Some(*x),
        _ => None,
    };
    let leaf_number = match leaf {
        Leaf::Bool(b) => Some(f64::from(u8::from(*b))),
        Leaf::Int(i) => Some(*i as f64),
        Leaf::Float(x) => Some(*x),
        _ => None,
    };
    Some(match (leaf, scalar) {
        (Leaf::Interp(_), _) => return None,
        (Leaf::Str(a), Scalar::Str(b)) => a == b,
        (Leaf::Null, Scalar::Null) => true,
        _ => match (leaf_number, number(scalar)) {
            (Some(a), Some(b)) => a == b,
            _ => false,
        },
    })
}

/// The strings of a hydra list such as `["/a.parquet", '/b.parquet']`; a plain value is one.
pub fn list_items(text: &str) -> Vec<String> {
    let items = super::value::list_items(text).unwrap_or_else(|| vec![text.trim()]);
    (items.into_iter())
        .map(|item| item.trim_matches(['"', '\'']).to_owned())
        .filter(|item| !item.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::schema::knob::{Knob, KnobValue, Origin};
    use crate::schema::tests::{check, schema};

    #[test]
    fn simple_verdicts() {
        assert!(check("trainer.epochs=2").is_ok());
        assert!(check("trainer.epochs=${trainer.seed}").is_ok());
        assert!(check("+trainer.resume_path=/x").is_ok());
        assert!(check("~trainer.epochs").is_ok());
        assert!(check("~trainer.epochs=1.0").is_ok());
        assert!(check("~trainer.resume_path").is_err());
        assert!(check("+trainer.policy.deepspeed_config.zero_optimization.stage=2").is_err());
        assert!(check("+trainer.policy.deepspeed_config.zero_optimization.stage9=2").is_err());
        assert!(
            schema()
                .check_key(&Knob {
                    key: "+trainer.policy.deepspeed_config.zero_optimization.stage9".into(),
                    value: KnobValue::Verbatim("2".into()),
                    origin: Origin::CommandLine,
                })
                .is_ok()
        );
        assert!(check("~trainer.policy.optimizer_config.adam_betas.0").is_err());
        assert!(check("hydra.run.dir=/x").is_ok());
    }
}
