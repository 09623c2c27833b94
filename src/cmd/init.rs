//! `rlctl init`: your own cluster profile, from the shipped one, with your account and folders;
//! only the `[vars]` the storage roots name and `slurm.account` change, comments stay.

use super::Session;
use crate::cli::InitArgs;
use crate::error::{Error, Result};
use crate::preset::cluster::{Cluster, ProfileFile, absolute};
use crate::preset::user_dir::Chosen;
use crate::util::fs::{Folder, write_atomic};
use crate::util::names::{PLAIN_WORD, is_env_name, is_plain_word};
use crate::util::out::emit;
use crate::util::toml_error;
use camino::Utf8Path;
use std::io::Write;

/// The first line of every profile init writes; a template starting with it loses it.
const HEADER: &str = "# Written by `rlctl init`";

/// Writes the profile `request` asks for, checks it loads, and says what it holds.
pub fn run(session: &Session, request: &InitArgs, out: &mut dyn Write) -> Result<()> {
    let name = &request.profile;
    if !is_plain_word(name) {
        return Err(bad("CLUSTER", name, PLAIN_WORD));
    }
    let (dir, target) = profile_target(
        session,
        name,
        request.force,
        "to write it again from the shipped profile",
    )?;
    let (from, template) = template(session, name)?;
    let (account, (work, work_from), (scratch, scratch_from)) = all_at_once(
        account(request),
        root("--work", &request.work, &["WORK"]),
        root("--scratch", &request.scratch, &["FAST", "SCRATCH"]),
    )?;
    apart(&work, &scratch)?;
    let (text, vars) = rewrite(&template, &from, name, &account, &work, &scratch)?;
    // What was written must load as every command will load it.
    let profile: ProfileFile =
        toml::from_str(&text).map_err(|e| crate::preset::syntax(target.as_str(), &text, e))?;
    let cluster = Cluster::resolve(name, target.as_str(), profile)?;
    let parent = target.parent().expect("a file in clusters/");
    std::fs::create_dir_all(parent).map_err(|e| Error::io("create", parent, e))?;
    write_atomic(&target, &text, 0o644)?;
    warn_about(&cluster);
    let mut report = format!("wrote {target} (from {from})\n");
    let rows = [
        ("account", account.clone()),
        ("work", format!("{work}  ([vars] {}{work_from})", vars.0)),
        (
            "scratch",
            format!("{scratch}  ([vars] {}{scratch_from})", vars.1),
        ),
        ("checkpoints", cluster.storage.checkpoint_root.to_string()),
        ("run folders", cluster.storage.run_root.to_string()),
        ("data", cluster.storage.data_root.to_string()),
        ("HF cache", cluster.storage.hf_home.to_string()),
        ("SkyRL", cluster.software.skyrl.to_string()),
        ("venv", cluster.software.venv.to_string()),
        ("gcc", cluster.software.gcc_bin.to_string()),
        ("container", cluster.container.image.to_string()),
    ];
    for (what, value) in rows {
        if !value.is_empty() {
            report.push_str(&format!("  {what:<12} {value}\n"));
        }
    }
    report.push_str(&how_to_use(session, dir, name));
    report.push_str("next: `rlctl doctor` checks the site; `rlctl stage PRESET` stages a preset's models and data\n");
    emit(out, &report)
}

/// The three values `init` needs, or one error that names every flag to pass: a newcomer
/// learns all that is missing from one try, not one flag a run.
fn all_at_once<A, B, C>(a: Result<A>, b: Result<B>, c: Result<C>) -> Result<(A, B, C)> {
    match (a, b, c) {
        (Ok(a), Ok(b), Ok(c)) => Ok((a, b, c)),
        (a, b, c) => {
            let mut errors: Vec<Error> =
                [a.err(), b.err(), c.err()].into_iter().flatten().collect();
            if errors.len() == 1 {
                return Err(errors.remove(0));
            }
            let lines: Vec<String> = errors.iter().map(ToString::to_string).collect();
            Err(Error::Unsupported(format!(
                "{} things to fix, all at once:\n  {}",
                lines.len(),
                lines.join("\n  ")
            )))
        }
    }
}

/// The profile `name` is written from, and where it comes from: the shipped one, else (a cluster
/// of your own) the one in the presets in use.
fn template(session: &Session, name: &str) -> Result<(String, String)> {
    match crate::preset::embedded(&format!("clusters/{name}.toml")) {
        Some(text) => Ok((
            format!("presets/clusters/{name}.toml (embedded)"),
            text.to_owned(),
        )),
        None => match session.library.source("clusters", name) {
            Some((file, text)) => Ok((file.to_owned(), text.to_owned())),
            None => Err(Error::unknown(
                "cluster",
                name,
                session.library.cluster_names(),
            )),
        },
    }
}

/// `--account`, required, and a word that fits on an `#SBATCH` line.
fn account(request: &InitArgs) -> Result<String> {
    match &request.account {
        Some(a) if is_plain_word(a) => Ok(a.clone()),
        Some(a) => {
            Err(bad(
                "--account",
                a,
                &format!(
                    "{PLAIN_WORD}; it is your SLURM account, as `sacctmgr -nP show assoc user=$USER format=account` lists it"
                ),
            ))
        }
        None => {
            Err(Error::Unsupported(
                "pass --account ACCOUNT: your SLURM account (`sacctmgr -nP show assoc user=$USER format=account` lists yours; `saldo -b` on CINECA)".into(),
            ))
        }
    }
}

/// The presets folder in use and the profile file `name` would be written to there; refused
/// when that file exists and `force` is not given (`again` says what --force would do).
pub(super) fn profile_target<'a>(
    session: &'a Session,
    name: &str,
    force: bool,
    again: &str,
) -> Result<(&'a Utf8Path, camino::Utf8PathBuf)> {
    let Some(dir) = session.presets.path.as_deref() else {
        return Err(Error::Unsupported(
            "no presets folder to write into: HOME (or XDG_CONFIG_HOME) is not an absolute path; pass --presets DIR".into(),
        ));
    };
    let target = dir.join("clusters").join(format!("{name}.toml"));
    if target.exists() && !force {
        return Err(Error::Unsupported(format!(
            "`{target}` exists already: pass --force {again}"
        )));
    }
    Ok((dir, target))
}

pub(super) fn bad(flag: &'static str, value: &str, reason: &str) -> Error {
    Error::BadFlag {
        flag,
        value: value.to_owned(),
        reason: reason.to_owned(),
    }
}

/// Refuses a work folder inside scratch: checkpoints must never go on scratch. Judged where
/// they really are: a work folder that is a link into scratch is scratch.
pub(super) fn apart(work: &str, scratch: &str) -> Result<()> {
    let (real_work, real_scratch) = (Folder::of(work.as_ref()), Folder::of(scratch.as_ref()));
    if real_work.is_within(&real_scratch) {
        let real = |given: &str, folder: &Folder| match folder.path == given {
            true => format!("`{given}`"),
            false => format!("`{given}` (really `{}`)", folder.path),
        };
        return Err(bad(
            "--work",
            work,
            &format!(
                "{} is inside --scratch {}, and checkpoints must never go on scratch: give your folder on the work file system",
                real(work, &real_work),
                real(scratch, &real_scratch)
            ),
        ));
    }
    Ok(())
}

/// What the report says last: where commands find the profile, and how to choose it.
pub(super) fn how_to_use(session: &Session, dir: &Utf8Path, name: &str) -> String {
    let mut text = match session.presets.chosen {
        Chosen::Default => format!("every rlctl command reads it from your presets folder {dir}\n"),
        Chosen::Given => format!(
            "pass --presets {dir} (or set RLCTL_PRESETS) to every command that should use it\n"
        ),
    };
    if session.cluster_name() != name {
        text.push_str(&format!(
            "use it with --cluster {name} (or RLCTL_CLUSTER={name})\n"
        ));
    }
    text
}

/// A root folder: the flag's, else the first site variable set (`$WORK` -> `$WORK/$USER`: the
/// site's variables name the project's area, shared by its users). Returns where it came from.
pub(super) fn root(
    flag: &'static str,
    given: &Option<String>,
    site: &[&str],
) -> Result<(String, String)> {
    if let Some(dir) = given {
        return Ok((folder(flag, dir)?, String::new()));
    }
    for variable in site {
        let Some(value) = std::env::var(variable).ok().filter(|v| !v.is_empty()) else {
            continue;
        };
        let user = std::env::var("USER").ok().filter(|u| is_plain_word(u));
        let (dir, from) = match user {
            Some(user) if Utf8Path::new(&value).file_name() != Some(user.as_str()) => (
                format!("{}/{user}", value.trim_end_matches('/')),
                format!(", from ${variable}/$USER"),
            ),
            _ => (value, format!(", from ${variable}")),
        };
        return Ok((folder(flag, &dir)?, from));
    }
    let names: Vec<String> = site.iter().map(|v| format!("${v}")).collect();
    Err(Error::Unsupported(format!(
        "pass {flag} DIR: {} {} not set here, so rlctl cannot pick your folder",
        names.join(" and "),
        if site.len() == 1 { "is" } else { "are" }
    )))
}

/// An absolute folder path that every script, `#SBATCH --output`, `--bind` and `--env` reads as
/// one word.
fn folder(flag: &'static str, text: &str) -> Result<String> {
    if text.starts_with('~') {
        return Err(bad(
            flag,
            text,
            "`~` is not expanded here: write the full path, e.g. $HOME/...",
        ));
    }
    if !text.starts_with('/') {
        return Err(bad(
            flag,
            text,
            "it must be an absolute path: the job runs in other folders on other nodes",
        ));
    }
    if let Some(c) = text
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || "/_.+@-".contains(*c)))
    {
        return Err(bad(
            flag,
            text,
            &format!(
                "{c:?} would break the job scripts (the shell, SLURM's --output, singularity's --bind and --env): choose a folder whose path has only letters, digits and `/_.+@-`"
            ),
        ));
    }
    let normal = absolute(text).expect("checked absolute");
    if normal.as_str() == "/" {
        return Err(bad(flag, text, "not the root folder: give your own folder"));
    }
    Ok(normal.into_string())
}

/// The template with the root variables and the account set; returns the text and the names
/// of the work and scratch variables.
fn rewrite(
    template: &str,
    from: &str,
    name: &str,
    account: &str,
    work: &str,
    scratch: &str,
) -> Result<(String, (String, String))> {
    let invalid = |message: String| Error::PresetInvalid {
        file: from.to_owned(),
        message,
    };
    let body = match template.split_once('\n') {
        Some((first, rest)) if first.starts_with(HEADER) => rest,
        _ => template,
    };
    let mut doc: toml_edit::DocumentMut =
        body.parse()
            .map_err(|e: toml_edit::TomlError| Error::PresetSyntax {
                file: from.to_owned(),
                message: toml_error::describe(body, e.span(), e.message()),
            })?;
    // `storage.work = "${WORK}"`: the variable every path on that root is written with.
    let var_of = |field: &str| -> Result<String> {
        let text = doc["storage"][field].as_str().unwrap_or_default();
        match text.strip_prefix("${").and_then(|t| t.strip_suffix('}')) {
            Some(var) if is_env_name(var) => Ok(var.to_owned()),
            _ => Err(invalid(format!(
                "storage.{field} = `{text}`: init sets the roots through [vars]; write it as `${{NAME}}` with NAME under [vars], and the paths on it as `${{NAME}}/...`"
            ))),
        }
    };
    let (work_var, scratch_var) = (var_of("work")?, var_of("scratch")?);
    if !doc.contains_table("vars") {
        doc["vars"] = toml_edit::table();
    }
    doc["vars"][work_var.as_str()] = toml_edit::value(work);
    doc["vars"][scratch_var.as_str()] = toml_edit::value(scratch);
    doc["slurm"]["account"] = toml_edit::value(account);
    let header = format!(
        "{HEADER} from {from}, with your account and folders;\n# `rlctl init {name} --force ...` writes it again.\n"
    );
    Ok((header + &doc.to_string(), (work_var, scratch_var)))
}

/// What is written but will not work as it stands: a root the container does not bind.
fn warn_about(cluster: &Cluster) {
    let container = &cluster.container;
    for root in [&cluster.storage.work, &cluster.storage.scratch] {
        let bound = container.binds.iter().any(|b| root.starts_with(b));
        if container.runtime.in_container() && !bound {
            let binds: Vec<&str> = cluster.container.binds.iter().map(|b| b.as_str()).collect();
            crate::say!(
                "rlctl: warning: `{root}` is under none of the container's binds ({}): the job cannot see it; add it to container.binds",
                binds.join(", ")
            );
        }
        if !root.exists() {
            crate::say!("rlctl: note: `{root}` does not exist yet");
        }
    }
}
