//! `rlctl clean` frees checkpoint space and keeps what a run is for, its exported model, unless
//! asked; it says what each folder holds before asking. And a SLURM client that fails is named.

use crate::common::{Sandbox, fails, ok, stdout, write_exec};
use rlctl::util::fmt::human;

#[test]
fn clean_keeps_exports_unless_asked_and_says_the_sizes() {
    let sandbox = Sandbox::new();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    let dir = sandbox
        .root()
        .join("work/checkpoints/gsm8k-canary/gsm8k-canary");
    std::fs::create_dir_all(dir.join("ckpt/global_step_5")).unwrap();
    std::fs::create_dir_all(dir.join("export/global_step_5")).unwrap();
    std::fs::write(dir.join("ckpt/global_step_5/model.pt"), vec![0u8; 3000]).unwrap();
    std::fs::write(
        dir.join("export/global_step_5/model.safetensors"),
        vec![0u8; 5000],
    )
    .unwrap();
    // A link out of the folder counts as itself, never as the 2 MiB it points to.
    let outside = sandbox.root().join("big.bin");
    std::fs::write(&outside, vec![0u8; 2 << 20]).unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("ckpt/data")).unwrap();
    let link = outside.display().to_string().len() as u64;
    let freed = human(3000 + link);

    // Without a terminal, the question (with its sizes) is the error.
    let err = fails(sandbox.rlctl().args(["clean", "gsm8k-canary"]));
    let row = format!("  {freed:>10}  {}  (export kept: 4.9 KiB)\n", dir.display());
    assert!(
        err.contains(
            "remove these checkpoint folders (exports stay; --exports removes them too)?\n"
        ) && err.contains(&row)
            && err.contains(&format!("  {freed:>10}  to free in all\n")),
        "{err}"
    );

    let out = stdout(&ok(sandbox.rlctl().args([
        "clean",
        "gsm8k-canary",
        "--yes",
    ])));
    assert_eq!(
        out,
        format!(
            "gsm8k-canary: removed {d} ({freed}); kept its export {d}/export (4.9 KiB)\nfreed {freed}\n",
            d = dir.display()
        )
    );
    assert!(!dir.join("ckpt").exists());
    assert!(dir.join("export/global_step_5/model.safetensors").is_file());
    assert!(outside.is_file(), "nothing outside the folder is touched");

    // Only the export is left: nothing to clean, until asked for exports too.
    let out = stdout(&ok(sandbox.rlctl().args([
        "clean",
        "gsm8k-canary",
        "--yes",
    ])));
    assert_eq!(out, "nothing to clean\n");
    let out = stdout(&ok(sandbox.rlctl().args([
        "clean",
        "gsm8k-canary",
        "--exports",
        "--yes",
    ])));
    assert_eq!(
        out,
        format!(
            "gsm8k-canary: removed {} (4.9 KiB)\nfreed 4.9 KiB\n",
            dir.display()
        )
    );
    assert!(!dir.exists());
}

#[test]
fn a_failing_scancel_is_named_with_the_end_of_its_stderr() {
    let sandbox = Sandbox::new();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    sandbox.queue("1001|gsm8k-canary|RUNNING|boost_qos_dbg\n");
    let scancel = sandbox.root().join("bin/scancel");
    write_exec(&scancel, "#!/bin/bash\nexit 1\n");
    let err = fails(sandbox.rlctl().args(["cancel", "gsm8k-canary"]));
    assert_eq!(
        err,
        "rlctl: error: scancel failed: `scancel 1001` (exit status: 1); scancel printed nothing on stderr\n"
    );

    // A client that says much: its last lines, the reason last.
    write_exec(
        &scancel,
        "#!/bin/bash\nfor i in 1 2 3 4 5 6; do echo \"scancel: error: line $i\" >&2; done\n\
         echo 'scancel: error: Kill job error on job id 1001: Access/permission denied' >&2\nexit 1\n",
    );
    let err = fails(sandbox.rlctl().args(["cancel", "gsm8k-canary"]));
    assert_eq!(
        err,
        "rlctl: error: scancel failed: `scancel 1001` (exit status: 1):\n  \
         (3 earlier lines)\n  \
         scancel: error: line 4\n  scancel: error: line 5\n  scancel: error: line 6\n  \
         scancel: error: Kill job error on job id 1001: Access/permission denied\n"
    );
}

#[test]
fn a_failing_squeue_or_sacct_is_named_with_its_last_stderr_line() {
    let sandbox = Sandbox::new();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    write_exec(
        &sandbox.root().join("bin/squeue-silent"),
        "#!/bin/bash\nexit 1\n",
    );
    let err = fails(
        sandbox
            .rlctl()
            .arg("status")
            .env("RLCTL_SQUEUE", sandbox.root().join("bin/squeue-silent")),
    );
    assert!(
        err.starts_with("rlctl: error: squeue-silent failed: `")
            && err.ends_with("(exit status: 1); squeue-silent printed nothing on stderr\n"),
        "{err}"
    );

    // sacct's reason, on the warning's one line: its last stderr line.
    write_exec(
        &sandbox.root().join("bin/sacct"),
        "#!/bin/bash\necho 'sacct: error: retrying' >&2\n\
         echo 'sacct: error: Problem talking to the database: Connection refused' >&2\nexit 1\n",
    );
    let output = ok(sandbox.rlctl().arg("status"));
    let err = crate::common::stderr(&output);
    assert!(
        err.contains(
            "SLURM accounting is unreachable (sacct failed: `sacct -X -D -n -P -j 1001 -o \
             JobID,State,ExitCode,ElapsedRaw,AllocTRES` (exit status: 1): sacct: error: Problem \
             talking to the database: Connection refused); ended jobs'"
        ),
        "{err}"
    );
}
