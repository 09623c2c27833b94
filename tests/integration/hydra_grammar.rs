//! Hydra's override grammar and OmegaConf's interpolations as rlctl applies them, with its own
//! key rules, proved against hydra itself: every command line of the grammar crate's corpus
//! (crates/rlctl-grammar/tests/hydra_grammar/corpus.rs) goes through the real rlctl binary
//! (`rlctl check gsm8k-canary -- ARGS` in a sandbox where the canary passes every check) and
//! through the crate's hydra_grammar_oracle.py (hydra's OverridesParser, then a compose of
//! SkyRL's config and OmegaConf's resolution of it), and the two verdicts must agree case by
//! case. The crate proves its grammar on the same corpus on its own (`cargo test -p
//! rlctl-grammar`); this test proves what rlctl adds: the key rules, and the whole path of a
//! command line through `rlctl check`.
//!
//! rlctl refuses a command line with its override check (`override `ARG`: ...`) or with the
//! schema check (`[schema] ...`, the key rules tests/schema.rs proves); any other finding means
//! the corpus case tripped a check it was not written for, and fails the test. Where hydra
//! refuses on parsing, on a sweep or on resolution, rlctl must refuse with its override check,
//! before any preflight.
//!
//! Two more tests: where rlctl passes on other text than the user's (a key given twice folds
//! into one override), hydra makes the same config of it; and the crate's proptest of
//! grammar-shaped values, damaged at random, against a two-key config in one python process,
//! judged by rlctl's library with its key rules.
//!
//! The oracle composes SkyRL's config once and applies each case to a copy, as compose does;
//! `RLCTL_HYDRA_VERIFY=1` makes it compose every case in full as well and fail where the two
//! differ (minutes, not seconds).

#[path = "../../crates/rlctl-grammar/tests/hydra_grammar/corpus.rs"]
mod corpus;
#[path = "../../crates/rlctl-grammar/tests/hydra_grammar/values.rs"]
mod values;

use rlctl::schema::Schema;
use std::io::Write;
use std::process::{Command, Stdio};
use values::TINY_KEYS;

const ORACLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/crates/rlctl-grammar/tests/hydra_grammar_oracle.py"
);
const SETUP: &str = "run `bash tests/setup.sh` (it installs hydra-core, omegaconf and skyrl-train==0.3.1 from PyPI)";

#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
struct Hydra {
    ok: bool,
    stage: Option<String>,
    error: Option<String>,
    /// A hash of the resolved config, when hydra accepts the case.
    digest: Option<String>,
}

/// Hydra's verdict on each case, from one python process.
fn oracle(mode: &[&str], cases: &[Vec<String>]) -> Vec<Hydra> {
    let mut child = Command::new("python3")
        .arg(ORACLE)
        .args(mode)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run python3 ({e}): {SETUP}"));
    let mut input = String::new();
    for case in cases {
        input.push_str(&serde_json::to_string(case).unwrap());
        input.push('\n');
    }
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()).unwrap());
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(
        output.status.success(),
        "the hydra oracle failed ({}): {SETUP}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let verdicts: Vec<Hydra> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(verdicts.len(), cases.len(), "one verdict per case");
    verdicts
}

fn skyrl_config_dir() -> String {
    let output = Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/crates/rlctl-grammar/tests/schema_oracle.py"
        ))
        .arg("locate")
        .output()
        .unwrap_or_else(|e| panic!("cannot run python3 ({e}): {SETUP}"));
    assert!(
        output.status.success(),
        "{SETUP}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

/// What rlctl did with a command line.
#[derive(Debug, Clone, PartialEq)]
enum Rlctl {
    Accepted,
    /// Refused by the override check, before any preflight.
    Override(String),
    /// Refused by the schema check.
    Schema(String),
}

fn rlctl_check(sandbox: &crate::common::Sandbox, case: &[String]) -> Rlctl {
    let output = sandbox
        .rlctl()
        .args(["check", "gsm8k-canary", "--"])
        .args(case)
        .output()
        .unwrap();
    let err = crate::common::stderr(&output);
    if output.status.success() {
        assert!(
            !err.contains("[schema]"),
            "{case:?}: a schema warning on a passing check: {err}"
        );
        return Rlctl::Accepted;
    }
    if let Some(line) = err
        .lines()
        .find(|l| l.starts_with("rlctl: error: override `"))
    {
        return Rlctl::Override(line.to_owned());
    }
    let problems: Vec<&str> = err
        .lines()
        .filter(|l| l.trim_start().starts_with('['))
        .collect();
    assert!(
        !problems.is_empty()
            && problems
                .iter()
                .all(|l| l.trim_start().starts_with("[schema]")),
        "{case:?}: rlctl refused it for a reason that is not about the override:\n{err}"
    );
    Rlctl::Schema(problems.join("\n"))
}

/// Whether rlctl's verdict is hydra's: the same yes or no, and a refusal hydra gives before
/// composing (parse, sweep) or on resolving comes from rlctl's override check.
fn agrees(hydra: &Hydra, rlctl: &Rlctl) -> bool {
    matches!(
        (hydra.stage.as_deref(), rlctl),
        (None, Rlctl::Accepted)
            | (Some("compose"), Rlctl::Schema(_))
            | (Some(_), Rlctl::Override(_))
    )
}

#[test]
fn rlctl_refuses_exactly_what_hydra_refuses() {
    let cases = corpus::cases();
    assert!(cases.len() >= 200, "{} cases", cases.len());
    let dir = skyrl_config_dir();
    let oracle_cases = cases.clone();
    let hydra = std::thread::spawn(move || {
        let verify = std::env::var_os("RLCTL_HYDRA_VERIFY").map(|_| "--verify");
        let mode: Vec<&str> = ["compose", dir.as_str()]
            .into_iter()
            .chain(verify)
            .collect();
        oracle(&mode, &oracle_cases)
    });
    let sandbox = crate::common::Sandbox::new();
    let workers = 4;
    let rlctl: Vec<Rlctl> = std::thread::scope(|s| {
        let chunks: Vec<_> = cases
            .chunks(cases.len().div_ceil(workers))
            .map(|chunk| {
                s.spawn(|| {
                    chunk
                        .iter()
                        .map(|c| rlctl_check(&sandbox, c))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        chunks.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let hydra = hydra.join().unwrap();
    assert_eq!(hydra.len(), rlctl.len());
    let mut disagreements = Vec::new();
    let mut refused = 0;
    for ((case, h), r) in cases.iter().zip(&hydra).zip(&rlctl) {
        refused += usize::from(!h.ok);
        if !agrees(h, r) {
            disagreements.push(format!(
                "{case:?}\n  hydra: {} {}\n  rlctl: {r:?}",
                h.stage.as_deref().unwrap_or("accepts"),
                h.error.as_deref().unwrap_or("")
            ));
        }
    }
    assert!(
        disagreements.is_empty(),
        "rlctl and hydra disagree on {} of {} cases:\n{}",
        disagreements.len(),
        cases.len(),
        disagreements.join("\n")
    );
    // Both verdicts occur often enough to mean something.
    assert!(
        refused > 50 && cases.len() - refused > 50,
        "{refused} of {} refused",
        cases.len()
    );
}

/// Where rlctl passes on something other than what the user wrote (a key given twice folded
/// into one override, `~key=` written `~key=''`), hydra makes the same config of it.
#[test]
fn a_key_given_twice_reaches_hydra_as_one_override_with_the_same_effect() {
    let given: Vec<Vec<String>> = corpus::cases()
        .into_iter()
        .filter(|case| case.len() > 1 || case[0].ends_with('='))
        .collect();
    let mut cases = Vec::new();
    for case in &given {
        if let Ok(knobs) = rlctl::plan::overrides::parse(case) {
            let passed: Vec<String> = knobs
                .iter()
                .map(rlctl::schema::knob::Knob::hydra_arg)
                .collect();
            if passed != *case {
                cases.push((case.clone(), passed));
            }
        }
    }
    assert!(cases.len() >= 10, "{cases:?}");
    let batch: Vec<Vec<String>> = cases
        .iter()
        .flat_map(|(a, b)| [a.clone(), b.clone()])
        .collect();
    let verdicts = oracle(&["compose", &skyrl_config_dir()], &batch);
    let mut compared = 0;
    for ((given, passed), pair) in cases.iter().zip(verdicts.chunks(2)) {
        if pair[0].ok {
            compared += 1;
            assert!(
                pair[1].ok && pair[1].digest == pair[0].digest,
                "hydra reads {given:?} and rlctl's {passed:?} differently: {:?} vs {:?}",
                pair[0],
                pair[1]
            );
        }
    }
    assert!(compared >= 8, "{compared} compared");
}

/// rlctl's verdict on one override against the two-key config, in process: the override
/// check, then hydra's key rules as the schema check applies them (without rlctl's own type
/// rule, which hydra does not have).
fn library_verdict(arg: &str, schema: &Schema) -> bool {
    rlctl::plan::overrides::parse(&[arg.to_owned()])
        .and_then(|knobs| {
            rlctl::plan::overrides::check_interpolations(&knobs, schema).map(|_| knobs)
        })
        .is_ok_and(|knobs| knobs.iter().all(|k| schema.check_key(k).is_ok()))
}

/// `RLCTL_HYDRA_CASES=N` tries N values instead of 400.
#[test]
fn arbitrary_values_get_hydras_verdict() {
    let schema = Schema::parse("tiny", TINY_KEYS).unwrap();
    let cases = values::cases();
    let hydra = oracle(&["values"], &cases);
    let disagreements: Vec<String> = cases
        .iter()
        .zip(&hydra)
        // An environment variable the job lacks is the job's business: rlctl cannot see the
        // compute node's environment and lets `${oc.env:...}` through.
        .filter(|(_, h)| {
            !h.error
                .as_deref()
                .unwrap_or("")
                .contains("Environment variable")
        })
        .filter(|(case, h)| library_verdict(&case[0], &schema) != h.ok)
        .map(|(case, h)| format!("{:?}: hydra {h:?}", case[0]))
        .collect();
    let accepted = hydra.iter().filter(|h| h.ok).count();
    assert!(
        accepted * 10 > cases.len() && accepted * 10 < cases.len() * 9,
        "{accepted} of {} accepted: the values should be near misses",
        cases.len()
    );
    assert!(
        disagreements.is_empty(),
        "rlctl and hydra disagree on {} of {} values:\n{}",
        disagreements.len(),
        cases.len(),
        disagreements.join("\n")
    );
}
