//! The commands that look without submitting: `show`, `check` and `render`.

use super::{Session, deep_limit, plan_options};
use crate::check::ready;
use crate::check::{Found, judge, preflight};
use crate::cli::{Chain, CheckArgs, PlanArgs, RenderArgs, ShowArgs};
use crate::error::{Error, Result};
use crate::plan::{Plan, PlanOptions};
use crate::preset::cluster::Cluster;
use crate::preset::{Selection, Want};
use crate::render::{RenderedFile, print_files, render as render_plan};
use crate::util::fs::{Folder, write_atomic};
use crate::util::out::emit;
use crate::util::turn::Turn;
use crate::util::versioned::document;
use camino::{Utf8Component, Utf8Path, Utf8PathBuf};
use schemars::JsonSchema;
use serde::Serialize;
use std::io::Write;
use std::time::Duration;

/// `rlctl show`: the resolved plan as TOML.
pub fn show(session: &Session, args: &ShowArgs, out: &mut dyn Write) -> Result<()> {
    let cluster = session.cluster()?;
    let selection = session.library.select(&args.name, Want::Target)?;
    let plan = session.plan(&cluster, &selection, &args.plan)?;
    if !args.json {
        return emit(out, &plan.to_toml()?);
    }
    let sections = serde_json::to_value(&plan).map_err(|e| Error::Unsupported(e.to_string()))?;
    let knobs = (plan.shown_knobs())
        .map(|(key, value, origin)| ShownKnob {
            key,
            value: serde_json::to_value(value).unwrap_or(serde_json::Value::Null),
            layer: origin.to_string(),
        })
        .collect();
    let doc = Shown {
        target: plan.target.clone(),
        plan: sections,
        knobs,
    };
    emit(out, &document(&doc))
}

/// `show --json`: the plan's sections as `show` prints them in TOML, then its knobs.
#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct Shown {
    pub target: String,
    /// The resolved plan's sections (`job`, `paths`, `container`, `env`, ...), as the TOML.
    #[schemars(with = "serde_json::Map<String, serde_json::Value>")]
    pub plan: serde_json::Value,
    pub knobs: Vec<ShownKnob>,
}

/// One knob: its key as the trainer reads it, its value as hydra types it, and its layer.
#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct ShownKnob {
    pub key: String,
    pub value: serde_json::Value,
    /// The layer that set it: `preset NAME`, `profile NAME`, `cell NAME`, `command line`, ...
    pub layer: String,
}

/// `rlctl check`: what `launch` (a preset) or `grid` (a cell) judges before it submits, the
/// same functions, nothing written.
pub fn check(session: &Session, args: &CheckArgs, out: &mut dyn Write) -> Result<()> {
    let name = args
        .name
        .as_deref()
        .expect("clap requires a name without --all");
    let cluster = session.cluster()?;
    session.say_whose(&cluster);
    let deep = deep_limit(&args.deep, &cluster);
    let selection = session.library.select(name, Want::Target)?;
    let plan = session.plan(&cluster, &selection, &args.plan)?;
    if plan.grid.is_some() && args.chain != Chain::Jobs(1) {
        return Err(Error::BadFlag {
            flag: "--chain",
            value: name.to_owned(),
            reason: "a grid cell is one job, as `rlctl grid` submits it: leave --chain out".into(),
        });
    }
    let target = plan.target.clone();
    let (plans, extra) = ready::one(plan, args.chain, &session.ledgered()?, |verb| {
        args.plan.ask(verb)
    })?;
    let allow = &args.plan.allow;
    let verdict = judge(&session.library, &cluster, allow, &plans, &extra, deep)?;
    if args.json {
        let said = |kind: &str| -> Vec<String> {
            (verdict.said.iter())
                .filter(|(k, _)| *k == kind)
                .map(|(_, line)| line.clone())
                .collect()
        };
        let doc = Checked {
            target: target.clone(),
            cluster: cluster.name.clone(),
            shipped: cluster.shipped,
            passed: verdict.problems.is_empty(),
            problems: verdict.problems.clone(),
            warnings: said("warning"),
            notes: said("note"),
            skipped: said("skipped"),
            findings: verdict.findings.clone(),
        };
        emit(out, &document(&doc))?;
        return match verdict.problems.len() {
            0 => Ok(()),
            n => Err(Error::Problems(format!(
                "preflight found {n} problem{} in {target}; nothing was written or submitted",
                if n == 1 { "" } else { "s" }
            ))),
        };
    }
    for (kind, line) in &verdict.said {
        crate::say!("rlctl: {kind}: {line}");
    }
    let skipped = verdict.into_result(&plans)?;
    let note = match skipped {
        0 => String::new(),
        n => format!(" ({n} could not run here; see above)"),
    };
    let judge = match deep {
        Some(_) => ", SkyRL's own validate_cfg included",
        None => "",
    };
    emit(
        out,
        &format!("{target}: every preflight check passed{judge}{note}\n"),
    )
}

/// `check --json`: the verdict, its lines as the text says them, and every finding typed.
#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct Checked {
    pub target: String,
    pub cluster: String,
    pub shipped: bool,
    pub passed: bool,
    pub problems: Vec<String>,
    pub warnings: Vec<String>,
    pub notes: Vec<String>,
    pub skipped: Vec<String>,
    /// Every finding, with its stable `code` (the check family) and level.
    pub findings: Vec<Found>,
}

/// `rlctl render`: the two scripts, into a folder or on stdout.
pub fn render(session: &Session, render: &RenderArgs, out: &mut dyn Write) -> Result<()> {
    let (name, args) = (render.name.as_str(), &render.plan);
    let cluster = session.cluster()?;
    let selection = session.library.select(name, Want::Target)?;
    let (plan, _) = checked_plan(session, &cluster, &selection, args, None)?;
    let Some(dir) = render.out.as_deref() else {
        return print_files(out, &render_plan(&plan)?);
    };
    if dir.as_str().is_empty() {
        return Err(Error::BadFlag {
            flag: "--out",
            value: String::new(),
            reason: "name a folder to write the scripts into, or leave --out out to print them"
                .into(),
        });
    }
    // The folder is the run folder: `sbatch DIR/sbatch.sh` then runs DIR/run.sh and logs into
    // DIR. Absolute, since the job starts wherever sbatch was called from. Preflight judged the
    // plan as `launch` would place it: DIR, the user's own choice, holds only scripts and logs,
    // and the checkpoint folders are the same.
    let options = PlanOptions {
        run_dir: Some(absolute(dir)?),
        ..plan_options(args)
    };
    let plan = session.plan_with(&cluster, &selection, &options, &args.overrides)?;
    let files = render_plan(&plan)?;
    // A recorded run folder holds the scripts its job reads when it starts: never replaced.
    let _turn = Turn::if_exists(&cluster.storage.run_root)?;
    let folder = Folder::of(&plan.paths.run_dir);
    let ledger = session.ledger()?;
    // Streamed: only the record found is kept.
    let mut recorded = None;
    ledger.each_record(
        |_| true,
        |r| {
            if recorded.is_none() && Folder::of(&r.run_dir).is(&folder) {
                recorded = Some(r);
            }
        },
    )?;
    if let Some(record) = recorded {
        return Err(Error::BadFlag {
            flag: "--out",
            value: dir.to_string(),
            reason: format!(
                "`{}` is the run folder of job {} of {}, whose job reads its scripts from there; render into \
                 another folder",
                folder.path,
                record.job_id,
                record.run()
            ),
        });
    }
    write_into(&files, out)
}

/// `dir` from the current folder, lexically (it may not exist yet).
fn absolute(dir: &Utf8Path) -> Result<Utf8PathBuf> {
    let here = std::env::current_dir().map_err(|e| Error::io("read", Utf8Path::new("."), e))?;
    let here = Utf8PathBuf::try_from(here).map_err(|e| Error::Unsupported(e.to_string()))?;
    let mut path = Utf8PathBuf::new();
    for part in here.join(dir).components() {
        match part {
            Utf8Component::CurDir => {}
            Utf8Component::ParentDir => {
                path.pop();
            }
            other => path.push(other),
        }
    }
    Ok(path)
}

/// The plan of a preset or cell, through preflight; with the number of checks skipped here.
fn checked_plan(
    session: &Session,
    cluster: &Cluster,
    selection: &Selection,
    args: &PlanArgs,
    deep: Option<Duration>,
) -> Result<(Plan, usize)> {
    let plan = session.plan(cluster, selection, args)?;
    let skipped = preflight(
        &session.library,
        cluster,
        &args.allow,
        std::slice::from_ref(&plan),
        deep,
    )?;
    Ok((plan, skipped))
}

/// Writes each file at its own path, in the plan's run folder.
fn write_into(files: &[RenderedFile], out: &mut dyn Write) -> Result<()> {
    for file in files {
        let dir = file.path.parent().expect("scripts are in the run folder");
        std::fs::create_dir_all(dir).map_err(|e| Error::io("create", dir, e))?;
        write_atomic(&file.path, &file.text, 0o755)?;
        emit(out, &format!("{}\n", file.path))?;
    }
    Ok(())
}
