//! The draft's `[slurm]` values that accounting decides: the account to charge, and the QOS
//! entries this user may use, each held to the partition's own limits.

use super::{Facts, Wishes, shown};
use crate::preset::discover::{Sourced, sacctmgr, scontrol, sinfo};
use crate::preset::walltime::Walltime;
use crate::util::names::is_plain_word;

/// The account to charge: the one asked for, else the one accounting lists for this user
/// here, else a guess.
pub(super) fn account(facts: &Facts, wishes: &Wishes, partition: &str) -> Sourced<String> {
    if let Some(account) = &wishes.account {
        return Sourced::given(account.clone(), "--account");
    }
    let said = format!(
        "{} {}",
        sinfo::base(&facts.sacctmgr),
        "show assoc where user=$USER"
    );
    let mut accounts: Vec<&str> = match &facts.assoc {
        Ok(assoc) => (assoc.iter())
            .filter(|a| a.partition.is_empty() || a.partition == partition)
            .map(|a| a.account.as_str())
            .filter(|a| is_plain_word(a))
            .collect(),
        Err(why) => {
            return Sourced::guess(
                "ACCOUNT".to_owned(),
                format!("give your SLURM account: {why}"),
            );
        }
    };
    accounts.dedup();
    match accounts.as_slice() {
        [] => Sourced::guess(
            "ACCOUNT".to_owned(),
            format!("`{said}` lists no account of yours: give yours"),
        ),
        [one] => Sourced::discovered((*one).to_owned(), format!("`{said}`: your one account")),
        [first, ..] => Sourced::guess(
            (*first).to_owned(),
            format!(
                "`{said}` lists {}: choose the one to charge",
                accounts.join(", ")
            ),
        ),
    }
}

/// One `[[slurm.qos]]` entry.
pub(super) struct QosEntry {
    pub(super) name: Sourced<String>,
    pub(super) max_wall: Sourced<String>,
    pub(super) max_nodes: Sourced<u32>,
    pub(super) max_submit: Option<Sourced<u32>>,
}

/// The `[[slurm.qos]]` entries: the QOS accounting lists that this user may use here, held to
/// the partition's limits; one guessed `normal` where none can be listed. A frozen QOS
/// (`MaxSubmitPU=0`: no job of the user gets in) is passed over, and said so in `notes`.
pub(super) fn qos(
    facts: &Facts,
    wishes: &Wishes,
    partition: &str,
    limits: Option<&scontrol::Partition>,
    notes: &mut Vec<String>,
) -> Vec<QosEntry> {
    let held = PartitionLimits::of(facts, partition, limits);
    let qos_cmd = shown(&facts.sacctmgr, sacctmgr::QOS_ARGS);
    let listed = match &facts.qos {
        Ok(list) => list,
        // Without accounting SLURM ignores --qos: one entry carries the partition's limits.
        Err(why) => {
            return vec![held.lone_entry(format!(
                "no QOS list: {why}; without accounting SLURM ignores --qos"
            ))];
        }
    };
    let allowed = allowed_qos(facts, wishes, partition);
    let yours: Vec<&sacctmgr::Qos> = (listed.iter())
        .filter(|q| is_plain_word(&q.name))
        .filter(|q| {
            allowed
                .as_ref()
                .is_none_or(|a| a.contains(&q.name.as_str()))
        })
        .collect();
    let (frozen, open): (Vec<&sacctmgr::Qos>, Vec<&sacctmgr::Qos>) =
        yours.into_iter().partition(|q| q.max_submit == Some(0));
    for q in &frozen {
        notes.push(format!(
            "QOS {}: `{qos_cmd}` says MaxSubmitPU=0, so no job of yours gets in under it; add it by hand once the site opens it",
            q.name
        ));
    }
    if open.is_empty() {
        let why = match frozen.is_empty() {
            true => format!("`{qos_cmd}` lists no QOS you may use"),
            false => format!("every QOS you may use is frozen (MaxSubmitPU=0 in `{qos_cmd}`)"),
        };
        return vec![held.lone_entry(why)];
    }
    (open.into_iter())
        .map(|q| held.entry(q, &qos_cmd, allowed.is_some()))
        .collect()
}

/// The QOS this user may use on this account and partition, where accounting says.
fn allowed_qos<'a>(facts: &'a Facts, wishes: &Wishes, partition: &str) -> Option<Vec<&'a str>> {
    let assoc = facts.assoc.as_ref().ok()?;
    let mut names: Vec<&str> = (assoc.iter())
        .filter(|a| a.partition.is_empty() || a.partition == partition)
        .filter(|a| wishes.account.as_ref().is_none_or(|w| *w == a.account))
        .flat_map(|a| a.qos.iter().map(String::as_str))
        .collect();
    names.sort();
    names.dedup();
    (!names.is_empty()).then_some(names)
}

/// What the partition itself limits, which every QOS entry is held to or falls back on.
struct PartitionLimits<'a> {
    partition: &'a str,
    /// `scontrol show partition`, as the comments cite it.
    scontrol_cmd: String,
    wall: Option<Walltime>,
    /// Nodes a job may have, and where that was read (a guess where scontrol did not say).
    nodes: Sourced<u32>,
}

impl<'a> PartitionLimits<'a> {
    fn of(facts: &Facts, partition: &'a str, limits: Option<&scontrol::Partition>) -> Self {
        let scontrol_cmd = shown(&facts.scontrol, scontrol::PARTITION_ARGS);
        let nodes = match limits {
            Some(l) => {
                let n = l.max_nodes.unwrap_or(l.total_nodes).max(1);
                let said = match l.max_nodes {
                    Some(_) => format!("`{scontrol_cmd}`: {partition} MaxNodes={n}"),
                    None => {
                        format!("`{scontrol_cmd}`: {partition} MaxNodes=UNLIMITED, TotalNodes={n}")
                    }
                };
                Sourced::discovered(n, said)
            }
            None => Sourced::guess(
                1,
                format!(
                    "`{scontrol_cmd}` said nothing of {partition}: give the nodes a job may have"
                ),
            ),
        };
        PartitionLimits {
            partition,
            wall: limits.and_then(|l| l.max_wall()),
            scontrol_cmd,
            nodes,
        }
    }

    /// An entry's wall limit: its QOS's (read where `qos_said` says), unless the partition's is
    /// shorter or the QOS sets none.
    fn wall(&self, qos_wall: Option<Walltime>, qos_said: String) -> Sourced<String> {
        let (scontrol_cmd, partition) = (&self.scontrol_cmd, self.partition);
        match (qos_wall, self.wall) {
            (Some(q), Some(p)) if p < q => Sourced::discovered(
                p.to_string(),
                format!(
                    "`{scontrol_cmd}`: {partition} MaxTime={p}, shorter than the QOS's MaxWall={q}"
                ),
            ),
            (Some(q), _) => Sourced::discovered(q.to_string(), format!("{qos_said}: MaxWall={q}")),
            (None, Some(p)) => Sourced::discovered(
                p.to_string(),
                format!("`{scontrol_cmd}`: {partition} MaxTime={p} (the QOS sets no MaxWall)"),
            ),
            (None, None) => Sourced::guess(
                "1-00:00:00".to_owned(),
                "neither the QOS nor the partition sets a wall limit; give the longest job the site runs",
            ),
        }
    }

    /// The entry of one QOS `sacctmgr` lists (`qos_cmd`); `yours`: accounting says this user
    /// may use it.
    fn entry(&self, q: &sacctmgr::Qos, qos_cmd: &str, yours: bool) -> QosEntry {
        let said = format!("`{qos_cmd}`: {}", q.name);
        let max_nodes = match (q.max_nodes_per_job, q.max_nodes_per_user) {
            (Some(n), _) => Sourced::discovered(n, format!("{said}: MaxTRES=node={n}")),
            (None, Some(n)) => {
                Sourced::discovered(n, format!("{said}: MaxTRESPU=node={n} (per user)"))
            }
            (None, None) => self.nodes.clone(),
        };
        QosEntry {
            name: Sourced::discovered(
                q.name.clone(),
                match yours {
                    true => format!("{said} (yours: sacctmgr show assoc)"),
                    false => said.clone(),
                },
            ),
            max_wall: self.wall(q.wall(), said.clone()),
            max_nodes,
            max_submit: q
                .max_submit
                .map(|n| Sourced::discovered(n, format!("{said}: MaxSubmitPU={n}"))),
        }
    }

    /// The one entry where no QOS can be listed (`why`): `normal`, guessed, with the
    /// partition's limits.
    fn lone_entry(&self, why: String) -> QosEntry {
        QosEntry {
            name: Sourced::guess("normal".to_owned(), why),
            max_wall: self.wall(None, String::new()),
            max_nodes: self.nodes.clone(),
            max_submit: None,
        }
    }
}
