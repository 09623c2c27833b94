//! How a profile's values are read, whichever table they are in: `${...}` variables expanded,
//! paths made absolute, words kept plain, and every error naming the profile's file.

use crate::error::{Error, Result, closest};
use crate::util::names::{PLAIN_WORD, is_plain_word};
use camino::{Utf8Component, Utf8Path, Utf8PathBuf};
use std::collections::BTreeMap;

/// The reader each table's resolver is given: the profile's file (named in errors) and its own
/// `[vars]`, plus `${env:NAME}` for the submitting shell's environment.
pub struct Fields<'a> {
    file: &'a str,
    vars: &'a BTreeMap<String, String>,
}

impl<'a> Fields<'a> {
    pub fn new(file: &'a str, vars: &'a BTreeMap<String, String>) -> Self {
        Fields { file, vars }
    }

    /// The error for a value the profile cannot hold; `message` names the field and the fix.
    pub fn invalid(&self, message: String) -> Error {
        Error::PresetInvalid {
            file: self.file.to_owned(),
            message,
        }
    }

    /// `text` with every variable replaced by its value.
    pub fn expand(&self, text: &str) -> Result<String> {
        self.expand_within(text, &mut Vec::new())
    }

    /// An absolute, normalized path. Paths reach scripts quoted as one word, but also `#SBATCH`
    /// lines, `PATH`-like lists and singularity's comma lists, none of which can carry a control
    /// character.
    pub fn path(&self, field: &str, text: &str) -> Result<Utf8PathBuf> {
        let expanded = self.expand(text)?;
        if expanded.contains(char::is_control) {
            return Err(self.invalid(format!(
                "{field} = {expanded:?} holds a newline or another control character: write the path on one line"
            )));
        }
        absolute(&expanded)
            .ok_or_else(|| self.invalid(format!("{field} = `{expanded}` must be an absolute path")))
    }

    /// A folder that becomes one entry of a `:`-separated list (PATH, PYTHONPATH) or of
    /// singularity's `,`-separated --bind list: it must not hold any of `separators`.
    pub fn list_entry(&self, field: &str, text: &str, separators: &str) -> Result<Utf8PathBuf> {
        let dir = self.path(field, text)?;
        match dir.as_str().chars().find(|c| separators.contains(*c)) {
            Some(c) => Err(self.invalid(format!(
                "{field} = `{dir}` holds `{c}`, which would split it in two where the job uses it: choose a folder without `{c}`"
            ))),
            None => Ok(dir),
        }
    }

    /// A word that goes on `#SBATCH` lines and into commands unquoted by sbatch itself.
    pub fn word(&self, field: &str, text: &str) -> Result<()> {
        if is_plain_word(text) {
            Ok(())
        } else {
            Err(self.invalid(format!("{field} = {text:?}: {PLAIN_WORD}")))
        }
    }

    /// `text` expanded; `stack` holds the variables being expanded, to name a circle.
    fn expand_within(&self, text: &str, stack: &mut Vec<String>) -> Result<String> {
        let mut out = String::new();
        let mut rest = text;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let end = after
                .find('}')
                .ok_or_else(|| self.invalid(format!("`{text}`: `${{` without a closing `}}`")))?;
            let name = &after[..end];
            out.push_str(&self.lookup(name, text, stack)?);
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }

    /// The value of one variable `text` uses, itself expanded.
    fn lookup(&self, name: &str, text: &str, stack: &mut Vec<String>) -> Result<String> {
        if let Some(env_name) = name.strip_prefix("env:") {
            return std::env::var(env_name).map_err(|_| {
                self.invalid(format!(
                    "`{text}` uses ${{{name}}}, but `{env_name}` is not set in the environment"
                ))
            });
        }
        let Some(value) = self.vars.get(name) else {
            let hint = closest(name, self.vars.keys().map(String::as_str))
                .map(|s| format!(": did you mean `{s}`?"))
                .unwrap_or_else(|| "; define it under [vars]".to_owned());
            return Err(self.invalid(format!("`{text}` uses the unknown variable `{name}`{hint}")));
        };
        if stack.iter().any(|s| s == name) {
            stack.push(name.to_owned());
            return Err(self.invalid(format!(
                "variables refer to each other in a circle: {}",
                stack.join(" -> ")
            )));
        }
        stack.push(name.to_owned());
        let expanded = self.expand_within(value, stack)?;
        stack.pop();
        Ok(expanded)
    }
}

/// An absolute path with `.` and `..` removed, without touching the filesystem.
pub fn absolute(text: &str) -> Option<Utf8PathBuf> {
    let path = Utf8Path::new(text);
    if !path.is_absolute() {
        return None;
    }
    let mut out = Utf8PathBuf::from("/");
    for component in path.components() {
        match component {
            Utf8Component::Normal(part) => out.push(part),
            Utf8Component::ParentDir => {
                out.pop();
            }
            _ => {}
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_normalizes_dot_dot_lexically() {
        assert_eq!(absolute("/w/a/../b/./c").unwrap(), "/w/b/c");
        assert_eq!(absolute("/../x").unwrap(), "/x");
        assert!(absolute("relative/x").is_none());
    }
}
