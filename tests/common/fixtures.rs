//! Fixtures more than one test module uses: staged sandboxes, run folders, the stand-ins a job
//! finds on PATH, the ledger's logs, hydra knobs. Kept here so that no test module imports
//! another's.

use super::{Sandbox, write_exec, write_parquet};
use rlctl::schema::knob::{Knob, KnobValue, Origin};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const STANDIN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/standin/MarinSkyRL/skyrl-train/skyrl_train"
);

/// A sandbox whose gsm8k train split is the real one's size: 7,473 rows.
pub fn staged() -> Sandbox {
    let sandbox = Sandbox::new();
    write_parquet(&sandbox.root().join("work/data/gsm8k/train.parquet"), 7473);
    sandbox
}

pub fn run_dir(sandbox: &Sandbox, group: &str, member: &str, attempt: &str) -> PathBuf {
    sandbox
        .root()
        .join("work/runs")
        .join(group)
        .join(member)
        .join(attempt)
}

/// The stand-ins the job finds on PATH, and the real tools it uses, nothing else.
pub fn stand_ins(root: &Path) -> PathBuf {
    let bin = root.join("standin");
    std::fs::create_dir_all(&bin).unwrap();
    for tool in [
        "awk", "bash", "cat", "cut", "date", "env", "hostname", "mkdir", "mv", "realpath", "rm",
        "seq", "setsid", "sh", "sleep", "timeout", "tr",
    ] {
        let real = ["/usr/bin", "/bin"]
            .iter()
            .map(|d| Path::new(d).join(tool))
            .find(|p| p.exists())
            .unwrap_or_else(|| panic!("{tool} is not installed"));
        std::os::unix::fs::symlink(real, bin.join(tool)).unwrap();
    }
    write_exec(
        &bin.join("srun"),
        "#!/bin/bash\nwhile [[ \"$1\" == -* ]]; do [ \"$1\" = -w ] && shift; shift; done\nexec \"$@\"\n",
    );
    write_exec(&bin.join("scontrol"), "#!/bin/bash\nprintf 'n1\\nn2\\n'\n");
    write_exec(
        &bin.join("ip"),
        "#!/bin/bash\necho '1: lo    inet 127.0.0.1/8 scope host lo'\n",
    );
    // The payload's own program: if anything runs it, the file appears.
    write_exec(&bin.join("touch"), "#!/bin/bash\n: > \"$PWNED\"\n");
    bin
}

/// The log of every recorded run, by target, from the ledger.
pub fn recorded_logs(sandbox: &Sandbox) -> BTreeMap<String, PathBuf> {
    let ledger = std::fs::read_to_string(sandbox.root().join("work/runs/ledger.jsonl")).unwrap();
    (ledger.lines())
        .map(|line| {
            let record: serde_json::Value = serde_json::from_str(line).unwrap();
            let field = |name: &str| record[name].as_str().unwrap().to_owned();
            (field("target"), PathBuf::from(field("log")))
        })
        .collect()
}

pub fn knob(arg: &str) -> Knob {
    let (key, value) = arg.split_once('=').unwrap_or((arg, ""));
    let knob = Knob {
        key: key.to_owned(),
        value: KnobValue::Verbatim(value.to_owned()),
        origin: Origin::CommandLine,
    };
    assert_eq!(knob.hydra_arg(), arg, "the corpus must round-trip");
    knob
}

/// A node whose venv python is the system's, and whose SkyRL checkout holds the stand-in.
pub fn standin_node(root: &Path) {
    std::fs::create_dir_all(root.join("venv/bin")).unwrap();
    write_exec(
        &root.join("venv/bin/python"),
        "#!/bin/bash\nexec python3 \"$@\"\n",
    );
    let package = root.join("skyrl/skyrl-train/skyrl_train");
    copy_dir(Path::new(STANDIN), &package);
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Whether process `pid` is gone (or a zombie left for whoever reaps orphans here) within 3 s:
/// SIGKILL is delivered, and an orphan reaped, a moment after the kill returns, so a test waits
/// for that (bounded) rather than reading `/proc` the instant rlctl returns.
pub fn gone_soon(pid: &str) -> bool {
    let alive = || {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()));
        // The state is the first field after the command name's closing parenthesis.
        stat.is_ok_and(|s| !s.rsplit(") ").next().unwrap_or("").starts_with('Z'))
    };
    let start = std::time::Instant::now();
    while alive() && start.elapsed() < std::time::Duration::from_secs(3) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    !alive()
}

/// A whole `global_step_{step}` in `ckpt`, laid out as SkyRL's FSDP save writes it: every rank
/// of `world`'s model, optim and extra-state files and rank 0's `fsdp_config.json` under
/// `policy/`, then `data.pt` and `trainer_state.pt`. The pointer is left as it is.
pub fn whole_step(ckpt: &Path, step: u64, world: u64) {
    let dir = ckpt.join(format!("global_step_{step}"));
    let policy = dir.join("policy");
    std::fs::create_dir_all(policy.join("huggingface")).unwrap();
    for rank in 0..world {
        for kind in ["model", "optim", "extra_state"] {
            let name = format!("{kind}_world_size_{world}_rank_{rank}.pt");
            std::fs::write(policy.join(name), "shard").unwrap();
        }
    }
    let config = format!("{{\"fsdp_strategy\": \"fsdp2\", \"world_size\": {world}}}");
    std::fs::write(policy.join("fsdp_config.json"), config).unwrap();
    std::fs::write(dir.join("data.pt"), "data").unwrap();
    std::fs::write(dir.join("trainer_state.pt"), "state").unwrap();
}

/// A checkpoint of `step` saved as SkyRL saves it, on the canary's 4 GPUs: the whole step's
/// folder ([`whole_step`]), then the pointer naming it.
pub fn save_whole(ckpt: &Path, step: u64) {
    whole_step(ckpt, step, 4);
    std::fs::write(ckpt.join("latest_ckpt_global_step.txt"), step.to_string()).unwrap();
}
