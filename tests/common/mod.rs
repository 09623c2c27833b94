//! Shared by the integration tests: the real rlctl binary, a throwaway cluster profile whose
//! roots live in a temp dir, and a fake `sbatch` first on PATH.
#![allow(dead_code)]

mod expect;
pub mod findings;
mod fixtures;
pub mod mcp;
pub mod report_cells;
#[allow(unused_imports)]
pub use expect::{Expect, expect};
#[allow(unused_imports)]
pub use fixtures::*;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub const BIN: &str = env!("CARGO_BIN_EXE_rlctl");

/// rlctl with none of the user's RLCTL_* settings leaking in, nor their presets folder
/// (`~/.config/rlctl`, which `rlctl init` writes).
pub fn rlctl() -> Command {
    let mut cmd = Command::new(BIN);
    for var in [
        "RLCTL_CLUSTER",
        "RLCTL_PRESETS",
        "RLCTL_SBATCH",
        "RLCTL_SQUEUE",
        "RLCTL_SINFO",
        "RLCTL_SCONTROL",
        "RLCTL_SACCTMGR",
        "RLCTL_DISCOVER_ROOT",
        "RLCTL_WAIT_INTERVAL",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("XDG_CONFIG_HOME", "/nonexistent/rlctl-test-config");
    cmd
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

/// Runs rlctl with `args` and returns its output, asserting it succeeded.
pub fn ok(cmd: &mut Command) -> Output {
    let output = cmd.output().unwrap();
    assert!(
        output.status.success(),
        "rlctl failed: {:?}\nstdout:\n{}\nstderr:\n{}",
        cmd,
        stdout(&output),
        stderr(&output)
    );
    output
}

/// Runs rlctl expecting failure; returns stderr.
pub fn fails(cmd: &mut Command) -> String {
    let output = cmd.output().unwrap();
    assert!(
        !output.status.success(),
        "rlctl unexpectedly succeeded: {:?}\nstdout:\n{}",
        cmd,
        stdout(&output)
    );
    stderr(&output)
}

/// A temp dir holding a `test` cluster profile (runtime `none`, every root inside the dir), a
/// presets folder for it, and a fake sbatch that records each call and prints job ids from 1001.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("presets/clusters")).unwrap();
        std::fs::write(
            root.join("presets/clusters/test.toml"),
            test_profile(root, "none"),
        )
        .unwrap();
        stage_offline_files(root);
        std::fs::create_dir_all(root.join("bin")).unwrap();
        std::fs::create_dir_all(root.join("sbatch-calls")).unwrap();
        write_exec(&root.join("bin/sbatch"), FAKE_SBATCH);
        write_exec(&root.join("bin/squeue"), FAKE_SQUEUE);
        Sandbox { dir }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn presets(&self) -> PathBuf {
        self.root().join("presets")
    }

    /// rlctl on the test cluster (through RLCTL_CLUSTER and RLCTL_PRESETS, so `--cluster` can
    /// still pick another), with the fake sbatch first on PATH.
    pub fn rlctl(&self) -> Command {
        let mut cmd = rlctl();
        let path = format!(
            "{}:{}",
            self.root().join("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        cmd.env("PATH", path)
            .env("FAKE_SBATCH_DIR", self.root().join("sbatch-calls"))
            .env("RLCTL_CLUSTER", "test")
            .env("RLCTL_PRESETS", self.presets());
        cmd
    }

    /// The argv (after `sbatch`) of the n-th sbatch call, from 1.
    pub fn sbatch_argv(&self, n: usize) -> Vec<String> {
        let text =
            std::fs::read_to_string(self.root().join(format!("sbatch-calls/argv.{n}"))).unwrap();
        text.lines().map(str::to_owned).collect()
    }

    /// The script the last sbatch call submitted: `<run folder>/sbatch.sh`.
    pub fn last_script(&self) -> PathBuf {
        PathBuf::from(self.sbatch_argv(self.sbatch_calls()).last().unwrap())
    }

    /// Replaces the fake sbatch by one that takes `seconds` to answer (a wide window for
    /// races) and then puts its job in the queue the fake squeue prints, PENDING, under the
    /// job name of the script's `#SBATCH --job-name`, as a real controller would.
    pub fn queueing_sbatch(&self, seconds: f64) {
        let fake = self.root().join("bin/sbatch");
        std::fs::rename(&fake, self.root().join("bin/sbatch-real")).unwrap();
        write_exec(
            &fake,
            &format!(
                "#!/bin/bash\nsleep {seconds}\nscript=\"${{*: -1}}\"\n\
                 name=$(sed -n 's/^#SBATCH --job-name=//p' \"$script\")\n\
                 id=$(\"$(dirname \"$0\")/sbatch-real\" \"$@\") || exit 1\n\
                 echo \"$id|$name|PENDING|boost_qos_dbg\" >> \"$FAKE_SBATCH_DIR/queue\"\necho \"$id\"\n"
            ),
        );
    }

    /// Gives the test profile's debug QOS a submit limit of `n` jobs per user (Leonardo's is 2).
    pub fn debug_submit_limit(&self, n: u32) {
        let path = self.presets().join("clusters/test.toml");
        let text = std::fs::read_to_string(&path).unwrap();
        let from = "name = \"boost_qos_dbg\"\nmax_wall = \"00:30:00\"\nmax_nodes = 2\n";
        assert!(text.contains(from));
        let to = format!("{from}max_submit_jobs = {n}\n");
        std::fs::write(path, text.replace(from, &to)).unwrap();
    }

    /// Sets the fake squeue's queue: lines of `id|name|state[|qos[|reason]]`.
    pub fn queue(&self, lines: &str) {
        std::fs::write(self.root().join("sbatch-calls/queue"), lines).unwrap();
    }

    /// A stand-in sacct first on PATH that prints `lines` (`id|state|exit code`) whatever it is
    /// asked.
    pub fn sacct(&self, lines: &str) {
        let text: String = lines.lines().map(|l| format!("echo '{l}'\n")).collect();
        write_exec(
            &self.root().join("bin/sacct"),
            &format!("#!/bin/bash\n{text}"),
        );
    }

    /// A stand-in scancel first on PATH: records its argv, one call per line, in
    /// `sbatch-calls/scancel`, and takes the jobs out of the queue.
    pub fn scancel(&self) {
        write_exec(
            &self.root().join("bin/scancel"),
            "#!/bin/bash\necho \"$*\" >> \"$FAKE_SBATCH_DIR/scancel\"\n\
             for id in \"$@\"; do sed -i \"/^$id|/d\" \"$FAKE_SBATCH_DIR/queue\"; done\n",
        );
    }

    pub fn sbatch_calls(&self) -> usize {
        std::fs::read_to_string(self.root().join("sbatch-calls/count"))
            .map(|t| t.trim().parse().unwrap())
            .unwrap_or(0)
    }
}

/// The rendered wrapper `script` started as SLURM starts slot `restarts + 1` of job `job_id`: in
/// its own session, `SLURM_RESTART_COUNT` set after the first slot, its output appended to `log`
/// (`--open-mode=append`). The caller adds the environment its stand-ins need.
pub fn slurm_slot(script: &Path, log: &Path, job_id: &str, restarts: u32) -> Command {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .unwrap();
    let mut cmd = Command::new("setsid");
    cmd.arg("bash")
        .arg(script)
        .env("SLURM_JOB_ID", job_id)
        .stdin(std::process::Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log);
    if restarts > 0 {
        cmd.env("SLURM_RESTART_COUNT", restarts.to_string());
    }
    cmd
}

/// The lines of a file a stand-in appends to, none while it has written nothing.
pub fn lines_of(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// What the login node stages before a launch: the embedded presets' models in the HF cache
/// (their real architectures, for the size checks) and their parquet files.
pub fn stage_offline_files(root: &Path) {
    for (model, config) in [
        ("Qwen/Qwen2.5-1.5B-Instruct", QWEN25_15B),
        ("Qwen/Qwen3-1.7B", QWEN3_17B),
    ] {
        let snapshot = root
            .join("work/hub")
            .join(format!("models--{}", model.replace('/', "--")))
            .join("snapshots/0123abcd");
        std::fs::create_dir_all(&snapshot).unwrap();
        std::fs::write(snapshot.join("config.json"), config).unwrap();
        complete_model(&snapshot);
    }
    for (dataset, files) in [
        ("gsm8k", ["train.parquet", "validation.parquet"]),
        ("math", ["train.parquet", "validation.parquet"]),
    ] {
        let dir = root.join("work/data").join(dataset);
        std::fs::create_dir_all(&dir).unwrap();
        for file in files {
            write_parquet(&dir.join(file), SANDBOX_ROWS);
        }
    }
}

/// Real-architecture configs for the OPD teachers, so the GPU check sizes them as it would.
pub const QWEN3_32B: &str = r#"{"hidden_size": 5120, "intermediate_size": 25600, "num_attention_heads": 64,
  "num_hidden_layers": 64, "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151936}"#;
pub const QWEN3_8B: &str = r#"{"hidden_size": 4096, "intermediate_size": 12288, "num_attention_heads": 32,
  "num_hidden_layers": 36, "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151936}"#;

/// The OPD teachers (Qwen3-32B and -8B) in the sandbox's HF cache.
pub fn stage_teachers(root: &Path) {
    for (model, config) in [("Qwen--Qwen3-32B", QWEN3_32B), ("Qwen--Qwen3-8B", QWEN3_8B)] {
        let snap = root.join(format!("work/hub/models--{model}/snapshots/0123abcd"));
        std::fs::create_dir_all(&snap).unwrap();
        std::fs::write(snap.join("config.json"), config).unwrap();
        complete_model(&snap);
    }
}

/// What `hf download` leaves next to config.json: a tokenizer and the weights (empty stand-ins;
/// `tokenizer.model`, which the teacher's vocabulary check does not read, so it stays as it was).
pub fn complete_model(dir: &Path) {
    for file in [
        "tokenizer_config.json",
        "tokenizer.model",
        "model.safetensors",
    ] {
        if !dir.join(file).exists() {
            std::fs::write(dir.join(file), "").unwrap();
        }
    }
}

/// Rows of each of the sandbox's parquet files: 100 steps of the canary's batch of 32, which at
/// its reference 9.58 s/step fit one 30-minute slot.
pub const SANDBOX_ROWS: i32 = 3200;

/// A real parquet file of `rows` rows (one INT32 column), as the login node stages it.
pub fn write_parquet(path: &Path, rows: i32) {
    use parquet::data_type::Int32Type;
    use parquet::file::writer::SerializedFileWriter;
    use parquet::schema::parser::parse_message_type;
    let schema =
        std::sync::Arc::new(parse_message_type("message m { REQUIRED INT32 id; }").unwrap());
    let file = std::fs::File::create(path).unwrap();
    let mut writer = SerializedFileWriter::new(file, schema, Default::default()).unwrap();
    let mut group = writer.next_row_group().unwrap();
    let values: Vec<i32> = (0..rows).collect();
    while let Some(mut column) = group.next_column().unwrap() {
        (column.typed::<Int32Type>())
            .write_batch(&values, None, None)
            .unwrap();
        column.close().unwrap();
    }
    group.close().unwrap();
    writer.close().unwrap();
}

pub const QWEN25_15B: &str = r#"{"architectures": ["Qwen2ForCausalLM"], "hidden_size": 1536, "intermediate_size": 8960,
  "num_attention_heads": 12, "num_hidden_layers": 28, "num_key_value_heads": 2, "vocab_size": 151936,
  "tie_word_embeddings": true}"#;

pub const QWEN3_17B: &str = r#"{"architectures": ["Qwen3ForCausalLM"], "hidden_size": 2048, "intermediate_size": 6144,
  "num_attention_heads": 16, "num_hidden_layers": 28, "num_key_value_heads": 8, "head_dim": 128,
  "vocab_size": 151936, "tie_word_embeddings": true}"#;

pub fn write_exec(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A profile shaped like Leonardo's, with its roots under `root`.
pub fn test_profile(root: &Path, runtime: &str) -> String {
    let container = if runtime == "none" {
        "runtime = \"none\"\n".to_owned()
    } else {
        format!(
            "runtime = \"singularity\"\nprogram = \"{}\"\nimage = \"${{ROOT}}/image\"\nbinds = [\"${{ROOT}}\"]\n",
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/cluster/singularity-shim")
                .display()
        )
    };
    format!(
        r#"description = "throwaway test cluster"

[vars]
ROOT = "{root}"

[slurm]
account = "rlctl_test"
partition = "boost_usr_prod"

[[slurm.qos]]
name = "boost_qos_dbg"
max_wall = "00:30:00"
max_nodes = 2

[[slurm.qos]]
name = "normal"
max_wall = "23:59:00"
max_nodes = 64

[node]
gpus = 4
cpus = 32
mem = "480G"
gpu_type = "A100-64GB"
gpu_mem_gib = 64
max_gpu_memory_utilization = 0.85
max_params_b_one_node = 30
interconnect = "lo"

[storage]
work = "${{ROOT}}/work"
scratch = "${{ROOT}}/scratch"
checkpoints_on = "work"
checkpoint_root = "${{ROOT}}/work/checkpoints"
run_root = "${{ROOT}}/work/runs"
data_root = "${{ROOT}}/work/data"
hf_home = "${{ROOT}}/work/hub"
home = "${{ROOT}}/scratch/home"
cache_root = "${{ROOT}}/scratch/cache"
ray_tmp_root = "/tmp"

[software]
skyrl = "${{ROOT}}/skyrl"
venv = "${{ROOT}}/venv"
gcc_bin = "/usr/bin"
schema = "marinskyrl-a559688"

[container]
{container}"#,
        root = root.display()
    )
}

/// Prints the lines of $FAKE_SBATCH_DIR/queue, as `squeue --format=%i|%j|%T|%q|%r` would (a
/// line without its reason, as older stand-ins write, still reads).
const FAKE_SQUEUE: &str = r#"#!/bin/bash
cat "$FAKE_SBATCH_DIR/queue" 2>/dev/null || true
"#;

/// Records its argv (one per line) and script, then prints a job id, or fails when
/// FAKE_SBATCH_FAIL_AT is reached; FAKE_SBATCH_NOTICE adds notices around the id, and
/// FAKE_SBATCH_NO_ID succeeds without printing one. A stand-in for sbatch; the real one is in the cluster tests.
const FAKE_SBATCH: &str = r#"#!/bin/bash
set -eu
dir="$FAKE_SBATCH_DIR"
n=$(( $(cat "$dir/count" 2>/dev/null || echo 0) + 1 ))
echo "$n" > "$dir/count"
printf '%s\n' "$@" > "$dir/argv.$n"
script="${*: -1}"
cp "$script" "$dir/script.$n"
if [ -n "${FAKE_SBATCH_FAIL_AT:-}" ] && [ "$n" -ge "$FAKE_SBATCH_FAIL_AT" ]; then
  echo "sbatch: error: invalid partition specified: boost_usr_prod" >&2
  echo "sbatch: error: Batch job submission failed: Invalid partition name specified" >&2
  exit 1
fi
# A site's notices around the id, as some clusters print them.
[ -z "${FAKE_SBATCH_NOTICE:-}" ] || echo "sbatch: NOTICE: $FAKE_SBATCH_NOTICE"
[ -n "${FAKE_SBATCH_NO_ID:-}" ] || echo "$((1000 + n))"
[ -z "${FAKE_SBATCH_NOTICE:-}" ] || echo "sbatch: NOTICE: project hours left: 12345"
"#;

/// The plan of a preset or cell named as on the command line (`preset` or `grid/cell`).
pub fn plan_of(
    library: &rlctl::preset::Library,
    cluster: &rlctl::preset::cluster::Cluster,
    name: &str,
    options: &rlctl::plan::PlanOptions,
    overrides: &[rlctl::schema::knob::Knob],
) -> rlctl::error::Result<rlctl::plan::Plan> {
    let selection = library.select(name, rlctl::preset::Want::Target)?;
    let schema = library.trainer_schema(cluster)?;
    rlctl::plan::Plan::resolve(&selection, cluster, &schema, options, overrides)
}

/// A rendered script passes `bash -n` and shellcheck (style and up).
pub fn check_script(path: &Path) {
    let syntax = Command::new("bash").arg("-n").arg(path).output().unwrap();
    assert!(
        syntax.status.success(),
        "bash -n {}: {}",
        path.display(),
        String::from_utf8_lossy(&syntax.stderr)
    );
    let lint = Command::new("shellcheck")
        .args(["--shell=bash", "--severity=style"])
        .arg(path)
        .output()
        .expect("shellcheck is required for the test suite: apt-get install shellcheck (tests/setup.sh does)");
    assert!(
        lint.status.success(),
        "shellcheck {}:\n{}",
        path.display(),
        String::from_utf8_lossy(&lint.stdout)
    );
}

/// Runs a python oracle of the tests (`python3 SCRIPT ARGS...`) with `input` on its stdin and
/// returns its stdout; a missing python3 or package fails the test with `setup`, the fix.
pub fn python_oracle(script: &str, args: &[&str], input: &[u8], setup: &str) -> String {
    use std::io::Write as _;
    use std::process::Stdio;
    let mut child = Command::new("python3")
        .arg(script)
        .args(args)
        .env_remove("WANDB_API_KEY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run python3 ({e}): {setup}"));
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    // Written from its own thread: a large input must not wait on an output nobody reads.
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(
        output.status.success(),
        "the oracle {script} failed ({}): {setup}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}
