//! The kernel's limits on the trainer's command line: execve refuses ("Argument list too long",
//! E2BIG) one argument over `MAX_ARG_STRLEN` (32 pages, 128 KiB with its NUL) and arguments
//! plus environment over `ARG_MAX`; the job would die at start-up, after the queue wait.

/// Linux's `MAX_ARG_STRLEN`: 32 pages of 4 KiB, the NUL included.
pub const MAX_ARG_STRLEN: usize = 32 * 4096;
/// `ARG_MAX` where the stack limit is the usual 8 MiB (a quarter of it), for arguments and
/// environment together.
pub const ARG_MAX: usize = 2 * 1024 * 1024;

/// Why the trainer's arguments would not reach it, with the figures and the fix; `None` when
/// they fit.
pub fn check(argv: &[String]) -> Option<String> {
    if let Some(long) = argv.iter().find(|a| a.len() + 1 > MAX_ARG_STRLEN) {
        let key = long.split_once('=').map_or(long.as_str(), |(k, _)| k);
        return Some(format!(
            "`{key}=…` is one argument of {} bytes, over the kernel's limit of {MAX_ARG_STRLEN} bytes per \
             argument (MAX_ARG_STRLEN): the job would die with \"Argument list too long\"; list the files \
             in fewer entries (a folder or a glob the dataset loader expands, or fewer, larger shards)",
            long.len() + 1
        ));
    }
    let total: usize = argv.iter().map(|a| a.len() + 1).sum();
    (total > ARG_MAX).then(|| {
        format!(
            "the trainer's arguments take {total} bytes, over the kernel's {ARG_MAX} bytes for a whole \
             command line and its environment (ARG_MAX): the job would die with \"Argument list too \
             long\"; shorten the longest values (data lists: a folder or fewer, larger shards)"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_long_argument_and_a_long_line_are_refused_with_figures() {
        let shards: Vec<String> = (0..2500)
            .map(|i| format!("'/leonardo_scratch/fast/data/train-{i:05}-of-02500.parquet'"))
            .collect();
        let data = format!("data.train_data=[{}]", shards.join(","));
        let refused = check(&[data]).unwrap();
        assert!(
            refused.contains("data.train_data") && refused.contains("131072"),
            "{refused}"
        );
        assert!(check(&["a=1".to_owned()]).is_none());
        let many: Vec<String> = (0..20)
            .map(|i| format!("k{i}={}", "x".repeat(120_000)))
            .collect();
        assert!(check(&many).unwrap().contains("ARG_MAX"));
    }
}
