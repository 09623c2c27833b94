//! The composed config as far as interpolations need it: SkyRL's key list with every knob
//! applied in hydra's order, then OmegaConf's resolution of every `${...}` in it, as SkyRL's
//! first `OmegaConf.to_container(cfg, resolve=True)` does on start-up.

use super::element::Element;
use super::omegaconf::{self, Arg, Interp, Key};
use super::parser::Prefix;
use crate::KeyList;

const ROOT: usize = 0;

/// Resolvers a SkyRL run has: OmegaConf's own and hydra's, with how many arguments each takes.
const RESOLVERS: [(&str, usize, usize); 10] = [
    ("oc.create", 1, 1),
    ("oc.decode", 1, 1),
    ("oc.deprecated", 1, 2),
    ("oc.env", 1, 2),
    ("oc.select", 1, 2),
    ("oc.dict.keys", 1, 1),
    ("oc.dict.values", 1, 1),
    ("now", 1, 1),
    ("hydra", 1, 1),
    ("python_version", 0, 1),
];

/// OmegaConf's own resolvers: all a config has without hydra (upstream SkyRL's command line).
const OMEGACONF_RESOLVERS: usize = 7;

pub struct Config {
    nodes: Vec<Node>,
    /// The resolvers registered: [`RESOLVERS`], or its first [`OMEGACONF_RESOLVERS`].
    resolvers: &'static [(&'static str, usize, usize)],
}

struct Node {
    key: String,
    parent: Option<usize>,
    kind: Kind,
    /// The knob that set this value, by its place in the list; `None` for SkyRL's default.
    origin: Option<usize>,
}

enum Kind {
    Dict(Vec<(String, usize)>),
    List(Vec<usize>),
    Leaf(Leaf),
}

enum Leaf {
    Null,
    /// OmegaConf's `???`.
    Missing,
    Str(String),
    /// A number or a boolean, as `str()` writes it.
    Other(String),
}

/// Why an interpolation does not resolve, in OmegaConf's words, and the key it looked for.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub message: String,
    pub missing: Option<String>,
}

/// A value whose interpolation does not resolve.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    /// The key holding the value, and the value.
    pub key: String,
    pub value: String,
    pub origin: Option<usize>,
    pub failure: Failure,
}

enum Resolved {
    Node(usize),
    /// A resolver's result, or a key made of one: nothing rlctl can follow.
    Unknown,
}

fn fail<T>(message: String, missing: Option<String>) -> Result<T, Failure> {
    Err(Failure { message, missing })
}

impl Config {
    /// SkyRL's config as the key list gives it; a default rlctl cannot read is a plain value.
    pub fn from_schema<K: KeyList + ?Sized>(schema: &K) -> Config {
        let mut config = Config {
            nodes: vec![Node {
                key: String::new(),
                parent: None,
                kind: Kind::Dict(Vec::new()),
                origin: None,
            }],
            resolvers: &RESOLVERS,
        };
        for (key, text) in schema.key_defaults() {
            let value = super::parse_value(text).unwrap_or(Element::Str(String::new()));
            config.set(key, &value, None, false);
        }
        config
    }

    /// The config without hydra's resolvers (`now`, `hydra`, `python_version`): OmegaConf alone,
    /// as upstream SkyRL reads its command line.
    pub fn omegaconf_only(mut self) -> Config {
        self.resolvers = &RESOLVERS[..OMEGACONF_RESOLVERS];
        self
    }

    /// Applies one override, as hydra's `_apply_overrides_to_config` would.
    pub fn apply(&mut self, path: &str, prefix: Prefix, value: Option<&Element>, origin: usize) {
        if path == "hydra" || path.starts_with("hydra.") {
            return;
        }
        match (prefix, value) {
            (Prefix::Delete, _) => {
                if let Some(node) = self.lookup(path) {
                    self.detach(node);
                }
            }
            (_, Some(value)) => self.set(path, value, Some(origin), true),
            (_, None) => {}
        }
    }

    fn lookup(&self, path: &str) -> Option<usize> {
        path.split('.').try_fold(ROOT, |n, seg| self.child(n, seg))
    }

    fn child(&self, node: usize, seg: &str) -> Option<usize> {
        match &self.nodes[node].kind {
            Kind::Dict(children) => children.iter().find(|(k, _)| k == seg).map(|(_, c)| *c),
            Kind::List(items) => seg
                .trim()
                .parse::<usize>()
                .ok()
                .and_then(|i| items.get(i).copied()),
            Kind::Leaf(_) => None,
        }
    }

    fn detach(&mut self, node: usize) {
        if let Some(parent) = self.nodes[node].parent {
            match &mut self.nodes[parent].kind {
                Kind::Dict(children) => children.retain(|(_, c)| *c != node),
                Kind::List(items) => items.retain(|c| *c != node),
                Kind::Leaf(_) => {}
            }
        }
    }

    /// Sets `path` to `value`, making sections on the way; a dict merges into a dict.
    fn set(&mut self, path: &str, value: &Element, origin: Option<usize>, merge: bool) {
        let segs: Vec<&str> = path.split('.').collect();
        let (last, walk) = segs.split_last().expect("split gives one segment at least");
        let mut node = ROOT;
        for seg in walk {
            node = match self.child(node, seg) {
                Some(c) if !matches!(self.nodes[c].kind, Kind::Leaf(_)) => c,
                _ => {
                    let fresh = self.add(node, seg, Kind::Dict(Vec::new()), origin);
                    self.replace(node, seg, fresh);
                    fresh
                }
            };
        }
        self.put(node, last, value, origin, merge);
    }

    fn put(
        &mut self,
        parent: usize,
        key: &str,
        value: &Element,
        origin: Option<usize>,
        merge: bool,
    ) {
        let existing = self.child(parent, key);
        if let (true, Some(dest), Element::Dict(pairs)) = (merge, existing, value)
            && matches!(self.nodes[dest].kind, Kind::Dict(_))
        {
            for (k, v) in pairs {
                self.put(dest, &k.python_str(), v, origin, true);
            }
            return;
        }
        let node = self.build(parent, key, value, origin);
        self.replace(parent, key, node);
    }

    /// Puts `node` under `parent` at `key`, in place of what was there.
    fn replace(&mut self, parent: usize, key: &str, node: usize) {
        let index = key.trim().parse::<usize>().ok();
        match &mut self.nodes[parent].kind {
            Kind::Dict(children) => match children.iter_mut().find(|(k, _)| k == key) {
                Some(slot) => slot.1 = node,
                None => children.push((key.to_owned(), node)),
            },
            Kind::List(items) => match index {
                Some(i) if i < items.len() => items[i] = node,
                _ => items.push(node),
            },
            Kind::Leaf(_) => {}
        }
    }

    fn add(&mut self, parent: usize, key: &str, kind: Kind, origin: Option<usize>) -> usize {
        self.nodes.push(Node {
            key: key.to_owned(),
            parent: Some(parent),
            kind,
            origin,
        });
        self.nodes.len() - 1
    }

    fn build(&mut self, parent: usize, key: &str, value: &Element, origin: Option<usize>) -> usize {
        let leaf = |l| Kind::Leaf(l);
        match value {
            Element::List(items) => {
                let node = self.add(parent, key, Kind::List(Vec::new()), origin);
                for (i, item) in items.iter().enumerate() {
                    let c = self.build(node, &i.to_string(), item, origin);
                    self.replace(node, &i.to_string(), c);
                }
                node
            }
            Element::Dict(pairs) => {
                let node = self.add(parent, key, Kind::Dict(Vec::new()), origin);
                for (k, v) in pairs {
                    let k = k.python_str();
                    let c = self.build(node, &k, v, origin);
                    self.replace(node, &k, c);
                }
                node
            }
            Element::Glob { include, exclude } => {
                let as_list =
                    |v: &[String]| Element::List(v.iter().cloned().map(Element::Str).collect());
                let dict = Element::Dict(vec![
                    (Element::Str("include".into()), as_list(include)),
                    (Element::Str("exclude".into()), as_list(exclude)),
                ]);
                self.build(parent, key, &dict, origin)
            }
            Element::Null => self.add(parent, key, leaf(Leaf::Null), origin),
            Element::Str(s) if s == "???" => self.add(parent, key, leaf(Leaf::Missing), origin),
            Element::Str(s) => self.add(parent, key, leaf(Leaf::Str(s.clone())), origin),
            other => self.add(parent, key, leaf(Leaf::Other(other.python_str())), origin),
        }
    }

    pub fn path(&self, node: usize) -> String {
        let mut segs = Vec::new();
        let mut n = node;
        while let Some(parent) = self.nodes[n].parent {
            segs.push(self.nodes[n].key.as_str());
            n = parent;
        }
        segs.reverse();
        segs.join(".")
    }

    /// Every value whose interpolations do not resolve, in the config's order.
    pub fn problems(&self) -> Vec<Problem> {
        let mut out = Vec::new();
        let mut todo = vec![ROOT];
        while let Some(node) = todo.pop() {
            match &self.nodes[node].kind {
                Kind::Dict(children) => todo.extend(children.iter().rev().map(|(_, c)| *c)),
                Kind::List(items) => todo.extend(items.iter().rev()),
                Kind::Leaf(Leaf::Str(s)) if s.contains("${") => {
                    let Ok(interps) = omegaconf::parse(s) else {
                        continue;
                    };
                    let mut stack = vec![node];
                    if let Some(failure) = interps
                        .iter()
                        .find_map(|i| self.resolve(i, node, &mut stack).err())
                    {
                        out.push(Problem {
                            key: self.path(node),
                            value: s.clone(),
                            origin: self.nodes[node].origin,
                            failure,
                        });
                    }
                }
                Kind::Leaf(_) => {}
            }
        }
        out
    }

    /// OmegaConf's resolution of one interpolation found in the value at `at`.
    fn resolve(
        &self,
        interp: &Interp,
        at: usize,
        stack: &mut Vec<usize>,
    ) -> Result<Resolved, Failure> {
        match interp {
            Interp::Node { dots, keys } => {
                let mut names = Vec::new();
                for key in keys {
                    match key {
                        Key::Name(n) => names.push(n.clone()),
                        Key::Nested(inner) => match self.resolve(inner, at, stack)? {
                            Resolved::Node(n) => match &self.nodes[n].kind {
                                Kind::Leaf(Leaf::Str(s) | Leaf::Other(s)) if !s.contains("${") => {
                                    names.push(s.clone())
                                }
                                _ => return Ok(Resolved::Unknown),
                            },
                            Resolved::Unknown => return Ok(Resolved::Unknown),
                        },
                    }
                }
                let shown = format!("{}{}", ".".repeat(*dots), names.join("."));
                let Some(start) = self.relative_base(at, *dots) else {
                    return fail(
                        format!(
                            "ConfigKeyError while resolving interpolation: Error resolving key '{shown}'"
                        ),
                        None,
                    );
                };
                let found = self.select(start, &names, &shown, stack)?;
                // The section holding the value would have to hold its own resolution.
                if let Resolved::Node(n) = found
                    && self.ancestors(at).any(|a| a == n)
                {
                    return fail(
                        "InterpolationResolutionError: Interpolation to parent node detected"
                            .into(),
                        None,
                    );
                }
                Ok(found)
            }
            Interp::Resolver { name, args } => {
                let mut parts = Vec::new();
                let mut known = true;
                for key in name {
                    match key {
                        Key::Name(n) => parts.push(n.clone()),
                        Key::Nested(inner) => {
                            self.resolve(inner, at, stack)?;
                            known = false;
                        }
                    }
                }
                for arg in args {
                    for inner in &arg.nested {
                        self.resolve(inner, at, stack)?;
                    }
                }
                if known {
                    self.check_resolver(&parts.join("."), args, at, stack)?;
                }
                Ok(Resolved::Unknown)
            }
        }
    }

    /// The node a key with `dots` leading dots starts from: the root, or the value's parent
    /// and one more level up for each further dot.
    fn relative_base(&self, at: usize, dots: usize) -> Option<usize> {
        if dots == 0 {
            return Some(ROOT);
        }
        (1..dots).try_fold(self.nodes[at].parent?, |n, _| self.nodes[n].parent)
    }

    fn select(
        &self,
        start: usize,
        names: &[String],
        shown: &str,
        stack: &mut Vec<usize>,
    ) -> Result<Resolved, Failure> {
        let mut node = start;
        for name in names {
            node = match self.deref(node, stack)? {
                Resolved::Node(n) => n,
                Resolved::Unknown => return Ok(Resolved::Unknown),
            };
            let missing = || Some(join(&self.path(node), name));
            node = match &self.nodes[node].kind {
                Kind::List(items) => match name.trim().parse::<usize>() {
                    Ok(i) if i < items.len() => items[i],
                    Ok(_) => {
                        return fail(format!("Interpolation key '{shown}' not found"), missing());
                    }
                    Err(_) => {
                        return fail(
                            format!(
                                "TypeError while resolving interpolation: Index '{name}' (str) is not an int"
                            ),
                            None,
                        );
                    }
                },
                _ => match self.child(node, name) {
                    Some(c) => c,
                    None => {
                        return fail(format!("Interpolation key '{shown}' not found"), missing());
                    }
                },
            };
        }
        if let Kind::Leaf(Leaf::Missing) = self.nodes[node].kind {
            return fail(
                format!(
                    "InterpolationToMissingValueError: Missing mandatory value: {}",
                    self.path(node)
                ),
                Some(self.path(node)),
            );
        }
        self.resolve_value(node, stack)?;
        Ok(Resolved::Node(node))
    }

    /// The sections holding `node`, nearest first.
    fn ancestors(&self, node: usize) -> impl Iterator<Item = usize> + '_ {
        std::iter::successors(self.nodes[node].parent, |&n| self.nodes[n].parent)
    }

    /// Resolves the interpolations of the value at `node`, as OmegaConf does when another
    /// value points at it.
    fn resolve_value(&self, node: usize, stack: &mut Vec<usize>) -> Result<(), Failure> {
        let Kind::Leaf(Leaf::Str(s)) = &self.nodes[node].kind else {
            return Ok(());
        };
        if !s.contains("${") {
            return Ok(());
        }
        if stack.contains(&node) {
            return fail("Recursive interpolation detected".into(), None);
        }
        let Ok(interps) = omegaconf::parse(s) else {
            return Ok(());
        };
        stack.push(node);
        let result = interps
            .iter()
            .try_for_each(|i| self.resolve(i, node, stack).map(|_| ()));
        stack.pop();
        result
    }

    /// The node a value stands for: itself, or what its lone interpolation points at.
    fn deref(&self, node: usize, stack: &mut Vec<usize>) -> Result<Resolved, Failure> {
        let Kind::Leaf(Leaf::Str(s)) = &self.nodes[node].kind else {
            return Ok(Resolved::Node(node));
        };
        match omegaconf::lone(s) {
            Some(one) => {
                if stack.contains(&node) {
                    return fail("Recursive interpolation detected".into(), None);
                }
                stack.push(node);
                let result = self.resolve(&one, node, stack);
                stack.pop();
                match result? {
                    Resolved::Node(n) => self.deref(n, stack),
                    Resolved::Unknown => Ok(Resolved::Unknown),
                }
            }
            None => Ok(Resolved::Node(node)),
        }
    }

    /// What OmegaConf's and hydra's resolvers refuse with the arguments they are given.
    fn check_resolver(
        &self,
        name: &str,
        args: &[Arg],
        at: usize,
        stack: &mut Vec<usize>,
    ) -> Result<(), Failure> {
        let Some(&(_, min, max)) = self.resolvers.iter().find(|(n, _, _)| *n == name) else {
            return fail(
                format!("UnsupportedInterpolationType: Unsupported interpolation type {name}"),
                None,
            );
        };
        if args.len() < min || args.len() > max {
            return fail(
                format!(
                    "TypeError raised while resolving interpolation: {name} takes {min} to {max} arguments, {} given",
                    args.len()
                ),
                None,
            );
        }
        let Some(key) = args.first().and_then(|a| a.text.as_deref()) else {
            return Ok(());
        };
        if !matches!(name, "oc.deprecated" | "oc.dict.keys" | "oc.dict.values") {
            return Ok(());
        }
        let rest = key.trim_start_matches('.');
        let names: Vec<String> = rest.split('.').map(str::to_owned).collect();
        let found = self
            .relative_base(at, key.len() - rest.len())
            .and_then(|start| self.select(start, &names, key, stack).ok());
        let node = match found {
            Some(Resolved::Node(n)) => self.deref(n, stack)?,
            Some(Resolved::Unknown) => return Ok(()),
            None => {
                return fail(
                    format!(
                        "ConfigKeyError raised while resolving interpolation: {name}: Key not found: '{key}'"
                    ),
                    None,
                );
            }
        };
        match node {
            Resolved::Node(n)
                if name != "oc.deprecated" && !matches!(self.nodes[n].kind, Kind::Dict(_)) =>
            {
                fail(
                    format!(
                        "TypeError raised while resolving interpolation: `{name}` cannot be applied to `{key}`, which is not a dict"
                    ),
                    None,
                )
            }
            _ => Ok(()),
        }
    }
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_owned()
    } else {
        format!("{prefix}.{key}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEYS: &str = "a.b=1\na.c=\"${a.b}\"\na.list=[1, 2]\na.missing=\"???\"\nd.e=${a}\n";

    /// The messages of the values that do not resolve once `overrides` are applied.
    fn problems(overrides: &[&str]) -> Vec<String> {
        let schema: Vec<(&str, &str)> = KEYS.lines().filter_map(|l| l.split_once('=')).collect();
        let mut config = Config::from_schema(schema.as_slice());
        for (i, arg) in overrides.iter().enumerate() {
            let o = super::super::check(arg).unwrap();
            config.apply(&o.key, o.prefix, o.value.as_ref(), i);
        }
        config
            .problems()
            .into_iter()
            .map(|p| p.failure.message)
            .collect()
    }

    #[test]
    fn interpolations_resolve_against_the_composed_config() {
        assert!(problems(&[]).is_empty());
        assert!(problems(&["+a.x=${a.b}", "+a.y=${.b}", "+a.z=${a.list.1}"]).is_empty());
        assert!(problems(&["+a.x='${oc.env:HOME}/${a.b}'", "+a.y=${d.e.b}"]).is_empty());
        assert_eq!(
            problems(&["+a.x=${a.nope}"]),
            ["Interpolation key 'a.nope' not found"]
        );
        assert_eq!(problems(&["~a.b"]), ["Interpolation key 'a.b' not found"]);
        assert!(problems(&["+a.x=${a.list.5}"])[0].contains("not found"));
        assert!(problems(&["+a.x=${a.missing}"])[0].contains("Missing mandatory value"));
        assert!(problems(&["a.b=${a.c}"])[0].contains("Recursive"));
        assert!(problems(&["+a.x=[${a}]"])[0].contains("parent node"));
        assert!(problems(&["+a.x=${...b}"])[0].contains("Error resolving key"));
        assert!(problems(&["+a.x=${nope:1}"])[0].contains("Unsupported interpolation type"));
        assert!(problems(&["+a.x='${oc.env:A,b,c}'"])[0].contains("TypeError"));
        assert!(problems(&["+a.x=${oc.dict.keys:a.b}"])[0].contains("not a dict"));
        assert!(problems(&["+a.x=${oc.dict.keys:a}"]).is_empty());
    }
}
