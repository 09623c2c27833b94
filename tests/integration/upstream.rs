//! Upstream SkyRL (the `skyrl` package) beside MarinSkyRL: the flavour comes from the checkout,
//! one preset renders for either, and the upstream job's command line is the one the real
//! `SkyRLTrainConfig.from_cli_overrides` accepts (the stand-in checkout of
//! tests/standin/upstream_checkout.py parses it with the wheel's own config).

use crate::common::findings::{assert_found, fired};
use crate::common::{Sandbox, fails, ok, slurm_slot, stdout, write_exec};
use rlctl::preset::Library;
use rlctl::schema::Schema;
use std::process::Command;

/// The sandbox's `test` profile on an upstream checkout: the stand-in package with the wheel's
/// real config, and the venv's python the tests' python3 (which has omegaconf and the wheel's
/// dependencies that the config imports).
pub(crate) fn upstream_sandbox() -> Sandbox {
    let sandbox = Sandbox::new();
    let root = sandbox.root();
    let checkout = root.join("skyrl");
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/standin/upstream_checkout.py"
    );
    ok(Command::new("python3").arg(script).arg(&checkout));
    let python = ok(Command::new("python3").args(["-c", "import sys; print(sys.executable)"]));
    std::fs::create_dir_all(root.join("venv/bin")).unwrap();
    write_exec(
        &root.join("venv/bin/python"),
        &format!("#!/bin/bash\nexec {} \"$@\"\n", stdout(&python).trim()),
    );
    let profile = sandbox.presets().join("clusters/test.toml");
    let text = std::fs::read_to_string(&profile).unwrap();
    let text = text.replace(
        "schema = \"marinskyrl-a559688\"",
        "schema = \"skyrl-0.4.0\"",
    );
    std::fs::write(profile, text).unwrap();
    sandbox
}

fn upstream_view() -> Schema {
    let library = Library::load(None).unwrap();
    let upstream = library.schema("skyrl-0.4.0").unwrap();
    let marin = library.schema("marinskyrl-a559688").unwrap();
    Schema::upstream_view(&upstream, &marin).unwrap()
}

#[test]
fn the_rename_table_is_worked_out_from_the_two_key_lists() {
    let view = upstream_view();
    let table: String = (view.renamed().iter())
        .map(|(marin, upstream)| format!("{marin} -> {upstream}\n"))
        .collect();
    insta::assert_snapshot!(table);
    // Every pair names a key of each list, and each key once.
    let library = Library::load(None).unwrap();
    let marin = library.schema("marinskyrl-a559688").unwrap();
    let upstream = library.schema("skyrl-0.4.0").unwrap();
    for (m, u) in view.renamed() {
        assert!(marin.default_text(m).is_some(), "{m}");
        if m != "generator.async_engine" {
            assert!(upstream.default_text(u).is_some(), "{u}");
        }
    }
}

#[test]
fn one_preset_renders_for_upstream_with_its_module_folder_and_names() {
    let sandbox = upstream_sandbox();
    let out = ok(sandbox.rlctl().args([
        "launch",
        "gsm8k-canary",
        "--dry-run",
        "--",
        "trainer.max_steps=5",
    ]));
    let text = stdout(&out);
    let root = sandbox.root().display();
    assert!(
        text.contains("entrypoint=skyrl.train.entrypoints.main_base"),
        "{text}"
    );
    assert!(text.contains(&format!("checkout={root}/skyrl\n")), "{text}");
    assert!(
        text.contains("'generator.inference_engine.num_engines="),
        "{text}"
    );
    assert!(text.contains("'trainer.max_training_steps=5'"), "{text}");
    assert!(!text.contains("'+"), "upstream refuses `+`: {text}");
    assert!(!text.contains("skyrl-train"), "{text}");
    // The progress module is named, not printed: it is rlctl's code, the same in every run.
    assert!(
        text.contains("/rlctl_progress.py <==\n# rlctl's progress module, the same in every run"),
        "{text}"
    );
    assert!(!text.contains("class Progress"), "{text}");
    // A key typed under upstream's name is the same knob.
    let out = ok(sandbox.rlctl().args([
        "launch",
        "gsm8k-canary",
        "--dry-run",
        "--",
        "trainer.max_training_steps=7",
    ]));
    assert!(stdout(&out).contains("'trainer.max_training_steps=7'"));
    // `show` names each knob as the trainer reads it.
    let shown = stdout(&ok(sandbox.rlctl().args([
        "show",
        "gsm8k-canary",
        "--",
        "trainer.max_steps=7",
    ])));
    assert!(shown.contains("flavour = \"upstream\""), "{shown}");
    assert!(
        shown.contains("\"trainer.max_training_steps\" = 7  # command line"),
        "{shown}"
    );
    assert!(
        !shown.contains("\"generator.num_inference_engines\""),
        "{shown}"
    );
}

#[test]
fn knobs_without_a_counterpart_are_refused_with_the_reason() {
    let sandbox = upstream_sandbox();
    // Teacher knobs asked for on upstream's OPD example (no vLLM teacher there).
    let args = [
        "check",
        "opd-qwen3-smoke",
        "--",
        "teacher.num_inference_engines=2",
        "teacher.top_k_logprobs=16",
        "generator.async_engine=false",
    ];
    let found = sandbox.findings(&args, 1);
    // One reason for the teacher's knobs, said once with every key.
    let teacher = ["teacher.num_inference_engines", "teacher.top_k_logprobs"];
    assert_found(&found, "problem", "schema", &teacher);
    let error = fails(sandbox.rlctl().args(args));
    assert_eq!(
        error.matches("MarinSkyRL's vLLM teacher").count(),
        1,
        "{error}"
    );
    assert!(!fired(&found, "skyrl-rules"), "{found:#?}");
    // Named as upstream names it.
    let engine = ["generator.inference_engine.async_engine"];
    assert_found(&found, "problem", "schema", &engine);
    let error =
        fails(
            sandbox
                .rlctl()
                .args(["check", "gsm8k-canary", "--", "+trainer.not_a_key=1"]),
        );
    assert!(
        error.contains("upstream skyrl refuses `+` and has no `trainer.not_a_key`"),
        "{error}"
    );
}

#[test]
fn a_list_of_the_other_flavour_than_the_checkout_is_refused_naming_schema_import() {
    let sandbox = upstream_sandbox();
    let profile = sandbox.presets().join("clusters/test.toml");
    let text = std::fs::read_to_string(&profile).unwrap();
    let text = text.replace(
        "schema = \"skyrl-0.4.0\"",
        "schema = \"marinskyrl-a559688\"",
    );
    std::fs::write(profile, text).unwrap();
    let error = fails(
        sandbox
            .rlctl()
            .args(["launch", "gsm8k-canary", "--dry-run"]),
    );
    assert!(
        error.contains("is a upstream skyrl checkout")
            || error.contains("is an upstream skyrl checkout"),
        "{error}"
    );
    assert!(error.contains("rlctl schema import"), "{error}");
}

/// The canary's job on the upstream stand-in, run by bash as SLURM would: the real
/// `from_cli_overrides` accepts its whole command line and the loop completes.
#[test]
fn the_canary_runs_to_the_end_on_an_upstream_checkout() {
    let sandbox = upstream_sandbox();
    let out = ok(sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--", "trainer.max_steps=2"]));
    assert!(stdout(&out).contains("job "), "{}", stdout(&out));
    let script = sandbox.last_script();
    let log = script.with_file_name("canary.out");
    let status = slurm_slot(&script, &log, "1001", 0)
        .env("PATH", "/usr/bin:/bin")
        .status()
        .unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(status.success(), "{text}");
    assert!(text.contains("WANDB_MIRROR kind=train step=2"), "{text}");
    assert!(!text.contains("CHECK FAILED"), "{text}");
    let ckpt = sandbox
        .root()
        .join("work/checkpoints/gsm8k-canary/gsm8k-canary/ckpt");
    assert_eq!(
        std::fs::read_to_string(ckpt.join("latest_ckpt_global_step.txt"))
            .unwrap()
            .trim(),
        "2"
    );
}

/// Without `software.schema`, the checkout's own config is read (and cached): the same plan as
/// with the shipped list, which was read from the same wheel.
#[test]
fn a_profile_without_a_key_list_reads_the_checkouts_own_config() {
    let sandbox = upstream_sandbox();
    let args = [
        "launch",
        "gsm8k-canary",
        "--dry-run",
        "--",
        "trainer.max_steps=5",
    ];
    let listed = stdout(&ok(sandbox.rlctl().args(args)));
    let profile = sandbox.presets().join("clusters/test.toml");
    let text = std::fs::read_to_string(&profile).unwrap();
    std::fs::write(&profile, text.replace("schema = \"skyrl-0.4.0\"\n", "")).unwrap();
    let read = stdout(&ok(sandbox.rlctl().args(args)));
    let scripts = |text: &str| text.split("==> sbatch command").next().unwrap().to_owned();
    // The run folder's number differs (each dry run takes the next); nothing else may.
    assert_eq!(
        scripts(&listed).replace("/002/", "/001/"),
        scripts(&read).replace("/002/", "/001/")
    );
    assert!(read.contains("'trainer.max_training_steps=5'"), "{read}");
    let error = fails(sandbox.rlctl().args([
        "check",
        "gsm8k-canary",
        "--",
        "generator.inference_engine.not_a_key=1",
    ]));
    assert!(error.contains("not_a_key"), "{error}");
}

/// A `Dict` field whose default is None (`Optional[Dict]`) takes any key below it, upstream's
/// parser and rlctl alike; a key below a plain field is refused by both.
#[test]
fn keys_below_an_optional_dict_are_taken() {
    let sandbox = upstream_sandbox();
    let out = ok(sandbox.rlctl().args([
        "launch",
        "gsm8k-canary",
        "--dry-run",
        "--",
        "generator.sampling_params.additional_kwargs.top_k=3",
        "generator.inference_engine.speculative_config.method=ngram",
    ]));
    assert!(
        stdout(&out).contains("'generator.inference_engine.speculative_config.method=ngram'"),
        "{}",
        stdout(&out)
    );
    let error = fails(sandbox.rlctl().args([
        "check",
        "gsm8k-canary",
        "--",
        "generator.sampling_params.temperature.x=1",
    ]));
    assert!(error.contains("temperature"), "{error}");
}

/// The canary on the upstream stand-in, launched as users launch it, one slot run to its end by
/// bash as SLURM would, with `logger` as its `trainer.logger` and an eval every second step
/// (and one before training). Returns the sandbox, the job's log and the run's checkpoint folder.
fn progress_run(logger: &str) -> (Sandbox, std::path::PathBuf, std::path::PathBuf) {
    let sandbox = upstream_sandbox();
    let data = sandbox.root().join("work/data/gsm8k/validation.parquet");
    let logger_arg = format!("trainer.logger={logger}");
    let val_data = format!("data.val_data=['{}']", data.display());
    // validate_cfg asks for a W&B key even offline; nothing here uses it.
    let out = ok(sandbox
        .rlctl()
        .args(["launch", "gsm8k-canary", "--"])
        .args([
            "trainer.max_steps=4",
            "trainer.eval_interval=2",
            "trainer.eval_before_train=true",
            "trainer.project_name=rlctl_test",
            &logger_arg,
            &val_data,
        ])
        .env("WANDB_API_KEY", "not-a-key"));
    assert!(stdout(&out).contains("job "), "{}", stdout(&out));
    let script = sandbox.last_script();
    let run_sh = script.with_file_name("run.sh");
    crate::common::check_script(&run_sh);
    let text = std::fs::read_to_string(&run_sh).unwrap();
    let progress = script.with_file_name("rlctl_progress.py");
    assert!(
        text.contains(&format!(
            "\"$VENV_PY\" {} \"$entrypoint\" \"${{overrides[@]}}\"",
            progress.display()
        )),
        "{text}"
    );
    assert_eq!(
        std::fs::read_to_string(&progress).unwrap(),
        rlctl::render::PROGRESS_MODULE
    );
    let log = script.with_file_name("progress.out");
    let status = slurm_slot(&script, &log, "1001", 0)
        .env("PATH", "/usr/bin:/bin")
        .env("WANDB_SILENT", "true")
        .env("WANDB_DISABLE_CODE", "true")
        .env("WANDB_DISABLE_GIT", "true")
        .env("WANDB_BASE_URL", "http://127.0.0.1:9")
        .env_remove("WANDB_API_KEY")
        .status()
        .unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(status.success(), "{text}");
    assert!(!text.contains("CHECK FAILED"), "{text}");
    assert!(!text.contains("rlctl_progress: warning"), "{text}");
    let folder = sandbox
        .root()
        .join("work/checkpoints/gsm8k-canary/gsm8k-canary");
    (sandbox, log, folder)
}

/// What the stand-in trainer committed, step by step, as `rlctl metrics --json` gives it: the
/// eval-only payload (the eval before training) as an eval step, every other payload as a
/// train step, and its eval keys again as an eval step.
fn committed(ckpt: &std::path::Path) -> serde_json::Value {
    let mut train = Vec::new();
    let mut eval = Vec::new();
    let text = std::fs::read_to_string(ckpt.join("standin_logged.jsonl")).unwrap();
    for line in text.lines() {
        let row: serde_json::Value = serde_json::from_str(line).unwrap();
        let step = row["step"].clone();
        let payload = row["payload"].as_object().unwrap();
        let evals: serde_json::Map<_, _> = (payload.iter())
            .filter(|(k, _)| k.starts_with("eval/"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if evals.len() < payload.len() {
            train.push(serde_json::json!({"kind": "train", "step": step, "metrics": payload}));
        }
        if !evals.is_empty() {
            eval.push(serde_json::json!({"kind": "eval", "step": step, "metrics": evals}));
        }
    }
    serde_json::json!({"train": train, "eval": eval})
}

/// Upstream prints no per-step line of its own: the progress module's callback gives rlctl
/// every step, each value in full, whatever the logger. With the console logger the log also
/// holds the real ConsoleLogger's blocks, at four decimals, under Ray's prefix.
#[test]
fn every_upstream_step_reaches_rlctl_metrics_in_full_with_the_console_logger() {
    let (sandbox, log, folder) = progress_run("console");
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.contains("| INFO     | skyrl.train.utils.tracking:log:"),
        "{text}"
    );
    assert!(text.contains("\x1b[36m(skyrl_entrypoint pid="), "{text}");
    // Four decimals there; in full on the progress line.
    assert!(
        text.contains("'policy/policy_entropy': '0.8468',"),
        "{text}"
    );
    assert!(
        text.contains("\"policy/policy_entropy\": 0.84681"),
        "{text}"
    );
    assert_metrics_are_the_committed(&sandbox, &log, &folder.join("ckpt"));
}

#[test]
fn every_upstream_step_reaches_rlctl_metrics_in_full_with_the_wandb_logger() {
    let (sandbox, log, folder) = progress_run("wandb");
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(!text.contains("skyrl.train.utils.tracking:log:"), "{text}");
    // The real Tracking's wandb.init, offline, in the run's W&B folder.
    let runs: Vec<_> = std::fs::read_dir(folder.join("wandb/wandb"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("offline-run-"))
        .collect();
    assert_eq!(runs.len(), 1, "{text}");
    assert_metrics_are_the_committed(&sandbox, &log, &folder.join("ckpt"));
}

fn assert_metrics_are_the_committed(
    sandbox: &Sandbox,
    log: &std::path::Path,
    ckpt: &std::path::Path,
) {
    let out = ok(sandbox.rlctl().arg("metrics").arg(log).arg("--json"));
    let mut seen: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let version = seen.as_object_mut().unwrap().remove("schema_version");
    assert_eq!(version, Some(1.into()));
    let want = committed(ckpt);
    assert_eq!(seen, want, "{}", std::fs::read_to_string(log).unwrap());
    let steps: Vec<_> = (seen["train"].as_array().unwrap().iter())
        .map(|s| s["step"].as_u64().unwrap())
        .collect();
    assert_eq!(steps, [1, 2, 3, 4]);
    let evals: Vec<_> = (seen["eval"].as_array().unwrap().iter())
        .map(|s| s["step"].as_u64().unwrap())
        .collect();
    assert_eq!(evals, [0, 2, 4]);
}

/// The upstream stand-in checkout at `dir` with tests/standin/progress_ray_entry.py copied into
/// it, and the progress module beside it, as render writes it into a run folder.
fn progress_checkout(dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let checkout = dir.join("skyrl");
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/standin/upstream_checkout.py"
    );
    ok(Command::new("python3").arg(script).arg(&checkout));
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/standin/progress_ray_entry.py"
        ),
        checkout.join("progress_ray_entry.py"),
    )
    .unwrap();
    let progress = dir.join("run/rlctl_progress.py");
    std::fs::create_dir_all(progress.parent().unwrap()).unwrap();
    std::fs::write(&progress, rlctl::render::PROGRESS_MODULE).unwrap();
    (checkout, progress)
}

/// Upstream builds its trainer in a Ray worker (the entry module's `@ray.remote`
/// `skyrl_entrypoint`): the progress module's hook must get there. With REAL Ray (a local
/// cluster on 127.0.0.2, its outbound probes closed, as tests/reference local-ray.md asks), the
/// lines come from the worker, under Ray's prefix of that worker, every value in full, and a
/// callback failure is said once without stopping the run. Ray's start-up takes about 15 s
/// here (more with the whole suite on 2 cores); the deadline is a generous 300 s.
#[test]
fn the_progress_hook_reaches_a_trainer_built_in_a_ray_worker() {
    let dir = tempfile::tempdir().unwrap();
    let (checkout, progress) = progress_checkout(dir.path());
    // Ray's socket paths must fit in 107 bytes: a short temp dir of its own.
    let ray_tmp = tempfile::Builder::new()
        .prefix("rlr")
        .tempdir_in("/tmp")
        .unwrap();
    let ckpt = dir.path().join("ckpt");
    let closed = "http://127.0.0.1:9";
    let output = Command::new("timeout")
        .args(["-k", "10", "300", "python3"])
        .arg(&progress)
        .args(["progress_ray_entry", "3"])
        .arg(&ckpt)
        .current_dir(&checkout)
        .env("PYTHONPATH", &checkout)
        .env("RLCTL_TEST_RAY_TMP", ray_tmp.path())
        .envs(["http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"].map(|k| (k, closed)))
        .envs(["no_proxy", "NO_PROXY"].map(|k| (k, "localhost,127.0.0.0/8")))
        .env("RAY_USAGE_STATS_REPORT_URL", format!("{closed}/"))
        .env("RAY_USAGE_STATS_ENABLED", "0")
        .env_remove("RAY_ADDRESS")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&output.stdout).into_owned();
    let err = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{out}\n{err}");
    let pids = out
        .lines()
        .find_map(|l| l.strip_prefix("driver pid="))
        .unwrap_or_else(|| panic!("{out}\n{err}"));
    let (driver, trainer) = pids.split_once(" trainer pid=").unwrap();
    assert_ne!(driver, trainer);
    // What the worker wrote, in its own files (Ray's forwarding to the driver may drop the
    // last lines when the cluster stops).
    let logs = ray_tmp.path().join("session_latest/logs");
    let worker_file = |ext: &str| -> String {
        let suffix = format!("-{trainer}.{ext}");
        let entry = (std::fs::read_dir(&logs).unwrap().flatten())
            .find(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.starts_with("worker-") && name.ends_with(&suffix)
            })
            .unwrap_or_else(|| panic!("no worker log of pid {trainer} in {}", logs.display()));
        std::fs::read_to_string(entry.path()).unwrap()
    };
    let worker_out = worker_file("out");
    let worker_err = worker_file("err");
    let mirrored = worker_out
        .lines()
        .filter(|l| l.contains("WANDB_MIRROR"))
        .count();
    assert_eq!(mirrored, 5, "{worker_out}");
    assert!(worker_out.contains("\"policy/nan\": NaN"), "{worker_out}");
    // The two unreadable payloads: no line, one warning, and the run went on to its end.
    assert_eq!(
        worker_err.matches("rlctl_progress: warning:").count(),
        1,
        "{worker_err}"
    );
    // The driver printed none itself: each line it shows is the worker's, under Ray's prefix.
    let prefix = format!("\x1b[36m(skyrl_entrypoint pid={trainer})\x1b[0m WANDB_MIRROR ");
    let forwarded: Vec<&str> = out.lines().filter(|l| l.contains("WANDB_MIRROR")).collect();
    assert!(!forwarded.is_empty(), "{out}\n{err}");
    assert!(forwarded.iter().all(|l| l.starts_with(&prefix)), "{out}");
    let log = dir.path().join("job.out");
    std::fs::write(&log, &worker_out).unwrap();
    let metrics = ok(crate::common::rlctl()
        .arg("metrics")
        .arg(&log)
        .arg("--json"));
    let seen: serde_json::Value = serde_json::from_str(&stdout(&metrics)).unwrap();
    let steps = |kind: &str| -> Vec<u64> {
        (seen[kind].as_array().unwrap().iter())
            .map(|s| s["step"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(steps("train"), [1, 2, 3]);
    assert_eq!(steps("eval"), [0, 2]);
    let first = &seen["train"][0]["metrics"];
    assert_eq!(first["policy/loss"].as_f64(), Some(1.0 / 3.0));
    assert_eq!(first["numpy/value"].as_f64(), Some(1.0 / 7.0));
    assert_eq!(first["trainer/global_step"].as_f64(), Some(1.0));
    assert!(
        first.get("flag").is_none() && first.get("note").is_none(),
        "{first}"
    );
    assert_eq!(seen["eval"][1]["metrics"]["eval/all/avg_score"], 0.25);
}

/// In the driver: one hook however often it is installed, and subclasses of the trainer (as
/// upstream's on-policy distillation trainer is) get the callback once.
#[test]
fn the_progress_hook_is_installed_once_and_reaches_subclasses() {
    let dir = tempfile::tempdir().unwrap();
    let (checkout, progress) = progress_checkout(dir.path());
    let check = r#"
import sys
from types import SimpleNamespace
sys.path.insert(0, sys.argv[1])
import rlctl_progress
from skyrl.train.trainer import RayPPOTrainer
from skyrl.train.utils.tracking import Tracking
assert rlctl_progress.install_hook() and rlctl_progress.install_hook()
class Distill(RayPPOTrainer):
    pass
cfg = SimpleNamespace(trainer=SimpleNamespace(max_training_steps=1, ckpt_path=sys.argv[2]))
trainer = Distill(cfg, Tracking("p", "e", backend="console"))
progress = [c for c in trainer._callback_handler.callbacks if type(c).__name__ == "Progress"]
print(len(progress))
"#;
    let out = ok(Command::new("python3")
        .args(["-c", check])
        .arg(progress.parent().unwrap())
        .arg(dir.path())
        .current_dir(&checkout)
        .env("PYTHONPATH", &checkout));
    assert_eq!(stdout(&out).trim(), "1");
}

#[test]
fn async_megatron_saves_keeping_under_two_checkpoints_are_refused_before_the_queue() {
    let sandbox = upstream_sandbox();
    let check = |keep: &str, exit: i32| {
        let keep = format!("trainer.max_ckpts_to_keep={keep}");
        let save = "trainer.policy.megatron_config.async_dist_ckpt_save=true";
        sandbox.findings(&["check", "gsm8k-canary", "--", save, &keep], exit)
    };
    let keys = [
        "trainer.policy.megatron_config.async_dist_ckpt_save",
        "trainer.max_ckpts_to_keep",
    ];
    let refused = check("1", 1);
    assert_found(&refused, "problem", "ckpt-keep", &keys);
    let rule = refused.iter().find(|f| f.code == "ckpt-keep").unwrap();
    assert!(
        rule.message
            .contains("set `trainer.max_ckpts_to_keep=2` or more"),
        "{rule:?}"
    );
    for keep in ["2", "-1"] {
        assert!(!fired(&check(keep, 0), "ckpt-keep"), "{keep}");
    }
}
