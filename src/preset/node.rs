//! What a profile says of the compute nodes' hardware beyond counts: the CPU architecture
//! every binary must be built for, and the form of the GPU request the site's SLURM accepts.

use serde::{Deserialize, Serialize};

/// The compute nodes' CPU architecture (login nodes included on the clusters rlctl knows).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Arch {
    #[default]
    X86_64,
    /// JUPITER's Grace CPUs: images, venvs and wheels must be Arm builds.
    Aarch64,
}

impl Arch {
    pub fn as_str(self) -> &'static str {
        match self {
            Arch::X86_64 => "x86_64",
            Arch::Aarch64 => "aarch64",
        }
    }

    /// The architecture an ELF header's `e_machine` names, if it is one of these.
    pub fn of_e_machine(e_machine: u16) -> Option<Arch> {
        match e_machine {
            // EM_X86_64 and EM_AARCH64 in elf.h.
            62 => Some(Arch::X86_64),
            183 => Some(Arch::Aarch64),
            _ => None,
        }
    }
}

/// How the job asks SLURM for its GPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GpuRequest {
    /// `--gres=gpu:N` (Leonardo).
    #[default]
    Gres,
    /// `--gpus-per-node=N` (JUPITER; never `--gpus-per-task`, whose cgroups hide the peer GPUs
    /// from NCCL: "invalid device ordinal").
    GpusPerNode,
}

impl GpuRequest {
    /// The `#SBATCH` option that asks for `gpus` GPUs on each node.
    pub fn option(self, gpus: u32) -> String {
        match self {
            GpuRequest::Gres => format!("--gres=gpu:{gpus}"),
            GpuRequest::GpusPerNode => format!("--gpus-per-node={gpus}"),
        }
    }

    pub fn is_gres(&self) -> bool {
        *self == GpuRequest::Gres
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_requests_as_sbatch_spells_them() {
        assert_eq!(GpuRequest::Gres.option(4), "--gres=gpu:4");
        assert_eq!(GpuRequest::GpusPerNode.option(4), "--gpus-per-node=4");
    }
}
