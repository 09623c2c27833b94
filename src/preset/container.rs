//! The container a profile runs jobs in (`[container]`): its program, its image and how the
//! image is judged, read-only overlays, and the modules loaded before it.

use crate::error::Result;
use crate::preset::fields::Fields;
use crate::util::names::{PLAIN_WORD, is_plain_word};
use camino::Utf8PathBuf;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Runtime {
    /// `singularity exec` (Leonardo: a sandbox directory).
    Singularity,
    /// `apptainer exec`, singularity's successor under its new name (JUPITER, JUWELS: a .sif).
    Apptainer,
    /// The run script runs directly on the node.
    None,
}

impl Runtime {
    /// Whether jobs run `<program> exec ... <image>` (singularity and apptainer take the same
    /// options); otherwise on the node itself.
    pub fn in_container(self) -> bool {
        self != Runtime::None
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Runtime::Singularity => "singularity",
            Runtime::Apptainer => "apptainer",
            Runtime::None => "none",
        }
    }
}

/// What the image is on disk, which decides how `doctor` judges it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ImageKind {
    /// A writable sandbox directory (Leonardo: mksquashfs dies on its Lustre login node).
    Sandbox,
    /// One `.sif` file, read-only; changes go in overlays.
    Sif,
}

impl ImageKind {
    /// The kind a path names when the profile does not say: `.sif` files are images.
    fn of(image: &Utf8PathBuf) -> ImageKind {
        match image.extension() {
            Some("sif") => ImageKind::Sif,
            _ => ImageKind::Sandbox,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContainerFile {
    runtime: Runtime,
    /// A path, or a bare name looked up on PATH once `modules` are loaded (`apptainer`).
    program: Option<String>,
    image: Option<String>,
    /// `sandbox` or `sif`; by default `.sif` files are images and anything else a sandbox.
    #[serde(default)]
    image_kind: Option<ImageKind>,
    #[serde(default)]
    binds: Vec<String>,
    /// Overlay images mounted read-only over the image (`--overlay X:ro`).
    #[serde(default)]
    overlays: Vec<String>,
    /// Environment modules loaded before the container runs (`module load A B`).
    #[serde(default)]
    modules: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Container {
    pub runtime: Runtime,
    pub program: Utf8PathBuf,
    pub image: Utf8PathBuf,
    pub image_kind: ImageKind,
    pub binds: Vec<Utf8PathBuf>,
    pub overlays: Vec<Utf8PathBuf>,
    pub modules: Vec<String>,
}

impl Container {
    /// `program` names a file (not one found on PATH).
    pub fn program_is_path(&self) -> bool {
        self.program.is_absolute()
    }
}

impl ContainerFile {
    /// The container's program, image, overlays and modules, each checked for how it is used.
    pub fn resolve(&self, p: &Fields) -> Result<Container> {
        let runtime = self.runtime;
        let required = |field: &str, value: &Option<String>| -> Result<Option<String>> {
            match (value, runtime.in_container()) {
                (None, true) => Err(p.invalid(format!(
                    "container.{field} is required with runtime = \"{}\"",
                    runtime.as_str()
                ))),
                _ => Ok(value.clone()),
            }
        };
        let program = match required("program", &self.program)? {
            None => Utf8PathBuf::new(),
            Some(name) if !name.contains(['/', '$']) => {
                if !is_plain_word(&name) {
                    return Err(p.invalid(format!("container.program = {name:?}: {PLAIN_WORD}")));
                }
                Utf8PathBuf::from(name)
            }
            Some(text) => p.path("container.program", &text)?,
        };
        let image = match required("image", &self.image)? {
            None => Utf8PathBuf::new(),
            Some(text) => p.path("container.image", &text)?,
        };
        let image_kind = self.image_kind.unwrap_or_else(|| ImageKind::of(&image));
        if image_kind == ImageKind::Sandbox && image.extension() == Some("sif") {
            return Err(p.invalid(format!(
                "container.image = `{image}` is a .sif file, but container.image_kind = \"sandbox\" (a directory): \
                 set image_kind = \"sif\", or point image at the sandbox folder"
            )));
        }
        let binds = (self.binds.iter())
            // One entry of the `src[:dst[:opts]],...` list: a folder, bound in place.
            .map(|b| p.list_entry("container.binds", b, ",:"))
            .collect::<Result<Vec<_>>>()?;
        // Rendered `--overlay <path>:ro`: a `:` in the path would end it early.
        let overlays = (self.overlays.iter())
            .map(|o| p.list_entry("container.overlays", o, ",:"))
            .collect::<Result<Vec<_>>>()?;
        if !overlays.is_empty() && !runtime.in_container() {
            return Err(p.invalid(
                "container.overlays need a container: set runtime = \"apptainer\" or \"singularity\", or drop them".into(),
            ));
        }
        for module in &self.modules {
            if !is_module_name(module) {
                return Err(p.invalid(format!(
                    "container.modules: {module:?} is not a module name (letters, digits and `/._+-`, as in \
                     \"Stages/2026\" or \"Apptainer\"); list one module per entry"
                )));
            }
        }
        Ok(Container {
            runtime,
            program,
            image,
            image_kind,
            binds,
            overlays,
            modules: self.modules.clone(),
        })
    }
}

/// A name `module load` takes as one word, such as `Stages/2026` or `GCC/14.3.0`.
fn is_module_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('-')
        && (name.chars()).all(|c| c.is_ascii_alphanumeric() || "/._+-".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_names_are_single_words() {
        assert!(is_module_name("Stages/2026"));
        assert!(is_module_name("nvidia-compilers/25.9-CUDA-13"));
        assert!(!is_module_name("Apptainer; rm -rf ~"));
        assert!(!is_module_name("--force"));
        assert!(!is_module_name(""));
    }
}
