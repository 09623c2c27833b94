//! Python modules of a checkout, read on demand: where a module's file is, and which class a
//! name in a module means (following `from X import Name` as Python would).

use super::pyclass::{Class, Module, parse_module};
use camino::{Utf8Path, Utf8PathBuf};
use std::collections::HashMap;
use std::rc::Rc;

/// A class as found: the module that defines it, and the class.
#[derive(Clone)]
pub(super) struct ClassRef {
    pub module: String,
    pub class: Rc<Class>,
}

pub(super) struct Sources {
    root: Utf8PathBuf,
    /// Loaded modules by dotted name; `None` for a module with no file in the checkout
    /// (`typing`, `torch`).
    modules: HashMap<String, Option<Loaded>>,
    /// Every file read, in order: what a cached schema depends on.
    pub files: Vec<Utf8PathBuf>,
}

#[derive(Clone)]
struct Loaded {
    module: Rc<Module>,
    is_package: bool,
}

impl Sources {
    pub(super) fn new(root: &Utf8Path) -> Sources {
        Sources {
            root: root.to_owned(),
            modules: HashMap::new(),
            files: Vec::new(),
        }
    }

    /// The file of a module: `a/b.py` or `a/b/__init__.py` under the checkout, or under the
    /// checkout's `a-with-dashes/` folder, where a monorepo keeps its other packages
    /// (`skyrl-gym/skyrl_gym/…`).
    fn module_file(&self, module: &str) -> Option<(Utf8PathBuf, bool)> {
        let rel = module.replace('.', "/");
        let first = module.split('.').next().unwrap_or(module).replace('_', "-");
        for base in [self.root.clone(), self.root.join(first)] {
            let file = base.join(format!("{rel}.py"));
            if file.is_file() {
                return Some((file, false));
            }
            let init = base.join(&rel).join("__init__.py");
            if init.is_file() {
                return Some((init, true));
            }
        }
        None
    }

    /// Loads a module by dotted name; `Ok(None)` when the checkout does not hold it.
    pub(super) fn module(&mut self, name: &str) -> Result<Option<Rc<Module>>, String> {
        if let Some(loaded) = self.modules.get(name) {
            return Ok(loaded.as_ref().map(|l| l.module.clone()));
        }
        let Some((file, is_package)) = self.module_file(name) else {
            self.modules.insert(name.to_owned(), None);
            return Ok(None);
        };
        self.load(name, &file, is_package).map(Some)
    }

    /// Loads a file as the module `name` (an entry module given by its path).
    pub(super) fn load(
        &mut self,
        name: &str,
        file: &Utf8Path,
        is_package: bool,
    ) -> Result<Rc<Module>, String> {
        let src =
            std::fs::read_to_string(file).map_err(|e| format!("cannot read `{file}`: {e}"))?;
        let module = Rc::new(parse_module(&src).map_err(|e| format!("`{file}`, {e}"))?);
        self.files.push(file.to_owned());
        self.modules.insert(
            name.to_owned(),
            Some(Loaded {
                module: module.clone(),
                is_package,
            }),
        );
        Ok(module)
    }

    /// The absolute module an import in `from_module` names.
    fn absolute(&self, from_module: &str, module: &str, level: usize) -> String {
        if level == 0 {
            return module.to_owned();
        }
        let is_package = matches!(self.modules.get(from_module), Some(Some(l)) if l.is_package);
        let mut parts: Vec<&str> = from_module.split('.').collect();
        let drop = if is_package { level - 1 } else { level };
        parts.truncate(parts.len().saturating_sub(drop));
        if !module.is_empty() {
            parts.push(module);
        }
        parts.join(".")
    }

    /// The class `name` means in `module`: defined there, or imported into it.
    pub(super) fn class(&mut self, module: &str, name: &str) -> Result<Option<ClassRef>, String> {
        self.class_at(module, name, 0)
    }

    fn class_at(
        &mut self,
        module: &str,
        name: &str,
        hops: usize,
    ) -> Result<Option<ClassRef>, String> {
        if hops > 16 {
            return Ok(None);
        }
        let Some(m) = self.module(module)? else {
            return Ok(None);
        };
        if let Some((prefix, last)) = name.rsplit_once('.') {
            // `pkg.Class` through `import pkg` or `from x import pkg`.
            let Some(target) = self.module_alias(module, &m, prefix) else {
                return Ok(None);
            };
            return self.class_at(&target, last, hops + 1);
        }
        if let Some(class) = m.class(name) {
            return Ok(Some(ClassRef {
                module: module.to_owned(),
                class: Rc::new(class.clone()),
            }));
        }
        let Some(import) = m
            .imports
            .iter()
            .rev()
            .find(|i| i.local == name && i.name.is_some())
        else {
            return Ok(None);
        };
        let from = self.absolute(module, &import.module, import.level);
        let original = import.name.clone().unwrap_or_default();
        if let Some(found) = self.class_at(&from, &original, hops + 1)? {
            return Ok(Some(found));
        }
        // `from pkg import submodule` is not a class.
        Ok(None)
    }

    /// The module a dotted prefix names in `module` (`import a.b as c`, `from a import b`).
    fn module_alias(&self, module: &str, m: &Module, prefix: &str) -> Option<String> {
        m.imports.iter().rev().find_map(|i| {
            if i.local != prefix {
                return None;
            }
            let base = self.absolute(module, &i.module, i.level);
            Some(match &i.name {
                None => base,
                Some(n) if base.is_empty() => n.clone(),
                Some(n) => format!("{base}.{n}"),
            })
        })
    }

    /// The module that defines the constant `name` seen from `module`, with its expression.
    pub(super) fn constant(
        &mut self,
        module: &str,
        name: &str,
    ) -> Result<Option<(String, super::pyclass::Expr)>, String> {
        let mut module = module.to_owned();
        let mut name = name.to_owned();
        for _ in 0..16 {
            let Some(m) = self.module(&module)? else {
                return Ok(None);
            };
            if let Some(e) = m.constant(&name) {
                return Ok(Some((module, e.clone())));
            }
            let Some(import) = m
                .imports
                .iter()
                .rev()
                .find(|i| i.local == name && i.name.is_some())
            else {
                return Ok(None);
            };
            module = self.absolute(&module, &import.module, import.level);
            name = import.name.clone().unwrap_or_default();
        }
        Ok(None)
    }
}
