//! The login node itself: the container program on PATH, the compiler, and the network
//! interfaces (an InfiniBand NIC, else the one the default route leaves by).

use crate::preset::container::Runtime;
use camino::{Utf8Path, Utf8PathBuf};
use std::path::Path;

/// The first of `names` found as an executable file on `path` (a `PATH` value).
pub fn on_path(path: &str, names: &[&str]) -> Option<(usize, Utf8PathBuf)> {
    use std::os::unix::fs::PermissionsExt;
    for (i, name) in names.iter().enumerate() {
        for dir in path.split(':').filter(|d| d.starts_with('/')) {
            let file = Utf8Path::new(dir).join(name);
            let runnable = std::fs::metadata(&file)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
            if runnable {
                return Some((i, file));
            }
        }
    }
    None
}

/// The container program on PATH: apptainer (singularity's successor) before singularity.
pub fn container(path: &str) -> Option<(Runtime, Utf8PathBuf)> {
    let (i, file) = on_path(path, &["apptainer", "singularity"])?;
    let runtime = [Runtime::Apptainer, Runtime::Singularity][i];
    Some((runtime, file))
}

/// A network interface chosen for the job's traffic between nodes, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Nic {
    /// An InfiniBand interface (`type` 32, ARPHRD_INFINIBAND, or named `ib*`).
    InfiniBand(String),
    /// No InfiniBand: the interface the default route leaves by.
    DefaultRoute(String),
}

/// The interfaces under `<root>/sys/class/net` and the default route in
/// `<root>/proc/net/route` (`root` is `/` but in tests).
pub fn nic(root: &Path) -> Option<Nic> {
    let net = root.join("sys/class/net");
    let mut names: Vec<String> = std::fs::read_dir(&net)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    names.sort();
    let infiniband = |name: &String| {
        let kind = std::fs::read_to_string(net.join(name).join("type")).unwrap_or_default();
        kind.trim() == "32" || name.starts_with("ib")
    };
    if let Some(ib) = names.iter().find(|n| infiniband(n)) {
        return Some(Nic::InfiniBand(ib.clone()));
    }
    let routes = std::fs::read_to_string(root.join("proc/net/route")).ok()?;
    // `Iface Destination Gateway ...`: the default route's destination is 00000000.
    (routes.lines().skip(1)).find_map(|line| {
        let mut f = line.split_whitespace();
        let (iface, destination) = (f.next()?, f.next()?);
        (destination == "00000000").then(|| Nic::DefaultRoute(iface.to_owned()))
    })
}

/// This machine's name, for the draft's header.
pub fn hostname(root: &Path) -> String {
    std::fs::read_to_string(root.join("proc/sys/kernel/hostname"))
        .map(|h| h.trim().to_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn infiniband_before_the_default_route() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        for (nic, kind) in [("eno1", "1"), ("ib0", "32"), ("lo", "772")] {
            std::fs::create_dir_all(r.join("sys/class/net").join(nic)).unwrap();
            std::fs::write(r.join("sys/class/net").join(nic).join("type"), kind).unwrap();
        }
        std::fs::create_dir_all(r.join("proc/net")).unwrap();
        std::fs::write(
            r.join("proc/net/route"),
            "Iface\tDestination\tGateway \tFlags\n\
             eno1\t0000A8C0\t00000000\t0001\n\
             eno1\t00000000\t0100A8C0\t0003\n",
        )
        .unwrap();
        assert_eq!(nic(r), Some(Nic::InfiniBand("ib0".into())));
        std::fs::remove_dir_all(r.join("sys/class/net/ib0")).unwrap();
        assert_eq!(nic(r), Some(Nic::DefaultRoute("eno1".into())));
    }
}
