//! `rlctl schema import`: flattens a SkyRL hydra `config/` folder into a key list.
//!
//! It composes `ppo_base_config.yaml` the way hydra's `compose(config_name="ppo_base_config")`
//! does, with no overrides: the YAML is read as OmegaConf reads it (PyYAML's YAML 1.1 rules plus
//! OmegaConf's floats: `1e-2` is a float, `yes` a boolean, `010` the octal 8), the `defaults:`
//! list is followed (`group: option`, `group@package: option`, `_self_` and its place, `# @package`
//! headers, `optional`, nested defaults inside group files), and each config is merged where
//! its package puts it. The result is flattened as tests/schema_oracle.py flattens hydra's own
//! `OmegaConf.to_container(cfg, resolve=False)`: one `key=default` line per leaf, an empty dict
//! being a leaf, values as Python's `json.dumps` prints them, interpolations bare.
//!
//! Not followed, and refused with a message: `override` entries (except of hydra's own
//! `hydra/...` groups, which only touch the `hydra` node hydra removes) and option names that
//! are interpolations. Structured configs (Python dataclasses) are not read: SkyRL's YAML is
//! untyped.

use crate::error::{Error, Result};
use camino::{Utf8Path, Utf8PathBuf};
use saphyr_parser::{Event, Parser, ScalarStyle, Span, Tag};
use std::collections::HashMap;
use std::fmt::Write as _;

const PRIMARY: &str = "ppo_base_config";

/// The key list of `config_dir`'s `ppo_base_config.yaml`, following its `defaults:` list, in
/// the format `Schema::parse` reads.
pub fn import(config_dir: &Utf8Path) -> Result<String> {
    let meta = std::fs::metadata(config_dir).map_err(|e| {
        Error::Unsupported(format!(
            "cannot read the SkyRL config folder `{config_dir}`: {e}; give the folder that holds ppo_base_config.yaml (`skyrl_train/config` in a SkyRL checkout or an installed skyrl-train)"
        ))
    })?;
    if !meta.is_dir() {
        return Err(Error::Unsupported(format!(
            "`{config_dir}` is not a folder; give the folder that holds ppo_base_config.yaml (`skyrl_train/config` in a SkyRL checkout or an installed skyrl-train)"
        )));
    }
    let primary = config_dir.join(format!("{PRIMARY}.yaml"));
    if !primary.is_file() {
        let found = [
            "skyrl_train/config",
            "skyrl-train/skyrl_train/config",
            "config",
        ]
        .iter()
        .map(|sub| config_dir.join(sub))
        .find(|dir| dir.join(format!("{PRIMARY}.yaml")).is_file());
        let hint = match found {
            Some(dir) => format!("it is in `{dir}`: run `rlctl schema import {dir}`"),
            None => "give the folder that holds it (`skyrl_train/config` in a SkyRL checkout or an installed skyrl-train)".to_owned(),
        };
        return Err(Error::Unsupported(format!(
            "`{primary}` does not exist: `rlctl schema import` reads SkyRL's ppo_base_config.yaml; {hint}"
        )));
    }
    let mut composer = Composer {
        dir: config_dir.to_owned(),
        cache: HashMap::new(),
        stack: Vec::new(),
    };
    let mut config = Vec::new();
    composer.expand(
        &Placed {
            config_path: PRIMARY.to_owned(),
            group_path: String::new(),
            package: None,
            relative_group: String::new(),
            parent_package: String::new(),
            entry: None,
        },
        false,
        &mut config,
    )?;
    let mut out = String::new();
    flatten(&config, "", &mut out);
    Ok(out)
}

/// A YAML value as OmegaConf holds it.
#[derive(Debug, Clone, PartialEq)]
enum Y {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Seq(Vec<Y>),
    Map(Vec<(Y, Y)>),
}

type Map = Vec<(Y, Y)>;

impl Y {
    /// Python's `str(key)`, as a flattened key shows it.
    fn key_text(&self) -> String {
        match self {
            Y::Str(s) => s.clone(),
            Y::Bool(b) => if *b { "True" } else { "False" }.to_owned(),
            Y::Int(i) => i.to_string(),
            Y::Float(x) => py_float(*x),
            Y::Null => "None".to_owned(),
            Y::Seq(_) | Y::Map(_) => json(self),
        }
    }

    /// Keys equal as Python dict keys are (1 == 1.0 == True).
    fn key_id(&self) -> String {
        match self {
            Y::Str(s) => format!("s{s}"),
            Y::Bool(b) => format!("n{}", u8::from(*b)),
            Y::Int(i) => format!("n{i}"),
            Y::Float(x) if x.fract() == 0.0 && x.abs() < 1e30 => format!("n{}", *x as i128),
            Y::Float(x) => format!("f{}", py_float(*x)),
            Y::Null => "null".to_owned(),
            other => format!("x{}", json(other)),
        }
    }

    fn is_missing(&self) -> bool {
        matches!(self, Y::Str(s) if s == "???")
    }
}

fn find<'a>(map: &'a mut Map, key: &Y) -> Option<&'a mut (Y, Y)> {
    let id = key.key_id();
    map.iter_mut().find(|(k, _)| k.key_id() == id)
}

/// OmegaConf's merge of `src` into `dest`: sections merge key by key, anything else replaces
/// the value in place, new keys go last, and `???` never replaces a value.
fn merge_into(dest: &mut Map, src: Map) {
    for (key, value) in src {
        match find(dest, &key) {
            Some((_, Y::Map(d))) if matches!(value, Y::Map(_)) => {
                let Y::Map(s) = value else { unreachable!() };
                merge_into(d, s);
            }
            Some(_) if value.is_missing() => {}
            Some((_, d)) => *d = value,
            None => dest.push((key, value)),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The defaults list.

/// One entry of a `defaults:` list.
#[derive(Debug, Clone)]
enum Default {
    SelfRef,
    /// `- override hydra/...: option`: hydra's own settings, which hydra removes; skipped.
    HydraOverride {
        text: String,
    },
    /// `- path` or `- path@package`: a config by its path.
    Config {
        path: String,
        package: Option<String>,
        text: String,
    },
    /// `- group: option`, `- group@package: option`, with `optional`.
    Group {
        group: String,
        package: Option<String>,
        options: Option<Vec<String>>,
        optional: bool,
        text: String,
    },
}

struct Loaded {
    file: Utf8PathBuf,
    /// The `# @package` header, made absolute as hydra makes it (`_global_.X`).
    header: Option<String>,
    defaults: Vec<Default>,
    body: Map,
}

/// A config placed in the defaults tree.
struct Placed {
    /// Its path under the config folder, without `.yaml`.
    config_path: String,
    /// The group folder its own nested defaults are relative to.
    group_path: String,
    /// The package its entry names (after `@`), if any; else the file's header decides.
    package: Option<String>,
    /// The package when neither the entry nor a header names one: the group as written.
    relative_group: String,
    parent_package: String,
    /// The entry that names it, and the file that entry is in, for messages.
    entry: Option<(String, Utf8PathBuf)>,
}

struct Composer {
    dir: Utf8PathBuf,
    cache: HashMap<String, std::rc::Rc<Loaded>>,
    stack: Vec<String>,
}

impl Composer {
    fn load(&mut self, placed: &Placed, optional: bool) -> Result<Option<std::rc::Rc<Loaded>>> {
        if let Some(loaded) = self.cache.get(&placed.config_path) {
            return Ok(Some(loaded.clone()));
        }
        let file = self.dir.join(format!("{}.yaml", placed.config_path));
        let text = match std::fs::read_to_string(&file) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if optional {
                    return Ok(None);
                }
                let message = match &placed.entry {
                    Some((entry, from)) => format!(
                        "{from}: its defaults list names `{entry}`, but `{file}` does not exist; name an option that has a file in `{}`, or mark the entry `optional`",
                        file.parent().unwrap_or(&self.dir)
                    ),
                    None => format!("`{file}` does not exist"),
                };
                return Err(Error::Unsupported(message));
            }
            Err(e) => return Err(Error::io("read", file, e)),
        };
        let header = header_package(&text).map_err(|message| Error::PresetSyntax {
            file: file.to_string(),
            message,
        })?;
        let value = load_yaml(&text).map_err(|message| Error::PresetSyntax {
            file: file.to_string(),
            message,
        })?;
        let invalid = |message: String| Error::PresetInvalid {
            file: file.to_string(),
            message,
        };
        let mut body = match value {
            Y::Null => Vec::new(),
            Y::Map(map) => map,
            _ => {
                return Err(invalid(
                    "a hydra config must be a mapping of keys".to_owned(),
                ));
            }
        };
        let mut defaults = Vec::new();
        if let Some(pos) = body
            .iter()
            .position(|(k, _)| *k == Y::Str("defaults".into()))
        {
            let (_, list) = body.remove(pos);
            let Y::Seq(items) = list else {
                return Err(invalid("`defaults` must be a list".to_owned()));
            };
            for item in items {
                let d = parse_default(&item).map_err(invalid)?;
                if let Some(Default::HydraOverride { text }) = defaults
                    .iter()
                    .rev()
                    .find(|d| !matches!(d, Default::SelfRef))
                    && !matches!(d, Default::HydraOverride { .. } | Default::SelfRef)
                {
                    return Err(invalid(format!(
                        "defaults entry `{text}` comes before `{}`: hydra wants `override` entries at the end of the defaults list",
                        default_text(&d)
                    )));
                }
                defaults.push(d);
            }
        }
        let header = header.map(|h| {
            if h == "_global_" || h.starts_with("_global_.") {
                h
            } else if h.is_empty() {
                "_global_".to_owned()
            } else {
                format!("_global_.{h}")
            }
        });
        let loaded = std::rc::Rc::new(Loaded {
            file,
            header,
            defaults,
            body,
        });
        self.cache
            .insert(placed.config_path.clone(), loaded.clone());
        Ok(Some(loaded))
    }

    /// Merges a placed config and its own defaults into `out`, in hydra's order.
    fn expand(&mut self, placed: &Placed, optional: bool, out: &mut Map) -> Result<()> {
        let Some(loaded) = self.load(placed, optional)? else {
            return Ok(());
        };
        if self.stack.contains(&placed.config_path) {
            return Err(Error::PresetInvalid {
                file: loaded.file.to_string(),
                message: format!(
                    "its defaults list includes itself (through {}); remove the loop",
                    self.stack.join(" -> ")
                ),
            });
        }
        let package = final_package(
            &placed.parent_package,
            placed.package.as_deref().or(loaded.header.as_deref()),
            &placed.relative_group,
        );
        let mut defaults = loaded.defaults.clone();
        let selves = defaults
            .iter()
            .filter(|d| matches!(d, Default::SelfRef))
            .count();
        if selves > 1 {
            return Err(Error::PresetInvalid {
                file: loaded.file.to_string(),
                message: "`_self_` is listed twice in its defaults list; keep one".to_owned(),
            });
        }
        if selves == 0 {
            // Hydra puts a config's own content after its defaults when `_self_` is not listed.
            defaults.push(Default::SelfRef);
        }
        self.stack.push(placed.config_path.clone());
        for d in &defaults {
            match d {
                Default::HydraOverride { .. } => {}
                Default::SelfRef => merge_into(out, wrap(&package, loaded.body.clone())),
                Default::Config {
                    path,
                    package: pkg,
                    text,
                } => {
                    let (abs, rel) = match path.strip_prefix('/') {
                        Some(abs) => (abs.to_owned(), abs),
                        None => (join_path(&placed.group_path, path), path.as_str()),
                    };
                    let child = Placed {
                        group_path: dirname(&abs),
                        config_path: abs,
                        package: pkg.clone(),
                        relative_group: dirname(rel).replace('/', "."),
                        parent_package: package.clone(),
                        entry: Some((text.clone(), loaded.file.clone())),
                    };
                    self.expand(&child, false, out)?;
                }
                Default::Group {
                    group,
                    package: pkg,
                    options,
                    optional,
                    text,
                } => {
                    let Some(options) = options else { continue };
                    let (group_path, rel) = match group.strip_prefix('/') {
                        Some(abs) => (abs.to_owned(), abs),
                        None => (join_path(&placed.group_path, group), group.as_str()),
                    };
                    for option in options {
                        if option == "???" {
                            return Err(Error::PresetInvalid {
                                file: loaded.file.to_string(),
                                message: format!(
                                    "`{text}` leaves the option to the command line (`???`); rlctl imports the config as it is, so name an option"
                                ),
                            });
                        }
                        let pkg = pkg.as_ref().map(|p| {
                            if p.contains("_group_") {
                                format!(
                                    "_global_.{}",
                                    p.replace("_group_", &group_path.replace('/', "."))
                                )
                            } else {
                                p.clone()
                            }
                        });
                        let child = Placed {
                            config_path: join_path(&group_path, option),
                            group_path: group_path.clone(),
                            package: pkg,
                            relative_group: rel.replace('/', "."),
                            parent_package: package.clone(),
                            entry: Some((text.clone(), loaded.file.clone())),
                        };
                        self.expand(&child, *optional, out)?;
                    }
                }
            }
        }
        self.stack.pop();
        Ok(())
    }
}

fn default_text(d: &Default) -> &str {
    match d {
        Default::SelfRef => "_self_",
        Default::HydraOverride { text }
        | Default::Config { text, .. }
        | Default::Group { text, .. } => text,
    }
}

fn parse_default(item: &Y) -> Result<Default, String> {
    match item {
        Y::Str(s) if s == "_self_" => Ok(Default::SelfRef),
        Y::Str(s) => {
            let (path, package) = split_package(s);
            if path == "_self_" {
                return Err("`_self_@PACKAGE` is not supported by hydra; write `_self_`".into());
            }
            Ok(Default::Config {
                path,
                package,
                text: s.clone(),
            })
        }
        Y::Map(entries) if entries.len() == 1 => {
            let (key, value) = &entries[0];
            let Y::Str(key) = key else {
                return Err(format!(
                    "defaults entry `{}` must be `group: option`",
                    json(item)
                ));
            };
            let mut words: Vec<&str> = key.split(' ').collect();
            let group = words.pop().unwrap_or_default();
            let mut optional = false;
            let mut is_override = false;
            for w in words {
                match w {
                    "optional" => optional = true,
                    "override" => is_override = true,
                    _ => break,
                }
            }
            let text = match value {
                Y::Str(s) => format!("{key}: {s}"),
                other => format!("{key}: {}", json(other)),
            };
            let (group, package) = split_package(group);
            let hydra_group = group.trim_start_matches('/') == "hydra"
                || group.trim_start_matches('/').starts_with("hydra/");
            if is_override {
                if hydra_group {
                    return Ok(Default::HydraOverride { text });
                }
                return Err(format!(
                    "defaults entry `{text}` overrides another entry's option; rlctl schema import does not follow `override` entries: compose the config with hydra and write the key list from its output"
                ));
            }
            if hydra_group {
                return Err(format!(
                    "defaults entry `{text}` names one of hydra's own groups without `override`; write `override {key}: …`"
                ));
            }
            let options = match value {
                Y::Null => None,
                Y::Str(s) => Some(vec![s.clone()]),
                Y::Seq(items) => Some(
                    items
                        .iter()
                        .map(|i| match i {
                            Y::Str(s) => Ok(s.clone()),
                            _ => Err(format!("defaults entry `{text}`: options must be names")),
                        })
                        .collect::<Result<_, _>>()?,
                ),
                _ => {
                    return Err(format!(
                        "defaults entry `{text}`: the option must be a name, a list of names or null"
                    ));
                }
            };
            if let Some(options) = &options
                && let Some(o) = options.iter().find(|o| o.contains("${"))
            {
                return Err(format!(
                    "defaults entry `{text}`: the option `{o}` is an interpolation, which rlctl schema import does not follow; name the option"
                ));
            }
            Ok(Default::Group {
                group,
                package,
                options,
                optional,
                text,
            })
        }
        _ => Err(format!(
            "defaults entry `{}` must be a config name or `group: option`",
            json(item)
        )),
    }
}

/// hydra's `_split_group`: `group@package` (a `:rename` after the package is dropped), with
/// `_here_` meaning the parent's package.
fn split_package(text: &str) -> (String, Option<String>) {
    match text.split_once('@') {
        None => (text.to_owned(), None),
        Some((group, package)) => {
            let package = package.split(':').next().unwrap_or_default();
            let package = if package == "_here_" { "" } else { package };
            (group.to_owned(), Some(package.to_owned()))
        }
    }
}

/// hydra's `_get_final_package`.
fn final_package(parent: &str, package: Option<&str>, relative_group: &str) -> String {
    let package = package.unwrap_or(relative_group);
    let joined = if parent.is_empty() {
        package.to_owned()
    } else if package.is_empty() {
        parent.to_owned()
    } else {
        format!("{parent}.{package}")
    };
    match joined.rfind("_global_") {
        None => joined,
        Some(i) => joined
            .get(i + "_global_".len() + 1..)
            .unwrap_or("")
            .to_owned(),
    }
}

fn dirname(path: &str) -> String {
    path.rfind('/')
        .map_or(String::new(), |i| path[..i].to_owned())
}

fn join_path(base: &str, path: &str) -> String {
    if base.is_empty() {
        path.to_owned()
    } else {
        format!("{base}/{path}")
    }
}

/// The config's content placed at its package (`a.b` → `{a: {b: content}}`).
fn wrap(package: &str, body: Map) -> Map {
    if package.is_empty() {
        return body;
    }
    package.rsplit('.').fold(body, |inner, seg| {
        vec![(Y::Str(seg.to_owned()), Y::Map(inner))]
    })
}

/// hydra's `_get_header_dict` on the file's first 512 characters: `# @package NAME` lines
/// before the first other line.
fn header_package(text: &str) -> Result<Option<String>, String> {
    let head: String = text.chars().take(512).collect();
    let mut package = None;
    for line in head.lines() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let Some(rest) = line.strip_prefix('#') else {
            break;
        };
        if !rest.trim_start().starts_with('@') {
            break;
        }
        let words: Vec<&str> = line
            .trim_start_matches('#')
            .split(' ')
            .filter(|w| !w.is_empty())
            .collect();
        match words.as_slice() {
            [key, value] => {
                if *key == "@package" {
                    package = Some((*value).to_owned());
                }
            }
            [_] => return Err(format!("header `{line}` must be `# @KEY VALUE`")),
            _ => return Err(format!("header `{line}` has too many words")),
        }
    }
    Ok(package)
}

// ---------------------------------------------------------------------------------------------
// YAML, read as OmegaConf reads it.

fn load_yaml(text: &str) -> Result<Y, String> {
    let mut reader = Reader {
        parser: Parser::new_from_str(text),
        anchors: HashMap::new(),
    };
    let mut document = None;
    loop {
        let (event, span) = reader.next()?;
        match event {
            Event::StreamStart | Event::DocumentEnd | Event::Nothing => {}
            Event::DocumentStart(_) => {
                if document.is_some() {
                    return Err(at(
                        span,
                        "a hydra config holds one YAML document; remove the second `---`",
                    ));
                }
                let (event, span) = reader.next()?;
                document = Some(match event {
                    Event::DocumentEnd => Y::Null,
                    event => reader.node(event, span)?,
                });
            }
            Event::StreamEnd => return Ok(document.unwrap_or(Y::Null)),
            _ => return Err(at(span, "unexpected YAML content")),
        }
    }
}

fn at(span: Span, message: &str) -> String {
    format!(
        "line {}, column {}: {message}",
        span.start.line(),
        span.start.col() + 1
    )
}

struct Reader<'a> {
    parser: Parser<'a, saphyr_parser::StrInput<'a>>,
    anchors: HashMap<usize, Y>,
}

impl<'a> Reader<'a> {
    fn next(&mut self) -> Result<(Event<'a>, Span), String> {
        match self.parser.next_event() {
            Some(Ok(pair)) => Ok(pair),
            Some(Err(e)) => Err(format!(
                "line {}, column {}: {}",
                e.marker().line(),
                e.marker().col() + 1,
                e.info()
            )),
            None => Err("the YAML ends too early".to_owned()),
        }
    }

    fn node(&mut self, event: Event<'a>, span: Span) -> Result<Y, String> {
        let (value, anchor) = match event {
            Event::Alias(id) => {
                return self
                    .anchors
                    .get(&id)
                    .cloned()
                    .ok_or_else(|| at(span, "an alias names no anchor"));
            }
            Event::Scalar(text, style, anchor, tag) => (
                scalar(&text, style, tag.as_deref()).map_err(|m| at(span, &m))?,
                anchor,
            ),
            Event::SequenceStart(anchor, tag) => {
                check_tag(tag.as_deref(), "seq").map_err(|m| at(span, &m))?;
                let mut items = Vec::new();
                loop {
                    let (event, span) = self.next()?;
                    if let Event::SequenceEnd = event {
                        break;
                    }
                    items.push(self.node(event, span)?);
                }
                (Y::Seq(items), anchor)
            }
            Event::MappingStart(anchor, tag) => {
                check_tag(tag.as_deref(), "map").map_err(|m| at(span, &m))?;
                (Y::Map(self.mapping(span)?), anchor)
            }
            _ => return Err(at(span, "unexpected YAML content")),
        };
        if anchor > 0 {
            self.anchors.insert(anchor, value.clone());
        }
        Ok(value)
    }

    /// A mapping as PyYAML's SafeLoader builds it: `<<` merge keys first, later keys win in
    /// the place of the first; OmegaConf refuses a string key given twice.
    fn mapping(&mut self, span: Span) -> Result<Map, String> {
        let mut explicit: Vec<(Y, Y)> = Vec::new();
        let mut merges: Vec<Y> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        loop {
            let (event, key_span) = self.next()?;
            if let Event::MappingEnd = event {
                break;
            }
            let is_merge =
                matches!(&event, Event::Scalar(t, ScalarStyle::Plain, _, None) if t == "<<");
            let key = self.node(event, key_span)?;
            let (event, value_span) = self.next()?;
            let value = self.node(event, value_span)?;
            if is_merge {
                merges.push(value);
                continue;
            }
            if let Y::Str(s) = &key
                && !seen.insert(s.clone())
            {
                return Err(at(
                    key_span,
                    &format!("the key `{s}` is given twice in one mapping"),
                ));
            }
            if matches!(key, Y::Seq(_) | Y::Map(_)) {
                return Err(at(key_span, "a key must be a single value"));
            }
            explicit.push((key, value));
        }
        let mut pairs: Vec<(Y, Y)> = Vec::new();
        for merge in merges {
            match merge {
                Y::Map(m) => pairs.extend(m),
                Y::Seq(items) => {
                    let mut maps = Vec::new();
                    for item in items {
                        match item {
                            Y::Map(m) => maps.push(m),
                            _ => return Err(at(span, "`<<` merges mappings only")),
                        }
                    }
                    for m in maps.into_iter().rev() {
                        pairs.extend(m);
                    }
                }
                _ => return Err(at(span, "`<<` merges mappings only")),
            }
        }
        pairs.extend(explicit);
        let mut map: Map = Vec::new();
        for (k, v) in pairs {
            match find(&mut map, &k) {
                Some((_, slot)) => *slot = v,
                None => map.push((k, v)),
            }
        }
        Ok(map)
    }
}

fn check_tag(tag: Option<&Tag>, expected: &str) -> Result<(), String> {
    match tag {
        None => Ok(()),
        Some(t) if t.is_yaml_core_schema() && t.suffix == expected => Ok(()),
        Some(t) => Err(format!("the YAML tag `{t}` is not supported here")),
    }
}

fn scalar(text: &str, style: ScalarStyle, tag: Option<&Tag>) -> Result<Y, String> {
    match tag {
        None if style == ScalarStyle::Plain => resolve_plain(text),
        None => Ok(Y::Str(text.to_owned())),
        Some(t) if t.handle == "!" && t.suffix.is_empty() => Ok(Y::Str(text.to_owned())),
        Some(t) if t.is_yaml_core_schema() => match t.suffix.as_str() {
            "str" => Ok(Y::Str(text.to_owned())),
            "null" => Ok(Y::Null),
            "bool" => match text.to_ascii_lowercase().as_str() {
                "yes" | "true" | "on" => Ok(Y::Bool(true)),
                "no" | "false" | "off" => Ok(Y::Bool(false)),
                _ => Err(format!("`{text}` is not a boolean")),
            },
            "int" => construct_int(text).ok_or_else(|| format!("`{text}` is not an integer")),
            "float" => construct_float(text).ok_or_else(|| format!("`{text}` is not a float")),
            other => Err(format!("the YAML tag `!!{other}` is not supported")),
        },
        Some(t) => Err(format!("the YAML tag `{t}` is not supported")),
    }
}

/// A plain scalar typed by PyYAML's YAML 1.1 resolvers, with OmegaConf's float rule and no
/// timestamps.
fn resolve_plain(text: &str) -> Result<Y, String> {
    if text == "=" {
        // PyYAML types a plain `=` as `tag:yaml.org,2002:value`, which nothing constructs.
        return Err("a bare `=` is not a value to PyYAML (\"could not determine a constructor for the tag 'tag:yaml.org,2002:value'\"); quote it: '='".to_owned());
    }
    Ok(resolve_plain_value(text))
}

fn resolve_plain_value(text: &str) -> Y {
    if matches!(text, "" | "~" | "null" | "Null" | "NULL") {
        return Y::Null;
    }
    match text {
        "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return Y::Bool(true);
        }
        "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return Y::Bool(false);
        }
        _ => {}
    }
    let b = text.as_bytes();
    if is_yaml_int(b)
        && let Some(y) = construct_int(text)
    {
        return y;
    }
    if is_yaml_float(b)
        && let Some(y) = construct_float(text)
    {
        return y;
    }
    Y::Str(text.to_owned())
}

/// A cursor for the resolvers' patterns, which need no backtracking.
struct Cur<'a> {
    b: &'a [u8],
    i: usize,
}

impl Cur<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }
    fn eat(&mut self, pred: impl Fn(u8) -> bool) -> bool {
        match self.peek() {
            Some(c) if pred(c) => {
                self.i += 1;
                true
            }
            _ => false,
        }
    }
    fn many(&mut self, pred: impl Fn(u8) -> bool) -> usize {
        let start = self.i;
        while self.eat(&pred) {}
        self.i - start
    }
    fn lit(&mut self, s: &str) -> bool {
        if self.b[self.i..].starts_with(s.as_bytes()) {
            self.i += s.len();
            true
        } else {
            false
        }
    }
    fn sign(&mut self) {
        self.eat(|c| c == b'-' || c == b'+');
    }
    fn end(&self) -> bool {
        self.i == self.b.len()
    }
    /// `[0-9]+(?:_[0-9]+)*`
    fn grouped_digits(&mut self) -> bool {
        if self.many(|c| c.is_ascii_digit()) == 0 {
            return false;
        }
        while self.peek() == Some(b'_') && self.b.get(self.i + 1).is_some_and(u8::is_ascii_digit) {
            self.i += 1;
            self.many(|c| c.is_ascii_digit());
        }
        true
    }
    /// `(?::[0-5]?[0-9])+`
    fn sexagesimal(&mut self) -> bool {
        let mut n = 0;
        while self.peek() == Some(b':') {
            let c1 = self.b.get(self.i + 1).copied();
            let c2 = self.b.get(self.i + 2).copied();
            match (c1, c2) {
                (Some(a), Some(d)) if (b'0'..=b'5').contains(&a) && d.is_ascii_digit() => {
                    self.i += 3
                }
                (Some(a), _) if a.is_ascii_digit() => self.i += 2,
                _ => break,
            }
            n += 1;
        }
        n > 0
    }
    /// `[eE]` + sign (required or optional) + `[0-9]+`, all optional.
    fn exponent(&mut self, sign_required: bool) -> bool {
        let save = self.i;
        if !self.eat(|c| c == b'e' || c == b'E') {
            return true;
        }
        let signed = self.eat(|c| c == b'-' || c == b'+');
        if (sign_required && !signed) || self.many(|c| c.is_ascii_digit()) == 0 {
            self.i = save;
            return false;
        }
        true
    }
}

fn pattern(b: &[u8], f: impl FnOnce(&mut Cur) -> bool) -> bool {
    let mut c = Cur { b, i: 0 };
    f(&mut c) && c.end()
}

fn digit_or_underscore(c: u8) -> bool {
    c.is_ascii_digit() || c == b'_'
}

fn is_yaml_int(b: &[u8]) -> bool {
    let bin = |c: &mut Cur| {
        c.sign();
        c.lit("0b") && c.many(|x| x == b'0' || x == b'1' || x == b'_') > 0
    };
    let oct = |c: &mut Cur| {
        c.sign();
        c.lit("0") && c.many(|x| (b'0'..=b'7').contains(&x) || x == b'_') > 0
    };
    let dec = |c: &mut Cur| {
        c.sign();
        c.lit("0")
            || (c.eat(|x| (b'1'..=b'9').contains(&x)) && c.many(digit_or_underscore) < usize::MAX)
    };
    let hex = |c: &mut Cur| {
        c.sign();
        c.lit("0x") && c.many(|x| x.is_ascii_hexdigit() || x == b'_') > 0
    };
    let sexa = |c: &mut Cur| {
        c.sign();
        c.eat(|x| (b'1'..=b'9').contains(&x)) && {
            c.many(digit_or_underscore);
            c.sexagesimal()
        }
    };
    pattern(b, bin) || pattern(b, oct) || pattern(b, dec) || pattern(b, hex) || pattern(b, sexa)
}

fn is_yaml_float(b: &[u8]) -> bool {
    // PyYAML's YAML 1.1 float.
    let f1 = |c: &mut Cur| {
        c.sign();
        c.eat(|x| x.is_ascii_digit())
            && {
                c.many(digit_or_underscore);
                c.lit(".")
            }
            && {
                c.many(digit_or_underscore);
                c.exponent(true)
            }
    };
    let f2 = |c: &mut Cur| {
        c.lit(".") && c.eat(|x| x.is_ascii_digit()) && {
            c.many(digit_or_underscore);
            c.exponent(true)
        }
    };
    let f3 = |c: &mut Cur| {
        c.sign();
        c.eat(|x| x.is_ascii_digit())
            && {
                c.many(digit_or_underscore);
                c.sexagesimal()
            }
            && c.lit(".")
            && {
                c.many(digit_or_underscore);
                true
            }
    };
    let inf = |c: &mut Cur| {
        c.sign();
        c.lit(".") && (c.lit("inf") || c.lit("Inf") || c.lit("INF"))
    };
    let nan = |c: &mut Cur| c.lit(".") && (c.lit("nan") || c.lit("NaN") || c.lit("NAN"));
    // OmegaConf's additions: `1e-2`, `1.0e5`.
    let g1 = |c: &mut Cur| {
        c.sign();
        c.grouped_digits() && c.lit(".") && {
            c.many(digit_or_underscore);
            c.exponent(false)
        }
    };
    let g2 = |c: &mut Cur| {
        c.sign();
        c.grouped_digits() && c.eat(|x| x == b'e' || x == b'E') && {
            c.eat(|x| x == b'-' || x == b'+');
            c.many(|x| x.is_ascii_digit()) > 0
        }
    };
    let g3 = |c: &mut Cur| c.lit(".") && c.grouped_digits() && c.exponent(true);
    let g4 = |c: &mut Cur| {
        c.sign();
        c.grouped_digits() && c.sexagesimal() && c.lit(".") && {
            c.many(digit_or_underscore);
            true
        }
    };
    pattern(b, f1)
        || pattern(b, f2)
        || pattern(b, f3)
        || pattern(b, inf)
        || pattern(b, nan)
        || pattern(b, g1)
        || pattern(b, g2)
        || pattern(b, g3)
        || pattern(b, g4)
}

/// PyYAML's `construct_yaml_int`.
fn construct_int(text: &str) -> Option<Y> {
    let value = text.replace('_', "");
    let (sign, value) = match value.as_bytes().first()? {
        b'-' => (-1, &value[1..]),
        b'+' => (1, &value[1..]),
        _ => (1, value.as_str()),
    };
    let n: i128 = if value == "0" {
        0
    } else if let Some(bin) = value.strip_prefix("0b") {
        i128::from_str_radix(bin, 2).ok()?
    } else if let Some(hex) = value.strip_prefix("0x") {
        i128::from_str_radix(hex, 16).ok()?
    } else if value.starts_with('0') {
        i128::from_str_radix(value, 8).ok()?
    } else if value.contains(':') {
        value.split(':').try_fold(0i128, |acc, part| {
            acc.checked_mul(60)?.checked_add(part.parse::<i128>().ok()?)
        })?
    } else {
        value.parse().ok()?
    };
    Some(Y::Int(sign * n))
}

/// PyYAML's `construct_yaml_float`.
fn construct_float(text: &str) -> Option<Y> {
    let value = text.replace('_', "").to_ascii_lowercase();
    let (sign, value) = match value.as_bytes().first()? {
        b'-' => (-1.0, &value[1..]),
        b'+' => (1.0, &value[1..]),
        _ => (1.0, value.as_str()),
    };
    let x = if value == ".inf" {
        f64::INFINITY
    } else if value == ".nan" {
        return Some(Y::Float(f64::NAN));
    } else if value.contains(':') {
        value.split(':').try_fold(0.0f64, |acc, part| {
            Some(acc * 60.0 + part.parse::<f64>().ok()?)
        })?
    } else {
        value.parse::<f64>().ok()?
    };
    Some(Y::Float(sign * x))
}

// ---------------------------------------------------------------------------------------------
// Output.

fn flatten(map: &Map, prefix: &str, out: &mut String) {
    for (key, value) in map {
        let key = format!("{prefix}{}", key.key_text());
        match value {
            Y::Map(inner) if !inner.is_empty() => flatten(inner, &format!("{key}."), out),
            Y::Str(s) if s.contains("${") => {
                let _ = writeln!(out, "{key}={s}");
            }
            other => {
                let _ = writeln!(out, "{key}={}", json(other));
            }
        }
    }
}

/// Python's `json.dumps` of the value.
fn json(value: &Y) -> String {
    match value {
        Y::Null => "null".to_owned(),
        Y::Bool(b) => b.to_string(),
        Y::Int(i) => i.to_string(),
        Y::Float(x) if x.is_nan() => "NaN".to_owned(),
        Y::Float(x) if x.is_infinite() => {
            if *x > 0.0 { "Infinity" } else { "-Infinity" }.to_owned()
        }
        Y::Float(x) => py_float(*x),
        Y::Str(s) => json_string(s),
        Y::Seq(items) => {
            let items: Vec<String> = items.iter().map(json).collect();
            format!("[{}]", items.join(", "))
        }
        Y::Map(entries) => {
            let items: Vec<String> = entries
                .iter()
                .map(|(k, v)| {
                    let key = match k {
                        Y::Str(s) => s.clone(),
                        Y::Bool(b) => b.to_string(),
                        Y::Null => "null".to_owned(),
                        other => json(other),
                    };
                    format!("{}: {}", json_string(&key), json(v))
                })
                .collect();
            format!("{{{}}}", items.join(", "))
        }
    }
}

/// `json.dumps` of a string: ASCII only, `\uXXXX` for the rest.
fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (c as u32) > 0x7e && (c as u32) != 0x7f => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Python's `repr` of a finite float: shortest digits, exponent form below 1e-4 and from 1e16.
fn py_float(x: f64) -> String {
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0" } else { "0.0" }.to_owned();
    }
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci.split_once('e').expect("{:e} has an exponent");
    let exp: i32 = exp.parse().expect("{:e} exponent is a number");
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if x < 0.0 { "-" } else { "" };
    let decpt = exp + 1;
    if decpt > -4 && decpt <= 16 {
        let n = digits.len() as i32;
        let body = if decpt <= 0 {
            format!("0.{}{digits}", "0".repeat((-decpt) as usize))
        } else if decpt >= n {
            format!("{digits}{}.0", "0".repeat((decpt - n) as usize))
        } else {
            format!(
                "{}.{}",
                &digits[..decpt as usize],
                &digits[decpt as usize..]
            )
        };
        format!("{sign}{body}")
    } else {
        let rest = if digits.len() > 1 {
            format!(".{}", &digits[1..])
        } else {
            String::new()
        };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{}{rest}e{esign}{:02}", &digits[..1], exp.abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(t: &str) -> Y {
        resolve_plain(t).unwrap()
    }

    #[test]
    fn plain_scalars_follow_omegaconf() {
        assert_eq!(plain("1e-2"), Y::Float(0.01));
        assert_eq!(plain("1.0e-6"), Y::Float(1e-6));
        assert_eq!(plain("1.0e+6"), Y::Float(1e6));
        assert_eq!(plain("1e5"), Y::Float(1e5));
        assert_eq!(plain(".5"), Y::Float(0.5));
        assert_eq!(plain("1."), Y::Float(1.0));
        assert_eq!(plain("1_000"), Y::Int(1000));
        assert_eq!(plain("010"), Y::Int(8));
        assert_eq!(plain("08"), Y::Str("08".into()));
        assert_eq!(plain("0x1F"), Y::Int(31));
        assert_eq!(plain("1:30"), Y::Int(90));
        assert_eq!(plain("-1"), Y::Int(-1));
        assert_eq!(plain("yes"), Y::Bool(true));
        assert_eq!(plain("Off"), Y::Bool(false));
        assert_eq!(plain("~"), Y::Null);
        assert_eq!(plain(".inf"), Y::Float(f64::INFINITY));
        assert_eq!(plain("2024-01-01"), Y::Str("2024-01-01".into()));
        assert_eq!(plain("fsdp2"), Y::Str("fsdp2".into()));
        assert_eq!(plain("1e"), Y::Str("1e".into()));
        assert_eq!(plain("1_"), Y::Int(1));
    }

    #[test]
    fn floats_print_as_python_repr() {
        for (x, text) in [
            (1e-6, "1e-06"),
            (0.0001, "0.0001"),
            (1e-5, "1e-05"),
            (1.0, "1.0"),
            (0.1, "0.1"),
            (123.456, "123.456"),
            (1e16, "1e+16"),
            (1.5e15, "1500000000000000.0"),
            (-2.5e-7, "-2.5e-07"),
            (1e100, "1e+100"),
            (0.0, "0.0"),
        ] {
            assert_eq!(py_float(x), text);
        }
    }

    #[test]
    fn json_strings_escape_like_python() {
        assert_eq!(json_string("a\"b\\c\n"), r#""a\"b\\c\n""#);
        assert_eq!(json_string("é😀"), r#""\u00e9\ud83d\ude00""#);
    }

    #[test]
    fn yaml_reads_as_pyyaml() {
        let y = load_yaml("a: &x {b: 1}\nc:\n  <<: *x\n  d: 'yes'\ne: !!str 1\nf:\n").unwrap();
        assert_eq!(
            json(&y),
            r#"{"a": {"b": 1}, "c": {"b": 1, "d": "yes"}, "e": "1", "f": null}"#
        );
        assert!(
            load_yaml("a: 1\na: 2\n")
                .unwrap_err()
                .contains("given twice")
        );
    }

    #[test]
    fn packages_follow_hydra() {
        assert_eq!(
            final_package("", Some("deepspeed_config.train"), "x"),
            "deepspeed_config.train"
        );
        assert_eq!(final_package("a", Some("_global_.b.c"), "x"), "b.c");
        assert_eq!(final_package("a", None, "g"), "a.g");
        assert_eq!(final_package("a", Some(""), "g"), "a");
        assert_eq!(
            header_package("# @package foo.bar\na: 1").unwrap(),
            Some("foo.bar".into())
        );
        assert_eq!(header_package("# comment\n# @package foo\n").unwrap(), None);
    }
}
