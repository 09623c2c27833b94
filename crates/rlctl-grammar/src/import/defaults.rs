//! Hydra's defaults-list composer: which config files make the config, in which order, and
//! where each one's content lands (its package).

use super::{Error, Result};
use super::{Map, PRIMARY, Y, json, load_yaml, merge_into};
use camino::{Utf8Path, Utf8PathBuf};
use std::collections::HashMap;
use std::rc::Rc;

/// `config_dir`'s primary config with everything its defaults list brings in, merged as hydra's
/// `compose` merges it with no overrides.
pub(super) fn compose(config_dir: &Utf8Path, choices: &[Choice]) -> Result<Map> {
    let mut composer = Composer {
        dir: config_dir.to_owned(),
        cache: HashMap::new(),
        stack: Vec::new(),
        choices: choices.to_vec(),
        used: vec![false; choices.len()],
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
    if let Some(i) = composer.used.iter().position(|u| !u) {
        let c = &choices[i];
        return Err(Error::Missing(format!(
            "`{}={}`: no entry of the defaults list chooses an option of `{}`, so there is none to \
             override (hydra: \"Could not override '{}'. No match in the defaults list.\"): write \
             `+{}={}` to add the group",
            c.group, c.option, c.group, c.group, c.group, c.option
        )));
    }
    Ok(config)
}

/// A config group's option chosen on the command line: `group=option` replaces the option an
/// entry of the defaults list names; `+group=option` (`append`) adds the group at the end of
/// the primary config's defaults list, after its own content, so the option's values win.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub group: String,
    pub option: String,
    pub append: bool,
}

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
    cache: HashMap<String, Rc<Loaded>>,
    stack: Vec<String>,
    choices: Vec<Choice>,
    /// Which of `choices` met its group: one that did not is refused, as hydra refuses it.
    used: Vec<bool>,
}

impl Composer {
    fn load(&mut self, placed: &Placed, optional: bool) -> Result<Option<Rc<Loaded>>> {
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
                return Err(Error::Missing(message));
            }
            Err(source) => return Err(Error::Io { path: file, source }),
        };
        let header = header_package(&text).map_err(|message| Error::Syntax {
            file: file.clone(),
            message,
        })?;
        let value = load_yaml(&text).map_err(|message| Error::Syntax {
            file: file.clone(),
            message,
        })?;
        let invalid = |message: String| Error::Invalid {
            file: file.clone(),
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
        let loaded = Rc::new(Loaded {
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
            return Err(Error::Invalid {
                file: loaded.file.clone(),
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
            return Err(Error::Invalid {
                file: loaded.file.clone(),
                message: "`_self_` is listed twice in its defaults list; keep one".to_owned(),
            });
        }
        if selves == 0 {
            // Hydra puts a config's own content after its defaults when `_self_` is not listed.
            defaults.push(Default::SelfRef);
        }
        if self.stack.is_empty() {
            self.append_choices(&mut defaults, &loaded.file)?;
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
                    let (group_path, rel) = match group.strip_prefix('/') {
                        Some(abs) => (abs.to_owned(), abs),
                        None => (join_path(&placed.group_path, group), group.as_str()),
                    };
                    let chosen = self.chosen(&group_path);
                    let Some(options) = chosen.as_ref().or(options.as_ref()) else {
                        continue;
                    };
                    for option in options {
                        if option == "???" {
                            return Err(Error::Invalid {
                                file: loaded.file.clone(),
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

    /// The option the command line chose for `group_path` (an entry's group, from the config
    /// folder), if any; marks the choice as met.
    fn chosen(&mut self, group_path: &str) -> Option<Vec<String>> {
        let i = (self.choices.iter()).position(|c| c.group == group_path)?;
        self.used[i] = true;
        Some(vec![self.choices[i].option.clone()])
    }

    /// `+group=option` choices, added at the end of the primary config's defaults list; one
    /// whose group an entry names already is refused, as hydra refuses it.
    fn append_choices(&mut self, defaults: &mut Vec<Default>, file: &Utf8Path) -> Result<()> {
        for (i, c) in self.choices.iter().enumerate() {
            let named = defaults.iter().any(|d| {
                matches!(d, Default::Group { group, .. } if group.trim_start_matches('/') == c.group)
            });
            match (c.append, named) {
                (true, true) => {
                    return Err(Error::Invalid {
                        file: file.to_owned(),
                        message: format!(
                            "`+{}={}`: its defaults list names `{}` already (hydra: \"Could not append to \
                             config. An item is already at '{}'.\"): write `{}={}` to choose its option",
                            c.group, c.option, c.group, c.group, c.group, c.option
                        ),
                    });
                }
                (true, false) => {
                    self.used[i] = true;
                    defaults.push(Default::Group {
                        group: c.group.clone(),
                        package: None,
                        options: Some(vec![c.option.clone()]),
                        optional: false,
                        text: format!("+{}={}", c.group, c.option),
                    });
                }
                _ => {}
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;

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
