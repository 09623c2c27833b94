//! `sacctmgr show qos` (wall limits, nodes per job, jobs a user may submit) and `sacctmgr show
//! assoc` (the accounts and QOS this user may use): accounting's answer, where the site runs
//! slurmdbd.

use crate::preset::walltime::Walltime;
use crate::slurm::sacct::tres_count;

#[derive(Debug, Clone, PartialEq)]
pub struct Qos {
    pub name: String,
    /// `MaxWall` as printed; empty for none.
    pub max_wall: String,
    /// `node=N` of `MaxTRES` (per job).
    pub max_nodes_per_job: Option<u32>,
    /// `node=N` of `MaxTRESPU` (per user, all jobs together).
    pub max_nodes_per_user: Option<u32>,
    /// `MaxSubmitPU`: jobs one user may have pending or running.
    pub max_submit: Option<u32>,
}

impl Qos {
    pub fn wall(&self) -> Option<Walltime> {
        Walltime::of_slurm(&self.max_wall)
    }
}

/// One association of the user: an account, maybe limited to a partition, and its QOS.
#[derive(Debug, Clone, PartialEq)]
pub struct Assoc {
    pub account: String,
    pub partition: String,
    pub qos: Vec<String>,
}

pub const QOS_ARGS: &[&str] = &[
    "--noheader",
    "--parsable2",
    "show",
    "qos",
    "format=Name,MaxWall,MaxTRES,MaxTRESPU,MaxSubmitPU",
];

/// The user's associations: `show assoc where user=USER`.
pub fn assoc_args(user: &str) -> Vec<String> {
    ["--noheader", "--parsable2", "show", "assoc", "where"]
        .iter()
        .map(|s| (*s).to_owned())
        .chain([
            format!("user={user}"),
            "format=Account,Partition,QOS".to_owned(),
        ])
        .collect()
}

pub fn parse_qos(stdout: &str) -> Vec<Qos> {
    (stdout.lines())
        .filter_map(|line| {
            let f: Vec<&str> = line.trim().split('|').collect();
            let [name, wall, tres, tres_pu, submit] = f.as_slice() else {
                return None;
            };
            (!name.is_empty()).then(|| Qos {
                name: (*name).to_owned(),
                max_wall: (*wall).to_owned(),
                max_nodes_per_job: tres_count(tres, "node"),
                max_nodes_per_user: tres_count(tres_pu, "node"),
                max_submit: submit.parse().ok(),
            })
        })
        .collect()
}

pub fn parse_assoc(stdout: &str) -> Vec<Assoc> {
    (stdout.lines())
        .filter_map(|line| {
            let f: Vec<&str> = line.trim().split('|').collect();
            let [account, partition, qos] = f.as_slice() else {
                return None;
            };
            (!account.is_empty()).then(|| Assoc {
                account: (*account).to_owned(),
                partition: (*partition).to_owned(),
                qos: (qos.split(','))
                    .filter(|q| !q.is_empty())
                    .map(str::to_owned)
                    .collect(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qos_and_assoc_lines() {
        let q = parse_qos(
            "normal|23:59:00|||\nboost_qos_dbg|00:30:00|node=2||2\nlong||cpu=64|node=8|\n",
        );
        assert_eq!(q.len(), 3);
        assert_eq!(q[1].max_nodes_per_job, Some(2));
        assert_eq!(q[1].max_submit, Some(2));
        assert_eq!(q[2].max_nodes_per_job, None);
        assert_eq!(q[2].max_nodes_per_user, Some(8));
        assert_eq!(q[2].wall(), None);
        let a = parse_assoc("rlctl_test||boost_qos_dbg,normal\n");
        assert_eq!(a[0].account, "rlctl_test");
        assert_eq!(a[0].qos, ["boost_qos_dbg", "normal"]);
    }
}
