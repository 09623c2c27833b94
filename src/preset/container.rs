//! The container a profile runs jobs in (`[container]`): its program, its image and how the
//! image is judged, read-only overlays, and the modules loaded before it.

use crate::error::Result;
use crate::preset::fields::Fields;
use crate::util::names::{PLAIN_WORD, is_plain_word};
use camino::{Utf8Path, Utf8PathBuf};
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

/// How a command enters the container: with the node's GPUs or not, in which folder, with
/// which environment.
pub struct Exec<'a> {
    /// `--nv`: the job and `check --deep` see the node's GPUs; `doctor`'s import needs none.
    pub gpus: bool,
    /// `--pwd`: the folder the command starts in, inside the container.
    pub pwd: &'a str,
    /// `--env NAME=value`, one each, in this order.
    pub env: &'a [(String, String)],
}

/// The options of [`Container::exec_argv`] that take a value, each followed by it.
pub const EXEC_VALUED: [&str; 4] = ["--bind", "--overlay", "--pwd", "--env"];

impl Container {
    /// `program` names a file (not one found on PATH).
    pub fn program_is_path(&self) -> bool {
        self.program.is_absolute()
    }

    /// The words that run a command in this container: [`Entry::exec_argv`].
    pub fn exec_argv(&self, how: &Exec) -> Vec<String> {
        Entry {
            runtime: self.runtime,
            program: &self.program,
            image: &self.image,
            binds: &self.binds,
            overlays: &self.overlays,
        }
        .exec_argv(how)
    }
}

/// What entering a container takes: the profile's [`Container`], or a plan's copy of it.
pub struct Entry<'a> {
    pub runtime: Runtime,
    pub program: &'a Utf8Path,
    pub image: &'a Utf8Path,
    pub binds: &'a [Utf8PathBuf],
    pub overlays: &'a [Utf8PathBuf],
}

impl Entry<'_> {
    /// The words that run a command in the container, up to and including the image: the one
    /// form the job's wrapper (its `container` array), `check --deep` and `doctor` all use.
    /// Empty with runtime `none`, where commands run on the node itself.
    pub fn exec_argv(&self, how: &Exec) -> Vec<String> {
        if !self.runtime.in_container() {
            return Vec::new();
        }
        let mut argv = vec![self.program.to_string(), "exec".to_owned()];
        if how.gpus {
            argv.push("--nv".to_owned());
        }
        argv.push("--no-home".to_owned());
        if !self.binds.is_empty() {
            let binds: Vec<&str> = self.binds.iter().map(|b| b.as_str()).collect();
            argv.extend(["--bind".to_owned(), binds.join(",")]);
        }
        for overlay in self.overlays {
            argv.extend(["--overlay".to_owned(), format!("{overlay}:ro")]);
        }
        argv.extend(["--pwd".to_owned(), how.pwd.to_owned()]);
        for (key, value) in how.env {
            argv.extend(["--env".to_owned(), format!("{key}={value}")]);
        }
        argv.push(self.image.to_string());
        argv
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

    fn container(runtime: Runtime, binds: &[&str]) -> Container {
        Container {
            runtime,
            program: "/bin/apptainer".into(),
            image: "/img.sif".into(),
            image_kind: ImageKind::Sif,
            binds: binds.iter().map(Utf8PathBuf::from).collect(),
            overlays: vec!["/o.sqsh".into()],
            modules: vec![],
        }
    }

    #[test]
    fn exec_argv_is_the_job_s_container_command() {
        let env = [("A".to_owned(), "1 2".to_owned())];
        let how = Exec {
            gpus: true,
            pwd: "/src",
            env: &env,
        };
        let argv = container(Runtime::Apptainer, &["/p", "/q"]).exec_argv(&how);
        assert_eq!(
            argv,
            [
                "/bin/apptainer",
                "exec",
                "--nv",
                "--no-home",
                "--bind",
                "/p,/q",
                "--overlay",
                "/o.sqsh:ro",
                "--pwd",
                "/src",
                "--env",
                "A=1 2",
                "/img.sif"
            ]
        );
        // No GPUs asked, no binds: neither option, rather than an empty `--bind ''`.
        let bare = Exec {
            gpus: false,
            pwd: "/",
            env: &[],
        };
        let argv = container(Runtime::Singularity, &[]).exec_argv(&bare);
        assert_eq!(
            argv,
            [
                "/bin/apptainer",
                "exec",
                "--no-home",
                "--overlay",
                "/o.sqsh:ro",
                "--pwd",
                "/",
                "/img.sif"
            ]
        );
        assert!(container(Runtime::None, &["/p"]).exec_argv(&how).is_empty());
    }

    #[test]
    fn module_names_are_single_words() {
        assert!(is_module_name("Stages/2026"));
        assert!(is_module_name("nvidia-compilers/25.9-CUDA-13"));
        assert!(!is_module_name("Apptainer; rm -rf ~"));
        assert!(!is_module_name("--force"));
        assert!(!is_module_name(""));
    }
}
