//! The `[skyrl-rules]` preflight check on an upstream skyrl plan, proved against the `skyrl`
//! 0.4.0 wheel's own `SkyRLTrainConfig.from_cli_overrides` and `validate_cfg`.
//!
//! Each case of skyrl_rules_upstream.corpus (next to this file) is a target and overrides in
//! upstream's own names. The real rlctl binary checks it on a profile whose checkout is upstream
//! skyrl (`upstream_sandbox()`, the stand-in checkout with the wheel's config): only its
//! `[skyrl-rules]` lines count. The same plan, built by the library, gives the command line the
//! trainer would get (`Plan::trainer_arg`), and tests/skyrl_upstream_rules_oracle.py hands it to
//! the wheel's real parser and validate_cfg (what that oracle stubs, and why, is in its
//! docstring). The two verdicts must be equal, case by case; the oracle never skips.
//!
//! Judges: `oracle` (the wheel decides) and `startup passes|refuses` (validate_cfg passes it,
//! which the oracle must confirm, and the run dies or ignores a knob later; WHY says where).

use crate::common::{Sandbox, plan_of};
use crate::skyrl_rules::{Case, Judge, oracle_verdicts, parse_corpus, rlctl_verdict, verdict_word};
use crate::upstream::upstream_sandbox;
use rlctl::plan::PlanOptions;
use rlctl::preset::Library;

const ORACLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/skyrl_upstream_rules_oracle.py"
);
const SETUP: &str =
    "run `bash tests/setup.sh` (it installs the skyrl 0.4.0 wheel and what its config imports)";
const CORPUS: &str = include_str!("skyrl_rules_upstream.corpus");

/// The command line the trainer gets for the case's plan, in upstream's names and order.
fn argv_of(sandbox: &Sandbox, library: &Library, case: &Case) -> serde_json::Value {
    assert_eq!(
        case.target.len(),
        1,
        "{}: no flags in this corpus",
        case.name
    );
    let cluster = library.cluster("test").unwrap();
    let overrides = rlctl::plan::overrides::parse(&case.overrides)
        .unwrap_or_else(|e| panic!("{}: {e}", case.name));
    let plan = plan_of(
        library,
        &cluster,
        &case.target[0],
        &PlanOptions::default(),
        &overrides,
    )
    .unwrap_or_else(|e| panic!("{}: {e}", case.name));
    assert_eq!(
        plan.flavour,
        rlctl::schema::flavour::Flavour::Upstream,
        "{}",
        sandbox.root().display()
    );
    let argv: Vec<String> = (plan.trainer_overrides())
        .map(|k| plan.trainer_arg(k))
        .collect();
    serde_json::json!({ "name": case.name, "argv": argv })
}

#[test]
fn skyrl_rules_agree_with_upstream_skyrl_validate_cfg() {
    let sandbox = upstream_sandbox();
    let library = Library::load(Some(sandbox.presets().to_str().unwrap().into())).unwrap();
    let cases = parse_corpus(CORPUS);
    let names: std::collections::BTreeSet<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names.len(), cases.len(), "case names are unique");
    assert!(
        !cases.iter().any(|c| matches!(c.judge, Judge::Fork(..))),
        "upstream cases are judged by the wheel"
    );

    let plans: Vec<serde_json::Value> = (cases.iter())
        .map(|c| argv_of(&sandbox, &library, c))
        .collect();
    let oracle = oracle_verdicts(ORACLE, SETUP, &plans, "parse");
    let mut disagreements = Vec::new();
    let (mut agreed, mut refused) = (0, 0);
    for ((case, theirs), plan) in cases.iter().zip(&oracle).zip(&plans) {
        let mine = rlctl_verdict(&sandbox, case);
        let (expected, judge, why) = match &case.judge {
            Judge::Startup(ok, why) => {
                if !theirs.ok {
                    disagreements.push(format!(
                        "{}: judged after validate_cfg, but validate_cfg already refuses it: {}",
                        case.name, theirs.why
                    ));
                }
                (*ok, "upstream skyrl after validate_cfg", why.clone())
            }
            _ => (theirs.ok, "skyrl 0.4.0's validate_cfg", theirs.why.clone()),
        };
        if case.judge == Judge::Oracle && !theirs.ok {
            refused += 1;
        }
        if mine.ok == expected {
            agreed += 1;
            continue;
        }
        disagreements.push(format!(
            "{} ({} -- {}): {judge} {} it ({why}); rlctl {} it:\n{}\n  argv: {}",
            case.name,
            case.target.join(" "),
            case.overrides.join(" "),
            verdict_word(expected),
            verdict_word(mine.ok),
            mine.why,
            plan["argv"]
        ));
    }
    eprintln!(
        "{agreed} of {} upstream cases agree; the wheel refuses {refused} of its {} oracle cases",
        cases.len(),
        cases.iter().filter(|c| c.judge == Judge::Oracle).count()
    );
    assert!(
        disagreements.is_empty(),
        "{} of {} cases disagree:\n{}",
        disagreements.len(),
        cases.len(),
        disagreements.join("\n")
    );
    let judged = cases.iter().filter(|c| c.judge == Judge::Oracle).count();
    assert!(judged >= 80, "{judged} oracle cases");
    assert!(
        refused >= 30 && judged - refused >= 30,
        "{refused} of {judged} oracle cases refused"
    );
}
