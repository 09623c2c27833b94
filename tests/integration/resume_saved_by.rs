//! What saved a checkpoint folder decides what resumes from it: a run that trains LoRA resumes
//! only from a step whose adapter was written, and a folder one SkyRL flavour saved is not
//! resumed by the other.

use crate::common::{Sandbox, ok, stderr, stdout, whole_step};
use std::path::Path;
use std::process::Output;

const LORA: &str = "trainer.policy.model.lora.rank=8";

fn run(sandbox: &Sandbox, args: &[&str]) -> Output {
    sandbox
        .rlctl()
        .args(args)
        .env_remove("WANDB_API_KEY")
        .output()
        .unwrap()
}

fn canary_ckpt(sandbox: &Sandbox) -> std::path::PathBuf {
    sandbox
        .root()
        .join("work/checkpoints/gsm8k-canary/gsm8k-canary/ckpt")
}

/// The policy's `lora_adapter/`, written by the installed wheel's own `_save_lora_adapters`.
fn lora_adapter(step: &Path) {
    let oracle = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/lora_adapter_oracle.py");
    ok(std::process::Command::new("python3")
        .arg(oracle)
        .arg(step.join("policy")));
}

fn notes(sandbox: &Sandbox, output: &Output, family: &str) -> Vec<String> {
    assert!(output.status.success(), "{}", stderr(output));
    let root = sandbox.root().display().to_string();
    (stderr(output).lines())
        .filter_map(|l| l.trim().strip_prefix(&format!("rlctl: note: [{family}] ")))
        .map(|l| l.replace(&root, "[ROOT]"))
        .collect()
}

#[test]
fn a_lora_run_resumes_from_the_newest_step_whose_adapter_was_written() {
    let sandbox = Sandbox::new();
    let ckpt = canary_ckpt(&sandbox);
    // Step 20 was killed after its model files, before the FSDP strategy wrote the adapter.
    whole_step(&ckpt, 10, 4);
    lora_adapter(&ckpt.join("global_step_10"));
    whole_step(&ckpt, 20, 4);
    std::fs::write(ckpt.join("latest_ckpt_global_step.txt"), "20").unwrap();
    let check = ["check", "gsm8k-canary", "--resume", "latest", "--", LORA];
    assert_eq!(
        notes(&sandbox, &run(&sandbox, &check), "resume-pointer"),
        ["resumes from step 10, the newest whole checkpoint in \
          `[ROOT]/work/checkpoints/gsm8k-canary/gsm8k-canary/ckpt`: `latest_ckpt_global_step.txt` \
          names step 20, which is not whole (no policy/lora_adapter/adapter_model.safetensors); the \
          job makes latest_ckpt_global_step.txt name step 10 before the trainer starts"]
    );
    // Without LoRA the step is whole: nothing to say.
    let plain = ["check", "gsm8k-canary", "--resume", "latest"];
    assert!(notes(&sandbox, &run(&sandbox, &plain), "resume-pointer").is_empty());
    // The job's own rule gets the flag from the plan, and the record keeps it for tend.
    let dry = ok(sandbox.rlctl().args([
        "launch",
        "gsm8k-canary",
        "--resume",
        "latest",
        "--dry-run",
        "--",
        LORA,
    ]));
    let line = (stdout(&dry).lines())
        .find(|l| l.contains("point=$(resume_point"))
        .map(str::to_owned);
    assert!(
        line.as_deref().is_some_and(|l| l.ends_with(" 1)")),
        "{line:?}"
    );
    let dry =
        ok(sandbox
            .rlctl()
            .args(["launch", "gsm8k-canary", "--resume", "latest", "--dry-run"]));
    assert!(stdout(&dry).contains("point=$(resume_point \"$ckpt_path\" "));
    assert!(
        !stdout(&dry)
            .lines()
            .any(|l| l.contains("point=$(resume_point") && l.ends_with(" 1)"))
    );
    ok(sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--resume", "latest", "--", LORA]));
    let ledger = std::fs::read_to_string(sandbox.root().join("work/runs/ledger.jsonl")).unwrap();
    let record: serde_json::Value = serde_json::from_str(ledger.trim()).unwrap();
    assert_eq!(record["lora"], true, "{record}");
    assert_eq!(record["flavour"], "marin", "{record}");
}

/// The ledger with every record's flavour set to `flavour`, as if another SkyRL launched them.
fn recorded_on(sandbox: &Sandbox, flavour: &str) {
    let path = sandbox.root().join("work/runs/ledger.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<String> = (text.lines())
        .map(|l| {
            let mut record: serde_json::Value = serde_json::from_str(l).unwrap();
            record["flavour"] = flavour.into();
            record.to_string()
        })
        .collect();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
}

#[test]
fn a_folder_saved_by_the_other_flavour_is_not_resumed() {
    let sandbox = Sandbox::new();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    let ckpt = canary_ckpt(&sandbox);
    whole_step(&ckpt, 10, 4);
    std::fs::write(ckpt.join("latest_ckpt_global_step.txt"), "10").unwrap();
    // Saved by MarinSkyRL, resumed by MarinSkyRL: let through.
    let resume = ["launch", "gsm8k-canary", "--resume", "latest"];
    ok(sandbox.rlctl().args(resume));
    assert_eq!(sandbox.sbatch_calls(), 2);
    recorded_on(&sandbox, "upstream");
    let out = run(&sandbox, &resume);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let root = sandbox.root().display().to_string();
    let problem = (stderr(&out).lines())
        .find_map(|l| l.trim().strip_prefix("[resume-flavour] "))
        .map(|l| l.replace(&root, "[ROOT]"));
    assert_eq!(
        problem.as_deref(),
        Some(
            "`[ROOT]/work/checkpoints/gsm8k-canary/gsm8k-canary/ckpt` was saved by upstream skyrl (run \
             gsm8k-canary, job 1002), but this plan runs MarinSkyRL: a checkpoint is resumed only by the \
             SkyRL that saved it; resume on a cluster profile whose checkout is upstream skyrl, or start \
             in a fresh checkpoint folder (another --job-name, or --wipe this one)"
        ),
        "{}",
        stderr(&out)
    );
    assert_eq!(sandbox.sbatch_calls(), 2, "a refused plan submits nothing");
    // A fresh folder of the same preset is another run's: let through.
    ok(sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--job-name", "fresh"]));
}

#[test]
fn a_grid_cell_saved_by_the_other_flavour_is_not_resumed() {
    let sandbox = Sandbox::new();
    let cell = "gsm8k-accuracy/n4";
    ok(sandbox.rlctl().args(["grid", cell]));
    let ledger = std::fs::read_to_string(sandbox.root().join("work/runs/ledger.jsonl")).unwrap();
    let record: serde_json::Value = serde_json::from_str(ledger.trim()).unwrap();
    let ckpt = Path::new(record["checkpoint_dir"].as_str().unwrap()).join("ckpt");
    whole_step(&ckpt, 10, 4);
    recorded_on(&sandbox, "upstream");
    let out = run(&sandbox, &["grid", cell, "--resume", "latest"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("[resume-flavour] "),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("was saved by upstream skyrl"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_record_of_an_older_rlctl_reads_its_lora_from_its_knobs() {
    let sandbox = Sandbox::new();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    let ledger = std::fs::read_to_string(sandbox.root().join("work/runs/ledger.jsonl")).unwrap();
    let mut old: serde_json::Value = serde_json::from_str(ledger.trim()).unwrap();
    let fields = old.as_object_mut().unwrap();
    assert!(fields.remove("flavour").is_some());
    assert!(
        fields.remove("lora").is_none(),
        "a run without LoRA writes no `lora`"
    );
    let record: rlctl::store::ledger::Record = serde_json::from_value(old.clone()).unwrap();
    assert_eq!((record.flavour, record.saves().lora), (None, false));
    old["knobs"]["trainer.policy.model.lora.rank"] = "16".into();
    let record: rlctl::store::ledger::Record = serde_json::from_value(old).unwrap();
    assert!(record.saves().lora);
}
