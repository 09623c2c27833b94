//! Upstream SkyRL's config, read from its dataclasses (`skyrl/train/config/config.py`) without
//! running Python: `SkyRLTrainConfig`'s fields walked down, each dataclass-typed field a
//! section, each other field a `key=default` line, as `dataclasses.asdict(SkyRLTrainConfig())`
//! would flatten before `__post_init__` fills the derived defaults.
//!
//! Rules, each matching what `SkyRLTrainConfig.from_cli_overrides` accepts:
//! - fields come from the class and its dataclass bases, a base's first, a redefined field
//!   keeping its place;
//! - `Optional[<dataclass>] = None` (and `Union`, `X | None`, `Annotated`) lists the class's
//!   keys, which an override may set;
//! - a dict default is flattened like the YAML lists flatten one (`{}` when empty);
//! - defaults are read from literals, module constants, `field(default=…)` and
//!   `field(default_factory=Cls | dict | list | lambda: …)`, with `Cls(k=v)`,
//!   `copy.deepcopy(x)` and `os.path.expanduser(s)` (kept unexpanded: `~` is the user's) inside.
//!   A field without a default is written `"???"` (a value that must be given); a default
//!   rlctl cannot read is written `null` under a comment that says so.
//!
//! An entry module adds its own: a `SkyRLTrainConfig` subclass, `make_config(algorithm_cls=…,
//! trainer_cls=…, generator_cls=…)`, and the names it registers as advantage estimators or
//! policy losses (`# registered KIND: NAME` lines).

use super::Y;
use super::pyclass::{Expr, Field};
use super::pymodules::{ClassRef, Sources};
use crate::yaml::json;
use camino::{Utf8Path, Utf8PathBuf};
use std::collections::HashMap;
use std::fmt::Write as _;

pub(super) const CONFIG_MODULE: &str = "skyrl.train.config.config";
const ROOT_CLASS: &str = "SkyRLTrainConfig";
/// A field without a default: a value that must be given, as OmegaConf writes one.
const REQUIRED: &str = "???";

/// The key list of an upstream checkout, and every source file it was read from.
pub(super) fn read(
    root: &Utf8Path,
    entry: Option<&str>,
) -> Result<(String, Vec<Utf8PathBuf>), String> {
    let mut reader = Reader {
        sources: Sources::new(root),
        replace: HashMap::new(),
        unread: 0,
        open: Vec::new(),
    };
    let mut top = reader
        .sources
        .class(CONFIG_MODULE, ROOT_CLASS)?
        .ok_or_else(|| {
            format!("`{root}/skyrl/train/config/config.py` defines no `{ROOT_CLASS}`")
        })?;
    let mut registered = Vec::new();
    if let Some(entry) = entry {
        let (name, file) = entry_module(root, entry)?;
        let module = reader.sources.load(&name, &file, false)?;
        registered.clone_from(&module.registered);
        for class in &module.classes {
            if reader.derives_from(&name, &class.bases, ROOT_CLASS)? {
                top = reader
                    .sources
                    .class(&name, &class.name)?
                    .expect("a class of the module itself");
            }
        }
        reader.make_config(&name, &module.consts)?;
    }
    let mut out = String::from("# flavour: upstream\n");
    for (kind, name) in &registered {
        let _ = writeln!(out, "# registered {kind}: {name}");
    }
    let mut keys = String::new();
    reader.walk(&top, &[], "", &mut keys)?;
    for path in &reader.open {
        let _ = writeln!(out, "# open: {path}");
    }
    out.push_str(&keys);
    Ok((out, reader.sources.files))
}

/// The entry module's dotted name and file, from a path (`examples/x/main.py`) or a module
/// name (`examples.x.main`), relative to the checkout.
fn entry_module(root: &Utf8Path, entry: &str) -> Result<(String, Utf8PathBuf), String> {
    let rel = if entry.ends_with(".py") {
        entry.to_owned()
    } else {
        format!("{}.py", entry.replace('.', "/"))
    };
    let file = root.join(&rel);
    if !file.is_file() {
        return Err(format!(
            "the entry module `{entry}` is not in the checkout (`{file}` does not exist); give its path relative to `{root}`, e.g. `examples/train/on_policy_distillation/main_on_policy_distill.py`"
        ));
    }
    let name = rel.trim_end_matches(".py").replace('/', ".");
    Ok((name, file))
}

/// Whether an annotation is a dict type, through `Optional`, `Union`, `Annotated`, `X | None`:
/// OmegaConf takes any key below such a field, even while it is None.
fn is_dict_annotation(ann: &Expr) -> bool {
    match ann {
        Expr::Name(n) => matches!(
            n.as_str(),
            "Dict" | "dict" | "typing.Dict" | "Mapping" | "typing.Mapping"
        ),
        Expr::Subscript { value, index } => match value.name() {
            Some("Optional" | "typing.Optional" | "Union" | "typing.Union") => {
                index.iter().any(is_dict_annotation)
            }
            Some("Annotated" | "typing.Annotated") => index.first().is_some_and(is_dict_annotation),
            Some(name) => is_dict_annotation(&Expr::Name(name.to_owned())),
            None => false,
        },
        Expr::Union(items) => items.iter().any(is_dict_annotation),
        _ => false,
    }
}

/// A default as read: a value, a dataclass instance with its keyword overrides, or what rlctl
/// cannot read statically (and why).
enum Val {
    Y(Y),
    Obj(ClassRef, Vec<(String, Val)>),
    Unread(String),
}

struct Reader {
    sources: Sources,
    /// Sections whose class `make_config` replaces, by key path.
    replace: HashMap<String, ClassRef>,
    unread: usize,
    /// `Optional[Dict]` fields whose default is None: any sub-key is taken, as for a dict.
    open: Vec<String>,
}

impl Reader {
    fn derives_from(&mut self, module: &str, bases: &[Expr], target: &str) -> Result<bool, String> {
        for base in bases {
            let Some(name) = base.name() else { continue };
            let Some(class) = self.sources.class(module, name)? else {
                continue;
            };
            if class.class.name == target
                || self.derives_from(&class.module, &class.class.bases, target)?
            {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// `X = make_config(algorithm_cls=A, trainer_cls=T, generator_cls=G)` in the entry module.
    fn make_config(&mut self, module: &str, consts: &[(String, Expr)]) -> Result<(), String> {
        for (_, expr) in consts {
            let Expr::Call { func, kwargs, .. } = expr else {
                continue;
            };
            if !func.name().is_some_and(|n| n.ends_with("make_config")) {
                continue;
            }
            for (k, v) in kwargs {
                let path = match k.as_str() {
                    "algorithm_cls" => "trainer.algorithm",
                    "trainer_cls" => "trainer",
                    "generator_cls" => "generator",
                    _ => continue,
                };
                if let Some(name) = v.name()
                    && let Some(class) = self.sources.class(module, name)?
                {
                    self.replace.insert(path.to_owned(), class);
                }
            }
        }
        Ok(())
    }

    /// The class's dataclass fields with the module each is written in, bases first.
    fn fields(&mut self, class: &ClassRef, depth: usize) -> Result<Vec<(Field, String)>, String> {
        let mut out: Vec<(Field, String)> = Vec::new();
        if depth > 32 {
            return Ok(out);
        }
        for base in &class.class.bases {
            let Some(name) = base.name() else { continue };
            if let Some(base) = self.sources.class(&class.module, name)? {
                for (f, m) in self.fields(&base, depth + 1)? {
                    add_field(&mut out, f, m);
                }
            }
        }
        if class.class.is_dataclass() {
            for f in &class.class.fields {
                add_field(&mut out, f.clone(), class.module.clone());
            }
        }
        Ok(out)
    }

    fn walk(
        &mut self,
        class: &ClassRef,
        overrides: &[(String, Val)],
        prefix: &str,
        out: &mut String,
    ) -> Result<(), String> {
        for (field, module) in self.fields(class, 0)? {
            let path = format!("{prefix}{}", field.name);
            let typed = self.annotation_class(&module, &field.annotation)?;
            let value = if let Some(class) = self.replace.get(&path) {
                Val::Obj(class.clone(), Vec::new())
            } else if let Some(pos) = overrides.iter().position(|(k, _)| *k == field.name) {
                clone_val(&overrides[pos].1)
            } else {
                match &field.default {
                    Some(expr) => self.eval_default(&module, expr)?,
                    None => Val::Y(Y::Str(REQUIRED.into())),
                }
            };
            match value {
                Val::Obj(c, ov) => self.walk(&c, &ov, &format!("{path}."), out)?,
                Val::Y(Y::Null) if typed.is_some() => {
                    let c = typed.expect("checked");
                    self.walk(&c, &[], &format!("{path}."), out)?;
                }
                Val::Y(Y::Null) if is_dict_annotation(&field.annotation) => {
                    self.open.push(path.clone());
                    let _ = writeln!(out, "{path}=null");
                }
                Val::Y(Y::Map(m)) if !m.is_empty() => super::flatten(&m, &format!("{path}."), out),
                Val::Y(y) => {
                    let _ = writeln!(out, "{path}={}", json(&y));
                }
                Val::Unread(why) => {
                    self.unread += 1;
                    let _ = writeln!(
                        out,
                        "# rlctl cannot read this default (line {} of {module}): {why}\n{path}=null",
                        field.line
                    );
                }
            }
        }
        Ok(())
    }

    /// The dataclass an annotation names, through `Optional`, `Union`, `Annotated`, `X | None`
    /// and string annotations.
    fn annotation_class(&mut self, module: &str, ann: &Expr) -> Result<Option<ClassRef>, String> {
        let candidates: Vec<&Expr> = match ann {
            Expr::Subscript { value, index } => match value.name() {
                Some("Optional" | "typing.Optional" | "Union" | "typing.Union") => {
                    index.iter().collect()
                }
                Some("Annotated" | "typing.Annotated") => index.iter().take(1).collect(),
                _ => return Ok(None),
            },
            Expr::Union(items) => items.iter().collect(),
            other => vec![other],
        };
        for c in candidates {
            let found = match c {
                Expr::Name(n) if n != "None" => self.sources.class(module, n)?,
                Expr::Str(s) => self.sources.class(module, s.trim())?,
                Expr::Subscript { .. } => self.annotation_class(module, c)?,
                _ => None,
            };
            if let Some(found) = found
                && found.class.is_dataclass()
            {
                return Ok(Some(found));
            }
        }
        Ok(None)
    }

    fn eval_default(&mut self, module: &str, expr: &Expr) -> Result<Val, String> {
        if let Expr::Call { func, kwargs, .. } = expr
            && matches!(func.name(), Some("field" | "dataclasses.field"))
        {
            if let Some((_, d)) = kwargs.iter().find(|(k, _)| k == "default") {
                return self.eval(module, d);
            }
            if let Some((_, f)) = kwargs.iter().find(|(k, _)| k == "default_factory") {
                return self.factory(module, f);
            }
            return Ok(Val::Y(Y::Str(REQUIRED.into())));
        }
        self.eval(module, expr)
    }

    /// What calling a `default_factory` gives.
    fn factory(&mut self, module: &str, f: &Expr) -> Result<Val, String> {
        match f {
            Expr::Name(n) if n == "dict" => Ok(Val::Y(Y::Map(Vec::new()))),
            Expr::Name(n) if n == "list" || n == "tuple" => Ok(Val::Y(Y::Seq(Vec::new()))),
            Expr::Name(n) => match self.sources.class(module, n)? {
                Some(c) if c.class.is_dataclass() => Ok(Val::Obj(c, Vec::new())),
                _ => Ok(Val::Unread(format!(
                    "its factory `{n}` is code rlctl does not run"
                ))),
            },
            Expr::Lambda(body) => self.eval(module, body),
            _ => Ok(Val::Unread("its factory is code rlctl does not run".into())),
        }
    }

    fn eval(&mut self, module: &str, e: &Expr) -> Result<Val, String> {
        let unread = |what: &str| Ok(Val::Unread(format!("{what} is code rlctl does not run")));
        match e {
            Expr::Str(s) => Ok(Val::Y(Y::Str(s.clone()))),
            Expr::FStr => unread("an f-string"),
            Expr::Num(n) => Ok(number(n).map_or_else(
                || Val::Unread(format!("`{n}` is not a number rlctl reads")),
                Val::Y,
            )),
            Expr::Neg(inner) => Ok(match self.eval(module, inner)? {
                Val::Y(Y::Int(i)) => Val::Y(Y::Int(-i)),
                Val::Y(Y::Float(x)) => Val::Y(Y::Float(-x)),
                _ => Val::Unread("a negated non-number".into()),
            }),
            Expr::Name(n) => match n.as_str() {
                "True" => Ok(Val::Y(Y::Bool(true))),
                "False" => Ok(Val::Y(Y::Bool(false))),
                "None" => Ok(Val::Y(Y::Null)),
                _ => match self.sources.constant(module, n)? {
                    Some((m, expr)) => self.eval(&m, &expr),
                    None => unread(&format!("`{n}`")),
                },
            },
            Expr::List(items) | Expr::Tuple(items) => {
                let mut seq = Vec::new();
                for item in items {
                    match self.eval(module, item)? {
                        Val::Y(y) => seq.push(y),
                        _ => return unread("a list item"),
                    }
                }
                Ok(Val::Y(Y::Seq(seq)))
            }
            Expr::Dict(entries) => {
                let mut map = Vec::new();
                for (k, v) in entries {
                    match (self.eval(module, k)?, self.eval(module, v)?) {
                        (Val::Y(k), Val::Y(v)) => map.push((k, v)),
                        _ => return unread("a dict entry"),
                    }
                }
                Ok(Val::Y(Y::Map(map)))
            }
            Expr::Call { func, args, kwargs } => {
                let Some(name) = func.name() else {
                    return unread("a call");
                };
                let last = name.rsplit('.').next().unwrap_or(name);
                match (last, args.as_slice()) {
                    (
                        "deepcopy" | "copy" | "expanduser" | "str" | "list" | "tuple" | "dict",
                        [one],
                    ) if kwargs.is_empty() => self.eval(module, one),
                    ("dict", []) => {
                        let mut map = Vec::new();
                        for (k, v) in kwargs {
                            match self.eval(module, v)? {
                                Val::Y(v) => map.push((Y::Str(k.clone()), v)),
                                _ => return unread("a dict entry"),
                            }
                        }
                        Ok(Val::Y(Y::Map(map)))
                    }
                    ("list" | "tuple", []) => Ok(Val::Y(Y::Seq(Vec::new()))),
                    _ => match self.sources.class(module, name)? {
                        Some(c) if c.class.is_dataclass() && args.is_empty() => {
                            let mut ov = Vec::new();
                            for (k, v) in kwargs {
                                ov.push((k.clone(), self.eval(module, v)?));
                            }
                            Ok(Val::Obj(c, ov))
                        }
                        _ => unread(&format!("`{name}(…)`")),
                    },
                }
            }
            _ => unread("this expression"),
        }
    }
}

fn add_field(fields: &mut Vec<(Field, String)>, field: Field, module: String) {
    match fields.iter_mut().find(|(f, _)| f.name == field.name) {
        Some(slot) => *slot = (field, module),
        None => fields.push((field, module)),
    }
}

fn clone_val(v: &Val) -> Val {
    match v {
        Val::Y(y) => Val::Y(y.clone()),
        Val::Obj(c, ov) => Val::Obj(
            c.clone(),
            ov.iter().map(|(k, v)| (k.clone(), clone_val(v))).collect(),
        ),
        Val::Unread(why) => Val::Unread(why.clone()),
    }
}

/// A Python number literal: `1_000`, `0x1F`, `1e-6`, `.5`.
fn number(text: &str) -> Option<Y> {
    let t = text.replace('_', "");
    let lower = t.to_ascii_lowercase();
    let radix = |p: &str, r: u32| {
        lower
            .strip_prefix(p)
            .and_then(|d| i128::from_str_radix(d, r).ok())
    };
    if let Some(i) = radix("0x", 16)
        .or_else(|| radix("0o", 8))
        .or_else(|| radix("0b", 2))
    {
        return Some(Y::Int(i));
    }
    if lower.ends_with('j') {
        return None;
    }
    if lower.bytes().all(|b| b.is_ascii_digit()) {
        return lower.parse().ok().map(Y::Int);
    }
    lower.parse::<f64>().ok().map(Y::Float)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checkout(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        dir
    }

    const CONFIG: &str = r#"
import copy, os
from dataclasses import dataclass, field
from typing import Optional, Dict, Any
from other_pkg.envs import EnvCfg

KW = {"a": 1, "b": [True]}

@dataclass
class Base:
    x: int = 1

@dataclass
class Mixed:
    dtype: str = "bf16"

@dataclass
class Algo(Base):
    name: str = "grpo"
    x: int = 2
    mp: Optional[Mixed] = None
    kw: Dict[str, Any] = field(default_factory=lambda: copy.deepcopy(KW))
    opt: Optional[Dict[str, Any]] = None
    lr: float = 1e-6
    path: str = field(default_factory=lambda: os.path.expanduser("~/ckpts/"))

@dataclass
class Trainer:
    algorithm: Algo = field(default_factory=lambda: Algo(name="ppo"))
    env: EnvCfg = field(default_factory=EnvCfg)
    open: dict = field(default_factory=dict)
    n: int = 0x10

@dataclass
class SkyRLTrainConfig:
    trainer: Trainer = field(default_factory=Trainer)
"#;

    #[test]
    fn walks_fields_bases_optionals_and_factories() {
        let dir = checkout(&[
            ("skyrl/train/config/config.py", CONFIG),
            (
                "other-pkg/other_pkg/envs.py",
                "@dataclass\nclass EnvCfg:\n    url: str = 'http://x'\n",
            ),
        ]);
        let root = Utf8Path::from_path(dir.path()).unwrap();
        let (text, files) = read(root, None).unwrap();
        assert_eq!(
            text,
            r#"# flavour: upstream
# open: trainer.algorithm.opt
trainer.algorithm.x=2
trainer.algorithm.name="ppo"
trainer.algorithm.mp.dtype="bf16"
trainer.algorithm.kw.a=1
trainer.algorithm.kw.b=[true]
trainer.algorithm.opt=null
trainer.algorithm.lr=1e-06
trainer.algorithm.path="~/ckpts/"
trainer.env.url="http://x"
trainer.open={}
trainer.n=16
"#
        );
        assert_eq!(files.len(), 2);
    }

    /// A source cut anywhere (an editor's half-saved file) gives a message or a list, never a
    /// panic.
    #[test]
    fn truncated_sources_never_panic() {
        for cut in (0..CONFIG.len()).filter(|&i| CONFIG.is_char_boundary(i)) {
            let _ = super::super::pyclass::parse_module(&CONFIG[..cut]);
        }
        let dir = checkout(&[("skyrl/train/config/config.py", &CONFIG[..CONFIG.len() / 2])]);
        let root = Utf8Path::from_path(dir.path()).unwrap();
        let err = read(root, None).unwrap_err();
        assert!(
            err.contains("defines no `SkyRLTrainConfig`") || err.contains("line ends inside"),
            "{err}"
        );
    }

    #[test]
    fn entry_modules_add_subclasses_and_registered_names() {
        let entry = r#"
from skyrl.train.config.config import Algo, make_config
from skyrl.backends.ppo_utils import register_advantage_estimator

@dataclass
class MyAlgo(Algo):
    extra: bool = False

Cfg = make_config(algorithm_cls=MyAlgo)

@register_advantage_estimator("no_op")
def f(x):
    return x
"#;
        let dir = checkout(&[
            ("skyrl/train/config/config.py", CONFIG),
            ("other-pkg/other_pkg/envs.py", "class EnvCfg:\n    pass\n"),
            ("examples/main.py", entry),
        ]);
        let root = Utf8Path::from_path(dir.path()).unwrap();
        let (text, _) = read(root, Some("examples/main.py")).unwrap();
        assert!(text.starts_with("# flavour: upstream\n# registered advantage_estimator: no_op\n"));
        assert!(text.contains("trainer.algorithm.extra=false\n"));
        // make_config puts a fresh MyAlgo() there: the lambda's name="ppo" is gone.
        assert!(text.contains("trainer.algorithm.name=\"grpo\"\n"));
        // EnvCfg is no dataclass here, so its factory is code.
        assert!(text.contains("# rlctl cannot read this default"));
        let missing = read(root, Some("examples/nope.py")).unwrap_err();
        assert!(missing.contains("is not in the checkout"), "{missing}");
    }
}
