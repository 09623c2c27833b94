//! The `arch` check: the venv's python must be built for the compute nodes' architecture. An
//! x86 venv on JUPITER's Arm nodes (or the reverse) fails only once the job runs; the ELF
//! header of `<venv>/bin/python`, links followed, says which it is.

use crate::preset::cluster::{Arch, Cluster};
use camino::Utf8Path;
use std::io::Read;

/// The problem when the venv's python is an ELF file for another architecture than the
/// profile's `node.arch`; nothing when the file is absent, not ELF, or of an unknown machine.
pub fn check(cluster: &Cluster, venv_python: &Utf8Path) -> Option<String> {
    let found = elf_arch(venv_python)?;
    let want = cluster.node.arch;
    (found != want).then(|| {
        format!(
            "the venv's python `{venv_python}` is built for {} but {}'s compute nodes are {} (node.arch): \
             the job would fail on its first import; build the venv on a {} machine (on the cluster's own \
             login node) or point software.venv at one",
            found.as_str(),
            cluster.name,
            want.as_str(),
            want.as_str()
        )
    })
}

/// The architecture in an ELF file's header (`e_machine`, read in the file's own byte order).
fn elf_arch(path: &Utf8Path) -> Option<Arch> {
    let mut header = [0u8; 20];
    std::fs::File::open(path)
        .ok()?
        .read_exact(&mut header)
        .ok()?;
    if header[..4] != *b"\x7fELF" {
        return None;
    }
    let machine = [header[18], header[19]];
    let e_machine = match header[5] {
        1 => u16::from_le_bytes(machine),
        2 => u16::from_be_bytes(machine),
        _ => return None,
    };
    Arch::of_e_machine(e_machine)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elf(e_machine: u16) -> Vec<u8> {
        let mut header = b"\x7fELF\x02\x01\x01".to_vec();
        header.resize(18, 0);
        header.extend(e_machine.to_le_bytes());
        header.resize(64, 0);
        header
    }

    #[test]
    fn reads_the_machine_of_an_elf_header() {
        let dir = tempfile::tempdir().unwrap();
        let path = Utf8Path::from_path(dir.path()).unwrap().join("python");
        std::fs::write(&path, elf(62)).unwrap();
        assert_eq!(elf_arch(&path), Some(Arch::X86_64));
        std::fs::write(&path, elf(183)).unwrap();
        assert_eq!(elf_arch(&path), Some(Arch::Aarch64));
        std::fs::write(&path, "#!/bin/sh\n").unwrap();
        assert_eq!(elf_arch(&path), None);
        assert_eq!(elf_arch(&path.with_file_name("absent")), None);
    }
}
