//! `--deep`: the plan judged by SkyRL itself. The checkout's own hydra composition (upstream
//! skyrl: `SkyRLTrainConfig.from_cli_overrides`) and `validate_cfg` run with the cluster's venv,
//! in the job's container, on the login node, and their verdict becomes a `[skyrl-deep]` problem, SkyRL's message verbatim. Slower than the
//! Rust mirror (`skyrl_rules`), which runs first; exact for whatever checkout the cluster runs.

use crate::check::{Check, Finding};
use crate::plan::Plan;
use crate::plan::env::LEAKY_VARS;
use crate::preset::cluster::Runtime;
use crate::preset::container::Exec;
use crate::util::process::kill_group;
use camino::Utf8Path;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The Python run by the venv: imports the entrypoint, composes (or, upstream, parses),
/// validates, prints one JSON line.
const SCRIPT: &str = include_str!("deep.py");

/// The argv that runs [`SCRIPT`] as the job runs its trainer: the container's `exec` with the
/// plan's image, binds, working folder and environment (one node's form of the `container`
/// array in templates/sbatch.sh.tera: [`Container::exec_argv`]), then `$VENV_PY -c SCRIPT
/// ENTRYPOINT OVERRIDE...` with the overrides the trainer gets, in its order. With runtime
/// `none` the job runs `env VARS...` in the checkout's folder: [`run`] does the same.
pub fn argv(plan: &Plan) -> Vec<String> {
    let mut argv = plan.container.exec_argv(&Exec {
        gpus: true,
        pwd: plan.paths.trainer_dir.as_str(),
        env: &plan.env,
    });
    argv.extend([
        plan.paths.venv_python.to_string(),
        "-c".to_owned(),
        SCRIPT.to_owned(),
        plan.entrypoint.clone(),
    ]);
    argv.extend(plan.trainer_overrides().map(|k| plan.trainer_arg(k)));
    argv
}

/// What the deep check found for one plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Passed,
    /// SkyRL (or hydra) refused the plan: the message names the fix.
    Refused(String),
    /// The check itself could not run (no container program, no venv, a crash, the time limit).
    CouldNotRun(String),
}

/// The deep check of a plan the checks in Rust passed: a note that SkyRL accepts it, or the
/// problem (SkyRL's refusal, or why the check could not run, also a problem: a plan nobody
/// could judge is not submitted with `--deep`).
pub fn finding(plan: &Plan, limit: Duration) -> std::result::Result<Finding, Finding> {
    let finding = |message| Finding::new(Check::SkyrlDeep, message);
    match check(plan, limit) {
        Verdict::Passed => Ok(finding(format!(
            "SkyRL's own config and validate_cfg in `{}` accept the plan",
            plan.paths.trainer_dir
        ))),
        Verdict::Refused(message) => Err(finding(message)),
        Verdict::CouldNotRun(why) => Err(finding(format!("the deep check could not run: {why}"))),
    }
}

/// Runs the deep check of `plan`, waiting at most `limit` before killing it.
pub fn check(plan: &Plan, limit: Duration) -> Verdict {
    let checkout = &plan.paths.trainer_dir;
    if let Some(why) = missing(plan) {
        return Verdict::CouldNotRun(why);
    }
    let argv = argv(plan);
    let (stdout, stderr, status) = match run(plan, &argv, limit) {
        Ok(ran) => ran,
        Err(why) => return Verdict::CouldNotRun(why),
    };
    let Some(answer) = stdout.lines().rev().find_map(parse) else {
        let tail: Vec<&str> = (stderr.lines().rev())
            .filter(|l| !l.trim().is_empty())
            .take(3)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .map(str::trim)
            .collect();
        let said = match tail.is_empty() {
            true => String::new(),
            false => format!("; it said: {}", tail.join(" / ")),
        };
        return Verdict::CouldNotRun(format!(
            "`{}` ended ({status}) without a verdict{said}: run `rlctl doctor` to check the container and the venv",
            argv[0]
        ));
    };
    match answer {
        Answer::Ok => Verdict::Passed,
        Answer::Failed { stage, error } => Verdict::Refused(match stage.as_str() {
            "import" => format!(
                "`{}` does not import with the venv's python: {error}; fix the checkout `{checkout}` or the venv `{}` (rlctl doctor)",
                plan.entrypoint, plan.paths.venv_python
            ),
            "parse" => format!(
                "upstream skyrl's `SkyRLTrainConfig.from_cli_overrides` refuses these overrides: {error}; this is the \
                 config of the checkout `{checkout}`; change the override or the checkout"
            ),
            "compose" => format!(
                "hydra cannot compose the config of `{}` with these overrides: {error}; this is the config of the checkout `{checkout}`; change the override or the checkout",
                plan.entrypoint
            ),
            _ => format!(
                "SkyRL refuses the plan: {error}; this is SkyRL's own validate_cfg in `{checkout}`; change the knob or the checkout"
            ),
        }),
    }
}

/// The container program or the venv's python missing on this machine: said before trying.
/// Binds are in place (the profile allows no other), so the venv's path is the host's.
fn missing(plan: &Plan) -> Option<String> {
    let program = &plan.container.program;
    if plan.container.runtime.in_container() && !on_this_machine(program) {
        let modules = match plan.container.modules.is_empty() {
            true => String::new(),
            false => format!(
                " (`module load {}` first)",
                plan.container.modules.join(" ")
            ),
        };
        return Some(format!(
            "the container program `{program}` does not exist on this machine{modules}: fix `container.program` in the cluster profile, or check without --deep"
        ));
    }
    let python = &plan.paths.venv_python;
    (!python.exists()).then(|| {
        format!(
            "the venv's python `{python}` does not exist on this machine: create the venv (rlctl doctor shows how) or fix `software.venv` in the cluster profile"
        )
    })
}

/// A program path that is a file, or a bare name found on PATH.
pub fn on_this_machine(program: &Utf8Path) -> bool {
    if program.is_absolute() {
        return program.is_file();
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).any(|dir| dir.join(program.as_std_path()).is_file())
}

enum Answer {
    Ok,
    Failed { stage: String, error: String },
}

/// The script's JSON line; anything else the imports printed is not one.
fn parse(line: &str) -> Option<Answer> {
    let value: serde_json::Value = serde_json::from_str(line.trim()).ok()?;
    let ok = value.get("ok")?.as_bool()?;
    if ok {
        return Some(Answer::Ok);
    }
    Some(Answer::Failed {
        stage: value.get("stage")?.as_str()?.to_owned(),
        error: value.get("error")?.as_str()?.to_owned(),
    })
}

/// Runs `argv` as the job would (the leaky variables dropped, the node's variables set, in the
/// checkout's folder without a container), in its own process group, all of which is killed at
/// the limit. Returns stdout, stderr and the exit status.
fn run(
    plan: &Plan,
    argv: &[String],
    limit: Duration,
) -> std::result::Result<(String, String, String), String> {
    let mut command = Command::new(&argv[0]);
    command
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    for var in LEAKY_VARS {
        command.env_remove(var);
    }
    command.envs(plan.host_env.iter().map(|(k, v)| (k, v)));
    if plan.container.runtime == Runtime::None {
        command
            .envs(plan.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&plan.paths.trainer_dir);
    }
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot run `{}`: {e}", argv[0]))?;
    let stdout = Pipe::read(child.stdout.take());
    let stderr = Pipe::read(child.stderr.take());
    let start = Instant::now();
    let mut exited_at: Option<Instant> = None;
    // Reaped only once its pipes are closed or its group killed: until then its id stays the
    // group's, so a kill reaches the group (and anything it left holding the pipes), never a
    // stranger. Its exit is seen without reaping it, as a zombie.
    let status = loop {
        if stdout.is_finished() && stderr.is_finished() {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) => {}
                Err(e) => return Err(format!("waiting for `{}`: {e}", argv[0])),
            }
        }
        if exited_at.is_none() && is_zombie(child.id()) {
            exited_at = Some(Instant::now());
        }
        // It has exited and printed its verdict, but something it started (a Ray or vLLM
        // helper, a `sleep &`) keeps its stdout open: the verdict is in, the rest is ended.
        if exited_at.is_some_and(|at| at.elapsed() >= EXIT_GRACE) {
            kill_group(child.id());
            let status = child
                .wait()
                .map_err(|e| format!("waiting for `{}`: {e}", argv[0]))?;
            // The pipes close with the group; a process that left it may hold them on.
            stdout.wait(EXIT_GRACE);
            stderr.wait(EXIT_GRACE);
            break status;
        }
        if start.elapsed() >= limit {
            kill_group(child.id());
            let _ = child.wait();
            return Err(format!(
                "it did not finish within {} s (torch's imports are slow on a busy Lustre): raise `[check] deep_timeout_s` in the cluster profile, or check without --deep",
                limit.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Ok((stdout.text(), stderr.text(), status.to_string()))
}

/// How long the check's pipes may stay open after the process it started has exited.
const EXIT_GRACE: Duration = Duration::from_millis(500);

/// Whether process `pid`, a child not yet reaped, has exited (Linux's `/proc`; elsewhere it
/// counts as running, and the pipes closing or the time limit end the wait).
fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let state = stat.rsplit_once(')')?.1.trim_start().chars().next()?;
            Some(state == 'Z' || state == 'X')
        })
        .unwrap_or(false)
}

/// One of the child's pipes read on a thread of its own, so neither blocks it; what has been
/// read so far can be taken while a process it started still holds the pipe.
struct Pipe {
    text: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    thread: std::thread::JoinHandle<()>,
}

impl Pipe {
    fn read(pipe: Option<impl Read + Send + 'static>) -> Pipe {
        let text = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = text.clone();
        let thread = std::thread::spawn(move || {
            let Some(mut pipe) = pipe else { return };
            let mut chunk = [0u8; 8192];
            loop {
                match pipe.read(&mut chunk) {
                    Ok(0) => return,
                    Ok(n) => sink
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .extend(&chunk[..n]),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => return,
                }
            }
        });
        Pipe { text, thread }
    }

    fn is_finished(&self) -> bool {
        self.thread.is_finished()
    }

    /// Waits at most `limit` for the pipe to close.
    fn wait(&self, limit: Duration) {
        let start = Instant::now();
        while !self.is_finished() && start.elapsed() < limit {
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn text(&self) -> String {
        let bytes = self.text.lock().unwrap_or_else(|p| p.into_inner());
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verdict_line_among_other_output() {
        assert!(matches!(
            parse(r#"{"ok": true, "stage": "validate", "error": null}"#),
            Some(Answer::Ok)
        ));
        assert!(matches!(
            parse(r#"{"ok": false, "stage": "compose", "error": "E: m"}"#),
            Some(Answer::Failed { stage, error }) if stage == "compose" && error == "E: m"
        ));
        assert!(parse("INFO 12-01 loading torch").is_none());
        assert!(parse("{\"other\": 1}").is_none());
    }
}
