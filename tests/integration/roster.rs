//! `tend`'s roster of runs (`<run_root>/.roster`) is only a faster read: a pass over every run
//! says what a pass over the whole ledger says, as runs are added, retired, sealed and fail.

use crate::common::{Sandbox, ok, stdout, write_exec};

/// A stand-in sacct that imitates accounting: every job it is asked of COMPLETED after an hour
/// on one node, but for the ids listed in `sbatch-calls/failed`, FAILED.
fn accounting(sandbox: &Sandbox) {
    write_exec(
        &sandbox.root().join("bin/sacct"),
        "#!/bin/bash\nwhile [ $# -gt 0 ]; do [ \"$1\" = -j ] && l=$2; shift; done\n\
         for j in ${l//,/ }; do\n\
           if grep -qx \"$j\" \"$FAKE_SBATCH_DIR/failed\" 2>/dev/null; then s=FAILED; c=1:0; \
           else s=COMPLETED; c=0:0; fi\n\
           echo \"$j|$s|$c|3600|node=1\"\n\
         done\n",
    );
}

/// `tend`'s exit code and stdout.
fn tend(sandbox: &Sandbox) -> String {
    let out = sandbox.rlctl().arg("tend").output().unwrap();
    format!("{:?}\n{}", out.status.code(), stdout(&out))
}

/// A pass with the roster as it is, and one with no roster (the whole ledger read): the same.
fn same_without_roster(sandbox: &Sandbox) -> String {
    let with = tend(sandbox);
    let roster = sandbox.root().join("work/runs/.roster");
    assert!(roster.is_file(), "a pass over every run keeps its roster");
    std::fs::remove_file(&roster).unwrap();
    assert_eq!(tend(sandbox), with);
    with
}

#[test]
fn a_pass_over_the_roster_says_what_a_pass_over_the_ledger_says() {
    let sandbox = Sandbox::new();
    ok(sandbox
        .rlctl()
        .args(["grid", "--all", "gsm8k-throughput", "--skip", "tbs512"]));
    accounting(&sandbox);
    let first = tend(&sandbox);
    assert!(
        first.contains("tend: 17 runs, 0 resumed, 0 need a look"),
        "{first}"
    );
    // Every cell sealed COMPLETED: later passes read none of them, and say the same.
    let later = same_without_roster(&sandbox);
    assert!(
        later.contains("tend: 17 runs, 0 resumed, 0 need a look"),
        "{later}"
    );

    // A run added to the ledger since: read from the lines appended, and judged.
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    std::fs::write(sandbox.root().join("sbatch-calls/failed"), "1018\n").unwrap();
    let added = tend(&sandbox);
    assert!(
        added.contains("tend: 18 runs, 0 resumed, 1 need a look"),
        "{added}"
    );
    assert!(added.contains("gsm8k-canary job 1018: FAILED"), "{added}");
    // A failed run is said every pass, sealed or not.
    let again = same_without_roster(&sandbox);
    assert!(again.contains("gsm8k-canary job 1018: FAILED"), "{again}");

    // A retired run is no run; its next launch is one again.
    ok(sandbox.rlctl().args(["retire", "gsm8k-canary", "--yes"]));
    let retired = same_without_roster(&sandbox);
    assert!(
        retired.contains("tend: 17 runs, 0 resumed, 0 need a look"),
        "{retired}"
    );
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    let relaunched = same_without_roster(&sandbox);
    assert!(relaunched.contains("tend: 18 runs"), "{relaunched}");

    // A roster cut short or corrupted is built again, with the same answer.
    let roster = sandbox.root().join("work/runs/.roster");
    tend(&sandbox);
    let kept = std::fs::read(&roster).unwrap();
    std::fs::write(&roster, &kept[..kept.len() / 2]).unwrap();
    assert_eq!(tend(&sandbox), relaunched);
    std::fs::write(&roster, b"{\"format\":1}\n\x00garbage").unwrap();
    assert_eq!(tend(&sandbox), relaunched);
}
