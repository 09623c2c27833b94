//! `rlctl doctor`: checks the site itself, on the login node, and says how to fix each problem.

use crate::preset::cluster::{Cluster, Container, ImageKind, Runtime};
use crate::preset::container::Exec;
use crate::schema::flavour::Flavour;
use camino::Utf8Path;
use std::fmt;
use std::process::{Command, Stdio};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    Ok,
    Problem,
    Skipped,
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Status::Ok => "ok",
            Status::Problem => "problem",
            Status::Skipped => "skipped",
        })
    }
}

#[derive(Debug, Clone)]
pub struct Line {
    pub status: Status,
    pub what: &'static str,
    pub detail: String,
}

/// Every line `rlctl doctor` shows for the site: the container, the software, the storage.
pub fn examine(cluster: &Cluster) -> Vec<Line> {
    let mut lines = Vec::new();
    let mut say = |status, what, detail: String| {
        lines.push(Line {
            status,
            what,
            detail,
        })
    };
    examine_container(&cluster.container, &mut say);
    examine_software(cluster, &mut say);
    examine_storage(cluster, &mut say);
    lines
}

/// The container's program, image and overlays, where the profile runs jobs in one.
fn examine_container(c: &Container, say: &mut impl FnMut(Status, &'static str, String)) {
    match c.runtime {
        Runtime::None => {
            say(
                Status::Skipped,
                "container",
                "the profile runs jobs without a container".into(),
            );
        }
        Runtime::Singularity | Runtime::Apptainer => {
            if c.program_is_path() {
                say_file(
                    say,
                    "container binary",
                    &c.program,
                    "install it, or fix container.program",
                );
            } else if crate::check::deep::on_this_machine(&c.program) {
                say(
                    Status::Ok,
                    "container binary",
                    format!("`{}` on PATH", c.program),
                );
            } else {
                say(
                    Status::Problem,
                    "container binary",
                    format!(
                        "`{}` is not on PATH: {}or fix container.program",
                        c.program,
                        match c.modules.is_empty() {
                            true => String::new(),
                            false => format!("run `module load {}` first, ", c.modules.join(" ")),
                        }
                    ),
                );
            }
            let (status, detail) = image_verdict(c);
            say(status, "container image", detail);
            for overlay in &c.overlays {
                if overlay.is_file() {
                    say(
                        Status::Ok,
                        "container overlay",
                        format!("`{overlay}` is a file"),
                    );
                } else {
                    say(
                        Status::Problem,
                        "container overlay",
                        format!(
                            "`{overlay}` is not a file: build the overlay there or fix container.overlays"
                        ),
                    );
                }
            }
        }
    }
}

/// The venv's python, the SkyRL checkout and whether the trainer imports, and the host's gcc.
fn examine_software(cluster: &Cluster, say: &mut impl FnMut(Status, &'static str, String)) {
    let venv_python = cluster.software.venv.join("bin/python");
    let checkout = &cluster.software.skyrl;
    let flavour = Flavour::of_checkout(checkout);
    let (extra, folder) = match flavour {
        Some(f) => (f.uv_extra(), f.working_folder(checkout)),
        None => (Flavour::Marin.uv_extra(), checkout.clone()),
    };
    say_file(
        say,
        "venv python",
        &venv_python,
        &format!("create the venv (`uv sync --extra {extra}` in `{folder}`) or fix software.venv"),
    );
    match flavour {
        Some(flavour) => {
            let trainer_dir = flavour.working_folder(checkout);
            say(
                Status::Ok,
                "SkyRL checkout",
                format!("`{checkout}` is a {flavour} checkout"),
            );
            let (status, detail) = import_check(cluster, &venv_python, &trainer_dir, flavour);
            say(status, "trainer import", detail);
        }
        None => {
            say(
                Status::Problem,
                "SkyRL checkout",
                format!(
                    "`{checkout}` holds no SkyRL checkout (neither `{}` nor `{}`): clone MarinSkyRL \
                     or upstream SkyRL there, or fix software.skyrl",
                    Flavour::Marin.marker(),
                    Flavour::Upstream.marker()
                ),
            );
            say(
                Status::Skipped,
                "trainer import",
                "no checkout to import from".into(),
            );
        }
    }
    say_file(
        say,
        "host gcc",
        &cluster.software.gcc_bin.join("gcc"),
        "Triton needs a compiler: fix software.gcc_bin",
    );
}

/// The folders models and data are staged in, and the free space where checkpoints go.
fn examine_storage(cluster: &Cluster, say: &mut impl FnMut(Status, &'static str, String)) {
    for (what, dir) in [
        ("HF cache", &cluster.storage.hf_home),
        ("data folder", &cluster.storage.data_root),
    ] {
        if dir.is_dir() {
            say(Status::Ok, what, format!("`{dir}` exists"));
        } else {
            say(
                Status::Problem,
                what,
                format!(
                    "`{dir}` does not exist: create it and stage models and data on the login node"
                ),
            );
        }
    }
    let (status, detail) = if cluster.storage.work.is_dir() {
        free_space(
            &cluster.storage.checkpoint_root,
            cluster.storage.min_free_gib,
        )
    } else {
        (
            Status::Skipped,
            format!("`{}` does not exist on this machine", cluster.storage.work),
        )
    };
    say(status, "checkpoint space", detail);
}

/// The image judged as the profile's `image_kind` says it is: a sandbox directory, or a `.sif`.
fn image_verdict(c: &Container) -> (Status, String) {
    let image = &c.image;
    match c.image_kind {
        ImageKind::Sandbox if image.is_file() => (
            Status::Problem,
            format!(
                "`{image}` is an image file; this profile runs a writable sandbox directory (a .sif cannot be built on \
                 the login node): build one with `{} build --sandbox {} docker://…` and point container.image at it, \
                 or set container.image_kind = \"sif\"",
                c.runtime.as_str(),
                image.with_extension("")
            ),
        ),
        ImageKind::Sandbox if image.is_dir() => {
            (Status::Ok, format!("`{image}` is a sandbox directory"))
        }
        ImageKind::Sif if image.is_dir() => (
            Status::Problem,
            format!(
                "`{image}` is a directory; this profile runs a .sif image file: point container.image at the .sif, \
                 or set container.image_kind = \"sandbox\""
            ),
        ),
        ImageKind::Sif if image.is_file() => (Status::Ok, format!("`{image}` is a .sif image")),
        kind => (
            Status::Problem,
            format!(
                "`{image}` does not exist: {} there or fix container.image",
                match kind {
                    ImageKind::Sandbox => "build the sandbox",
                    ImageKind::Sif => "build or copy the .sif",
                }
            ),
        ),
    }
}

fn say_file(
    say: &mut impl FnMut(Status, &'static str, String),
    what: &'static str,
    path: &Utf8Path,
    fix: &str,
) {
    if is_executable(path) {
        say(Status::Ok, what, format!("`{path}`"));
    } else {
        say(
            Status::Problem,
            what,
            format!("`{path}` is missing or not executable: {fix}"),
        );
    }
}

fn is_executable(path: &Utf8Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Imports the trainer's package the way a job's run.sh does: the venv's python with
/// `PYTHONPATH` set to the checkout, from a folder outside it. An editable install left
/// pointing at an old checkout is no problem then (the job imports the checkout first), and a
/// site whose jobs import fine is never told otherwise.
fn import_check(
    cluster: &Cluster,
    venv_python: &Utf8Path,
    trainer_dir: &Utf8Path,
    flavour: Flavour,
) -> (Status, String) {
    if !is_executable(venv_python) {
        return (Status::Skipped, "no venv python to import with".into());
    }
    let package = flavour.package();
    let probe = format!("import {package}, sys; sys.stdout.write({package}.__file__)");
    if cluster.container.runtime.in_container() {
        let image = &cluster.container.image;
        let image_there = match cluster.container.image_kind {
            ImageKind::Sandbox => image.is_dir(),
            ImageKind::Sif => image.is_file(),
        };
        if !crate::check::deep::on_this_machine(&cluster.container.program) || !image_there {
            return (Status::Skipped, "no container to import in".into());
        }
    }
    // On the login node: no GPUs, and none of the job's environment, which the import needs not.
    let env = [("PYTHONPATH".to_owned(), trainer_dir.to_string())];
    let mut argv = cluster.container.exec_argv(&Exec {
        gpus: false,
        pwd: "/",
        env: &env,
    });
    argv.extend([venv_python.to_string(), "-c".into(), probe]);
    let output = Command::new(&argv[0])
        .args(&argv[1..])
        .current_dir("/")
        .env("PYTHONPATH", trainer_dir.as_str())
        .stdin(Stdio::null())
        .output();
    let reinstall = format!(
        "install the checkout and its dependencies into the venv: `cd {trainer_dir} && VIRTUAL_ENV={} uv pip install -e .`",
        cluster.software.venv
    );
    match output {
        Err(e) => (Status::Problem, format!("cannot run `{}`: {e}", argv[0])),
        Ok(out) if !out.status.success() => {
            let why = String::from_utf8_lossy(&out.stderr);
            let last = why
                .lines()
                .rfind(|l| !l.trim().is_empty())
                .unwrap_or("no error output");
            (
                Status::Problem,
                format!(
                    "{package} does not import as the job imports it (PYTHONPATH={trainer_dir}) ({last}): {reinstall}"
                ),
            )
        }
        Ok(out) => {
            let file = String::from_utf8_lossy(&out.stdout).into_owned();
            if Utf8Path::new(&file).starts_with(trainer_dir) {
                (Status::Ok, format!("imports from `{file}`"))
            } else {
                (
                    Status::Problem,
                    format!(
                        "{package} imports from `{file}`, not from the checkout `{trainer_dir}`: {reinstall}"
                    ),
                )
            }
        }
    }
}

/// Free space where checkpoints go (its nearest existing folder), from `df`.
fn free_space(root: &Utf8Path, min_free_gib: u64) -> (Status, String) {
    let mut dir = root.to_path_buf();
    while !dir.exists() {
        match dir.parent() {
            Some(parent) => dir = parent.to_path_buf(),
            None => return (Status::Skipped, format!("no folder of `{root}` exists")),
        }
    }
    let output = Command::new("df").args(["-Pk", dir.as_str()]).output();
    let text = match output {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).into_owned(),
        _ => return (Status::Skipped, format!("`df -Pk {dir}` did not answer")),
    };
    let available_kib: Option<u64> = text
        .lines()
        .nth(1)
        .and_then(|l| l.split_whitespace().nth(3)?.parse().ok());
    match available_kib {
        Some(kib) => {
            let gib = kib / (1 << 20);
            if gib < min_free_gib {
                (
                    Status::Problem,
                    format!(
                        "{gib} GiB free under `{dir}`, less than storage.min_free_gib = {min_free_gib}: remove the \
                         checkpoints of finished runs first"
                    ),
                )
            } else {
                (Status::Ok, format!("{gib} GiB free under `{dir}`"))
            }
        }
        None => (Status::Skipped, format!("could not read `df -Pk {dir}`")),
    }
}
