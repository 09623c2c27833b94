//! SkyRL's config keys with their defaults: which hydra overrides exist, and of what type.
//!
//! A key list (`presets/schemas/NAME.keys`, as `rlctl schema import` writes it) has one
//! `key=default` line per leaf of SkyRL's composed config, defaults written as Python's `json`
//! prints them (`true`, `1e-06`, `"fsdp2"`, `null`, `[0.9, 0.999]`, `{}`), interpolations bare
//! (`${trainer.policy.model.path}`). Blank lines and `#` comments are allowed.
//!
//! [`Schema::check_key`] answers what hydra answers when it applies one override to that config
//! in struct mode: it follows hydra's `_apply_overrides_to_config` and OmegaConf's `update`,
//! `select` and `merge`, quirks included (a `+` on a key whose value is null is accepted; `~` of
//! a null key is refused), and tests/schema.rs compares it with hydra itself. [`Schema::check`]
//! adds rlctl's own, stricter rule: a value must have the default's type (hydra accepts any type,
//! since SkyRL's YAML is untyped).
//!
//! The type rule: an integer default takes an integer; a float default an integer or a float; a
//! boolean default `true` or `false`; a list default a list; a dict a dict. A string default
//! takes any single value, numbers and null included: SkyRL's string knobs take numbers where
//! their tools do (DeepSpeed's `"auto"` sizes take integers), null where they are optional
//! (`trainer.resume_mode`), and SkyRL checks their values itself; a list or dict is refused. A
//! null, `???` or interpolation default takes anything, as does a value that is itself an
//! interpolation (`${...}`), whose type rlctl cannot know.
//!
//! Not checked: keys under `hydra.` (hydra's own settings, which the list does not hold) pass;
//! config-group choices (`group=option`, `group@package=option`) are not in the list either, so
//! a top-level key that is also a group folder of SkyRL's config (`~deepspeed_config`) is judged
//! as a key, where hydra reads it as a group choice.

use crate::error::closest;
use crate::schema::knob::{Knob, KnobValue, Scalar};
use std::collections::HashMap;

pub mod grammar;
pub mod import;
pub mod knob;
mod messages;
mod value;

use value::{JsonValue, knob_value, parse_default, parse_json};

pub struct Schema {
    pub name: String,
    entries: Vec<Entry>,
    index: HashMap<String, usize>,
    /// The config tree; node 0 is the root.
    nodes: Vec<Node>,
}

struct Entry {
    key: String,
    text: String,
}

struct Node {
    path: String,
    parent: Option<usize>,
    /// The key-list line that gave this node its value, or made it a section.
    line: usize,
    kind: Kind,
}

enum Kind {
    /// A section, or a dict default (`{}`): `passthrough` when SkyRL hands it on as it is.
    Dict {
        children: Vec<(String, usize)>,
        passthrough: bool,
    },
    List(Vec<usize>),
    Leaf(Leaf),
}

#[derive(Debug, Clone, PartialEq)]
enum Leaf {
    Null,
    /// OmegaConf's `???`: a value that must be given.
    Missing,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Interp(String),
}

const ROOT: usize = 0;

/// An override's value, structured as hydra's grammar reads it.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    Prim(Scalar),
    List(Vec<Value>),
    Dict(Vec<(String, Value)>),
}

impl Value {
    fn is_container(&self) -> bool {
        matches!(self, Value::List(_) | Value::Dict(_))
    }

    fn is_interpolation(&self) -> bool {
        matches!(self, Value::Prim(Scalar::Str(s)) if s.contains("${"))
    }
}

/// What hydra refuses, with what the message needs.
enum Refusal {
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

/// Where an accepted override lands, for the type rule.
enum Landing {
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
    /// Parses a key list: one `key=default` line per config key, as `rlctl schema import` writes.
    pub fn parse(name: &str, text: &str) -> Result<Schema, String> {
        let mut schema = Schema {
            name: name.to_owned(),
            entries: Vec::new(),
            index: HashMap::new(),
            nodes: vec![Node {
                path: String::new(),
                parent: None,
                line: 0,
                kind: Kind::Dict {
                    children: Vec::new(),
                    passthrough: false,
                },
            }],
        };
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let trimmed = raw.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let Some((key, default)) = trimmed.split_once('=') else {
                return Err(format!(
                    "line {line}: `{trimmed}` is not `key=default` (e.g. `trainer.epochs=1`)"
                ));
            };
            let (key, default) = (key.trim(), default.trim());
            if key.is_empty()
                || key
                    .split('.')
                    .any(|s| s.is_empty() || s.contains(char::is_whitespace))
            {
                return Err(format!(
                    "line {line}: `{key}` is not a dotted key such as `trainer.epochs`"
                ));
            }
            if let Some(&first) = schema.index.get(key) {
                return Err(format!(
                    "line {line}: `{key}` is listed twice (first on line {}); keep one line",
                    schema.nodes[schema.entry_node(first)].line
                ));
            }
            let value = parse_default(default).map_err(|why| {
                format!(
                    "line {line}: `{key}={default}`: {why}; write strings double-quoted (\"text\"), \
                     and numbers, true, false, null, [lists], {{}} and ${{interpolations}} bare"
                )
            })?;
            schema.insert(key, default, value, line)?;
        }
        Ok(schema)
    }

    /// Whether hydra would accept this override against SkyRL's config, and whether its value
    /// has the default's type; the message names the key and the fix.
    pub fn check(&self, knob: &Knob) -> Result<(), String> {
        let landing = self.key_verdict(knob)?;
        self.check_type(knob, landing)
    }

    /// Hydra's own verdict on the override, without rlctl's type rule: what tests/schema.rs
    /// compares with hydra.
    pub fn check_key(&self, knob: &Knob) -> Result<(), String> {
        self.key_verdict(knob).map(|_| ())
    }

    /// The default's text for a key, as the list writes it, if the key exists.
    pub fn default_text(&self, key: &str) -> Option<&str> {
        self.index.get(key).map(|&i| self.entries[i].text.as_str())
    }

    /// The default of a key, typed as hydra would type its text (strings unquoted).
    pub fn default_scalar(&self, key: &str) -> Option<Scalar> {
        let text = self.default_text(key)?;
        if text.starts_with('"')
            && let Ok((JsonValue::Str(s), _)) = parse_json(text.as_bytes(), 0)
        {
            return Some(Scalar::Str(s));
        }
        Some(Scalar::parse_hydra(text))
    }

    /// Every key with its default's text, in the list's order.
    pub fn keys(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries
            .iter()
            .map(|e| (e.key.as_str(), e.text.as_str()))
    }

    fn entry_node(&self, entry: usize) -> usize {
        self.lookup(&self.entries[entry].key).unwrap_or(ROOT)
    }

    fn insert(
        &mut self,
        key: &str,
        text: &str,
        value: JsonValue,
        line: usize,
    ) -> Result<(), String> {
        let segments: Vec<&str> = key.split('.').collect();
        let (last, walk) = segments
            .split_last()
            .expect("split gives one segment at least");
        let mut node = ROOT;
        for seg in walk {
            node = match self.child(node, seg) {
                Some(child) => match self.nodes[child].kind {
                    Kind::Dict { .. } if self.nodes[child].line == 0 => child,
                    _ => {
                        return Err(format!(
                            "line {line}: `{key}` is inside `{}`, which line {} gives a value of its own; keep one of them",
                            self.nodes[child].path, self.nodes[child].line
                        ));
                    }
                },
                None => {
                    let path = join(&self.nodes[node].path, seg);
                    self.add_child(
                        node,
                        seg,
                        path,
                        0,
                        Kind::Dict {
                            children: Vec::new(),
                            passthrough: seg.ends_with("kwargs"),
                        },
                    )
                }
            };
        }
        if let Some(child) = self.child(node, last) {
            let first = self.first_line_below(child);
            return Err(format!(
                "line {line}: `{key}` has keys of its own (`{}` on line {first}); keep either the value or its keys",
                self.first_key_below(child)
            ));
        }
        self.build(node, last, &value, line);
        self.index.insert(key.to_owned(), self.entries.len());
        self.entries.push(Entry {
            key: key.to_owned(),
            text: text.to_owned(),
        });
        Ok(())
    }

    fn first_line_below(&self, node: usize) -> usize {
        self.entries
            .iter()
            .position(|e| e.key.starts_with(&format!("{}.", self.nodes[node].path)))
            .and_then(|i| self.lookup(&self.entries[i].key))
            .map(|n| self.nodes[n].line)
            .unwrap_or(0)
    }

    fn first_key_below(&self, node: usize) -> &str {
        let prefix = format!("{}.", self.nodes[node].path);
        self.entries
            .iter()
            .find(|e| e.key.starts_with(&prefix))
            .map(|e| e.key.as_str())
            .unwrap_or("")
    }

    fn build(&mut self, parent: usize, seg: &str, value: &JsonValue, line: usize) -> usize {
        let path = join(&self.nodes[parent].path, seg);
        match value {
            JsonValue::Object(items) => {
                let node = self.add_child(
                    parent,
                    seg,
                    path,
                    line,
                    Kind::Dict {
                        children: Vec::new(),
                        passthrough: items.is_empty() || seg.ends_with("kwargs"),
                    },
                );
                for (k, v) in items {
                    self.build(node, k, v, line);
                }
                node
            }
            JsonValue::Array(items) => {
                let node = self.add_child(parent, seg, path, line, Kind::List(Vec::new()));
                for (i, v) in items.iter().enumerate() {
                    self.build(node, &i.to_string(), v, line);
                }
                node
            }
            scalar => {
                let leaf = match scalar {
                    JsonValue::Null => Leaf::Null,
                    JsonValue::Bool(b) => Leaf::Bool(*b),
                    JsonValue::Int(i) => Leaf::Int(*i),
                    JsonValue::Float(x) => Leaf::Float(*x),
                    JsonValue::Str(s) if s == "???" => Leaf::Missing,
                    JsonValue::Str(s) if s.contains("${") => Leaf::Interp(s.clone()),
                    JsonValue::Str(s) => Leaf::Str(s.clone()),
                    JsonValue::Interp(s) => Leaf::Interp(s.clone()),
                    JsonValue::Object(_) | JsonValue::Array(_) => unreachable!(),
                };
                self.add_child(parent, seg, path, line, Kind::Leaf(leaf))
            }
        }
    }

    fn add_child(
        &mut self,
        parent: usize,
        seg: &str,
        path: String,
        line: usize,
        kind: Kind,
    ) -> usize {
        let id = self.nodes.len();
        self.nodes.push(Node {
            path,
            parent: Some(parent),
            line,
            kind,
        });
        match &mut self.nodes[parent].kind {
            Kind::Dict { children, .. } => children.push((seg.to_owned(), id)),
            Kind::List(items) => items.push(id),
            Kind::Leaf(_) => unreachable!("values have no children"),
        }
        id
    }

    fn child(&self, node: usize, seg: &str) -> Option<usize> {
        match &self.nodes[node].kind {
            Kind::Dict { children, .. } => children.iter().find(|(k, _)| k == seg).map(|(_, c)| *c),
            Kind::List(items) => list_index(seg).and_then(|i| items.get(i).copied()),
            Kind::Leaf(_) => None,
        }
    }

    fn lookup(&self, path: &str) -> Option<usize> {
        if path.is_empty() {
            return Some(ROOT);
        }
        path.split('.')
            .try_fold(ROOT, |node, seg| self.child(node, seg))
    }

    fn is_container(&self, node: usize) -> bool {
        !matches!(self.nodes[node].kind, Kind::Leaf(_))
    }

    fn leaf(&self, node: usize) -> Option<&Leaf> {
        match &self.nodes[node].kind {
            Kind::Leaf(leaf) => Some(leaf),
            _ => None,
        }
    }

    /// The node a simple interpolation (`${a.b}`, `${.b}`) at `node` points to; `None` for any
    /// other value, or an interpolation rlctl cannot follow (resolvers, text around it).
    fn interpolation_target(&self, node: usize) -> Option<usize> {
        let Some(Leaf::Interp(text)) = self.leaf(node) else {
            return None;
        };
        let inner = text.strip_prefix("${")?.strip_suffix('}')?;
        if inner.is_empty() || inner.contains(['$', '{', '}', ':', '[', ']', ' ', '\'', '"']) {
            return None;
        }
        let rest = inner.trim_start_matches('.');
        let dots = inner.len() - rest.len();
        let mut base = if dots == 0 {
            ROOT
        } else {
            self.nodes[node].parent?
        };
        for _ in 1..dots {
            base = self.nodes[base].parent?;
        }
        rest.split('.').try_fold(base, |n, seg| self.child(n, seg))
    }

    /// Follows interpolations like OmegaConf's dereference; `None` when rlctl cannot (an
    /// interpolation with a resolver or text around it, which resolves to a string).
    fn deref(&self, node: usize) -> Option<usize> {
        let mut node = node;
        for _ in 0..32 {
            match self.leaf(node) {
                Some(Leaf::Interp(_)) => node = self.interpolation_target(node)?,
                _ => return Some(node),
            }
        }
        None
    }

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
        enum At {
            Node(usize),
            /// A new, empty dict: where the walk replaced a value or (forced) added a section.
            Fresh,
        }
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
                At::Node(node) => match &self.nodes[node].kind {
                    Kind::Dict { .. } => match self.child(node, seg) {
                        Some(c) if self.is_container(c) => At::Node(c),
                        Some(c) => {
                            replaced = Some(c);
                            At::Fresh
                        }
                        None if force => At::Fresh,
                        None => {
                            return Err(Refusal::Unknown {
                                path: segs[..=i].join("."),
                                parent: node,
                            });
                        }
                    },
                    Kind::List(_) => match self.child(node, seg) {
                        Some(c) if self.is_container(c) => At::Node(c),
                        Some(c) => {
                            replaced = Some(c);
                            At::Fresh
                        }
                        None => {
                            return Err(Refusal::ListIndex {
                                list: node,
                                index: (*seg).to_owned(),
                            });
                        }
                    },
                    Kind::Leaf(_) => unreachable!("the walk never stops on a value"),
                },
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

    fn key_verdict(&self, knob: &Knob) -> Result<Landing, String> {
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

    fn check_type(&self, knob: &Knob, landing: Landing) -> Result<(), String> {
        let arg = knob.hydra_arg();
        match landing {
            Landing::Deleted | Landing::Unchecked | Landing::New { replaced: None } => Ok(()),
            Landing::New {
                replaced: Some(leaf),
            } => match self.leaf(leaf) {
                Some(Leaf::Null | Leaf::Missing) => Ok(()),
                _ => Err(self.replaced_message(knob, leaf)),
            },
            Landing::Node(node) => {
                let value = knob_value(&knob.value);
                self.type_of(node, &value).map_err(|(at, want)| {
                    if self.nodes[at].path == knob.path() {
                        format!("`{arg}`: SkyRL's default is {want}")
                    } else {
                        format!(
                            "`{arg}`: SkyRL's default for `{}` is {want}",
                            self.nodes[at].path
                        )
                    }
                })
            }
        }
    }

    /// rlctl's type rule at `node`: `Err((node, "the integer 1024; give an integer"))`.
    fn type_of(&self, node: usize, value: &Value) -> Result<(), (usize, String)> {
        if value.is_interpolation() {
            return Ok(());
        }
        let shown = self.shown(node);
        let fail = |want: &str| Err((node, format!("{shown}; {want}")));
        match (&self.nodes[node].kind, value) {
            (Kind::Leaf(Leaf::Null | Leaf::Missing | Leaf::Interp(_)), _) => Ok(()),
            (Kind::Leaf(Leaf::Int(_)), Value::Prim(Scalar::Int(_))) => Ok(()),
            (Kind::Leaf(Leaf::Int(_)), _) => fail("give an integer"),
            (Kind::Leaf(Leaf::Float(_)), Value::Prim(Scalar::Int(_) | Scalar::Float(_))) => Ok(()),
            (Kind::Leaf(Leaf::Float(_)), _) => fail("give a number"),
            (Kind::Leaf(Leaf::Bool(_)), Value::Prim(Scalar::Bool(_))) => Ok(()),
            (Kind::Leaf(Leaf::Bool(_)), Value::Prim(Scalar::Str(s)))
                if matches!(
                    s.to_ascii_lowercase().as_str(),
                    "yes" | "no" | "on" | "off" | "y" | "n"
                ) =>
            {
                fail(&format!(
                    "give true or false (hydra reads `{s}` as a string, which Python takes as true)"
                ))
            }
            (Kind::Leaf(Leaf::Bool(_)), _) => fail("give true or false"),
            (Kind::Leaf(Leaf::Str(_)), Value::Prim(_)) => Ok(()),
            (Kind::Leaf(Leaf::Str(_)), _) => fail("give a single value, not a list or dict"),
            (Kind::List(_), Value::List(_)) => Ok(()),
            (Kind::List(_), _) => fail("give a list, e.g. `[a,b]`"),
            (Kind::Dict { .. }, Value::Dict(items)) => {
                for (k, v) in items {
                    if let Some(c) = self.child(node, k) {
                        self.type_of(c, v)?;
                    }
                }
                Ok(())
            }
            (Kind::Dict { children, .. }, _) if children.is_empty() => {
                let path = &self.nodes[node].path;
                fail(&format!(
                    "give a dict, or add its keys one by one with `+{path}.KEY=VALUE`"
                ))
            }
            (Kind::Dict { children, .. }, _) => {
                let path = &self.nodes[node].path;
                let example = join(path, &children[0].0);
                fail(&format!(
                    "set its keys one by one, e.g. `{example}=…`, not the whole section"
                ))
            }
        }
    }
}

fn join(prefix: &str, seg: &str) -> String {
    if prefix.is_empty() {
        seg.to_owned()
    } else if seg.is_empty() {
        prefix.to_owned()
    } else {
        format!("{prefix}.{seg}")
    }
}

/// A list index as OmegaConf reads one (`int(key)`).
fn list_index(seg: &str) -> Option<usize> {
    seg.trim().parse::<usize>().ok()
}

fn leaf_text(leaf: &Leaf) -> String {
    match leaf {
        Leaf::Null => "null".into(),
        Leaf::Missing => "???".into(),
        Leaf::Bool(b) => b.to_string(),
        Leaf::Int(i) => i.to_string(),
        Leaf::Float(x) => format!("{x:?}"),
        Leaf::Str(s) => format!("{s:?}"),
        Leaf::Interp(s) => s.clone(),
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

#[cfg(test)]
mod tests {
    use super::value::parse_override_value;
    use super::*;
    use crate::schema::knob::Origin;

    const LIST: &str = r#"
# a comment
trainer.epochs=1
trainer.policy.optimizer_config.lr=1e-06
trainer.policy.optimizer_config.adam_betas=[0.9, 0.999]
trainer.strategy="fsdp2"
trainer.resume_path=null
trainer.policy.deepspeed_config=${deepspeed_config.train}
generator.engine_init_kwargs={}
deepspeed_config.train.zero_optimization.stage=3
"#;

    fn schema() -> Schema {
        Schema::parse("t", LIST).unwrap()
    }

    fn check(arg: &str) -> Result<(), String> {
        let (key, value) = arg.split_once('=').unwrap_or((arg, ""));
        schema().check(&Knob {
            key: key.to_owned(),
            value: KnobValue::Verbatim(value.to_owned()),
            origin: Origin::CommandLine,
        })
    }

    #[test]
    fn parses_defaults_and_kinds() {
        let s = schema();
        assert_eq!(s.default_text("trainer.epochs"), Some("1"));
        assert_eq!(s.default_text("trainer.strategy"), Some("\"fsdp2\""));
        assert_eq!(
            s.default_scalar("trainer.strategy"),
            Some(Scalar::Str("fsdp2".into()))
        );
        assert_eq!(
            s.default_scalar("trainer.policy.optimizer_config.lr"),
            Some(Scalar::Float(1e-6))
        );
        assert_eq!(s.default_text("trainer"), None);
        assert_eq!(s.keys().count(), 8);
    }

    #[test]
    fn malformed_lines_name_their_number() {
        let err = |text: &str| Schema::parse("t", text).err().unwrap();
        assert_eq!(
            err("a.b=1\nno equals sign"),
            "line 2: `no equals sign` is not `key=default` (e.g. `trainer.epochs=1`)"
        );
        assert_eq!(
            err("a.b=1\n\na.b=2"),
            "line 3: `a.b` is listed twice (first on line 1); keep one line"
        );
        assert!(err("a.b=fsdp2").starts_with("line 1: `a.b=fsdp2`: `fsdp2` is not a value;"));
        assert_eq!(
            err("a.b=1\na.b.c=2"),
            "line 2: `a.b.c` is inside `a.b`, which line 1 gives a value of its own; keep one of them"
        );
        assert_eq!(
            err("a.b.c=1\na.b=2"),
            "line 2: `a.b` has keys of its own (`a.b.c` on line 1); keep either the value or its keys"
        );
        assert!(err("a..b=1").starts_with("line 1: `a..b` is not a dotted key"));
    }

    #[test]
    fn hydra_values_are_structured() {
        assert_eq!(
            parse_override_value("{a:1, b:[x,'y,z'], c:${oc.env:A,b}}"),
            Value::Dict(vec![
                ("a".into(), Value::Prim(Scalar::Int(1))),
                (
                    "b".into(),
                    Value::List(vec![
                        Value::Prim(Scalar::Str("x".into())),
                        Value::Prim(Scalar::Str("y,z".into())),
                    ])
                ),
                ("c".into(), Value::Prim(Scalar::Str("${oc.env:A,b}".into()))),
            ])
        );
        assert_eq!(parse_override_value("[]"), Value::List(vec![]));
        assert_eq!(
            parse_override_value("[1,2"),
            Value::Prim(Scalar::List("[1,2".into()))
        );
    }

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
