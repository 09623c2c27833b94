//! Stand-ins for `squeue` and `sacct` that cost what a compiled program's start costs, so that
//! what a bench times is rlctl, not a shell: C programs built with `cc` into the sandbox's
//! `bin/`, each noting its call in `<calls>/squeue.calls` or `<calls>/sacct.calls`.
//!
//! They imitate the two SLURM clients only as far as rlctl reads them: squeue prints the lines
//! of `<calls>/queue` (`id|name|state|qos`), whatever it is asked; sacct prints, while
//! `<calls>/ended` exists, `id|COMPLETED|0:0|60|node=1` for each id of its `-j` list, and
//! nothing otherwise (a job accounting does not know). And `rlctl --version`'s own start, the
//! unit the benches' figures are given in.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const SQUEUE: &str = r#"#include <stdio.h>
int main(void) {
    FILE *calls = fopen(DIR "/squeue.calls", "a");
    if (calls) { fputs("1\n", calls); fclose(calls); }
    FILE *queue = fopen(DIR "/queue", "r");
    if (queue) {
        char buf[65536];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, queue)) > 0) fwrite(buf, 1, n, stdout);
        fclose(queue);
    }
    return 0;
}
"#;

const SACCT: &str = r#"#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv) {
    FILE *calls = fopen(DIR "/sacct.calls", "a");
    if (calls) { fputs("1\n", calls); fclose(calls); }
    if (access(DIR "/ended", F_OK) != 0) return 0;
    for (int i = 1; i + 1 < argc; i++) {
        if (strcmp(argv[i], "-j") != 0) continue;
        for (char *id = strtok(argv[i + 1], ","); id; id = strtok(NULL, ","))
            printf("%s|COMPLETED|0:0|60|node=1\n", id);
    }
    return 0;
}
"#;

/// Builds the two stand-ins into `bin` (squeue as `bin/squeue`, first on the sandbox's PATH),
/// noting calls in `calls`; returns sacct's path (for `RLCTL_SACCT`).
pub fn build(bin: &Path, calls: &Path) -> PathBuf {
    let define = format!("-DDIR=\"{}\"", calls.display());
    for (name, source) in [("squeue", SQUEUE), ("sacct-compiled", SACCT)] {
        let c = bin.join(format!("{name}.c"));
        std::fs::write(&c, source).unwrap();
        let out = bin.join(name);
        let _ = std::fs::remove_file(&out);
        let built = Command::new("cc")
            .args(["-O2", &define, "-o"])
            .arg(&out)
            .arg(&c)
            .status()
            .expect("cc, to build the SLURM stand-ins");
        assert!(built.success(), "cc {}", c.display());
    }
    bin.join("sacct-compiled")
}

/// The median wall time of `n` runs of `cmd`, which must succeed.
pub fn median(cmd: &mut Command, n: usize) -> Duration {
    let mut took: Vec<Duration> = (0..n)
        .map(|_| {
            let start = Instant::now();
            let out = cmd.output().unwrap();
            assert!(out.status.success(), "{cmd:?}");
            start.elapsed()
        })
        .collect();
    took.sort();
    took[n / 2]
}

/// `rlctl --version`'s median start: a process start, the unit of the goals.
pub fn process_start(rlctl: &Path) -> Duration {
    median(Command::new(rlctl).arg("--version"), 31)
}
