//! `scontrol show partition` and `scontrol show node`: a partition's limits, and each node's
//! GPUs (GRES), CPUs, memory and architecture.

use super::{field, fields};
use crate::preset::walltime::Walltime;

#[derive(Debug, Clone, PartialEq)]
pub struct Partition {
    pub name: String,
    pub default: bool,
    /// `MaxTime` as printed (`1-00:00:00`, `UNLIMITED`).
    pub max_time: String,
    /// `MaxNodes` per job; `None` for `UNLIMITED`.
    pub max_nodes: Option<u32>,
    pub total_nodes: u32,
    /// `QoS=`: the partition's own QOS, `N/A` for none.
    pub qos: String,
    /// `State=`: `UP`, `DOWN`, `DRAIN`, `INACTIVE`.
    pub state: String,
}

impl Partition {
    /// The partition as sinfo would list it: where sinfo gives no answer, scontrol's list is
    /// the one the draft chooses from.
    pub fn listed(&self) -> super::sinfo::Partition {
        super::sinfo::Partition {
            name: self.name.clone(),
            default: self.default,
            available: self.state.to_ascii_lowercase(),
            nodes: self.total_nodes,
            gres: Vec::new(),
        }
    }

    /// The wall limit; `None` when the partition sets none.
    pub fn max_wall(&self) -> Option<Walltime> {
        Walltime::of_slurm(&self.max_time)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub name: String,
    /// `Arch=` as slurmd reports it (`x86_64`, `aarch64`).
    pub arch: String,
    /// `CPUEfctv` (the CPUs jobs may use), else `CPUTot`; `None` when neither is a count a
    /// profile can hold (missing, 0, or past 2^32: a wrapped count would read as 1).
    pub cpus: Option<u32>,
    /// The CPU count as printed, which a guess's comment quotes.
    pub cpus_said: String,
    /// `RealMemory` in MB; 0 when it is missing or no number.
    pub real_memory_mb: u64,
    pub gres: String,
    pub partitions: Vec<String>,
    pub state: String,
}

/// One line per partition or node (`--oneliner`), whatever SLURM's version wraps.
pub const PARTITION_ARGS: &[&str] = &["--oneliner", "show", "partition"];
pub const NODE_ARGS: &[&str] = &["--oneliner", "show", "node"];

pub fn parse_partitions(stdout: &str) -> Vec<Partition> {
    (stdout.lines())
        .map(fields)
        .filter_map(|f| {
            let name = field(&f, "PartitionName")?.to_owned();
            Some(Partition {
                name,
                default: field(&f, "Default") == Some("YES"),
                max_time: field(&f, "MaxTime").unwrap_or("UNLIMITED").to_owned(),
                max_nodes: field(&f, "MaxNodes").and_then(|n| n.parse().ok()),
                total_nodes: field(&f, "TotalNodes")
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(0),
                qos: field(&f, "QoS").unwrap_or("N/A").to_owned(),
                state: field(&f, "State").unwrap_or("").to_owned(),
            })
        })
        .collect()
}

pub fn parse_nodes(stdout: &str) -> Vec<Node> {
    (stdout.lines())
        .map(fields)
        .filter_map(|f| {
            let cpus_said = field(&f, "CPUEfctv").or_else(|| field(&f, "CPUTot"));
            Some(Node {
                name: field(&f, "NodeName")?.to_owned(),
                arch: field(&f, "Arch").unwrap_or("").to_owned(),
                cpus: cpus_said
                    .and_then(|n| n.parse::<u32>().ok())
                    .filter(|n| *n > 0),
                cpus_said: cpus_said.unwrap_or("nothing").to_owned(),
                real_memory_mb: (field(&f, "RealMemory"))
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(0),
                gres: field(&f, "Gres").unwrap_or("(null)").to_owned(),
                partitions: (field(&f, "Partitions").unwrap_or(""))
                    .split(',')
                    .filter(|p| !p.is_empty())
                    .map(str::to_owned)
                    .collect(),
                state: field(&f, "State").unwrap_or("").to_owned(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partition_and_a_node_of_slurm_22_05() {
        let p = parse_partitions(
            "PartitionName=boost_usr_prod AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL AllocNodes=ALL Default=YES QoS=N/A DefaultTime=NONE DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 Hidden=NO MaxNodes=UNLIMITED MaxTime=1-00:00:00 MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED Nodes=n[1-2] PriorityJobFactor=1 PriorityTier=1 RootOnly=NO ReqResv=NO OverSubscribe=NO OverTimeLimit=NONE PreemptMode=OFF State=UP TotalCPUs=64 TotalNodes=2 SelectTypeParameters=NONE JobDefaults=(null) DefMemPerCPU=1000 MaxMemPerNode=UNLIMITED TRES=cpu=64,mem=988000M,node=2,billing=64\n",
        );
        assert_eq!(p.len(), 1);
        assert!(p[0].default);
        assert_eq!(p[0].max_nodes, None);
        assert_eq!(p[0].total_nodes, 2);
        assert_eq!(p[0].max_wall().unwrap().to_string(), "1-00:00:00");
        let n = parse_nodes(
            "NodeName=n1 Arch=aarch64 CoresPerSocket=72 CPUAlloc=0 CPUEfctv=288 CPUTot=288 CPULoad=0.01 AvailableFeatures=(null) ActiveFeatures=(null) Gres=gpu:gh200:4(S:0-3) NodeAddr=jpbo-001 NodeHostName=jpbo-001 Version=22.05.8 OS=Linux 6.1.0-18-arm64 #1 SMP Debian 6.1.76-1 (2024-02-01) RealMemory=878000 AllocMem=0 FreeMem=870000 Sockets=4 Boards=1 State=IDLE ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A Partitions=booster,largebooster BootTime=2026-12-01T08:00:00 SlurmdStartTime=2026-12-01T08:01:00 LastBusyTime=2026-12-04T21:00:00 CfgTRES=cpu=288,mem=878000M,billing=288,gres/gpu=4 AllocTRES= CapWatts=n/a CurrentWatts=0 AveWatts=0 ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s\n",
        );
        assert_eq!(n[0].arch, "aarch64");
        assert_eq!((n[0].cpus, n[0].real_memory_mb), (Some(288), 878000));
        assert_eq!(n[0].gres, "gpu:gh200:4(S:0-3)");
        assert_eq!(n[0].partitions, ["booster", "largebooster"]);
    }

    #[test]
    fn a_cpu_count_past_two_to_the_32_is_no_count() {
        // 2^32 + 1 would wrap to 1 as a u32.
        let n = parse_nodes("NodeName=n1 CPUTot=4294967297 RealMemory=1000 Gres=gpu:4\n");
        assert_eq!(n[0].cpus, None);
        assert_eq!(n[0].cpus_said, "4294967297");
        let n = parse_nodes("NodeName=n1 CPUEfctv=0 CPUTot=64 Gres=gpu:4\n");
        assert_eq!(n[0].cpus, None);
    }
}
