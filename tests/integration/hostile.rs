//! Nothing injected, proved by running it: every string of a cluster profile, run preset and
//! grid is made hostile (quotes, `$()`, backticks, newlines, `;`, globs, spaces, each carrying a
//! `touch pwned` payload). Each is either refused when it loads, with a message naming its field,
//! or rendered; bash then runs the rendered wrapper and run script under a tracer (xtrace on a
//! file of its own, through `BASH_ENV`), with stand-ins for SLURM, singularity and the trainer on
//! `PATH`, and no command runs but the ones the scripts mean to run.

use crate::common::stand_ins;
use crate::common::{plan_of, write_exec};
use proptest::prelude::*;
use rlctl::plan::{Plan, PlanOptions};
use rlctl::preset::Library;
use rlctl::render::render;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// Every field a hostile string goes into. The name is how a refusal must name it.
const FIELDS: &[&str] = &[
    "description holds",
    "slurm.account",
    "slurm.partition",
    "slurm.qos.name",
    "node.mem",
    "node.gpu_type",
    "node.interconnect",
    "storage.work",
    "storage.scratch",
    "storage.checkpoint_root",
    "storage.run_root",
    "storage.data_root",
    "storage.hf_home",
    "storage.home",
    "storage.cache_root",
    "storage.ray_tmp_root",
    "software.skyrl",
    "software.venv",
    "software.gcc_bin",
    "software.hf",
    "software.stage_python",
    "container.program",
    "container.image",
    "container.binds",
    "env.RLCTL_HOSTILE",
    "entrypoint `",
    "model.policy `",
    "data.dataset `",
    // Never refused: a comment line, and hydra text in single quotes.
    "preset description",
    "preset knob",
    "grid description",
    "cell description",
    "cell knob",
];

/// What the rendered scripts mean to run: builtins, keywords, their functions and the programs
/// they call. A command named by a hostile string would be none of these.
const EXPECTED: &[&str] = &[
    "[",
    "[[",
    "((",
    ":",
    "awk",
    "bash",
    "break",
    "case",
    "cat",
    "cd",
    "command",
    "date",
    "disown",
    "echo",
    "env",
    "exit",
    "export",
    "for",
    "hostname",
    "kill",
    "local",
    "mapfile",
    "mkdir",
    "node_ip",
    "read",
    "realpath",
    "rm",
    "scontrol",
    "cut",
    "tr",
    "seq",
    "set",
    "setsid",
    "shopt",
    "sleep",
    "srun",
    "teardown",
    "timeout",
    "trap",
    "true",
    "unset",
    "wait",
    // The phase clock's writer and watcher, and what they call.
    "phase",
    "printf",
    "watch_phases",
    "newest_step",
    "size_link",
    "stat",
    "tail",
    "head",
    "grep",
    "sort",
    "return",
];

/// Pieces of hostile text; a field's string is a few of them.
fn fragment() -> impl Strategy<Value = String> {
    let piece = prop::sample::select(vec![
        "'",
        "\"",
        "$(touch pwned)",
        "`touch pwned`",
        ";touch pwned;",
        "\ntouch pwned\n",
        "|touch pwned",
        "&& touch pwned",
        " ",
        "*",
        "?",
        "[x]",
        "$HOME",
        "\\",
        ",",
        ":",
        "#",
        "~",
        "{a,b}",
        ">pwned",
        "<x",
        "!",
        "\t",
        "x",
        "..",
    ]);
    // Every string carries a payload, so none is a plain word by chance.
    let payload = prop::sample::select(vec![
        "$(touch pwned)",
        "`touch pwned`",
        ";touch pwned;",
        "\ntouch pwned\n",
        "|touch pwned",
        "&& touch pwned",
        ">pwned",
    ]);
    (
        prop::collection::vec(piece.clone(), 0..2),
        payload,
        prop::collection::vec(piece, 0..2),
    )
        .prop_map(|(before, payload, after)| {
            [before.concat(), payload.into(), after.concat()].concat()
        })
}

/// A TOML basic string.
fn q(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The profile, preset and grid with the fields in `hostile` set to their strings.
fn write_presets(dir: &Path, root: &Path, hostile: &BTreeMap<&str, String>, singularity: bool) {
    let h = |field: &str, benign: &str| -> String {
        hostile
            .get(field)
            .cloned()
            .unwrap_or_else(|| benign.to_owned())
    };
    // A path: a benign folder under the root, with the hostile text appended.
    let p = |field: &str, base: &str| -> String {
        format!("{base}{}", hostile.get(field).map_or("", String::as_str))
    };
    let root = root.display().to_string();
    let work = p("storage.work", &format!("{root}/work"));
    let container = if singularity {
        format!(
            "runtime = \"singularity\"\nprogram = {}\nimage = {}\nbinds = [{}]\n",
            q(&format!(
                "{}/singularity",
                p("container.program", &format!("{root}/bin"))
            )),
            q(&p("container.image", &format!("{root}/image"))),
            q(&p("container.binds", &format!("{root}/bind")))
        )
    } else {
        "runtime = \"none\"\n".to_owned()
    };
    let cluster = format!(
        r#"description = {description}

[slurm]
account = {account}
partition = {partition}

[[slurm.qos]]
name = "boost_qos_dbg"
max_wall = "00:30:00"
max_nodes = 2

[[slurm.qos]]
name = {qos}
max_wall = "01:00:00"
max_nodes = 2

[node]
gpus = 4
cpus = 8
mem = {mem}
gpu_type = {gpu_type}
gpu_mem_gib = 64
max_gpu_memory_utilization = 0.85
max_params_b_one_node = 30
interconnect = {interconnect}

[storage]
work = {work_q}
scratch = {scratch}
checkpoints_on = "work"
checkpoint_root = {ckpt}
run_root = {runs}
data_root = {data}
hf_home = {hf_home}
home = {home}
cache_root = {cache}
ray_tmp_root = {ray_tmp}

[software]
skyrl = {skyrl}
venv = {venv}
gcc_bin = {gcc}
schema = "marinskyrl-a559688"
hf = {hf}
stage_python = {stage_python}

[container]
{container}
[env]
RLCTL_HOSTILE = {env}
"#,
        description = q(&h("description holds", "hostile profile")),
        account = q(&h("slurm.account", "acct")),
        partition = q(&h("slurm.partition", "part")),
        qos = q(&h("slurm.qos.name", "normal")),
        mem = q(&h("node.mem", "100G")),
        gpu_type = q(&h("node.gpu_type", "A100")),
        interconnect = q(&h("node.interconnect", "lo")),
        work_q = q(&work),
        scratch = q(&p("storage.scratch", &format!("{root}/scratch"))),
        ckpt = q(&p("storage.checkpoint_root", &format!("{work}/ckpt"))),
        runs = q(&p("storage.run_root", &format!("{work}/runs"))),
        data = q(&p("storage.data_root", &format!("{root}/data"))),
        hf_home = q(&p("storage.hf_home", &format!("{root}/hub"))),
        home = q(&p("storage.home", &format!("{root}/home"))),
        cache = q(&p("storage.cache_root", &format!("{root}/cache"))),
        ray_tmp = q(&p("storage.ray_tmp_root", &format!("{root}/tmp"))),
        skyrl = q(&p("software.skyrl", &format!("{root}/skyrl"))),
        venv = q(&p("software.venv", &format!("{root}/venv"))),
        gcc = q(&p("software.gcc_bin", &format!("{root}/gcc"))),
        hf = q(&h("software.hf", "hf")),
        stage_python = q(&h("software.stage_python", "python3")),
        env = q(&h("env.RLCTL_HOSTILE", "1")),
    );
    let preset = format!(
        "description = {}\nextends = \"gsm8k-canary\"\nentrypoint = {}\n\n[model]\npolicy = {}\n\n\
         [data]\ndataset = {}\n\n[knobs]\n\"trainer.run_name\" = {}\n",
        q(&h("preset description", "hostile preset")),
        q(&h("entrypoint `", "skyrl_train.entrypoints.main_base")),
        q(&h("model.policy `", "Qwen/Qwen2.5-1.5B-Instruct")),
        q(&h("data.dataset `", "gsm8k")),
        q(&h("preset knob", "run")),
    );
    let grid = format!(
        "description = {}\nbase = \"hostile\"\n\n[[cells]]\nname = \"c1\"\ndescription = {}\n\
         knobs = {{ \"trainer.project_name\" = {} }}\n",
        q(&h("grid description", "hostile grid")),
        q(&h("cell description", "hostile cell")),
        q(&h("cell knob", "proj")),
    );
    for (sub, text) in [
        ("clusters/h.toml", cluster),
        ("runs/hostile.toml", preset),
        ("grids/hgrid.toml", grid),
    ] {
        let path = dir.join(sub);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

/// The plan of `target` with as many hostile fields as load: each refusal must name its field,
/// which then becomes benign. Returns the plan and the fields that were refused.
fn plan_with_hostile(
    root: &Path,
    mut hostile: BTreeMap<&'static str, String>,
    singularity: bool,
    target: &str,
    nodes: u32,
) -> (Plan, Vec<&'static str>) {
    let dir = root.join("presets");
    let mut refused = Vec::new();
    loop {
        let _ = std::fs::remove_dir_all(&dir);
        write_presets(&dir, root, &hostile, singularity);
        let attempt = (|| {
            let library = Library::load(Some(dir.to_str().unwrap().into()))?;
            let cluster = library.cluster("h")?;
            let options = PlanOptions {
                nodes: Some(nodes),
                ..PlanOptions::default()
            };
            plan_of(&library, &cluster, target, &options, &[])
        })();
        let error = match attempt {
            Ok(plan) => return (plan, refused),
            Err(e) => e.to_string(),
        };
        // The refusal names the field: the one named first in the message. The checkpoint and
        // run roots are built on storage.work, so they may be named for its text.
        let mut field = FIELDS
            .iter()
            .filter_map(|f| error.find(*f).map(|at| (at, *f)))
            .min()
            .map(|(_, f)| f)
            .unwrap_or_else(|| panic!("a refusal that names no field: {error}"));
        if !hostile.contains_key(field)
            && ["storage.checkpoint_root", "storage.run_root"].contains(&field)
        {
            field = "storage.work";
        }
        assert!(
            hostile.remove(field).is_some(),
            "a refusal that names a field holding nothing hostile: {error}"
        );
        refused.push(field);
    }
}

/// The venv's python: answers the run script's import check, plays Ray's CLI (8 GPUs up), and as
/// the trainer records that it ran.
const PYTHON: &str = r#"#!/bin/bash
if [ "$1" = - ]; then echo checkout; exit 0; fi
if [ "$2" = ray.scripts.scripts ]; then
  if [ "$3" = status ]; then echo ' 0.0/8.0 GPU'; fi
  exit 0
fi
printf '%s\0' "$@" > "$STUB_OUT"
"#;

/// Only the rendered scripts are traced, each bash running them writing to the trace file.
const TRACER: &str = r#"case "$0" in
  */sbatch.sh|*/run.sh)
    exec 9>>"$TRACE_FILE"
    BASH_XTRACEFD=9
    PS4=$'\x01TRACE '
    set -x ;;
esac
"#;

/// The first word of a traced command, unquoted as bash quoted it.
fn first_word(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\n' | '\t' => break,
            '\'' => out.extend(chars.by_ref().take_while(|c| *c != '\'')),
            '\\' => out.extend(chars.next()),
            '$' if chars.peek() == Some(&'\'') => {
                chars.next();
                while let Some(c) = chars.next() {
                    match (c, chars.peek().copied()) {
                        ('\'', _) => break,
                        ('\\', Some('n')) => (out.push('\n'), chars.next()).1.map(drop).unwrap(),
                        ('\\', Some('t')) => (out.push('\t'), chars.next()).1.map(drop).unwrap(),
                        ('\\', Some(n)) => (out.push(n), chars.next()).1.map(drop).unwrap(),
                        (c, _) => out.push(c),
                    }
                }
            }
            c => out.push(c),
        }
    }
    out
}

fn is_assignment(word: &str) -> bool {
    let name_end = word
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(word.len());
    name_end > 0 && word[name_end..].starts_with(['=', '[', '+'])
}

fn pwned_files(dir: &Path, found: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if entry.file_name() == "pwned" {
            found.push(path.clone());
        }
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            pwned_files(&path, found);
        }
    }
}

/// Runs the rendered wrapper with bash as SLURM would, and returns the commands it ran (their
/// first words, not counting assignments).
fn run_traced(root: &Path, plan: &Plan) -> BTreeSet<String> {
    let files = render(plan).unwrap();
    std::fs::create_dir_all(&plan.paths.run_dir).unwrap();
    for file in &files {
        std::fs::write(&file.path, &file.text).unwrap();
    }
    // What the job expects on the node, at the paths the (hostile) profile names.
    std::fs::create_dir_all(&plan.paths.trainer_dir).unwrap();
    std::fs::create_dir_all(plan.paths.venv_python.parent().unwrap()).unwrap();
    write_exec(plan.paths.venv_python.as_std_path(), PYTHON);
    let shim = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cluster/singularity-shim");
    let program = &plan.container.program;
    if program.as_str() != "" {
        std::fs::create_dir_all(program.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&shim, program).unwrap();
    }
    for dir in plan.container.binds.iter().chain([&plan.container.image]) {
        if dir.as_str() != "" {
            std::fs::create_dir_all(dir).unwrap();
        }
    }
    let bin = stand_ins(root);
    let tracer = root.join("tracer.sh");
    std::fs::write(&tracer, TRACER).unwrap();
    let trace = root.join("trace");
    let cwd = root.join("cwd");
    std::fs::create_dir_all(&cwd).unwrap();
    let output = Command::new("/bin/bash")
        .arg(files[0].path.as_str())
        .current_dir(&cwd)
        .env_clear()
        .env("PATH", &bin)
        .env("BASH_ENV", &tracer)
        .env("TRACE_FILE", &trace)
        .env("PWNED", root.join("pwned"))
        .env("STUB_OUT", root.join("argv"))
        .env("SLURM_JOB_ID", "4242")
        .env("SLURM_JOB_NODELIST", "n[1-2]")
        .env("SLURM_JOB_NUM_NODES", plan.job.nodes.to_string())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the job failed ({}):\n{stderr}\n{}",
        output.status,
        files[0].text
    );
    assert!(
        root.join("argv").exists(),
        "the trainer never ran:\n{stderr}"
    );
    let mut pwned = Vec::new();
    pwned_files(root, &mut pwned);
    assert!(pwned.is_empty(), "a payload ran: {pwned:?}\n{stderr}");
    let text = String::from_utf8_lossy(&std::fs::read(&trace).unwrap()).into_owned();
    let mut ran = BTreeSet::new();
    for record in text.split("\x01TRACE ").skip(1) {
        let word = first_word(record);
        if word.is_empty() || is_assignment(&word) {
            continue;
        }
        // The two programs the scripts name by path: the container and the venv's python.
        if word == program.as_str() || word == plan.paths.venv_python.as_str() {
            continue;
        }
        ran.insert(word);
    }
    ran
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn hostile_strings_are_refused_or_inert(
        strings in prop::collection::vec(fragment(), FIELDS.len()),
        singularity in any::<bool>(),
        two_nodes in any::<bool>(),
        cell in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let hostile: BTreeMap<&'static str, String> =
            FIELDS.iter().copied().zip(strings).collect();
        let target = if cell {
            "hgrid/c1"
        } else {
            "hostile"
        };
        let (plan, refused) =
            plan_with_hostile(root, hostile, singularity, target, if two_nodes { 2 } else { 1 });
        // Words that go unquoted onto #SBATCH lines must never load hostile.
        for word in ["slurm.account", "slurm.partition", "node.mem", "node.interconnect"] {
            prop_assert!(refused.contains(&word), "{word} loaded: {refused:?}");
        }
        let ran = run_traced(root, &plan);
        let unexpected: Vec<&String> =
            ran.iter().filter(|w| !EXPECTED.contains(&w.as_str())).collect();
        prop_assert!(unexpected.is_empty(), "unexpected commands ran: {unexpected:?}");
    }
}

#[test]
fn the_tracer_reads_quoted_first_words() {
    assert_eq!(first_word("'/a b/x' exec"), "/a b/x");
    assert_eq!(first_word("'it'\\''s' x"), "it's");
    assert_eq!(first_word("$'a\\nb' c"), "a\nb");
    assert_eq!(first_word("'a\nb' c"), "a\nb");
    assert!(is_assignment("x=1"));
    assert!(is_assignment("steps+=(1)"));
    assert!(!is_assignment("/x=1"));
}

#[test]
fn profile_strings_are_refused_naming_the_field_and_the_fix() {
    let cases: [(&str, &str, &str); 6] = [
        (
            "interconnect = \"lo\"",
            "interconnect = \"ib0; touch pwned\"",
            "node.interconnect = \"ib0; touch pwned\": use only letters, digits",
        ),
        (
            "gcc_bin = \"/usr/bin\"",
            "gcc_bin = \"/usr/bin:/evil\"",
            "software.gcc_bin = `/usr/bin:/evil` holds `:`, which would split it in two where the job uses it: choose a folder without `:`",
        ),
        (
            "home = \"${ROOT}/scratch/home\"",
            "home = \"${ROOT}/scratch/home\\ntouch pwned\"",
            "storage.home = \"",
        ),
        (
            "account = \"rlctl_test\"",
            "account = \"rlctl test\"",
            "slurm.account = \"rlctl test\": use only letters, digits",
        ),
        (
            "run_root = \"${ROOT}/work/runs\"",
            "run_root = \"${ROOT}/work/runs $x\"",
            "storage.run_root = `",
        ),
        (
            "[container]\n",
            "[env]\nX = \"a,b\"\n\n[container]\n",
            "env.X = \"a,b\": a value passed into the container cannot hold a comma",
        ),
    ];
    for (benign, hostile, message) in cases {
        let dir = tempfile::tempdir().unwrap();
        let profile = crate::common::test_profile(dir.path(), "none");
        assert!(profile.contains(benign), "{benign}");
        let presets = dir.path().join("presets/clusters");
        std::fs::create_dir_all(&presets).unwrap();
        std::fs::write(
            presets.join("bad.toml"),
            profile.replacen(benign, hostile, 1),
        )
        .unwrap();
        let library =
            Library::load(Some(dir.path().join("presets").to_str().unwrap().into())).unwrap();
        let error = library.cluster("bad").unwrap_err().to_string();
        assert!(error.contains("clusters/bad.toml: "), "{error}");
        assert!(error.contains(message), "{error}");
    }
}
