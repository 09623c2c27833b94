//! A new user's first steps: `init` writes their own profile that every command then uses,
//! `stage` downloads a plan's models and datasets detached (through a stand-in `hf` and a
//! stand-in venv python; nothing reaches the network), `check --all` judges every preset and
//! cell, shell completion asks rlctl back, and `list --json` is one document.

use crate::common::{
    Sandbox, fails, ok, rlctl, stage_teachers, stderr, stdout, write_exec, write_parquet,
};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const SHIPPED_WORK: &str = "/leonardo_work/AIFAC_5C0_290/bfeuer00";
const SHIPPED_SCRATCH: &str = "/leonardo_scratch/fast/AIFAC_5C0_290/bfeuer00";

/// rlctl with HOME and XDG_CONFIG_HOME in `home`, and none of the site's root variables.
fn at_home(home: &Path) -> Command {
    let mut cmd = rlctl();
    cmd.env("HOME", home.join("home"))
        .env("XDG_CONFIG_HOME", home.join("xdg"))
        .env("USER", "me");
    for var in ["WORK", "FAST", "SCRATCH"] {
        cmd.env_remove(var);
    }
    cmd
}

fn profile_path(home: &Path) -> PathBuf {
    home.join("xdg/rlctl/clusters/leonardo.toml")
}

#[test]
fn init_writes_a_profile_every_later_command_uses() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let work = format!("{}/lw/proj_x/me", home.display());
    let scratch = format!("{}/ls/fast/proj_x/me", home.display());
    let shipped = stdout(&ok(at_home(home).args([
        "launch",
        "gsm8k-canary",
        "--dry-run",
    ])));

    let output = ok(at_home(home).args([
        "init",
        "leonardo",
        "--account",
        "proj_x",
        "--work",
        &work,
        "--scratch",
        &scratch,
    ]));
    let path = profile_path(home);
    assert!(
        stdout(&output).starts_with(&format!("wrote {}", path.display())),
        "{}",
        stdout(&output)
    );
    assert!(stdout(&output).contains(&format!("checkpoints  {work}/rlctl/checkpoints")));
    // The folders are under none of Leonardo's binds: the user is told.
    assert!(stderr(&output).contains("under none of the container's binds"));
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("# Written by `rlctl init` from presets/clusters/leonardo.toml"));
    assert!(
        text.contains("# Scratch is 1 TB"),
        "the shipped comments stay"
    );
    assert!(!text.contains("bfeuer00") && !text.contains("AIFAC_5C0_290"));

    // The dry run is the shipped one with the account and the two roots replaced: every path
    // follows the roots, nothing else changes.
    let mine = stdout(&ok(at_home(home).args([
        "launch",
        "gsm8k-canary",
        "--dry-run",
    ])));
    let expected = shipped
        .replace(SHIPPED_WORK, &work)
        .replace(SHIPPED_SCRATCH, &scratch)
        .replace("--account=AIFAC_5C0_290", "--account=proj_x");
    assert_eq!(mine, expected);
    assert!(mine.contains(&format!(
        "{work}/rlctl/checkpoints/gsm8k-canary/gsm8k-canary/ckpt"
    )));

    let list = stdout(&ok(at_home(home).arg("list")));
    assert!(list.starts_with(&format!(
        "profile  leonardo, from {}: account proj_x, work {work}\npresets  {}, your default folder",
        path.display(),
        home.join("xdg/rlctl").display()
    )));
    // An explicit presets folder still wins over the default one.
    let sandbox = Sandbox::new();
    let explicit = stdout(&ok(sandbox
        .rlctl()
        .env("XDG_CONFIG_HOME", home.join("xdg"))
        .args(["--cluster", "leonardo", "list"])));
    assert!(
        explicit.starts_with("profile  leonardo, from presets/clusters/leonardo.toml (embedded)")
    );
}

#[test]
fn init_takes_its_defaults_from_the_site_variables() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let output = ok(at_home(home)
        .env("WORK", "/leonardo_work/proj_y")
        .env("FAST", "/leonardo_scratch/fast/proj_y")
        .env("SCRATCH", "/leonardo_scratch/large/userexternal/me")
        .args(["init", "leonardo", "--account", "proj_y"]));
    assert!(
        stdout(&output)
            .contains("work         /leonardo_work/proj_y/me  ([vars] WORK, from $WORK/$USER)"),
        "{}",
        stdout(&output)
    );
    assert!(
        stdout(&output).contains(
            "scratch      /leonardo_scratch/fast/proj_y/me  ([vars] SF, from $FAST/$USER)"
        )
    );
    assert!(!stderr(&output).contains("binds"), "{}", stderr(&output));
    let text = std::fs::read_to_string(profile_path(home)).unwrap();
    assert!(text.contains("WORK = \"/leonardo_work/proj_y/me\""));
    assert!(text.contains("account = \"proj_y\""));
}

#[test]
fn init_refuses_to_overwrite_without_force() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let init = |account: &str| {
        let mut cmd = at_home(home);
        cmd.args([
            "init",
            "leonardo",
            "--account",
            account,
            "--work",
            "/leonardo_work/p/me",
            "--scratch",
            "/leonardo_scratch/fast/p/me",
        ]);
        cmd
    };
    ok(&mut init("first"));
    let before = std::fs::read_to_string(profile_path(home)).unwrap();
    let error = fails(&mut init("second"));
    assert!(error.contains("exists already: pass --force"), "{error}");
    assert_eq!(std::fs::read_to_string(profile_path(home)).unwrap(), before);
    ok(init("second").arg("--force"));
    let after = std::fs::read_to_string(profile_path(home)).unwrap();
    assert!(after.contains("account = \"second\"") && !after.contains("first"));
    assert_eq!(after.matches("# Written by `rlctl init`").count(), 1);
}

#[test]
fn init_refuses_values_that_would_break_the_scripts() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let cases: [(&[&str], &str); 7] = [
        (
            &["--account", "my acct"],
            "invalid --account `my acct`: use only letters",
        ),
        (&["--work", "relative/dir"], "it must be an absolute path"),
        (&["--work", "~/w"], "`~` is not expanded here"),
        (&["--work", "/w/my work"], "' ' would break the job scripts"),
        (&["--scratch", "/s/a,b"], "',' would break the job scripts"),
        (&["--scratch", "/w/me/../.."], "not the root folder"),
        (
            &["--work", "/s/me/w"],
            "`/s/me/w` is inside --scratch `/s/me`",
        ),
    ];
    for (args, message) in cases {
        // The good values, with this case's one in place of its flag's.
        let mut line = vec!["init", "leonardo"];
        for (flag, good) in [
            ("--account", "a"),
            ("--work", "/w/me"),
            ("--scratch", "/s/me"),
        ] {
            let value = if args[0] == flag { args[1] } else { good };
            line.extend([flag, value]);
        }
        let error = fails(at_home(home).args(&line));
        assert!(error.contains(message), "{args:?}: {error}");
    }
    let error = fails(at_home(home).args(["init", "leonardo", "--work", "/w", "--scratch", "/s"]));
    assert!(error.contains("pass --account ACCOUNT"), "{error}");
    let error = fails(at_home(home).args(["init", "leonardo", "--account", "a", "--work", "/w"]));
    assert!(
        error.contains("pass --scratch DIR: $FAST and $SCRATCH are not set here"),
        "{error}"
    );
    let error = fails(at_home(home).args(["init", "nowhere", "--account", "a"]));
    assert!(error.contains("unknown cluster `nowhere`"), "{error}");
    assert!(
        !profile_path(home).exists(),
        "a refused init writes nothing"
    );
}

#[test]
fn stage_dry_run_prints_each_command() {
    let hub = format!("HF_HUB_OFFLINE=0 HF_HUB_CACHE={SHIPPED_WORK}/data/hub hf download");
    let data = format!(
        "cd {SHIPPED_WORK}/code/MarinSkyRL/skyrl-train && HF_HUB_OFFLINE=0 HF_DATASETS_OFFLINE=0 \
         {SHIPPED_SCRATCH}/marin_venv/bin/python"
    );
    let output = ok(rlctl().args(["stage", "gsm8k-canary", "--dry-run"]));
    assert_eq!(
        stdout(&output),
        format!(
            "{hub} Qwen/Qwen2.5-1.5B-Instruct\n\
             {data} examples/gsm8k/gsm8k_dataset.py --output_dir {SHIPPED_WORK}/data/gsm8k\n"
        )
    );
    // OPD: the student and the teacher (the reference model is the teacher: staged once).
    let output = ok(rlctl().args(["stage", "opd-qwen3", "--dry-run"]));
    assert_eq!(
        stdout(&output),
        format!(
            "{hub} Qwen/Qwen3-1.7B\n\
             {hub} Qwen/Qwen3-32B\n\
             {data} examples/gsm8k/gsm8k_dataset.py --output_dir {SHIPPED_WORK}/data/gsm8k\n"
        )
    );
    // A whole grid: each item once; opdtp-teacher8b adds its teacher.
    let output = ok(rlctl().args(["stage", "--all", "opd-throughput", "--dry-run"]));
    assert_eq!(stdout(&output).lines().count(), 4, "{}", stdout(&output));
    assert!(stdout(&output).contains(&format!("{hub} Qwen/Qwen3-8B\n")));
}

/// A stand-in for `hf download MODEL`: checks it was told to go online, records the call and
/// its session, and writes the snapshot tree the HF cache holds.
const STANDIN_HF: &str = r#"#!/bin/bash
set -eu
[ "$1" = download ] || { echo "stand-in hf: only download" >&2; exit 2; }
[ "$HF_HUB_OFFLINE" = 0 ] || { echo "stand-in hf: told to stay offline" >&2; exit 3; }
model=$2
echo "$model" >> "$HF_HUB_CACHE/../hf-calls"
ps -o sid= -p $$ | tr -d ' ' > "$HF_HUB_CACHE/../hf-sid"
snap="$HF_HUB_CACHE/models--${model//\//--}/snapshots/0123abcd"
mkdir -p "$snap"
echo '{"architectures": ["Qwen2ForCausalLM"]}' > "$snap/config.json"
echo '{}' > "$snap/tokenizer_config.json"
echo '{}' > "$snap/tokenizer.json"
echo '{"weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}}' \
  > "$snap/model.safetensors.index.json"
sleep 0.5
: > "$snap/model-00001-of-00002.safetensors"
: > "$snap/model-00002-of-00002.safetensors"
echo "downloaded $model"
"#;

/// A stand-in for the venv's python running SkyRL's `examples/<d>/<d>_dataset.py --output_dir
/// DIR` from skyrl-train/: the script must be there, relative to the working folder.
const STANDIN_PYTHON: &str = r#"#!/bin/bash
set -eu
[ -f "$1" ] || { echo "stand-in python: no $1 in $PWD" >&2; exit 2; }
[ "$2" = --output_dir ] || exit 2
mkdir -p "$3"
fixture="$(dirname "$0")/../../fixture.parquet"
cp "$fixture" "$3/train.parquet"
cp "$fixture" "$3/validation.parquet"
"#;

/// A sandbox with nothing staged, a stand-in `hf` on PATH and a stand-in venv python.
fn unstaged_sandbox(hf: &str) -> Sandbox {
    let sandbox = Sandbox::new();
    let root = sandbox.root();
    std::fs::remove_dir_all(root.join("work/hub")).unwrap();
    std::fs::remove_dir_all(root.join("work/data")).unwrap();
    std::fs::create_dir_all(root.join("work/hub")).unwrap();
    write_exec(&root.join("bin/hf"), hf);
    std::fs::create_dir_all(root.join("venv/bin")).unwrap();
    write_exec(&root.join("venv/bin/python"), STANDIN_PYTHON);
    write_parquet(&root.join("fixture.parquet"), 64);
    let examples = root.join("skyrl/skyrl-train/examples/gsm8k");
    std::fs::create_dir_all(&examples).unwrap();
    std::fs::write(examples.join("gsm8k_dataset.py"), "# stand-in\n").unwrap();
    sandbox
}

/// `stage --status` until nothing is running (the detached processes ended), at most 30 s.
fn wait_for_staging(sandbox: &Sandbox, target: &str) -> Output {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let output = sandbox
            .rlctl()
            .args(["stage", target, "--status"])
            .output()
            .unwrap();
        if !stdout(&output).contains(" running ") {
            return output;
        }
        assert!(
            Instant::now() < deadline,
            "still running:\n{}",
            stdout(&output)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn stage_runs_detached_then_finds_everything_staged() {
    let sandbox = unstaged_sandbox(STANDIN_HF);
    let root = sandbox.root();
    let status = sandbox
        .rlctl()
        .args(["stage", "gsm8k-canary", "--status"])
        .output()
        .unwrap();
    assert_eq!(status.status.code(), Some(1), "missing items: exit 1");
    assert!(
        stdout(&status)
            .contains("model Qwen/Qwen2.5-1.5B-Instruct       missing  not in the HF cache")
    );
    assert!(stderr(&status).contains("gsm8k-canary: 2 of 2 not staged yet"));

    let output = ok(sandbox.rlctl().args(["stage", "gsm8k-canary"]));
    let text = stdout(&output);
    let log = root.join("work/runs/stage/model-Qwen--Qwen2.5-1.5B-Instruct.log");
    assert!(
        text.contains("model Qwen/Qwen2.5-1.5B-Instruct: started (pid "),
        "{text}"
    );
    assert!(text.contains(&format!("log {}", log.display())), "{text}");
    assert!(text.contains("data gsm8k: started (pid "), "{text}");
    assert!(text.contains("2 started, detached"), "{text}");

    let output = wait_for_staging(&sandbox, "gsm8k-canary");
    assert!(
        output.status.success(),
        "{}{}",
        stdout(&output),
        stderr(&output)
    );
    let text = stdout(&output);
    assert!(text.contains(&format!(
        "model Qwen/Qwen2.5-1.5B-Instruct       staged   {}/work/hub/models--Qwen--Qwen2.5-1.5B-Instruct/snapshots/0123abcd",
        root.display()
    )), "{text}");
    assert!(
        text.contains(&format!(
            "data  gsm8k                            staged   {}/work/data/gsm8k",
            root.display()
        )),
        "{text}"
    );
    assert!(text.ends_with("gsm8k-canary: all 2 staged\n"), "{text}");

    // Detached: the download ran in a session of its own, led by the recorded process.
    let pid =
        std::fs::read_to_string(root.join("work/runs/stage/model-Qwen--Qwen2.5-1.5B-Instruct.pid"))
            .unwrap();
    let sid = std::fs::read_to_string(root.join("work/hf-sid")).unwrap();
    assert_eq!(sid.trim(), pid.trim());
    let log_text = std::fs::read_to_string(&log).unwrap();
    assert!(
        log_text.contains("hf download Qwen/Qwen2.5-1.5B-Instruct\n"),
        "{log_text}"
    );
    assert!(
        log_text.ends_with("downloaded Qwen/Qwen2.5-1.5B-Instruct\n"),
        "{log_text}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("work/runs/stage/model-Qwen--Qwen2.5-1.5B-Instruct.rc"))
            .unwrap(),
        "0\n"
    );

    // Again: everything is complete, nothing is downloaded.
    let output = ok(sandbox.rlctl().args(["stage", "gsm8k-canary"]));
    let text = stdout(&output);
    assert!(
        text.contains("model Qwen/Qwen2.5-1.5B-Instruct: staged ("),
        "{text}"
    );
    assert!(text.ends_with("gsm8k-canary: nothing to start\n"), "{text}");
    let calls = std::fs::read_to_string(root.join("work/hf-calls")).unwrap();
    assert_eq!(calls, "Qwen/Qwen2.5-1.5B-Instruct\n");
    // And a dry run prints no command, only what is staged.
    let output = ok(sandbox.rlctl().args(["stage", "gsm8k-canary", "--dry-run"]));
    assert!(
        stdout(&output).lines().all(|l| l.starts_with("# staged: ")),
        "{}",
        stdout(&output)
    );
}

#[test]
fn a_failed_download_is_reported_with_its_log() {
    let failing = "#!/bin/bash\necho 'stand-in hf: 401 Unauthorized' >&2\nexit 1\n";
    let sandbox = unstaged_sandbox(failing);
    // An incomplete snapshot (no weights yet) is not staged either.
    let snap = sandbox
        .root()
        .join("work/hub/models--Qwen--Qwen2.5-1.5B-Instruct/snapshots/0123abcd");
    std::fs::create_dir_all(&snap).unwrap();
    std::fs::write(snap.join("config.json"), "{}").unwrap();
    ok(sandbox.rlctl().args(["stage", "gsm8k-canary"]));
    let output = wait_for_staging(&sandbox, "gsm8k-canary");
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    let log = sandbox
        .root()
        .join("work/runs/stage/model-Qwen--Qwen2.5-1.5B-Instruct.log");
    assert!(
        text.contains(&format!(
            "failed   incomplete: no tokenizer_config.json, tokenizer.json, model.safetensors; the last attempt exited 1: see {}",
            log.display()
        )),
        "{text}"
    );
    assert!(
        std::fs::read_to_string(&log)
            .unwrap()
            .contains("401 Unauthorized")
    );
    assert!(
        text.contains("data  gsm8k                            staged"),
        "{text}"
    );
}

#[test]
fn stage_names_what_it_cannot_run() {
    let sandbox = unstaged_sandbox(STANDIN_HF);
    std::fs::remove_file(sandbox.root().join("bin/hf")).unwrap();
    // No `hf` anywhere on PATH, whatever this machine has installed (huggingface_hub's own
    // `hf` arrives with several Python packages).
    let mut cmd = sandbox.rlctl();
    let path = cmd
        .get_envs()
        .find(|(k, _)| *k == "PATH")
        .and_then(|(_, v)| v)
        .map(|v| v.to_owned())
        .unwrap_or_default();
    let path =
        std::env::join_paths(std::env::split_paths(&path).filter(|dir| !dir.join("hf").exists()))
            .unwrap();
    let output = cmd
        .env("PATH", path)
        .args(["stage", "math-longcot"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let error = stderr(&output);
    assert!(
        error.contains("cannot run `hf`: `pip install -U huggingface_hub` puts `hf` on PATH"),
        "{error}"
    );
    assert!(error.contains("the SkyRL checkout has no `"), "{error}");
    assert!(error.contains("examples/math/math_dataset.py`"), "{error}");
}

#[test]
fn check_all_names_the_broken_cell_and_passes_the_rest() {
    let sandbox = Sandbox::new();
    stage_teachers(sandbox.root());
    std::fs::create_dir_all(sandbox.presets().join("grids")).unwrap();
    std::fs::write(
        sandbox.presets().join("grids/mine.toml"),
        r#"description = "two cells, one broken"
base = "gsm8k-canary"

[[cells]]
name = "fine"
description = "as the canary"

[[cells]]
name = "broken"
description = "a train batch the mini batch does not divide"
knobs = { "trainer.train_batch_size" = 100 }
"#,
    )
    .unwrap();
    let output = sandbox
        .rlctl()
        .args(["check", "--all"])
        .env_remove("WANDB_API_KEY")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let text = stdout(&output);
    let lines: Vec<&str> = text.lines().collect();
    let total = 6 + 18 + 20 + 15 + 13 + 2;
    assert_eq!(lines.len(), total + 1, "{text}");
    let broken: Vec<&&str> = lines.iter().filter(|l| !l.ends_with("  ok")).collect();
    assert_eq!(broken.len(), 2, "{text}");
    assert!(
        broken[0].starts_with("mine/broken")
            && broken[0].contains(
                "1 problem: [skyrl-rules] `trainer.train_batch_size=100` is not a multiple"
            ),
        "{text}"
    );
    assert_eq!(
        *broken[1],
        format!("{total} checked: {} ok, 1 with problems", total - 1)
    );
    assert!(stderr(&output).contains("1 of 74 has problems (listed above)"));

    let output = sandbox
        .rlctl()
        .args(["check", "--all", "mine"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stdout(&output).starts_with("mine/fine    ok\nmine/broken  1 problem: "),
        "{}",
        stdout(&output)
    );
    assert!(stdout(&output).ends_with("2 checked of mine: 1 ok, 1 with problems\n"));
    let output = ok(sandbox.rlctl().args(["check", "--all", "gsm8k-throughput"]));
    assert!(stdout(&output).ends_with("18 checked of gsm8k-throughput: 18 ok, 0 with problems\n"));
    // A grid that does not exist is a usage error, not a finding.
    let output = sandbox
        .rlctl()
        .args(["check", "--all", "nope"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn completion_in_bash_asks_rlctl_for_the_cells() {
    let script = stdout(&ok(rlctl().args(["completions", "bash"])));
    let complete = |line: &[&str]| -> Vec<String> {
        let words = line
            .iter()
            .map(|w| format!("'{w}'"))
            .collect::<Vec<_>>()
            .join(" ");
        let driver = format!(
            "source /dev/stdin <<'EOF'\n{script}\nEOF\n\
             COMP_WORDS=({words}); COMP_CWORD={}; COMP_LINE=\"${{COMP_WORDS[*]}}\"; COMP_POINT=${{#COMP_LINE}}\n\
             _clap_complete_rlctl rlctl \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"\n\
             printf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
            line.len() - 1
        );
        let output = Command::new("bash")
            .args(["--norc", "--noprofile", "-c", &driver])
            .env("XDG_CONFIG_HOME", "/nonexistent/rlctl-test-config")
            .env_remove("RLCTL_PRESETS")
            .env_remove("RLCTL_CLUSTER")
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        stdout(&output).lines().map(str::to_owned).collect()
    };
    assert_eq!(
        complete(&["rlctl", "grid", "tb"]),
        ["tbs64", "tbs128", "tbs256", "tbs512"]
    );
    assert_eq!(
        complete(&["rlctl", "grid", "--all", "gsm8k-"]),
        ["gsm8k-accuracy", "gsm8k-throughput"]
    );
    assert_eq!(
        complete(&["rlctl", "launch", "math-"]),
        ["math-longcot", "math-multinode"]
    );
    assert_eq!(
        complete(&["rlctl", "grid", "n1"]),
        ["gsm8k-accuracy/n16", "gsm8k-throughput/n16"]
    );
    assert_eq!(
        complete(&["rlctl", "launch", "--cluster", "leo"]),
        ["leonardo"]
    );
    assert_eq!(
        complete(&["rlctl", "launch", "x", "--qos", "b"]),
        ["boost_qos_dbg"]
    );
    // SkyRL's keys after `--`, a level at a time, from the cluster's key list.
    let level = complete(&["rlctl", "launch", "gsm8k-canary", "--", "trainer.ep"]);
    assert_eq!(level, ["trainer.epochs="]);
    let level = complete(&[
        "rlctl",
        "grid",
        "tbs128",
        "--",
        "trainer.policy.optimizer_config.l",
    ]);
    assert!(
        level.contains(&"trainer.policy.optimizer_config.lr=".to_owned()),
        "{level:?}"
    );
    let groups = complete(&["rlctl", "launch", "gsm8k-canary", "--", "trainer.pol"]);
    assert!(groups.contains(&"trainer.policy.".to_owned()), "{groups:?}");
    assert!(
        groups.iter().all(|g| g.starts_with("trainer.pol")),
        "{groups:?}"
    );
    assert_eq!(
        complete(&["rlctl", "launch", "gsm8k-canary", "--", "+trainer.ep"]),
        ["+trainer.epochs="]
    );
}

#[test]
fn completion_reads_the_presets_and_ledger_in_use() {
    let sandbox = Sandbox::new();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    ok(sandbox.rlctl().args(["grid", "tbs128"]));
    let complete = |words: &[&str]| {
        let output = sandbox
            .rlctl()
            .env("COMPLETE", "bash")
            .env("_CLAP_IFS", " ")
            .env("_CLAP_COMPLETE_INDEX", (words.len() - 1).to_string())
            .arg("--")
            .args(words)
            .output()
            .unwrap();
        stdout(&output)
    };
    assert_eq!(
        complete(&["rlctl", "status", "g"]),
        "gsm8k-canary gsm8k-throughput/tbs128 gsm8k-throughput"
    );
    assert_eq!(
        complete(&["rlctl", "cancel", "gsm8k-t"]),
        "gsm8k-throughput/tbs128 gsm8k-throughput"
    );
    // The test profile's QOS, and a --cluster on the line picks another profile's.
    assert_eq!(
        complete(&["rlctl", "launch", "x", "--qos", ""]),
        "boost_qos_dbg normal"
    );
    assert!(complete(&["rlctl", "launch", ""]).starts_with("gsm8k-canary gsm8k-multinode"));
    let unreadable = complete(&["rlctl", "--presets", "/nonexistent", "launch", ""]);
    assert!(!unreadable.contains("gsm8k"), "{unreadable}");
}

#[test]
fn list_json_is_one_document() {
    let output = ok(rlctl().args(["list", "--json"]));
    let text = stdout(&output);
    assert_eq!(text.lines().count(), 1);
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["profile"]["cluster"], "leonardo");
    assert_eq!(
        json["profile"]["file"],
        "presets/clusters/leonardo.toml (embedded)"
    );
    assert_eq!(json["profile"]["account"], "AIFAC_5C0_290");
    assert_eq!(
        json["presets_dir"]["path"],
        "/nonexistent/rlctl-test-config/rlctl"
    );
    assert_eq!(json["presets_dir"]["chosen"], "default");
    assert_eq!(json["presets_dir"]["in_use"], false);
    let clusters: Vec<&str> = (json["clusters"].as_array().unwrap().iter())
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(clusters, ["jupiter", "juwels-booster", "leonardo"]);
    assert_eq!(json["presets"].as_array().unwrap().len(), 6);
    let grids = json["grids"].as_array().unwrap();
    assert_eq!(grids.len(), 4);
    let accuracy = &grids[0];
    assert_eq!(accuracy["name"], "gsm8k-accuracy");
    assert_eq!(accuracy["base"], "gsm8k-canary");
    let cells = accuracy["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 20);
    let n16 = cells.iter().find(|c| c["name"] == "n16").unwrap();
    assert_eq!(n16["target"], "gsm8k-accuracy/n16", "two grids have n16");
    assert_eq!(cells[0]["target"], cells[0]["name"]);
    let opd = grids[2]["cells"].as_array().unwrap();
    assert!(opd.iter().all(|c| c["max_steps"].is_i64()));
}

#[test]
fn man_prints_one_page_with_every_command_the_environment_and_the_files() {
    let page = stdout(&ok(rlctl().arg("man")));
    assert!(page.contains(".TH rlctl 1"), "{page}");
    for sub in [
        "init",
        "stage",
        "completions",
        "check",
        "launch",
        "tend",
        "report",
    ] {
        assert!(page.contains(&format!(".SS \"rlctl {sub}\"")), "{sub}");
    }
    for section in [
        ".SH GLOBAL OPTIONS",
        ".SH COMMANDS",
        ".SH ENVIRONMENT",
        ".SH FILES",
        ".SH EXIT STATUS",
    ] {
        assert!(page.contains(section), "{section}");
    }
    for var in [
        "RLCTL_CLUSTER",
        "RLCTL_PRESETS",
        "XDG_CONFIG_HOME",
        "NO_COLOR",
    ] {
        assert!(page.contains(var), "{var}");
    }
    assert!(page.contains("ledger.jsonl"));
    // No page it points at is missing: the commands are sections of this one.
    assert!(!page.contains("(1)\n.TP") && !page.contains("rlctl\\-launch(1)"));
    // groff reads it without a warning.
    let mut groff = std::process::Command::new("groff")
        .args(["-man", "-Tutf8", "-ww", "-z"])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    groff
        .stdin
        .take()
        .unwrap()
        .write_all(page.as_bytes())
        .unwrap();
    let out = groff.wait_with_output().unwrap();
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{}",
        stderr(&out)
    );
}

#[test]
fn global_options_are_under_their_own_heading() {
    let help = stdout(&ok(rlctl().args(["status", "--help"])));
    let (own, global) = help
        .split_once("Global options:")
        .expect("a Global options heading");
    assert!(own.contains("--json"), "{help}");
    for flag in ["--cluster", "--presets", "--sbatch", "--sacct"] {
        assert!(
            global.contains(flag) && !own.contains(flag),
            "{flag}: {help}"
        );
    }
}

#[test]
fn init_judges_a_work_folder_where_it_really_is() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().canonicalize().unwrap();
    std::fs::create_dir_all(home.join("scratch/me/w")).unwrap();
    // $WORK/me is a link into scratch: checkpoints there would be on scratch.
    std::fs::create_dir_all(home.join("work")).unwrap();
    std::os::unix::fs::symlink(home.join("scratch/me/w"), home.join("work/me")).unwrap();
    let (work, scratch) = (home.join("work/me"), home.join("scratch/me"));
    let error = fails(
        at_home(&home)
            .args(["init", "leonardo", "--account", "a"])
            .args([
                "--work",
                work.to_str().unwrap(),
                "--scratch",
                scratch.to_str().unwrap(),
            ]),
    );
    let error = error.replace(home.to_str().unwrap(), "[HOME]");
    assert!(
        error.contains(
            "`[HOME]/work/me` (really `[HOME]/scratch/me/w`) is inside --scratch `[HOME]/scratch/me`, \
             and checkpoints must never go on scratch"
        ),
        "{error}"
    );
    assert!(!profile_path(&home).exists());
}
