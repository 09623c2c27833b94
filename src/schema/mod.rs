//! SkyRL's config keys with their defaults: which hydra overrides exist, and of what type.
//!
//! A key list (`presets/schemas/NAME.keys`, as `rlctl schema import` writes it) has one
//! `key=default` line per leaf of SkyRL's composed config, defaults written as Python's `json`
//! prints them (`true`, `1e-06`, `"fsdp2"`, `null`, `[0.9, 0.999]`, `{}`), interpolations bare
//! (`${trainer.policy.model.path}`). Blank lines and `#` comments are allowed. [`Schema::parse`]
//! builds the config tree those keys make.
//!
//! [`Schema::check_key`] answers what hydra answers when it applies one override to that tree
//! (`hydra.rs`); [`Schema::check`] adds rlctl's own, stricter rule that a value must have the
//! default's type (`types.rs`).
//!
//! Not checked: keys under `hydra.` (hydra's own settings, which the list does not hold) pass;
//! config-group choices (`group=option`, `group@package=option`) are not in the list either, so
//! a top-level key that is also a group folder of SkyRL's config (`~deepspeed_config`) is judged
//! as a key, where hydra reads it as a group choice.

use crate::schema::knob::{Knob, Scalar};
use std::collections::HashMap;

pub mod flavour;
pub mod grammar;
mod hydra;
pub use hydra::list_items;
pub mod checkout;
pub mod knob;
mod messages;
mod renames;
pub mod resolve;
mod types;
mod upstream;
pub mod value;

use value::{JsonValue, parse_default};

pub use flavour::Flavour;

pub struct Schema {
    pub name: String,
    /// The `# flavour:` header, if the list has one (Marin lists written before it have none).
    flavour: Option<Flavour>,
    /// `# registered KIND: NAME` lines: names an entry module gives SkyRL's registries.
    registered: Vec<(String, String)>,
    /// `# open: KEY` lines: a null field of a dict type, which takes any key below it.
    open: Vec<String>,
    /// `# group NAME: OPTION...` lines: a MarinSkyRL config group and its options.
    groups: Vec<(String, Vec<String>)>,
    entries: Vec<Entry>,
    index: HashMap<String, usize>,
    /// The config tree; node 0 is the root.
    nodes: Vec<Node>,
    /// Upstream SkyRL's keys under MarinSkyRL's names (`Schema::upstream_view`).
    upstream: Option<Box<upstream::View>>,
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

impl Schema {
    /// Parses a key list: one `key=default` line per config key, as `rlctl schema import` writes.
    pub fn parse(name: &str, text: &str) -> Result<Schema, String> {
        let mut schema = Schema {
            name: name.to_owned(),
            flavour: None,
            registered: Vec::new(),
            open: Vec::new(),
            groups: Vec::new(),
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
            upstream: None,
        };
        let mut before_keys = true;
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let trimmed = raw.trim();
            if let Some(comment) = trimmed.strip_prefix('#') {
                schema.header_line(comment.trim(), line, before_keys)?;
                continue;
            }
            if trimmed.is_empty() {
                continue;
            }
            before_keys = false;
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

    /// Reads a `# flavour: NAME`, `# open: KEY` or `# registered KIND: NAME` comment before the
    /// first key.
    fn header_line(&mut self, comment: &str, line: usize, before_keys: bool) -> Result<(), String> {
        if !before_keys {
            return Ok(());
        }
        if let Some(name) = comment.strip_prefix("flavour:") {
            if self.flavour.is_some() {
                return Err(format!("line {line}: a second `# flavour:` line; keep one"));
            }
            self.flavour = Some(match Flavour::named(name.trim()) {
                Some(flavour) => flavour,
                None => {
                    let other = name.trim();
                    return Err(format!(
                        "line {line}: `# flavour: {other}` names no SkyRL flavour; write `upstream` or `marin`"
                    ));
                }
            });
        } else if let Some(rest) = comment.strip_prefix("group ")
            && let Some((group, options)) = rest.split_once(':')
        {
            let options = options.split_whitespace().map(str::to_owned).collect();
            self.groups.push((group.trim().to_owned(), options));
        } else if let Some(key) = comment.strip_prefix("open:") {
            self.open.push(key.trim().to_owned());
        } else if let Some(rest) = comment.strip_prefix("registered ")
            && let Some((kind, name)) = rest.split_once(':')
        {
            self.registered
                .push((kind.trim().to_owned(), name.trim().to_owned()));
        }
        Ok(())
    }

    /// The flavour the list's `# flavour:` header names; `None` for a list without one (a
    /// MarinSkyRL list written before the header existed).
    pub fn flavour_header(&self) -> Option<Flavour> {
        self.flavour
    }

    /// Whether `key` lies below a field listed `# open:` (not the field itself).
    pub fn under_open(&self, key: &str) -> bool {
        (self.open.iter()).any(|o| {
            key.len() > o.len() + 1
                && key.starts_with(o.as_str())
                && key.as_bytes()[o.len()] == b'.'
        })
    }

    /// The `# open:` keys, in the list's order.
    pub fn open_keys(&self) -> impl Iterator<Item = &str> {
        self.open.iter().map(String::as_str)
    }

    /// Names the entry module registers for `kind` (`advantage_estimator`, `policy_loss`).
    pub fn registered(&self, kind: &str) -> impl Iterator<Item = &str> {
        self.registered
            .iter()
            .filter(move |(k, _)| k == kind)
            .map(|(_, n)| n.as_str())
    }

    /// The options of config group `name` (`algorithm_recipe`), where the checkout has it.
    pub fn group(&self, name: &str) -> Option<&[String]> {
        (self.groups.iter())
            .find(|(g, _)| g == name)
            .map(|(_, options)| options.as_slice())
    }

    /// A config group choice (`algorithm_recipe=opd`, `+algorithm_recipe=opd`): `None` when
    /// the knob names no group; else the option must be one of the group's files.
    fn group_verdict(&self, knob: &Knob) -> Option<Result<(), String>> {
        let options = self.group(knob.path())?;
        if knob.key.starts_with('~') {
            return Some(Err(format!(
                "`{}`: rlctl does not compose a config without a group's option; choose one of `{}`'s: {}",
                knob.hydra_arg(),
                knob.path(),
                options.join(", ")
            )));
        }
        let option = knob.value.hydra_text();
        Some(match options.contains(&option) {
            true => Ok(()),
            false => Err(format!(
                "`{}`: config group `{}` has no option `{option}` (no `{}/{option}.yaml` in the checkout's config folder); its options: {}",
                knob.hydra_arg(),
                knob.path(),
                knob.path(),
                options.join(", ")
            )),
        })
    }

    /// Whether hydra would accept this override against SkyRL's config, and whether its value
    /// has the default's type; the message names the key and the fix.
    pub fn check(&self, knob: &Knob) -> Result<(), String> {
        if let Some(verdict) = self.group_verdict(knob) {
            return verdict;
        }
        let knob = self.as_trainer_takes(knob)?;
        if self.under_open(knob.path())
            || self.under_upstream_dict(knob.path())
            || self.upstream_dict_value(&knob)
        {
            return Ok(());
        }
        let landing = self.key_verdict(&knob)?;
        self.check_type(&knob, landing)
    }

    /// Hydra's own verdict on the override, without rlctl's type rule: what
    /// tests/integration/schema.rs compares with hydra.
    pub fn check_key(&self, knob: &Knob) -> Result<(), String> {
        if let Some(verdict) = self.group_verdict(knob) {
            return verdict;
        }
        let knob = self.as_trainer_takes(knob)?;
        if self.under_open(knob.path())
            || self.under_upstream_dict(knob.path())
            || self.upstream_dict_value(&knob)
        {
            return Ok(());
        }
        self.key_verdict(&knob).map(|_| ())
    }

    /// The default's text for a key, as the list writes it, if the key exists.
    pub fn default_text(&self, key: &str) -> Option<&str> {
        self.index.get(key).map(|&i| self.entries[i].text.as_str())
    }

    /// The default of a key, typed as hydra would type its text (strings unquoted).
    pub fn default_scalar(&self, key: &str) -> Option<Scalar> {
        let text = self.default_text(key)?;
        // A JSON string's escapes are JSON's, not hydra's.
        if let Ok(JsonValue::Str(s)) = parse_default(text) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::knob::{KnobValue, Origin};

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

    /// A small key list's schema, for the tests of every part of the schema.
    pub(super) fn schema() -> Schema {
        Schema::parse("t", LIST).unwrap()
    }

    pub(super) fn check(arg: &str) -> Result<(), String> {
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
        assert!(err("# flavour: sky\na=1").contains("write `upstream` or `marin`"));
    }

    #[test]
    fn headers_name_the_flavour_and_registered_names() {
        let s = Schema::parse(
            "t",
            "# flavour: upstream\n# registered advantage_estimator: no_op\na.b=1\n# flavour: marin\n",
        )
        .unwrap();
        assert_eq!(s.flavour_header(), Some(Flavour::Upstream));
        assert_eq!(
            s.registered("advantage_estimator").collect::<Vec<_>>(),
            ["no_op"]
        );
        assert_eq!(s.registered("policy_loss").count(), 0);
        assert_eq!(schema().flavour_header(), None);
    }
}
