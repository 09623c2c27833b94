//! Your presets folder: the one `--presets DIR` (or `RLCTL_PRESETS`) names, else
//! `$XDG_CONFIG_HOME/rlctl` (`~/.config/rlctl`), where `rlctl init` writes your cluster profile.

use camino::{Utf8Path, Utf8PathBuf};

/// How the presets folder was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chosen {
    /// `--presets DIR` or `RLCTL_PRESETS`: it must exist.
    Given,
    /// The default folder: used when it holds presets, simply absent otherwise.
    Default,
}

#[derive(Debug, Clone)]
pub struct PresetsDir {
    /// The folder given, or the default one (which may not exist yet); none without a home.
    pub path: Option<Utf8PathBuf>,
    pub chosen: Chosen,
}

/// The sub-folders a presets folder may hold.
pub const KINDS: [&str; 4] = ["clusters", "runs", "grids", "schemas"];

impl PresetsDir {
    /// The folder given on the command line or in the environment, else the default one.
    pub fn choose(given: Option<Utf8PathBuf>) -> PresetsDir {
        match given {
            Some(path) => PresetsDir {
                path: Some(path),
                chosen: Chosen::Given,
            },
            None => PresetsDir {
                path: default_dir(),
                chosen: Chosen::Default,
            },
        }
    }

    /// The folder the library overlays on the embedded presets: a given one always (so a typo
    /// is an error), the default one only when it holds presets (a new user has none).
    pub fn in_use(&self) -> Option<&Utf8Path> {
        let path = self.path.as_deref()?;
        match self.chosen {
            Chosen::Given => Some(path),
            Chosen::Default => KINDS
                .iter()
                .any(|kind| path.join(kind).is_dir())
                .then_some(path),
        }
    }
}

/// `$XDG_CONFIG_HOME/rlctl`, or `$HOME/.config/rlctl`; the XDG spec ignores a relative
/// `XDG_CONFIG_HOME`.
pub fn default_dir() -> Option<Utf8PathBuf> {
    let absolute = |name: &str| {
        let value = std::env::var(name).ok()?;
        let path = Utf8PathBuf::from(value);
        path.is_absolute().then_some(path)
    };
    let config = absolute("XDG_CONFIG_HOME").or_else(|| Some(absolute("HOME")?.join(".config")))?;
    Some(config.join("rlctl"))
}
