//! One verdict on what is staged, for `stage`, `check` and `estimate` alike: a parquet file is
//! staged when its footer reads and it holds rows. `stage` checks its overrides as `check` does,
//! and three `stage` commands at once start one download.

use crate::common::{Sandbox, lines_of, ok, stderr, stdout, write_exec, write_parquet};
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

fn train_file(sandbox: &Sandbox) -> std::path::PathBuf {
    sandbox.root().join("work/data/gsm8k/train.parquet")
}

/// A parquet file cut short by a copy that stopped: its first half.
fn cut(path: &Path) {
    write_parquet(path, 7473);
    let len = std::fs::metadata(path).unwrap().len();
    let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    file.set_len(len / 2).unwrap();
}

/// A case: its name, how it spoils the file, and why the commands say it is not staged.
type Case = (&'static str, fn(&Path), &'static str);

#[test]
fn an_empty_or_cut_parquet_is_not_staged_for_stage_check_or_estimate() {
    let cases: [Case; 2] = [
        ("empty", |p| write_parquet(p, 0), "is empty: 0 rows"),
        ("cut", cut, "is cut short: footer unreadable"),
    ];
    for (case, make, why) in cases {
        let sandbox = Sandbox::new();
        let train = train_file(&sandbox);
        make(&train);
        let said = format!("{} {why}", train.display());

        // `stage --status`: the dataset is not staged, and the line says why.
        let status = (sandbox.rlctl())
            .args(["stage", "gsm8k-canary", "--status"])
            .output()
            .unwrap();
        assert_eq!(status.status.code(), Some(1), "{case}");
        let text = stdout(&status);
        let line = (text.lines())
            .find(|l| l.starts_with("data  gsm8k"))
            .unwrap_or_else(|| panic!("{case}: no data line in\n{text}"));
        assert!(line.contains(" missing "), "{case}: {line}");
        assert!(line.contains(&said), "{case}: {line}");

        // `check`: an offline problem, naming why and the command that stages it.
        let check = (sandbox.rlctl())
            .args(["check", "gsm8k-canary"])
            .output()
            .unwrap();
        assert_eq!(check.status.code(), Some(1), "{case}");
        assert!(
            stderr(&check).contains(&format!(
                "[offline] `data.train_data`: `{}` {why}: on the login node run `rlctl stage \
                 gsm8k-canary`",
                train.display()
            )),
            "{case}: {}",
            stderr(&check)
        );

        // `estimate`: no steps, and why.
        let out = ok(sandbox.rlctl().args(["estimate", "gsm8k-canary", "--json"]));
        let e: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(e["steps"].is_null(), "{case}: {e}");
        let from = e["steps_from"].as_str().unwrap();
        assert!(
            from.contains(why) && from.contains("rlctl stage gsm8k-canary"),
            "{case}: {from}"
        );
    }
}

#[test]
fn stage_refuses_a_misspelt_key_as_check_does() {
    let sandbox = Sandbox::new();
    let typo = [
        "gsm8k-canary",
        "--",
        "trainer.policy.model.pth=Qwen/Qwen3-1.7B",
    ];
    let check = (sandbox.rlctl().arg("check").args(typo)).output().unwrap();
    let stage = (sandbox.rlctl().args(["stage", "--dry-run"]).args(typo))
        .output()
        .unwrap();
    assert_eq!(check.status.code(), Some(1));
    assert_eq!(stage.status.code(), Some(1), "{}", stdout(&stage));
    let schema_line = |out: &Output| {
        (stderr(out).lines())
            .find(|l| l.contains("[schema]"))
            .map(str::to_owned)
    };
    let line = schema_line(&check).expect("check names the key");
    assert!(line.contains("did you mean"), "{line}");
    assert_eq!(schema_line(&stage), Some(line));
    assert_eq!(
        stdout(&stage),
        "",
        "nothing to stage for a run that would not start"
    );
    ok(sandbox
        .rlctl()
        .args(["stage", "--dry-run", "--allow", "off-schema"])
        .args(typo));
}

/// `hf download MODEL` that takes its time: records each call, then writes the whole snapshot.
const SLOW_HF: &str = r#"#!/bin/bash
set -eu
echo "$2" >> "$HF_HUB_CACHE/../hf-calls"
sleep 3
snap="$HF_HUB_CACHE/models--${2//\//--}/snapshots/0123abcd"
mkdir -p "$snap"
for f in config.json tokenizer_config.json tokenizer.json; do echo '{}' > "$snap/$f"; done
: > "$snap/model.safetensors"
"#;

#[test]
fn three_stage_commands_at_once_start_one_download() {
    let sandbox = Sandbox::new();
    let root = sandbox.root();
    std::fs::remove_dir_all(root.join("work/hub/models--Qwen--Qwen2.5-1.5B-Instruct")).unwrap();
    write_exec(&root.join("bin/hf"), SLOW_HF);
    // A pid file left by an attempt whose process is gone is taken over.
    let stage_dir = root.join("work/runs/stage");
    std::fs::create_dir_all(&stage_dir).unwrap();
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    gone.wait().unwrap();
    std::fs::write(
        stage_dir.join("model-Qwen--Qwen2.5-1.5B-Instruct.pid"),
        format!("{}\n", gone.id()),
    )
    .unwrap();

    let children: Vec<_> = (0..3)
        .map(|_| {
            (sandbox.rlctl())
                .args(["stage", "gsm8k-canary"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outputs: Vec<Output> = children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    let texts: Vec<String> = outputs.iter().map(stdout).collect();
    for (output, text) in outputs.iter().zip(&texts) {
        assert!(output.status.success(), "{text}{}", stderr(output));
    }
    let started: Vec<&String> = (texts.iter())
        .filter(|t| t.contains("model Qwen/Qwen2.5-1.5B-Instruct: started (pid "))
        .collect();
    assert_eq!(started.len(), 1, "{texts:#?}");
    let pid =
        std::fs::read_to_string(stage_dir.join("model-Qwen--Qwen2.5-1.5B-Instruct.pid")).unwrap();
    let log = stage_dir.join("model-Qwen--Qwen2.5-1.5B-Instruct.log");
    let already = format!(
        "model Qwen/Qwen2.5-1.5B-Instruct: already being staged by pid {} (log {})",
        pid.trim(),
        log.display()
    );
    for text in texts.iter().filter(|t| !t.contains(": started (pid ")) {
        assert!(
            text.contains(&already) || text.contains("model Qwen/Qwen2.5-1.5B-Instruct: staged"),
            "{text}"
        );
    }

    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let status = (sandbox.rlctl())
            .args(["stage", "gsm8k-canary", "--status"])
            .output()
            .unwrap();
        if status.status.success() {
            break;
        }
        assert!(Instant::now() < deadline, "{}", stdout(&status));
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(
        lines_of(&root.join("work/hf-calls")),
        ["Qwen/Qwen2.5-1.5B-Instruct"],
        "exactly one download ran"
    );
}
