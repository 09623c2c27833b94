//! `rlctl stage`: start (detached), print (`--dry-run`) or report (`--status`) the staging of
//! what a preset's, cell's or grid's plans read offline.

use super::Session;
use crate::check::preflight_schema;
use crate::cli::{StageArgs, StageMode as Mode};
use crate::error::{Error, Result};
use crate::plan::Plan;
use crate::preset::cluster::Cluster;
use crate::preset::{Selection, Want};
use crate::stage::detach::{self, Attempt, Files};
use crate::stage::{Item, Kind, OnDisk, StageCommand, items};
use crate::util::out::emit;
use crate::util::turn::Turn;
use std::io::Write;

pub fn run(session: &Session, stage: &StageArgs, out: &mut dyn Write) -> Result<()> {
    let (name, grid) = (stage.name.as_deref(), stage.all.as_deref());
    // Staging downloads into the profile's folders: the shipped profile's are its author's.
    let cluster = match stage.mode() {
        Mode::Start => session.yours("stage")?,
        _ => session.cluster()?,
    };
    let targets: Vec<Selection> = match (name, grid) {
        (Some(name), _) => vec![session.library.select(name, Want::Target)?],
        (None, Some(grid)) => session.library.select_grid(grid)?,
        (None, None) => unreachable!("clap requires a name or --all"),
    };
    let args = stage.plan();
    let plans = (targets.iter())
        .map(|t| session.plan(&cluster, t, &args))
        .collect::<Result<Vec<Plan>>>()?;
    // What is staged for a misspelt key is not what the job reads.
    preflight_schema(&session.library, &cluster, &stage.allow, &plans)?;
    let schema = session.library.trainer_schema(&cluster)?;
    let items = items(&plans, &cluster, &schema);
    // What the lines name, and how the hints say it again.
    let what = Named {
        label: name.or(grid).unwrap_or_default().to_owned(),
        args: match (name, grid) {
            (Some(name), _) => name.to_owned(),
            (None, grid) => format!("--all {}", grid.unwrap_or_default()),
        },
    };
    let what = &what;
    match stage.mode() {
        Mode::DryRun => dry_run(&items, out),
        Mode::Status => status(&items, &cluster, what, out),
        Mode::Start => start(&items, &cluster, what, out),
    }
}

/// The preset, cell or grid staged: `label` in lines, `args` in the commands they suggest.
struct Named {
    label: String,
    args: String,
}

/// The commands, one per line; what is staged or has no command, as `#` comments, so the
/// output is still a shell script.
fn dry_run(items: &[Item], out: &mut dyn Write) -> Result<()> {
    let mut text = String::new();
    for item in items {
        match (item.on_disk(), &item.command) {
            (OnDisk::Staged(dir), _) => {
                text.push_str(&format!(
                    "# staged: {} {} ({dir})\n",
                    item.kind.as_str(),
                    item.label
                ));
            }
            (OnDisk::Missing(_), Ok(command)) => text.push_str(&format!("{}\n", command.line())),
            (OnDisk::Missing(missing), Err(why)) => text.push_str(&format!(
                "# {} {}: {missing}; {why}\n",
                item.kind.as_str(),
                item.label
            )),
        }
    }
    emit(out, &text)
}

/// One line per item: staged, running, failed or missing; exits 1 until all is staged.
fn status(items: &[Item], cluster: &Cluster, what: &Named, out: &mut dyn Write) -> Result<()> {
    let mut text = String::new();
    let mut pending = 0;
    for item in items {
        let files = Files::of(&cluster.storage.run_root, &item.id);
        let (state, detail) = match (item.on_disk(), detach::attempt(&files)) {
            (OnDisk::Staged(dir), _) => ("staged", dir.to_string()),
            (OnDisk::Missing(_), Attempt::Running(pid)) => {
                ("running", format!("pid {pid}, log {}", files.log))
            }
            (OnDisk::Missing(missing), Attempt::Ended(rc)) => (
                "failed",
                format!(
                    "{missing}; the last attempt {}: see {}",
                    match rc {
                        Some(rc) => format!("exited {rc}"),
                        None => "was killed".to_owned(),
                    },
                    files.log
                ),
            ),
            (OnDisk::Missing(missing), Attempt::None) => ("missing", missing),
        };
        if state != "staged" {
            pending += 1;
        }
        text.push_str(&format!(
            "{:<5} {:<32} {state:<8} {detail}\n",
            item.kind.as_str(),
            item.label
        ));
    }
    emit(out, &text)?;
    match pending {
        0 => emit(
            out,
            &format!("{}: all {} staged\n", what.label, items.len()),
        ),
        n => Err(Error::Problems(format!(
            "{}: {n} of {} not staged yet; `rlctl stage {}` starts what is missing",
            what.label,
            items.len(),
            what.args
        ))),
    }
}

/// Starts every missing item that is not running already; reports each.
fn start(items: &[Item], cluster: &Cluster, what: &Named, out: &mut dyn Write) -> Result<()> {
    let mut problems = Vec::new();
    let mut started = 0;
    // Held from the look at the disk and the pid files to the new pid files: another `stage`
    // waits here, then finds the item running (or staged).
    let _turn = Turn::take(&cluster.storage.run_root)?;
    for item in items {
        let files = Files::of(&cluster.storage.run_root, &item.id);
        let head = format!("{} {}", item.kind.as_str(), item.label);
        let line = match (item.on_disk(), detach::attempt(&files), &item.command) {
            (OnDisk::Staged(dir), _, _) => format!("{head}: staged ({dir})"),
            (_, Attempt::Running(pid), _) => {
                format!(
                    "{head}: already being staged by pid {pid} (log {})",
                    files.log
                )
            }
            (OnDisk::Missing(missing), _, Err(why)) => {
                problems.push(format!("{head}: {missing}; {why}"));
                continue;
            }
            (OnDisk::Missing(_), _, Ok(command)) => {
                if let Err(why) = runnable(item, command, cluster) {
                    problems.push(format!("{head}: {why}"));
                    continue;
                }
                let pid = detach::start(command, &files)?;
                started += 1;
                format!("{head}: started (pid {pid}), log {}", files.log)
            }
        };
        emit(out, &format!("{line}\n"))?;
    }
    if started > 0 {
        emit(
            out,
            &format!(
                "{started} started, detached; `rlctl stage {} --status` follows them\n",
                what.args
            ),
        )?;
    } else if problems.is_empty() {
        emit(out, &format!("{}: nothing to start\n", what.label))?;
    }
    if problems.is_empty() {
        return Ok(());
    }
    for p in &problems {
        crate::say!("rlctl: {p}");
    }
    Err(Error::Problems(format!(
        "{} item{} could not be started (see above)",
        problems.len(),
        if problems.len() == 1 { "" } else { "s" }
    )))
}

/// The program, and for a dataset the checkout's script, exist: a detached command that fails
/// at once would say so only in its log.
fn runnable(item: &Item, command: &StageCommand, cluster: &Cluster) -> Result<(), String> {
    let program = &command.argv[0];
    if detach::find_program(program).is_none() {
        let (field, fix) = match item.kind {
            Kind::Model => ("hf", "`pip install -U huggingface_hub` puts `hf` on PATH"),
            Kind::Dataset => ("stage_python", "build the venv first"),
        };
        return Err(format!(
            "cannot run `{program}`: {fix}, or name the program in the profile's [software] {field}"
        ));
    }
    if let (Some(cwd), Kind::Dataset) = (&command.cwd, item.kind) {
        // The script the command runs, as `stage` built it for the plan's flavour.
        let script = cwd.join(&command.argv[1]);
        if !script.is_file() {
            return Err(format!(
                "the SkyRL checkout has no `{script}` (software.skyrl = `{}`): check out SkyRL there, or stage the parquet files by hand",
                cluster.software.skyrl
            ));
        }
    }
    Ok(())
}
