//! `rlctl doctor`: checks the site itself, on the login node, and says how to fix each problem.

use crate::preset::cluster::{Cluster, Runtime};
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

pub fn examine(cluster: &Cluster) -> Vec<Line> {
    let mut lines = Vec::new();
    let mut say = |status, what, detail: String| {
        lines.push(Line {
            status,
            what,
            detail,
        })
    };
    let c = &cluster.container;
    match c.runtime {
        Runtime::None => {
            say(
                Status::Skipped,
                "container",
                "the profile runs jobs without a container".into(),
            );
        }
        Runtime::Singularity => {
            say_file(
                &mut say,
                "container binary",
                &c.program,
                "install singularity, or fix container.program",
            );
            if c.image.extension() == Some("sif") || c.image.is_file() {
                say(
                    Status::Problem,
                    "container image",
                    format!(
                        "`{}` is an image file; jobs here run a writable sandbox directory (a .sif cannot be built on \
                         the login node): build one with `singularity build --sandbox {} docker://…` and point \
                         container.image at it",
                        c.image,
                        c.image.with_extension("")
                    ),
                );
            } else if c.image.is_dir() {
                say(
                    Status::Ok,
                    "container image",
                    format!("`{}` is a sandbox directory", c.image),
                );
            } else {
                say(
                    Status::Problem,
                    "container image",
                    format!(
                        "`{}` does not exist: build the sandbox there or fix container.image",
                        c.image
                    ),
                );
            }
        }
    }
    let venv_python = cluster.software.venv.join("bin/python");
    let checkout = &cluster.software.skyrl;
    let flavour = Flavour::of_checkout(checkout);
    let (extra, folder) = match flavour {
        Some(f) => (f.uv_extra(), f.working_folder(checkout)),
        None => (Flavour::Marin.uv_extra(), checkout.clone()),
    };
    say_file(
        &mut say,
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
        &mut say,
        "host gcc",
        &cluster.software.gcc_bin.join("gcc"),
        "Triton needs a compiler: fix software.gcc_bin",
    );
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
    lines
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

/// Imports the trainer's package the way a job does, but from a folder outside the checkout and
/// without PYTHONPATH: that is what an editable install left pointing at an old checkout breaks.
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
    let mut argv: Vec<String> = Vec::new();
    if cluster.container.runtime == Runtime::Singularity {
        if !is_executable(&cluster.container.program) || !cluster.container.image.is_dir() {
            return (Status::Skipped, "no container to import in".into());
        }
        let binds: Vec<&str> = cluster.container.binds.iter().map(|b| b.as_str()).collect();
        argv.extend([
            cluster.container.program.to_string(),
            "exec".into(),
            "--no-home".into(),
        ]);
        if !binds.is_empty() {
            argv.extend(["--bind".into(), binds.join(",")]);
        }
        argv.extend([
            "--pwd".into(),
            "/".into(),
            cluster.container.image.to_string(),
        ]);
    }
    argv.extend([venv_python.to_string(), "-c".into(), probe]);
    let output = Command::new(&argv[0])
        .args(&argv[1..])
        .current_dir("/")
        .env_remove("PYTHONPATH")
        .stdin(Stdio::null())
        .output();
    let reinstall = format!(
        "reinstall it into the venv: `cd {trainer_dir} && VIRTUAL_ENV={} uv pip install --no-deps -e .`",
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
                format!("{package} does not import outside the checkout ({last}): {reinstall}"),
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
