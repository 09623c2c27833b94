//! Quoting, proved by the real consumers: bash runs the rendered run script and the trainer
//! stand-in receives every override as exactly one argument; hydra's own parser reads every
//! rendered override back as the value the preset wrote.

use crate::common::{plan_of, write_exec};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use rlctl::plan::{Plan, PlanOptions};
use rlctl::preset::Library;
use rlctl::render::render;
use rlctl::schema::knob::{Knob, KnobValue, Origin, hydra_quote};
use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

fn plan_with(overrides: &[Knob], target: String) -> Plan {
    let library = Library::load(None).unwrap();
    let cluster = library.cluster("leonardo").unwrap();
    plan_of(
        &library,
        &cluster,
        &target,
        &PlanOptions::default(),
        overrides,
    )
    .unwrap()
}

/// Runs the plan's run.sh under bash with a stub VENV_PY; returns the argv the stub received.
fn argv_reaching_the_trainer(plan: &Plan) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let files = render(plan).unwrap();
    let run_sh = dir.path().join("run.sh");
    std::fs::write(&run_sh, &files[1].text).unwrap();
    let stub = dir.path().join("python");
    // The run script first asks python where the entrypoint imports from (tested against a
    // real python in scripts.rs); this stand-in answers "the checkout" and records the rest.
    write_exec(
        &stub,
        "#!/bin/bash\nif [ \"$1\" = - ]; then echo checkout; exit 0; fi\nprintf '%s\\0' \"$@\" > \"$STUB_OUT\"\n",
    );
    let out = dir.path().join("argv");
    let status = Command::new("bash")
        .arg(&run_sh)
        // sbatch.sh passes the resume mode it decided at run time.
        .arg("null")
        .env("VENV_PY", &stub)
        .env("PYTHONPATH", "/x")
        .env("HF_HUB_OFFLINE", "1")
        .env("STUB_OUT", &out)
        .status()
        .unwrap();
    assert!(status.success());
    let bytes = std::fs::read(&out).unwrap();
    String::from_utf8(bytes)
        .unwrap()
        .split_terminator('\0')
        .map(str::to_owned)
        .collect()
}

/// The trainer's argv for gsm8k-canary without overrides, run once.
fn preset_alone() -> &'static [String] {
    static ARGV: OnceLock<Vec<String>> = OnceLock::new();
    ARGV.get_or_init(|| {
        let argv = argv_reaching_the_trainer(&plan_with(&[], "gsm8k-canary".into()));
        assert_eq!(argv[..2], ["-m", "skyrl_train.entrypoints.main_base"]);
        argv
    })
}

/// Characters that have broken hand-written wrappers, plus anything else.
fn nasty_string() -> impl Strategy<Value = String> {
    let special = prop::sample::select(vec![
        "'", "\"", "$(", ")", "`", " ", "\n", ";", "\\", "$", "{", "}", "*", "?", "~", "#", "!",
        "&", "|", "<", ">", "=", ",", "[", "]", "\t", "é", "'\\''",
    ]);
    let piece = prop_oneof![special.prop_map(str::to_owned), "[^\u{0}]{0,4}"];
    prop::collection::vec(piece, 0..12).prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn any_override_reaches_the_trainer_as_one_identical_argument(value in nasty_string()) {
        // Hydra-quoted, so hydra (and rlctl's check of its grammar) takes any text; `${` is left
        // out: an interpolation is OmegaConf's to read, and tests/hydra_grammar.rs covers it.
        prop_assume!(!value.contains("${"));
        let arg = format!("trainer.run_name={}", hydra_quote(&value));
        let overrides = rlctl::plan::overrides::parse(std::slice::from_ref(&arg)).unwrap();
        let plan = plan_with(&overrides, "gsm8k-canary".into());
        let argv = argv_reaching_the_trainer(&plan);
        // What the user relies on: the text they typed arrives once, as one argument, and the
        // trainer's other arguments are those of the preset alone.
        prop_assert_eq!(argv.iter().filter(|a| **a == arg).count(), 1, "{:?}", argv);
        let others: Vec<&String> = argv.iter().filter(|a| **a != arg).collect();
        let alone = preset_alone();
        prop_assert_eq!(others, alone.iter().collect::<Vec<_>>());
    }
}

fn hydra_parse(args: &[String]) -> Vec<(String, serde_json::Value)> {
    let mut child = Command::new("python3")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/hydra_parse.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = Vec::new();
    for arg in args {
        input.extend_from_slice(arg.as_bytes());
        input.push(0);
    }
    child.stdin.take().unwrap().write_all(&input).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "hydra could not parse rlctl's overrides (hydra-core is required: tests/setup.sh installs it):\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn json_of(value: &toml::Value) -> serde_json::Value {
    match value {
        toml::Value::String(s) if s == "null" => serde_json::Value::Null,
        toml::Value::String(s) => s.clone().into(),
        toml::Value::Integer(i) => (*i).into(),
        toml::Value::Float(x) => (*x).into(),
        toml::Value::Boolean(b) => (*b).into(),
        toml::Value::Array(items) => items.iter().map(json_of).collect(),
        other => panic!("not a knob value: {other}"),
    }
}

#[test]
fn hydra_reads_every_embedded_knob_back_as_the_preset_wrote_it() {
    let library = Library::load(None).unwrap();
    let mut targets: Vec<String> = library.preset_names().map(|p| p.into()).collect();
    for grid in library.grid_names() {
        for cell in &library.grid(grid).unwrap().cells {
            targets.push(format!("{grid}/{}", cell.name));
        }
    }
    let mut checked = 0;
    for target in targets {
        let plan = plan_with(&[], target);
        let args: Vec<String> = plan.knobs.iter().map(Knob::hydra_arg).collect();
        let expected: Vec<(String, serde_json::Value)> = plan
            .knobs
            .iter()
            .map(|knob| {
                let KnobValue::Typed(value) = &knob.value else {
                    unreachable!("embedded presets hold typed values")
                };
                (knob.path().to_owned(), json_of(value))
            })
            .collect();
        // Whole lists: a knob hydra dropped or added fails too, not only a changed one.
        assert_eq!(hydra_parse(&args), expected, "{}", plan.target);
        checked += expected.len();
    }
    assert!(checked > 39 * 40, "{checked}");
}

#[test]
fn hydra_reads_arbitrary_preset_strings_back_unchanged() {
    // `$` is left out: `${...}` in a preset string is hydra interpolation, on purpose.
    let strategy = nasty_string().prop_filter("no interpolation", |s| !s.contains('$'));
    let mut runner = TestRunner::deterministic();
    let values: Vec<String> = (0..300)
        .map(|_| strategy.new_tree(&mut runner).unwrap().current())
        .collect();
    let args: Vec<String> = values
        .iter()
        .map(|v| Knob::typed("trainer.run_name", v.clone().into(), Origin::CommandLine).hydra_arg())
        .collect();
    let expected: Vec<(String, serde_json::Value)> = values
        .iter()
        .map(|value| {
            let back = if value == "null" {
                serde_json::Value::Null
            } else {
                value.clone().into()
            };
            ("trainer.run_name".to_owned(), back)
        })
        .collect();
    assert_eq!(hydra_parse(&args), expected);
}
