//! The proptest's values and where they go: grammar-shaped values, damaged at random, put after
//! each prefix of a two-key config that hydra_grammar_oracle.py's `values` mode composes too.
//! Shared with rlctl's own hydra test (tests/integration/hydra_grammar.rs), which judges the
//! same values with rlctl's key rules as well.

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;

/// A two-key config the proptest's oracle composes too.
pub const TINY_KEYS: &str = "trainer.project_name=\"skyrl\"\ntrainer.seed=42\n";

/// Where the proptest's values go, in turn: every prefix, on keys of the two-key config.
pub const TINY_PREFIXES: [&str; 6] = [
    "trainer.project_name=",
    "+trainer.new_key=",
    "++trainer.project_name=",
    "++trainer.new_key.x=",
    "~trainer.project_name=",
    "~trainer.seed=",
];

/// The command lines of the proptest: `RLCTL_HYDRA_CASES=N` values (400 unless set), each
/// after a prefix of [`TINY_PREFIXES`] in turn, always the same ones.
pub fn cases() -> Vec<Vec<String>> {
    let strategy = value_string();
    let mut runner = TestRunner::deterministic();
    let count = std::env::var("RLCTL_HYDRA_CASES").map_or(400, |n| n.parse().unwrap());
    (0..count)
        .map(|i| {
            let value = strategy.new_tree(&mut runner).unwrap().current();
            vec![format!("{}{value}", TINY_PREFIXES[i % TINY_PREFIXES.len()])]
        })
        .collect()
}

/// Values built from the grammar's own pieces (primitives, quoted strings, lists, dicts,
/// calls, interpolations), then, half the time, damaged by one character hydra treats
/// specially: most are near misses of a valid value.
fn value_string() -> impl Strategy<Value = String> {
    let word = prop::sample::select(vec![
        "a", "skyrl", "1", "-2", "1.5e3", ".5", "inf", "nan", "null", "true", "False", "a b",
        "/x/y", "a:b", "a@b", "???", r"a\,b", r"\", "é", "", " ",
    ]);
    let reference = prop::sample::select(vec![
        "${trainer.seed}",
        "${trainer.nope}",
        "${.seed}",
        "${..seed}",
        "${trainer[seed]}",
        "${oc.env:HOME}",
        "${oc.env:HOME,x}",
        "${oc.select:trainer.nope,1}",
        "${foo:1}",
        "${oc.dict.keys:trainer}",
        "${trainer.project_name}",
        r"\${x}",
        "${oops",
        "${}",
    ]);
    let leaf = prop_oneof![
        4 => word.clone().prop_map(str::to_owned),
        2 => reference.clone().prop_map(str::to_owned),
        1 => (word.clone(), reference.clone()).prop_map(|(w, r)| format!("{w}{r}")),
        1 => word.prop_map(|w| format!("'{w}'")),
        1 => reference.prop_map(|r| format!("\"{r}\"")),
    ];
    let element = leaf.prop_recursive(3, 16, 4, |inner| {
        let function = prop::sample::select(vec![
            "int", "float", "str", "bool", "sort", "shuffle", "choice", "range", "glob", "tag",
            "nope",
        ]);
        let arg_name = prop::sample::select(vec!["", "", "value=", "list=", "reverse=", "x="]);
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(","))),
            prop::collection::vec((word_key(), inner.clone()), 0..3).prop_map(|v| {
                let pairs: Vec<String> = v.into_iter().map(|(k, e)| format!("{k}:{e}")).collect();
                format!("{{{}}}", pairs.join(", "))
            }),
            (
                function,
                prop::collection::vec((arg_name, inner.clone()), 0..3)
            )
                .prop_map(|(f, args)| {
                    let args: Vec<String> =
                        args.into_iter().map(|(n, a)| format!("{n}{a}")).collect();
                    format!("{f}({})", args.join(","))
                }),
            prop::collection::vec(inner, 2..3).prop_map(|v| v.join(",")),
        ]
    });
    let damage = prop::sample::select(vec![
        "'", "\"", "\\", "$", "{", "}", "[", "]", "(", ")", ",", "=", ":", " ", "#", "~", "é", "\n",
    ]);
    (
        element,
        prop::option::of((damage, any::<prop::sample::Index>())),
    )
        .prop_map(|(e, damage)| match damage {
            Some((d, at)) => {
                let cut = e
                    .char_indices()
                    .map(|(i, _)| i)
                    .chain([e.len()])
                    .collect::<Vec<_>>();
                let i = cut[at.index(cut.len())];
                format!("{}{d}{}", &e[..i], &e[i..])
            }
            None => e,
        })
}

fn word_key() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["a", "b c", "1", "null", "true", r"k\:", "-x"])
}
