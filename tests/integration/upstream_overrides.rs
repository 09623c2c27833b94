//! Overrides on an upstream checkout, judged as upstream's parser judges them: each case is
//! handed to `rlctl check` on an upstream sandbox and, alone, to the `skyrl` 0.4.0 wheel's real
//! `SkyRLTrainConfig.from_cli_overrides` (crates/rlctl-grammar/tests/skyrl_dotlist_oracle.py,
//! whose stand-ins its docstring lists). rlctl takes the override iff the wheel does.
//!
//! The command line is read with the grammar of the checkout's own parser: on an upstream
//! checkout hydra's grammar never speaks, so `trainer.project_name=a,b` (a sweep to hydra, the
//! string `a,b` to the dotlist) and `trainer.run_name=café` pass as the wheel takes them, and
//! what the dotlist refuses (`${x`) is refused. Every case here names a string-typed key:
//! rlctl's own type rule (an integer key given `abc`) is stricter than the wheel's parse, on
//! purpose, and is proved elsewhere.

use crate::common::{python_oracle, stderr};
use crate::upstream::upstream_sandbox;

const ORACLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/crates/rlctl-grammar/tests/skyrl_dotlist_oracle.py"
);
const SETUP: &str =
    "run `bash tests/setup.sh` (it installs the skyrl 0.4.0 wheel and what its config imports)";

/// The overrides of issue 36 where rlctl and upstream's parser disagreed, and neighbours.
const CASES: [&str; 27] = [
    "trainer.run_name=run_${now:%Y%m%d}",
    "trainer.run_name=${hydra:job.name}",
    "trainer.run_name=${oc.env:HOME}",
    "trainer.run_name=a\tb",
    "trainer.run_name='a\tb'",
    "trainer.policy.model_config_kwargs.rope_theta=1000000",
    "generator.inference_engine.engine_init_kwargs.max_num_seqs=8",
    "generator.inference_engine.engine_init_kwargs.hf_overrides.rope_theta=1",
    "trainer.policy.model_config_kwargs={rope_theta: 1}",
    "trainer.project_name='a,b'",
    "trainer.run_name=a b",
    "trainer.run_name=x",
    // Hydra's grammar and the dotlist part here: upstream's alone decides.
    "trainer.project_name=a,b",
    "trainer.run_name=café",
    "trainer.run_name=a,b,c",
    "trainer.project_name=é,ü",
    "trainer.run_name=choice(a,b)",
    "trainer.run_name=range(1,3)",
    "trainer.run_name=a=b",
    "trainer.run_name=a:b",
    "trainer.run_name=a:b,c",
    "trainer.run_name=x y,z",
    "trainer.run_name=${x",
    "trainer.run_name=a'b",
    "trainer.run_name=\"a,b\"",
    "trainer.run_name=日本",
    "trainer.project_name=a,",
];

#[test]
fn upstream_overrides_are_judged_by_upstream_parser() {
    let sandbox = upstream_sandbox();
    let input: String = CASES
        .iter()
        .map(|c| serde_json::json!([c]).to_string() + "\n")
        .collect();
    let text = python_oracle(ORACLE, &[], input.as_bytes(), SETUP);
    let verdicts: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(verdicts.len(), CASES.len(), "{text}");
    let mut disagreements = Vec::new();
    for (case, theirs) in CASES.iter().zip(&verdicts) {
        let output = sandbox
            .rlctl()
            .args(["check", "gsm8k-canary", "--allow", "disk-room", "--", case])
            .output()
            .unwrap();
        let err = stderr(&output);
        let mine = output.status.success();
        if mine != theirs["ok"].as_bool().unwrap() {
            disagreements.push(format!(
                "{case:?}: the wheel says {theirs}; rlctl ({}):\n{err}{}",
                output.status,
                crate::common::stdout(&output)
            ));
        }
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));

    // A key given twice: OmegaConf merges the items in order, the later value stands.
    let output = (sandbox.rlctl())
        .args(["show", "gsm8k-canary", "--"])
        .args(["trainer.run_name=a,b", "trainer.run_name=c"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let shown = crate::common::stdout(&output);
    assert!(shown.contains("\"trainer.run_name\" = \"c\""), "{shown}");

    // MarinSkyRL's spellings of a dict's new key (`+`, its own names) reach upstream as upstream
    // takes them: no `+`, upstream's names.
    let output = (sandbox.rlctl())
        .args(["show", "gsm8k-canary", "--"])
        .args([
            "+trainer.policy.model_config_kwargs.rope_theta=1000000",
            "+generator.engine_init_kwargs.max_num_seqs=8",
        ])
        .output()
        .unwrap();
    let shown = crate::common::stdout(&output);
    assert!(output.status.success(), "{}", stderr(&output));
    for line in [
        "\"trainer.policy.model_config_kwargs.rope_theta\" = 1000000",
        "\"generator.inference_engine.engine_init_kwargs.max_num_seqs\" = 8",
    ] {
        assert!(shown.contains(line), "{line} in:\n{shown}");
    }
}

/// A data list of 2,500 shards is one argument over the kernel's MAX_ARG_STRLEN: the real
/// execve refuses it (E2BIG), and so does preflight, before the queue, on either flavour.
#[test]
fn an_argument_over_the_kernel_limit_is_refused_before_the_queue() {
    use rlctl::check::{Preflight, arg_max};
    let shards: Vec<String> = (0..2500)
        .map(|i| format!("'/leonardo_scratch/fast/data/train-{i:05}-of-02500.parquet'"))
        .collect();
    let data = format!("data.train_data=[{}]", shards.join(","));
    // The kernel's own verdict on the argument, and on one byte under its limit.
    let e2big = std::process::Command::new("true")
        .arg(&data)
        .status()
        .unwrap_err();
    assert_eq!(e2big.raw_os_error(), Some(7), "{e2big}");
    let under = "x".repeat(arg_max::MAX_ARG_STRLEN - 1);
    assert!(
        std::process::Command::new("true")
            .arg(&under)
            .status()
            .unwrap()
            .success()
    );
    for sandbox in [crate::common::Sandbox::new(), upstream_sandbox()] {
        let library =
            rlctl::preset::Library::load(Some(sandbox.presets().to_str().unwrap().into())).unwrap();
        let cluster = library.cluster("test").unwrap();
        let schema = library.trainer_schema(&cluster).unwrap();
        let knobs = rlctl::plan::overrides::parse(std::slice::from_ref(&data)).unwrap();
        let options = rlctl::plan::PlanOptions::default();
        let plan =
            crate::common::plan_of(&library, &cluster, "gsm8k-canary", &options, &knobs).unwrap();
        let preflight = Preflight {
            cluster: &cluster,
            schema: &schema,
            allow: &[],
        };
        let report = preflight.run(&plan);
        let said: Vec<String> = report.problems.iter().map(|f| f.said(&schema)).collect();
        assert!(
            said.iter()
                .any(|m| m.contains("MAX_ARG_STRLEN") && m.contains("data.train_data")),
            "{}: {said:#?}",
            plan.flavour
        );
    }
}
