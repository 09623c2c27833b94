//! Plans that SkyRL (either flavour) would refuse only after the queue wait are refused before
//! it: a resume on another GPU count, a checkpoint folder its pointer file does not match, a
//! training set smaller than one batch, a node-local log folder on several nodes. And what
//! needs no check: the profile's environment reaches every node's Ray, so SkyRL's allow-list of
//! variables for its actors drops nothing of it.

use crate::common::findings::{assert_found, findings_of, fired};
use crate::common::{Sandbox, stand_ins, stderr, stdout, whole_step, write_exec, write_parquet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn run(sandbox: &Sandbox, args: &[&str]) -> Output {
    sandbox
        .rlctl()
        .args(args)
        .env_remove("WANDB_API_KEY")
        .output()
        .unwrap()
}

/// A preflight refusal: exit 1, nothing submitted, and the problems of `family` as printed.
fn refused(sandbox: &Sandbox, output: &Output, family: &str) -> Vec<String> {
    assert_eq!(
        output.status.code(),
        Some(1),
        "expected a preflight refusal:\n{}{}",
        stdout(output),
        stderr(output)
    );
    assert_eq!(sandbox.sbatch_calls(), 0, "a refused plan submits nothing");
    let root = sandbox.root().display().to_string();
    let problems: Vec<String> = (stderr(output).lines())
        .filter_map(|l| l.trim().strip_prefix(&format!("[{family}] ")))
        .map(|l| l.replace(&root, "[ROOT]"))
        .collect();
    assert!(
        !problems.is_empty(),
        "no [{family}] problem:\n{}",
        stderr(output)
    );
    problems
}

fn passes(output: &Output) {
    assert!(
        output.status.success(),
        "expected the plan to pass:\n{}",
        stderr(output)
    );
}

fn canary_ckpt(sandbox: &Sandbox) -> PathBuf {
    sandbox
        .root()
        .join("work/checkpoints/gsm8k-canary/gsm8k-canary/ckpt")
}

/// Whole `global_step_N` folders saved on the canary's 4 GPUs, and the pointer file holding
/// `pointer` when given.
fn steps(ckpt: &Path, steps: &[u64], pointer: Option<&str>) {
    let _ = std::fs::remove_dir_all(ckpt);
    for n in steps {
        whole_step(ckpt, *n, 4);
    }
    std::fs::create_dir_all(ckpt).unwrap();
    if let Some(text) = pointer {
        std::fs::write(ckpt.join("latest_ckpt_global_step.txt"), text).unwrap();
    }
}

/// What FSDP writes on rank 0 next to the rank files.
fn fsdp_config(step: &Path, world_size: u32) {
    std::fs::write(
        step.join("policy/fsdp_config.json"),
        format!("{{\n    \"fsdp_strategy\": \"fsdp2\",\n    \"world_size\": {world_size}\n}}"),
    )
    .unwrap();
}

fn rank_files(step: &Path, world_size: u32) {
    for rank in 0..world_size {
        for kind in ["model", "optim", "extra_state"] {
            let name = format!("{kind}_world_size_{world_size}_rank_{rank}.pt");
            std::fs::write(step.join("policy").join(name), "shard").unwrap();
        }
    }
}

#[test]
fn a_resume_on_another_gpu_count_is_refused_naming_both_counts() {
    let sandbox = Sandbox::new();
    let ckpt = canary_ckpt(&sandbox);
    steps(&ckpt, &[10, 20], Some("20"));
    fsdp_config(&ckpt.join("global_step_10"), 4);
    fsdp_config(&ckpt.join("global_step_20"), 8);
    rank_files(&ckpt.join("global_step_20"), 8);
    let output = run(&sandbox, &["launch", "gsm8k-canary", "--resume", "latest"]);
    assert_eq!(
        refused(&sandbox, &output, "resume-world"),
        [
            "`[ROOT]/work/checkpoints/gsm8k-canary/gsm8k-canary/ckpt/global_step_20/policy` was saved by 8 GPUs \
          (fsdp_config.json), but this plan trains the policy on 4 (1 node(s) x 4): FSDP would look for \
          `model_world_size_4_rank_*.pt` and fail after the queue wait; resume on 8 GPUs (`--nodes 2`), or \
          start in a fresh checkpoint folder (another --job-name, or --wipe this one)"
        ]
    );
    // The fix it names passes: the GPU count the checkpoint was saved with.
    passes(&run(
        &sandbox,
        &[
            "check",
            "gsm8k-canary",
            "--resume",
            "latest",
            "--nodes",
            "2",
        ],
    ));
    // A fresh folder passes too.
    passes(&run(
        &sandbox,
        &[
            "check",
            "gsm8k-canary",
            "--resume",
            "latest",
            "--job-name",
            "canary-2",
        ],
    ));
    // The job resumes from the newest whole step whatever the pointer says (it repairs the
    // pointer first): a pointer naming step 10, or none, still resumes from step 20, on 8 GPUs.
    std::fs::write(ckpt.join("latest_ckpt_global_step.txt"), "10").unwrap();
    let check = ["check", "gsm8k-canary", "--resume", "latest"];
    assert_eq!(
        refused(&sandbox, &run(&sandbox, &check), "resume-world").len(),
        1
    );
    std::fs::remove_file(ckpt.join("latest_ckpt_global_step.txt")).unwrap();
    assert_eq!(
        refused(&sandbox, &run(&sandbox, &check), "resume-world").len(),
        1
    );
}

#[test]
fn a_step_saved_on_two_gpus_is_refused_naming_no_node_count() {
    let sandbox = Sandbox::new();
    let ckpt = canary_ckpt(&sandbox);
    steps(&ckpt, &[], Some("5\n"));
    whole_step(&ckpt, 5, 2);
    let output = run(&sandbox, &["check", "gsm8k-canary", "--resume", "latest"]);
    let problems = refused(&sandbox, &output, "resume-world");
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].contains(
            "was saved by 2 GPUs (fsdp_config.json), but this plan trains the policy on 4 (1 node(s) x 4)"
        ),
        "{}",
        problems[0]
    );
    // Not a multiple of the node's GPUs: no --nodes to suggest.
    assert!(problems[0].contains("resume on 2 GPUs, or start in a fresh"));

    steps(&ckpt, &[5], Some("5"));
    rank_files(&ckpt.join("global_step_5"), 4);
    passes(&run(
        &sandbox,
        &["check", "gsm8k-canary", "--resume", "latest"],
    ));
    // A fresh start is the `resume` check's business, not this one's.
    let mut fresh = sandbox.rlctl();
    fresh.args(["check", "gsm8k-canary", "--json"]);
    let found = findings_of(fresh.env_remove("WANDB_API_KEY"), 1);
    assert_found(&found, "problem", "resume", &[]);
    assert!(!fired(&found, "resume-world"), "{found:#?}");
}

/// The notes of `family` a passing plan printed.
fn noted(sandbox: &Sandbox, output: &Output, family: &str) -> Vec<String> {
    passes(output);
    let root = sandbox.root().display().to_string();
    (stderr(output).lines())
        .filter_map(|l| l.trim().strip_prefix(&format!("rlctl: note: [{family}] ")))
        .map(|l| l.replace(&root, "[ROOT]"))
        .collect()
}

#[test]
fn a_pointer_the_job_repairs_is_said_with_the_step_it_resumes_from() {
    let sandbox = Sandbox::new();
    let ckpt = canary_ckpt(&sandbox);
    let check = ["check", "gsm8k-canary", "--resume", "latest"];
    let folder = "[ROOT]/work/checkpoints/gsm8k-canary/gsm8k-canary/ckpt";
    let said = |why: &str, step: u64| {
        vec![format!(
            "resumes from step {step}, the newest whole checkpoint in `{folder}`: {why}; the job makes \
             latest_ckpt_global_step.txt name step {step} before the trainer starts"
        )]
    };
    // Whole 40 and 50 with no pointer: SkyRL alone would start from step 0 over them.
    steps(&ckpt, &[40, 50], None);
    assert_eq!(
        noted(&sandbox, &run(&sandbox, &check), "resume-pointer"),
        said("`latest_ckpt_global_step.txt` is missing", 50)
    );
    steps(&ckpt, &[10, 20], Some(""));
    assert_eq!(
        noted(&sandbox, &run(&sandbox, &check), "resume-pointer"),
        said("`latest_ckpt_global_step.txt` is empty", 20)
    );
    steps(&ckpt, &[10, 20, 40], Some("10"));
    assert_eq!(
        noted(&sandbox, &run(&sandbox, &check), "resume-pointer"),
        said(
            "`latest_ckpt_global_step.txt` names step 10, behind the newest whole step 40",
            40
        )
    );
    // Rank 3's files missing in the step the pointer names: the newest whole one before it.
    std::fs::remove_file(ckpt.join("global_step_40/policy/model_world_size_4_rank_3.pt")).unwrap();
    std::fs::write(ckpt.join("latest_ckpt_global_step.txt"), "40").unwrap();
    assert_eq!(
        noted(&sandbox, &run(&sandbox, &check), "resume-pointer"),
        said(
            "`latest_ckpt_global_step.txt` names step 40, which is not whole (no \
             policy/model_world_size_4_rank_3.pt)",
            20
        )
    );
    // A pointer that names the newest whole step: nothing to say.
    steps(&ckpt, &[10, 20], Some("20"));
    assert!(noted(&sandbox, &run(&sandbox, &check), "resume-pointer").is_empty());
}

#[test]
fn a_folder_with_no_safe_step_is_refused_before_the_queue() {
    let sandbox = Sandbox::new();
    let ckpt = canary_ckpt(&sandbox);
    let folder = "[ROOT]/work/checkpoints/gsm8k-canary/gsm8k-canary/ckpt";
    // An unfinished save far past the newest whole step: SkyRL refuses the folder.
    steps(&ckpt, &[10], Some("10"));
    std::fs::create_dir_all(ckpt.join("global_step_40/policy")).unwrap();
    let args = [
        "launch",
        "gsm8k-canary",
        "--resume",
        "latest",
        "--",
        "trainer.ckpt_interval=10",
    ];
    assert_eq!(
        refused(&sandbox, &run(&sandbox, &args), "resume-pointer"),
        [format!(
            "`{folder}` holds global_step_40, 30 steps past global_step_10 (the newest whole checkpoint), \
             more than trainer.ckpt_interval=10 allows: SkyRL refuses the folder (\"Inconsistent checkpoint \
             folder\"); move it out of the folder (another run or an unfinished save wrote it) (the job \
             would stop at its start, after the queue wait)"
        )]
    );
    // Step folders, none whole: never a start from step 0 over them.
    steps(&ckpt, &[], Some(""));
    std::fs::create_dir_all(ckpt.join("global_step_5/policy")).unwrap();
    let check = ["check", "gsm8k-canary", "--resume", "latest"];
    assert_eq!(
        refused(&sandbox, &run(&sandbox, &check), "resume-pointer"),
        [format!(
            "`{folder}` holds global_step_5 and none is a whole checkpoint (global_step_5: no \
             trainer_state.pt): a start from step 0 would overwrite them; move them out of the folder, or \
             launch again with --wipe (the job would stop at its start, after the queue wait)"
        )]
    );
    // --wipe deletes the folder's steps before the job starts: nothing to resume.
    assert!(
        run(&sandbox, &["check", "gsm8k-canary", "--wipe"])
            .status
            .success()
    );
}

/// One checkpoint folder layout of whole steps, judged by rlctl and, once the job has repaired
/// its pointer, by SkyRL's own code: every folder rlctl lets through, SkyRL loads.
struct Layout {
    name: &'static str,
    steps: &'static [u64],
    pointer: Option<&'static str>,
    interval: i64,
}

const LAYOUTS: &[Layout] = &[
    Layout {
        name: "empty",
        steps: &[],
        pointer: None,
        interval: 10,
    },
    Layout {
        name: "no-pointer",
        steps: &[10, 90],
        pointer: None,
        interval: 10,
    },
    Layout {
        name: "pointer-newest",
        steps: &[10, 20],
        pointer: Some("20"),
        interval: 10,
    },
    Layout {
        name: "one-interval-ahead",
        steps: &[10, 20],
        pointer: Some("10"),
        interval: 10,
    },
    Layout {
        name: "one-past-interval",
        steps: &[10, 21],
        pointer: Some("10"),
        interval: 10,
    },
    Layout {
        name: "far-ahead",
        steps: &[5, 10, 500],
        pointer: Some("5"),
        interval: 100,
    },
    Layout {
        name: "interval-one",
        steps: &[1, 2, 3],
        pointer: Some("1"),
        interval: 1,
    },
    Layout {
        name: "interval-zero",
        steps: &[1, 2],
        pointer: Some("2"),
        interval: 0,
    },
    Layout {
        name: "pointer-ahead",
        steps: &[10],
        pointer: Some("40"),
        interval: 10,
    },
    Layout {
        name: "pointer-no-folders",
        steps: &[],
        pointer: Some("3"),
        interval: 10,
    },
    Layout {
        name: "pointer-spaces",
        steps: &[7],
        pointer: Some("  7 \n"),
        interval: 10,
    },
    Layout {
        name: "pointer-plus",
        steps: &[7],
        pointer: Some("+7"),
        interval: 10,
    },
    Layout {
        name: "pointer-text",
        steps: &[7],
        pointer: Some("seven"),
        interval: 10,
    },
    Layout {
        name: "pointer-empty",
        steps: &[7],
        pointer: Some(""),
        interval: 10,
    },
    Layout {
        name: "pointer-zero-padded",
        steps: &[7],
        pointer: Some("07"),
        interval: 10,
    },
];

/// SkyRL's verdict on each layout, from tests/resume_oracle.py: refused or not.
fn oracle(cases: &[(String, i64)]) -> Vec<bool> {
    let json: Vec<serde_json::Value> = (cases.iter().enumerate())
        .map(|(i, (path, interval))| {
            serde_json::json!({"name": i.to_string(), "ckpt_path": path, "ckpt_interval": interval})
        })
        .collect();
    let mut child = Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/resume_oracle.py"
        ))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs the resume oracle (tests/setup.sh)");
    let input = serde_json::to_vec(&json).unwrap();
    child.stdin.take().unwrap().write_all(&input).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "the resume oracle failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines: Vec<serde_json::Value> = (String::from_utf8(output.stdout).unwrap().lines())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), cases.len());
    lines.iter().map(|l| l["ok"] == false).collect()
}

#[test]
fn the_pointer_check_agrees_with_skyrls_own_code() {
    let sandbox = Sandbox::new();
    let base = sandbox.root().join("work/checkpoints");
    let mut cases = Vec::new();
    let mut ours = Vec::new();
    for layout in LAYOUTS {
        let job = format!("layout-{}", layout.name);
        let ckpt = base.join("gsm8k-canary").join(&job).join("ckpt");
        steps(&ckpt, layout.steps, layout.pointer);
        let interval = format!("trainer.ckpt_interval={}", layout.interval);
        let output = run(
            &sandbox,
            &[
                "check",
                "gsm8k-canary",
                "--resume",
                "latest",
                "--job-name",
                &job,
                "--",
                &interval,
            ],
        );
        let problem = (stderr(&output).lines()).any(|l| l.trim().starts_with("[resume-pointer]"));
        assert_eq!(
            output.status.success(),
            !problem,
            "{}: only this check may fail:\n{}",
            layout.name,
            stderr(&output)
        );
        // What the job does at its start before SkyRL reads the folder: the pointer made to
        // name the step rlctl resumes from (the wrapper's bash decides alike: src/checkpoint).
        if !problem {
            let ckpt_utf8 = camino::Utf8PathBuf::try_from(ckpt.clone()).unwrap();
            let folder = rlctl::checkpoint::Folder::read(&ckpt_utf8, Default::default());
            let interval = u64::try_from(layout.interval).ok();
            if let rlctl::checkpoint::Decision::Resume {
                step,
                repair: Some(_),
            } = rlctl::checkpoint::decide(&folder, interval)
            {
                std::fs::write(ckpt.join("latest_ckpt_global_step.txt"), step.to_string()).unwrap();
            }
        }
        ours.push(problem);
        cases.push((ckpt.display().to_string(), layout.interval));
    }
    let skyrl = oracle(&cases);
    for ((layout, ours), skyrl) in LAYOUTS.iter().zip(&ours).zip(&skyrl) {
        assert_eq!(
            ours, skyrl,
            "{}: rlctl refuses: {ours}, SkyRL (after the job's repair): {skyrl}",
            layout.name
        );
    }
    // The corpus holds both verdicts.
    assert!(skyrl.iter().any(|r| *r) && skyrl.iter().any(|r| !*r));
}

#[test]
fn a_training_set_smaller_than_one_batch_is_refused() {
    let sandbox = Sandbox::new();
    let train = sandbox.root().join("work/data/gsm8k/train.parquet");
    write_parquet(&train, 20);
    let output = run(&sandbox, &["launch", "gsm8k-canary"]);
    assert_eq!(
        refused(&sandbox, &output, "data-rows"),
        [
            "`data.train_data` holds 20 rows ([ROOT]/work/data/gsm8k/train.parquet), fewer than \
          trainer.train_batch_size=32: the train dataloader drops the partial batch, so the trainer would \
          run no step; set trainer.train_batch_size (and trainer.policy_mini_batch_size) to 20 or less, or \
          stage the whole dataset (`rlctl stage gsm8k-canary`)"
        ]
    );
    // Exactly one batch is one step.
    write_parquet(&train, 32);
    passes(&run(&sandbox, &["check", "gsm8k-canary"]));
    // A batch that fits the rows passes (the mini-batch follows the batch).
    write_parquet(&train, 20);
    passes(&run(
        &sandbox,
        &[
            "check",
            "gsm8k-canary",
            "--",
            "trainer.train_batch_size=16",
            "trainer.policy_mini_batch_size=16",
        ],
    ));
}

/// A schema with upstream's `trainer.log_path` (and its default), which MarinSkyRL's lacks, as
/// the test cluster's.
fn with_log_path_key(sandbox: &Sandbox) {
    let keys = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/presets/schemas/marinskyrl-a559688.keys"
    ))
    .unwrap();
    assert!(!keys.contains("trainer.log_path="));
    let dir = sandbox.presets().join("schemas");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("with-log-path.keys"),
        keys + "trainer.log_path=\"/tmp/skyrl-logs\"\n",
    )
    .unwrap();
    let profile = sandbox.presets().join("clusters/test.toml");
    let text = std::fs::read_to_string(&profile).unwrap();
    let from = "schema = \"marinskyrl-a559688\"";
    assert!(text.contains(from));
    std::fs::write(&profile, text.replace(from, "schema = \"with-log-path\"")).unwrap();
}

#[test]
fn a_node_local_log_path_is_refused_on_several_nodes() {
    let sandbox = Sandbox::new();
    // MarinSkyRL's key list has no trainer.log_path: nothing to judge.
    passes(&run(&sandbox, &["check", "gsm8k-multinode"]));

    with_log_path_key(&sandbox);
    // Unless a layer says where, the plan puts the workers' logs beside the run's checkpoints.
    let shown = run(&sandbox, &["show", "gsm8k-multinode"]);
    let shown = String::from_utf8_lossy(&shown.stdout).into_owned();
    assert!(
        shown.contains(
            "/work/checkpoints/gsm8k-multinode/gsm8k-multinode/skyrl-logs\"  # set by rlctl"
        ),
        "{shown}"
    );
    passes(&run(&sandbox, &["check", "gsm8k-multinode"]));
    let output = run(
        &sandbox,
        &[
            "launch",
            "gsm8k-multinode",
            "--",
            "trainer.log_path=/tmp/skyrl-logs",
        ],
    );
    assert_eq!(
        refused(&sandbox, &output, "log-path"),
        [
            "`trainer.log_path=/tmp/skyrl-logs` is node-local, and this plan runs on 2 nodes: SkyRL writes each \
          worker's log there on the worker's own node, where it is out of reach once the job ends; put it on \
          shared storage, e.g. `trainer.log_path=[ROOT]/work/checkpoints/gsm8k-multinode/gsm8k-multinode/skyrl-logs`"
        ]
    );
    // One node: the driver's node is the only one.
    passes(&run(&sandbox, &["check", "gsm8k-canary"]));
    // The folder it names passes; so does any folder on the profile's scratch.
    let shared = format!(
        "trainer.log_path={}/work/checkpoints/gsm8k-multinode/gsm8k-multinode/skyrl-logs",
        sandbox.root().display()
    );
    passes(&run(&sandbox, &["check", "gsm8k-multinode", "--", &shared]));
    let scratch = format!("trainer.log_path={}/scratch/logs", sandbox.root().display());
    passes(&run(
        &sandbox,
        &["check", "gsm8k-multinode", "--", &scratch],
    ));
    // A link from shared storage into /tmp is node-local all the same.
    let link = sandbox.root().join("work/logs");
    std::os::unix::fs::symlink("/tmp", &link).unwrap();
    let output = run(
        &sandbox,
        &[
            "check",
            "gsm8k-multinode",
            "--",
            &format!("trainer.log_path={}/x", link.display()),
        ],
    );
    let problems = refused(&sandbox, &output, "log-path");
    assert!(
        problems[0].contains("/work/logs/x` (`/tmp/x`) is node-local"),
        "{problems:?}"
    );
}

/// The venv's python on every node: answers the run script's import check, plays Ray's CLI
/// (8 GPUs up) recording the environment of each `ray start`, and records the trainer's.
const PYTHON: &str = r#"#!/bin/bash
if [ "$1" = - ]; then echo checkout; exit 0; fi
if [ "$2" = ray.scripts.scripts ]; then
  if [ "$3" = status ]; then echo ' 0.0/8.0 GPU'; fi
  if [ "$3" = start ]; then { echo "ARGS=$*"; env; } > "$STUB_OUT/start.$$"; fi
  exit 0
fi
env > "$STUB_OUT/trainer"
"#;

#[test]
fn the_profile_environment_reaches_every_nodes_ray() {
    let sandbox = Sandbox::new();
    let root = sandbox.root();
    let profile = sandbox.presets().join("clusters/test.toml");
    let text = std::fs::read_to_string(&profile).unwrap();
    // A variable SkyRL's runtime environment would not carry to its actors.
    std::fs::write(&profile, text + "\n[env]\nRLCTL_SITE_FLAG = \"a b\"\n").unwrap();
    passes(&run(&sandbox, &["launch", "gsm8k-multinode"]));
    std::fs::create_dir_all(root.join("venv/bin")).unwrap();
    std::fs::create_dir_all(root.join("skyrl/skyrl-train")).unwrap();
    write_exec(&root.join("venv/bin/python"), PYTHON);
    let out = root.join("stub-out");
    std::fs::create_dir_all(&out).unwrap();
    let output = Command::new("/bin/bash")
        .arg(sandbox.last_script())
        .env_clear()
        .env("PATH", stand_ins(root))
        .env("STUB_OUT", &out)
        .env("PWNED", root.join("pwned"))
        .env("SLURM_JOB_ID", "4242")
        .env("SLURM_JOB_NODELIST", "n[1-2]")
        .env("SLURM_JOB_NUM_NODES", "2")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let mut starts: Vec<String> = (std::fs::read_dir(&out).unwrap().flatten())
        .filter(|e| e.file_name().to_string_lossy().starts_with("start."))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect();
    starts.sort_by_key(|s| !s.contains("start --head"));
    assert_eq!(starts.len(), 2, "one ray start per node");
    assert!(starts[0].contains("start --head"));
    assert!(starts[1].contains("start --address="));
    let trainer = std::fs::read_to_string(out.join("trainer")).unwrap();
    for env in starts.iter().chain([&trainer]) {
        assert!(
            env.lines().any(|l| l == "RLCTL_SITE_FLAG=a b"),
            "the profile's variable is missing:\n{env}"
        );
    }
}
