//! The commands that look without submitting: `show`, `check` and `render`.

use super::Session;
use crate::check::preflight;
use crate::cli::PlanArgs;
use crate::error::{Error, Result};
use crate::plan::Plan;
use crate::render::{RenderedFile, print_files, render as render_plan};
use crate::util::fs::write_atomic;
use crate::util::out::emit;
use camino::Utf8Path;
use std::io::Write;

/// `rlctl show`: the resolved plan as TOML.
pub fn show(
    session: &Session,
    name: &str,
    args: &PlanArgs,
    overrides: &[String],
    out: &mut dyn Write,
) -> Result<()> {
    let cluster = session.cluster()?;
    let target = session.library.find_target(name)?;
    let plan = session.plan(&cluster, &target, args, overrides)?;
    let text = toml::to_string(&plan).map_err(|e| Error::Unsupported(e.to_string()))?;
    emit(out, &text)
}

/// `rlctl check`: every preflight check, nothing written.
pub fn check(
    session: &Session,
    name: &str,
    args: &PlanArgs,
    overrides: &[String],
    out: &mut dyn Write,
) -> Result<()> {
    let (plan, skipped) = checked_plan(session, name, args, overrides)?;
    let note = match skipped {
        0 => String::new(),
        n => format!(" ({n} could not run here; see above)"),
    };
    emit(
        out,
        &format!("{}: every preflight check passed{note}\n", plan.target),
    )
}

/// `rlctl render`: the two scripts, into a folder or on stdout.
pub fn render(
    session: &Session,
    name: &str,
    dir: Option<&Utf8Path>,
    args: &PlanArgs,
    overrides: &[String],
    out: &mut dyn Write,
) -> Result<()> {
    let (plan, _) = checked_plan(session, name, args, overrides)?;
    let files = render_plan(&plan)?;
    match dir {
        Some(dir) => write_into(dir, &files, out),
        None => print_files(out, &files),
    }
}

/// The plan of a preset or cell, through preflight; with the number of checks skipped here.
fn checked_plan(
    session: &Session,
    name: &str,
    args: &PlanArgs,
    overrides: &[String],
) -> Result<(Plan, usize)> {
    let cluster = session.cluster()?;
    let target = session.library.find_target(name)?;
    let plan = session.plan(&cluster, &target, args, overrides)?;
    let skipped = preflight(
        &session.library,
        &cluster,
        &args.allow,
        std::slice::from_ref(&plan),
    )?;
    Ok((plan, skipped))
}

fn write_into(dir: &Utf8Path, files: &[RenderedFile], out: &mut dyn Write) -> Result<()> {
    if dir.as_str().is_empty() {
        return Err(Error::BadFlag {
            flag: "--out",
            value: String::new(),
            reason: "name a folder to write the scripts into, or leave --out out to print them"
                .into(),
        });
    }
    std::fs::create_dir_all(dir).map_err(|e| Error::io("create", dir, e))?;
    for file in files {
        let path = dir.join(file.path.file_name().expect("scripts have file names"));
        write_atomic(&path, &file.text, 0o755)?;
        emit(out, &format!("{path}\n"))?;
    }
    Ok(())
}
