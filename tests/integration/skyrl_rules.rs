//! The `[skyrl-rules]` preflight check, proved against SkyRL's own `validate_cfg`.
//!
//! Each case of the corpus (skyrl_rules.corpus, next to this file) is a target and overrides. The real rlctl binary checks it
//! (`rlctl check TARGET -- OVERRIDES`, in a sandbox profile where every other check passes; only
//! its `[skyrl-rules]` lines count), and tests/skyrl_oracle.py composes the same plan's knobs
//! (`rlctl show`) with hydra and runs skyrl-train 0.3.1's real `validate_cfg` on them. The two
//! verdicts must be equal, case by case. The oracle needs hydra and skyrl-train from PyPI
//! (tests/setup.sh); without them this test fails saying so, it never skips.
//!
//! What the oracle stubs, and why (details in tests/skyrl_oracle.py's docstring): skyrl-train is
//! installed without its GPU stack, which its modules import but validate_cfg never runs. torch,
//! numpy and jaxtyping appear only in annotations and decorators of functions validate_cfg does
//! not call; loguru only logs its warnings; ray's `remote` decorates without running and
//! `is_initialized()` is false, so the loss and estimator registries stay in-process (the ray
//! tests/setup.sh installs is newer than skyrl-train's pin and lacks a name it imports);
//! flash_attn only gives a version to a Megatron rule that reads the container, which rlctl does
//! not mirror. No rule of validate_cfg needs torch itself.
//!
//! rlctl mirrors MarinSkyRL @ a559688, the fork the profiles run, and also refuses what fails
//! right after validate_cfg. So each case names its judge:
//!   - `oracle`: the rule reads the same in skyrl-train 0.3.1 and a559688; the oracle decides.
//!   - `fork`: a559688 differs from 0.3.1 or has a rule 0.3.1 lacks (context parallel, decode
//!     context parallel, the lcm of the data-parallel sizes, loss reductions, estimators, LoRA's
//!     strategies); the corpus writes the verdict, and quotes a559688's rule.
//!   - `startup`: validate_cfg passes it (the oracle must agree) but the run dies or ignores a
//!     knob later: the entrypoint's strategy and backends, Ray placing the GPUs, vLLM's memory
//!     fraction, step counts, datasets, the resume path.

use crate::common::findings::findings_in;
use crate::common::{Sandbox, python_oracle, stderr};
use rlctl::schema::grammar::{from_toml, render};
use std::process::Command;

const ORACLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/skyrl_oracle.py");
const SETUP: &str = "run `bash tests/setup.sh` (it installs hydra-core, omegaconf and skyrl-train==0.3.1 from PyPI)";

/// One case a line: `JUDGE | NAME | TARGET [FLAGS] | OVERRIDES | WHY` (see the file's header).
const CORPUS: &str = include_str!("skyrl_rules.corpus");

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Judge {
    Oracle,
    /// MarinSkyRL a559688's verdict (true: passes), and its rule.
    Fork(bool, String),
    /// The verdict after validate_cfg (true: passes), and what decides it.
    Startup(bool, String),
}

pub(crate) struct Case {
    pub name: String,
    /// The preset or cell, and flags such as `--nodes 1`.
    pub target: Vec<String>,
    pub overrides: Vec<String>,
    pub judge: Judge,
}

fn corpus() -> Vec<Case> {
    parse_corpus(CORPUS)
}

/// The cases of a corpus file: one a line, `JUDGE | NAME | TARGET [| OVERRIDES [| WHY]]`.
pub(crate) fn parse_corpus(text: &str) -> Vec<Case> {
    let lines = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'));
    lines
        .map(|line| {
            let fields: Vec<&str> = line.split('|').map(str::trim).collect();
            assert!(
                (3..=5).contains(&fields.len()),
                "a corpus line needs JUDGE | NAME | TARGET [| OVERRIDES [| WHY]]: {line}"
            );
            let words = |i: usize| -> Vec<String> {
                let field = fields.get(i).copied().unwrap_or("");
                field.split_whitespace().map(str::to_owned).collect()
            };
            let why = fields.get(4).copied().unwrap_or("").to_owned();
            let judge = match fields[0].split_whitespace().collect::<Vec<_>>()[..] {
                ["oracle"] => Judge::Oracle,
                ["fork", verdict] => Judge::Fork(verdict == "passes", why),
                ["startup", verdict] => Judge::Startup(verdict == "passes", why),
                _ => panic!("unknown judge in: {line}"),
            };
            if let Judge::Fork(_, w) | Judge::Startup(_, w) = &judge {
                assert!(!w.is_empty(), "a fork or startup case says why: {line}");
                assert!(
                    ["passes", "refuses"].iter().any(|v| fields[0].ends_with(v)),
                    "passes or refuses: {line}"
                );
            }
            Case {
                name: fields[1].to_owned(),
                target: words(2),
                overrides: words(3),
                judge,
            }
        })
        .collect()
}

pub(crate) struct Verdict {
    pub ok: bool,
    /// rlctl's `[skyrl-rules]` lines, or the oracle's error.
    pub why: String,
}

fn rlctl_args(sandbox: &Sandbox, command: &str, case: &Case) -> Command {
    let mut cmd = sandbox.rlctl();
    cmd.arg(command)
        .args(&case.target)
        .arg("--")
        .args(&case.overrides)
        .env_remove("WANDB_API_KEY");
    cmd
}

/// rlctl's verdict: refused iff `check --json` finds a `skyrl-rules` problem; every other check
/// passes in the sandbox or is not this test's business.
pub(crate) fn rlctl_verdict(sandbox: &Sandbox, case: &Case) -> Verdict {
    let mut cmd = sandbox.rlctl();
    cmd.arg("check")
        .args(&case.target)
        .arg("--json")
        .arg("--")
        .args(&case.overrides)
        .env_remove("WANDB_API_KEY");
    let output = cmd.output().unwrap();
    let err = stderr(&output);
    let doc = serde_json::from_str::<serde_json::Value>(&crate::common::stdout(&output));
    assert!(
        doc.is_ok_and(|d| d.get("findings").is_some()),
        "{}: rlctl refused the case before its preflight:\n{err}",
        case.name
    );
    let found = findings_in(&output);
    let rules: Vec<&str> = (found.iter())
        .filter(|f| f.is("problem", "skyrl-rules", &[]))
        .map(|f| f.message.as_str())
        .collect();
    if !output.status.success() || !rules.is_empty() {
        assert_eq!(output.status.code(), Some(1), "{}: {err}", case.name);
    }
    Verdict {
        ok: rules.is_empty(),
        why: rules.join("\n"),
    }
}

/// The plan's entrypoint and hydra overrides, as `rlctl show` prints them.
fn plan_of(sandbox: &Sandbox, case: &Case) -> serde_json::Value {
    let output = rlctl_args(sandbox, "show", case).output().unwrap();
    assert!(
        output.status.success(),
        "{}: {}",
        case.name,
        stderr(&output)
    );
    let plan: toml::Table = toml::from_str(&crate::common::stdout(&output)).unwrap();
    let knobs = plan["knobs"].as_table().unwrap();
    let overrides: Vec<String> = knobs
        .iter()
        .map(|(key, value)| format!("{key}={}", render(&from_toml(value))))
        .collect();
    serde_json::json!({
        "name": case.name,
        "entrypoint": plan["entrypoint"].as_str().unwrap(),
        "overrides": overrides,
    })
}

/// The verdicts a validate_cfg oracle (a python script run as `ORACLE verdicts`, JSON cases on
/// stdin, one JSON line a case on stdout) gives `cases`, in their order. A case the library
/// refused before validate_cfg (its line's `before` field: hydra's compose, upstream's parse)
/// is a bug of the corpus, not a verdict.
pub(crate) fn oracle_verdicts(
    oracle: &str,
    setup: &str,
    cases: &[serde_json::Value],
    before: &str,
) -> Vec<Verdict> {
    let input = serde_json::to_vec(cases).unwrap();
    let text = python_oracle(oracle, &["verdicts"], &input, setup);
    let lines: Vec<serde_json::Value> = (text.lines())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        lines.len(),
        cases.len(),
        "the oracle answered {} of {} cases:\n{text}",
        lines.len(),
        cases.len()
    );
    (lines.iter().zip(cases))
        .map(|(line, case)| {
            assert_eq!(
                line["name"], case["name"],
                "the oracle's answers are out of order"
            );
            assert!(
                line.get(before).is_none(),
                "{}: the library refused the case before validate_cfg ({before}: a corpus or render bug): {}\n{case}",
                case["name"],
                line[before]
            );
            Verdict {
                ok: line["ok"].as_bool().unwrap(),
                why: line["error"].as_str().unwrap_or("").to_owned(),
            }
        })
        .collect()
}

pub(crate) fn verdict_word(ok: bool) -> &'static str {
    if ok { "passes" } else { "refuses" }
}

#[test]
fn skyrl_rules_agree_with_skyrl_validate_cfg() {
    let sandbox = Sandbox::new();
    let cases = corpus();
    let names: std::collections::BTreeSet<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names.len(), cases.len(), "case names are unique");

    let rlctl: Vec<Verdict> = cases.iter().map(|c| rlctl_verdict(&sandbox, c)).collect();
    // The oracle judges its own cases, and confirms that validate_cfg lets every startup case
    // through: those fail (or are ignored) only later.
    let asked: Vec<&Case> = cases
        .iter()
        .filter(|c| !matches!(c.judge, Judge::Fork(..)))
        .collect();
    let plans: Vec<serde_json::Value> = asked.iter().map(|c| plan_of(&sandbox, c)).collect();
    let oracle = oracle_verdicts(ORACLE, SETUP, &plans, "compose");
    assert_eq!(oracle.len(), asked.len());
    let oracle_of = |name: &str| {
        let i = asked.iter().position(|c| c.name == name).unwrap();
        &oracle[i]
    };

    let mut disagreements = Vec::new();
    for (case, mine) in cases.iter().zip(&rlctl) {
        let (expected, judge, why) = match &case.judge {
            Judge::Oracle => {
                let theirs = oracle_of(&case.name);
                (
                    theirs.ok,
                    "skyrl-train 0.3.1's validate_cfg",
                    theirs.why.clone(),
                )
            }
            Judge::Fork(ok, rule) => (*ok, "MarinSkyRL a559688's validate_cfg", rule.clone()),
            Judge::Startup(ok, why) => {
                let theirs = oracle_of(&case.name);
                if !theirs.ok {
                    disagreements.push(format!(
                        "{}: judged after validate_cfg, but validate_cfg already refuses it: {}",
                        case.name, theirs.why
                    ));
                }
                (*ok, "SkyRL after validate_cfg", why.clone())
            }
        };
        if mine.ok != expected {
            let why = if why.is_empty() {
                String::new()
            } else {
                format!(" ({why})")
            };
            let lines = if mine.why.is_empty() {
                String::new()
            } else {
                format!(":\n{}", mine.why)
            };
            disagreements.push(format!(
                "{} ({} -- {}): {judge} {} it{why}; rlctl {} it{lines}",
                case.name,
                case.target.join(" "),
                case.overrides.join(" "),
                verdict_word(expected),
                verdict_word(mine.ok),
            ));
        }
    }
    assert!(
        disagreements.is_empty(),
        "{} of {} cases disagree:\n{}",
        disagreements.len(),
        cases.len(),
        disagreements.join("\n")
    );

    // The corpus keeps proving something: enough oracle cases, both verdicts well represented.
    let judged: Vec<bool> = cases
        .iter()
        .filter(|c| c.judge == Judge::Oracle)
        .map(|c| oracle_of(&c.name).ok)
        .collect();
    let refused = judged.iter().filter(|ok| !**ok).count();
    assert!(judged.len() >= 60, "{} oracle cases", judged.len());
    assert!(
        refused >= 25 && judged.len() - refused >= 25,
        "{refused} of {} oracle cases refused",
        judged.len()
    );
}
