//! The `ray-socket` check: Ray's socket path under the job's temp dir fits a Unix socket.

use camino::Utf8Path;

/// Longest Ray socket path under a job's temp dir, past the temp dir itself:
/// `/r<10-digit job id>w<worker>/session_<YYYY-MM-DD_HH-MM-SS_ffffff>_<7-digit pid>/sockets/plasma_store`.
const RAY_SOCKET_SUFFIX: &str =
    "/r4294967295/session_2026-11-30_10-49-01_123456_4194304/sockets/plasma_store";
const UNIX_SOCKET_MAX: usize = 107;

pub fn check(root: &Utf8Path) -> Option<String> {
    let length = root.as_str().len() + RAY_SOCKET_SUFFIX.len();
    (length > UNIX_SOCKET_MAX).then(|| {
        format!(
            "storage.ray_tmp_root `{root}` makes Ray's socket path `{root}{RAY_SOCKET_SUFFIX}` {length} bytes long, over \
             the {UNIX_SOCKET_MAX}-byte limit of a Unix socket: use a short node-local folder such as /tmp"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ray_socket_budget() {
        assert!(check(Utf8Path::new("/tmp")).is_none());
        assert!(
            check(Utf8Path::new(
                "/leonardo_scratch/fast/AIFAC_5C0_290/bfeuer00/ray"
            ))
            .is_some()
        );
    }
}
