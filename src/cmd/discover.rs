//! `rlctl init NAME --discover`: a new cluster profile drafted from this login node's SLURM,
//! container program and network (src/preset/discover/), each value with where it came from.

use super::Session;
use super::init::{apart, bad, how_to_use, profile_target, root};
use crate::cli::InitArgs;
use crate::error::{Error, Result};
use crate::preset::cluster::{Cluster, ProfileFile};
use crate::preset::discover::draft::{Facts, Wishes, draft};
use crate::preset::discover::{Programs, Sourced, ask, host, sacctmgr, scontrol, sinfo};
use crate::util::fs::write_atomic;
use crate::util::names::{PLAIN_WORD, is_plain_word};
use crate::util::out::emit;
use std::io::Write;
use std::path::PathBuf;

/// Where the host's files are read from (`/sys/class/net`, `/proc/net/route`): `/`, or a
/// stand-in folder in tests.
const HOST_ROOT: &str = "RLCTL_DISCOVER_ROOT";

pub fn run(session: &Session, request: &InitArgs, out: &mut dyn Write) -> Result<()> {
    let name = &request.profile;
    if !is_plain_word(name) {
        return Err(bad("CLUSTER", name, PLAIN_WORD));
    }
    for (flag, value) in [
        ("--account", &request.account),
        ("--partition", &request.partition),
    ] {
        if let Some(v) = value.as_deref().filter(|v| !is_plain_word(v)) {
            return Err(bad(flag, v, PLAIN_WORD));
        }
    }
    let (dir, target) = profile_target(
        session,
        name,
        request.force,
        "to draft it again (your edits to it are lost)",
    )?;
    let wishes = Wishes {
        name: name.clone(),
        account: request.account.clone(),
        partition: request.partition.clone(),
        work: folder("--work", &request.work, &["WORK"], "rlctl_work")?,
        scratch: folder(
            "--scratch",
            &request.scratch,
            &["FAST", "SCRATCH"],
            "rlctl_scratch",
        )?,
    };
    apart(&wishes.work.value, &wishes.scratch.value)?;
    let programs = Programs {
        sinfo: request.programs.sinfo.clone(),
        scontrol: request.programs.scontrol.clone(),
        sacctmgr: request.programs.sacctmgr.clone(),
    };
    let facts = read(&programs)?;
    let drafted = draft(&facts, &wishes).map_err(Error::Unsupported)?;
    // What is written must load as every command will load it; where it does not, the error
    // names the draft, not a file that was never written.
    let unwritten = format!("the draft of {target} (not written)");
    let profile: ProfileFile = toml::from_str(&drafted.text)
        .map_err(|e| crate::preset::syntax(&unwritten, &drafted.text, e))?;
    Cluster::resolve(name, &unwritten, profile)?;
    let parent = target.parent().expect("a file in clusters/");
    std::fs::create_dir_all(parent).map_err(|e| Error::io("create", parent, e))?;
    write_atomic(&target, &drafted.text, 0o644)?;
    let mut report = format!(
        "wrote {target}: a draft of partition {} with {} discovered value{} and {} guess{} to confirm\n",
        drafted.partition,
        drafted.discovered,
        if drafted.discovered == 1 { "" } else { "s" },
        drafted.guesses.len(),
        if drafted.guesses.len() == 1 { "" } else { "es" },
    );
    for why in &facts.unread {
        report.push_str(&format!(
            "  could not read: {why}; its values are guesses\n"
        ));
    }
    if let Err(why) = &facts.qos {
        report.push_str(&format!("  no QOS from accounting: {why}\n"));
    }
    for note in &drafted.notes {
        report.push_str(&format!("  passed over: {note}\n"));
    }
    for key in &drafted.guesses {
        report.push_str(&format!("  guess: {key}\n"));
    }
    report.push_str(&how_to_use(session, dir, name));
    report.push_str(&format!(
        "next: check each value under a `# guess: confirm` line in {target} and delete the line; \
         `rlctl doctor --cluster {name}` lists the guesses left and checks the site\n"
    ));
    emit(out, &report)
}

/// A root folder: the flag's, else the site's variable's (as plain `init` picks it), else a
/// guess under $HOME.
fn folder(
    flag: &'static str,
    given: &Option<String>,
    site: &[&str],
    fallback: &str,
) -> Result<Sourced<String>> {
    match root(flag, given, site) {
        Ok((dir, from)) if from.is_empty() => Ok(Sourced::given(dir, flag)),
        Ok((dir, from)) => Ok(Sourced::given(
            dir,
            from.trim_start_matches(", from ").to_owned(),
        )),
        Err(e) if given.is_some() => Err(e),
        Err(_) => {
            let home = std::env::var("HOME").unwrap_or_default();
            let (dir, _) = root(
                flag,
                &Some(format!("{}/{fallback}", home.trim_end_matches('/'))),
                &[],
            )
            .map_err(|_| {
                Error::Unsupported(format!(
                    "pass {flag} DIR: {} not set here and $HOME is no usable folder",
                    site.iter()
                        .map(|v| format!("${v}"))
                        .collect::<Vec<_>>()
                        .join(" and ")
                ))
            })?;
            let vars: Vec<String> = site.iter().map(|v| format!("${v}")).collect();
            Ok(Sourced::guess(
                dir,
                format!(
                    "{} not set and no {flag}: your folder on the {} file system, visible on compute nodes",
                    vars.join(" and "),
                    if flag == "--work" {
                        "work (project)"
                    } else {
                        "scratch"
                    }
                ),
            ))
        }
    }
}

/// Reads SLURM and the host. Each program is bounded in time and bytes ([`ask`]); one that
/// fails, hangs or floods leaves its values to guesses, and the draft is refused only when no
/// SLURM program answered at all (nothing to draft from) or sinfo lists no partition.
fn read(p: &Programs) -> Result<Facts> {
    let mut unread = Vec::new();
    let mut answer = |program: &str, args: &[&str]| {
        ask(program, args)
            .map_err(|why| unread.push(why.clone()))
            .ok()
    };
    let listed = answer(&p.sinfo, sinfo::ARGS).map(|text| sinfo::parse(&text));
    let limits =
        answer(&p.scontrol, scontrol::PARTITION_ARGS).map(|text| scontrol::parse_partitions(&text));
    let nodes = answer(&p.scontrol, scontrol::NODE_ARGS).map(|text| scontrol::parse_nodes(&text));
    if listed.is_none() && limits.is_none() && nodes.is_none() {
        return Err(Error::Unsupported(format!(
            "{}: run this on a login node of a SLURM cluster (SLURM_CONF or /etc/slurm/slurm.conf must name its controller), \
             or point RLCTL_SINFO (--sinfo) and RLCTL_SCONTROL (--scontrol) at the programs",
            unread.join("; ")
        )));
    }
    if listed.as_ref().is_some_and(Vec::is_empty) {
        return Err(Error::Unsupported(format!(
            "`{}` lists no partition: this SLURM has none you may use",
            sinfo::shown(&p.sinfo)
        )));
    }
    let limits = limits.unwrap_or_default();
    let (partitions, partitions_said, default_mark) = match listed {
        Some(listed) => (listed, sinfo::shown(&p.sinfo), "marked `*`"),
        None => (
            limits.iter().map(scontrol::Partition::listed).collect(),
            format!(
                "{} {}",
                sinfo::base(&p.scontrol),
                scontrol::PARTITION_ARGS.join(" ")
            ),
            "Default=YES",
        ),
    };
    let nodes = nodes.ok_or_else(|| unread.last().cloned().unwrap_or_default());
    let qos = ask(&p.sacctmgr, sacctmgr::QOS_ARGS).map(|text| sacctmgr::parse_qos(&text));
    let assoc = match std::env::var("USER").ok().filter(|u| is_plain_word(u)) {
        Some(user) => {
            let args = sacctmgr::assoc_args(&user);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            ask(&p.sacctmgr, &args).map(|text| sacctmgr::parse_assoc(&text))
        }
        None => Err("$USER is not set".to_owned()),
    };
    let root = PathBuf::from(std::env::var(HOST_ROOT).unwrap_or_else(|_| "/".to_owned()));
    let path = std::env::var("PATH").unwrap_or_default();
    Ok(Facts {
        sinfo: p.sinfo.clone(),
        scontrol: p.scontrol.clone(),
        sacctmgr: p.sacctmgr.clone(),
        partitions,
        partitions_said,
        default_mark,
        limits,
        nodes,
        unread,
        qos,
        assoc,
        container: host::container(&path),
        gcc: host::on_path(&path, &["gcc"]).map(|(_, file)| file),
        nic: host::nic(&root),
        host: host::hostname(&root),
    })
}
