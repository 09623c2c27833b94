//! The QOS limits a launch or grid must fit: submit limits, node and wall-time limits, and what a
//! dry run says of them.

use crate::common::{Sandbox, fails, ok, stdout};

fn queue(sandbox: &Sandbox, lines: &str) {
    std::fs::write(sandbox.root().join("sbatch-calls/queue"), lines).unwrap();
}

#[test]
fn grid_all_submits_what_the_qos_allows_and_tend_submits_the_rest_in_order() {
    let sandbox = Sandbox::new();
    sandbox.debug_submit_limit(2);
    // One job of the user's already holds a debug slot; a job in another QOS does not count.
    queue(
        &sandbox,
        "900|other|RUNNING|boost_qos_dbg\n901|long|RUNNING|normal\n",
    );
    let out = stdout(&ok(sandbox.rlctl().args([
        "grid",
        "--all",
        "gsm8k-throughput",
    ])));
    assert_eq!(sandbox.sbatch_calls(), 1, "{out}");
    assert!(
        out.starts_with("gsm8k-throughput/base: job 1001\n"),
        "{out}"
    );
    assert!(
        out.contains("gsm8k-throughput/tbs64: waits for room in QOS boost_qos_dbg\n"),
        "{out}"
    );
    assert!(
        out.contains(
            "17 of 18 cells wait for room in QOS boost_qos_dbg (2 jobs per user): SLURM lets a user have only so \
             many jobs submitted (pending or running) there. They are rendered and recorded as waiting; `rlctl \
             tend` submits them in order as jobs end"
        ),
        "{out}"
    );
    // The GPU-hours recorded are `estimate --all`'s total, each cell's speed scaled to its work.
    let all = stdout(&ok(sandbox.rlctl().args([
        "estimate",
        "--all",
        "gsm8k-throughput",
    ])));
    let total = (all.lines().last())
        .and_then(|l| l.split(" GPU-h").next()?.rsplit(' ').next())
        .unwrap()
        .to_owned();
    assert_eq!(total, "16.6", "{all}");
    assert!(
        out.ends_with(&format!(
            "grid gsm8k-throughput: 18 cells: 1 submitted (0 of them waiting on a lane), 17 waiting for the QOS; \
             about {total} GPU-hours estimated\n"
        )),
        "{out}"
    );
    // status says which cells wait, in the grid's order.
    let status = stdout(&ok(sandbox.rlctl().args(["status", "gsm8k-throughput"])));
    assert!(
        status.ends_with(
            "gsm8k-throughput: 17 cells wait for room in their QOS, and `rlctl tend` submits them in order: \
             tbs64, tbs128, tbs256, tbs512, n8, n16, gmu075, gmu080, gmu085, cudagraph, 2xtp2, 1xtp4, micro16, \
             reshard_off, colocate_off, combo_C, combo_D\n"
        ),
        "{status}"
    );
    assert!(status.contains("gsm8k-throughput/base "), "{status}");
    // A waiting cell is rendered in its run folder, not submitted.
    let waiting = sandbox.root().join("work/runs/gsm8k-throughput/tbs64/001");
    assert!(waiting.join("waiting.toml").is_file());
    assert!(waiting.join("sbatch.sh").is_file());
    assert!(!waiting.join("submission.toml").exists());

    // Both slots taken (the other job and base): tend submits nothing.
    queue(
        &sandbox,
        "900|other|RUNNING|boost_qos_dbg\n1001|gsm8k-throughput.base|PENDING|boost_qos_dbg\n",
    );
    let out = stdout(&ok(sandbox.rlctl().arg("tend")));
    assert_eq!(sandbox.sbatch_calls(), 1, "{out}");
    assert!(
        out.contains("1 queued, 0 waiting on a lane, 17 waiting for the QOS, 0 ended"),
        "{out}"
    );

    // Both ended: tend submits the next two, in order, waiting on nothing that has left the
    // queue, from the folders grid --all rendered.
    queue(&sandbox, "");
    let out = stdout(&ok(sandbox.rlctl().args(["tend", "gsm8k-throughput"])));
    assert_eq!(sandbox.sbatch_calls(), 3, "{out}");
    assert!(
        out.contains(
            "gsm8k-throughput/tbs64: job 1002 (it waited for room in QOS boost_qos_dbg)\n\
             gsm8k-throughput/tbs128: job 1003 (it waited for room in QOS boost_qos_dbg)\n"
        ),
        "{out}"
    );
    assert!(out.contains("15 waiting for the QOS"), "{out}");
    for n in 2..=3 {
        let argv = sandbox.sbatch_argv(n);
        assert!(
            !argv.iter().any(|a| a.starts_with("--dependency")),
            "{argv:?}"
        );
    }
    assert_eq!(
        sandbox.sbatch_argv(2).last().unwrap(),
        waiting.join("sbatch.sh").to_str().unwrap()
    );
    assert!(!waiting.join("waiting.toml").exists());
    let record = std::fs::read_to_string(waiting.join("submission.toml")).unwrap();
    assert!(record.contains("job_id = \"1002\""), "{record}");
    assert!(
        record.contains("gsm8k-throughput.tbs64_1002.out"),
        "{record}"
    );
    let ledger = std::fs::read_to_string(sandbox.root().join("work/runs/ledger.jsonl")).unwrap();
    assert_eq!(ledger.lines().count(), 3);

    // Asked again, grid --all renders the waiting cells anew: no folder is left behind.
    queue(
        &sandbox,
        "1002|gsm8k-throughput.tbs64|PENDING|boost_qos_dbg\n1003|gsm8k-throughput.tbs128|PENDING|boost_qos_dbg\n",
    );
    let out = stdout(&ok(sandbox.rlctl().args([
        "grid",
        "--all",
        "gsm8k-throughput",
    ])));
    assert_eq!(sandbox.sbatch_calls(), 3, "{out}");
    let tbs256 = sandbox.root().join("work/runs/gsm8k-throughput/tbs256");
    let folders: Vec<_> = std::fs::read_dir(&tbs256).unwrap().collect();
    assert_eq!(folders.len(), 1, "{folders:?}");
}

#[test]
fn a_launch_or_chain_that_does_not_fit_the_qos_is_refused_before_anything_is_written() {
    let sandbox = Sandbox::new();
    sandbox.debug_submit_limit(2);
    queue(
        &sandbox,
        "900|a|RUNNING|boost_qos_dbg\n901|b|PENDING|boost_qos_dbg\n",
    );
    let err = fails(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    assert_eq!(
        err,
        "rlctl: error: QOS boost_qos_dbg lets a user have 2 jobs submitted (pending or running) at once, and you \
         have 2 there: sbatch would refuse this job; launch again once one has ended, or pick another QOS with \
         --qos\n"
    );
    assert_eq!(sandbox.sbatch_calls(), 0);
    assert!(!sandbox.root().join("work/runs").exists());
    ok(sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--qos", "normal"]));

    queue(&sandbox, "");
    let err = fails(
        sandbox
            .rlctl()
            // A chain saves once per slot, or `slots` refuses it first.
            .args([
                "launch",
                "gsm8k-canary",
                "--job-name",
                "c3",
                "--chain",
                "3",
                "--",
                "trainer.ckpt_interval=20",
            ]),
    );
    assert!(
        err.contains(
            "and these 3 jobs are submitted together: chain fewer slots, or pick another QOS"
        ),
        "{err}"
    );
    assert_eq!(sandbox.sbatch_calls(), 1);
}

#[test]
fn a_dry_run_says_how_many_cells_the_qos_lets_in() {
    let sandbox = Sandbox::new();
    sandbox.debug_submit_limit(2);
    let output = sandbox
        .rlctl()
        .args(["grid", "--all", "gsm8k-throughput", "--dry-run"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let err = crate::common::stderr(&output);
    assert!(
        err.contains(
            "rlctl: note: QOS boost_qos_dbg lets a user have 2 jobs submitted at once: a launch submits at most 2 \
             of these 18"
        ),
        "{err}"
    );
}

#[test]
fn a_submit_limit_of_zero_is_refused() {
    let sandbox = Sandbox::new();
    let path = sandbox.presets().join("clusters/test.toml");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("max_nodes = 64\n", "max_nodes = 64\nmax_submit_jobs = 0\n");
    std::fs::write(&path, text).unwrap();
    let err = fails(sandbox.rlctl().args(["show", "gsm8k-canary"]));
    assert!(
        err.ends_with(
            "slurm.qos `normal`: max_submit_jobs = 0 would let no job in; give the limit, or leave it out for none\n"
        ),
        "{err}"
    );
}
