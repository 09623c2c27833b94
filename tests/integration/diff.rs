//! `rlctl diff A B`: recorded runs (their knobs as the ledger kept them) or presets and cells
//! (their plans), the knobs that differ with the layer that set each, then the runs' final
//! metrics; exit 0 whether or not they differ, 2 for a name that means nothing.

use crate::common::{Sandbox, recorded_logs, stdout};
use crate::report::finished_log;

/// A sandbox with grid `two` (the canary, and the canary at lr 2e-6) launched, each cell's log
/// finished after 4 steps.
fn two_cells_ran() -> Sandbox {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.presets().join("grids")).unwrap();
    write_grid(&sandbox, "2.0e-6");
    sandbox.expect(["grid", "--all", "two"]).run();
    let logs = recorded_logs(&sandbox);
    for (target, entropy) in [
        ("two/base", [0.6, 0.5, 0.45, 0.4]),
        ("two/fast", [0.6, 0.4, 0.3, 0.2]),
    ] {
        let log = &logs[target];
        let stem = log.file_stem().unwrap().to_str().unwrap();
        let job = stem.rsplit('_').next().unwrap();
        std::fs::write(log, finished_log(job, &entropy)).unwrap();
    }
    sandbox
}

fn write_grid(sandbox: &Sandbox, lr: &str) {
    std::fs::write(
        sandbox.presets().join("grids/two.toml"),
        format!(
            "description = \"two cells\"\nbase = \"gsm8k-canary\"\n\
             [[cells]]\nname = \"base\"\ndescription = \"the canary\"\nknobs = {{}}\n\
             [[cells]]\nname = \"fast\"\ndescription = \"faster\"\n\
             knobs = {{ \"trainer.policy.optimizer_config.lr\" = {lr} }}\n"
        ),
    )
    .unwrap();
}

#[test]
fn two_cells_side_by_side_only_what_differs_each_with_its_layer() {
    let sandbox = Sandbox::new();
    let output = sandbox
        .expect(["diff", "gsm8k-accuracy/n4", "gsm8k-accuracy/lr3e-5"])
        .run();
    insta::assert_snapshot!("diff_two_cells", stdout(&output));

    let all = stdout(
        &sandbox
            .expect([
                "diff",
                "gsm8k-accuracy/n4",
                "gsm8k-accuracy/lr3e-5",
                "--all",
            ])
            .run(),
    );
    let same = (all.lines())
        .find(|l| l.starts_with("trainer.strategy "))
        .unwrap_or_else(|| panic!("--all shows the knobs alike too:\n{all}"));
    assert_eq!(
        same.split_whitespace().collect::<Vec<_>>(),
        ["trainer.strategy", "fsdp2", "preset", "fsdp2", "preset"]
    );
}

#[test]
fn alike_says_so_and_exits_0() {
    Sandbox::new()
        .expect(["diff", "gsm8k-canary", "gsm8k-canary"])
        .stdout_has("gsm8k-canary and gsm8k-canary set all ")
        .stdout_has(" knobs alike\n")
        .run();
}

#[test]
fn recorded_runs_show_what_ran_and_their_final_metrics() {
    let sandbox = two_cells_ran();
    // The grid changed since: the run keeps the knobs it ran with.
    write_grid(&sandbox, "3.0e-6");
    let output = sandbox
        .expect(["diff", "two/base", "two/fast"])
        .env("RLCTL_SACCT", "/nonexistent/sacct")
        .run();
    insta::assert_snapshot!("diff_two_runs", stdout(&output));

    // A run against a preset's plan: the preset's side has no metrics.
    sandbox
        .expect(["diff", "two/fast", "gsm8k-canary"])
        .env("RLCTL_SACCT", "/nonexistent/sacct")
        .stdout_has("trainer.policy.optimizer_config.lr  2e-6      cell")
        .stdout_has("1e-6          preset")
        .stdout_has("1 of ")
        .stdout_has("\nstate    COMPLETED")
        .run();
}

#[test]
fn an_unknown_name_exits_2_with_did_you_mean() {
    let sandbox = two_cells_ran();
    sandbox
        .expect(["diff", "two/base", "two/fsat"])
        .status(2)
        .stderr_has("did you mean")
        .stderr_has("fast")
        .run();
    sandbox
        .expect(["diff", "gsm8k-canry", "two/base"])
        .status(2)
        .stderr_has("did you mean `gsm8k-canary`")
        .run();
}
