//! How much work one step of a run is, for carrying a speed measured on one run over to
//! another: the one list of the knobs that change it. Every knob not listed here (the learning
//! rate, the KL coefficient, seeds, temperatures, vLLM's memory share, micro batches...) leaves
//! the work of a step alone, and a speed measured with other values of it is borrowed as is.
//!
//! The scaling is an approximation, and the estimate shows it: a step's time is taken to grow
//! linearly with the samples it generates and trains on (`train_batch_size` ×
//! `n_samples_per_prompt`) and with the generation length (`max_generate_length`, the bound on
//! every response), and to shrink in proportion to the GPUs the policy gets. Real runs scale
//! worse than that with more GPUs (the team's two-node gsm8k ran slower than one node) and
//! better with longer lengths than most responses use. Another model, or another tensor
//! parallel split of the engines, is another shape: no speed is carried across it.

use crate::schema::Schema;
use crate::schema::knob::{Knob, Scalar};
use crate::schema::resolve::reference;
use crate::util::fmt::{Digits, number};
use std::collections::BTreeMap;

/// A work dimension: what a step's time is scaled by, and the knobs whose product it is.
pub struct Dimension {
    /// As the estimate names it: "samples per step 1024 vs 256".
    pub name: &'static str,
    pub keys: &'static [&'static str],
    /// The step time grows with it (`true`) or shrinks with it (GPUs).
    pub grows: bool,
}

/// The knobs that scale the work of a step.
pub const SCALED: [Dimension; 3] = [
    Dimension {
        name: "samples per step",
        keys: &["trainer.train_batch_size", "generator.n_samples_per_prompt"],
        grows: true,
    },
    Dimension {
        name: "generation length",
        keys: &["generator.sampling_params.max_generate_length"],
        grows: true,
    },
    Dimension {
        name: "policy GPUs",
        keys: &[
            "trainer.placement.policy_num_nodes",
            "trainer.placement.policy_num_gpus_per_node",
        ],
        grows: false,
    },
];

/// The knobs that must be the same for a speed to be carried over at all: every model a step
/// runs, and how the generation engines split it.
pub const SHAPE: [&str; 4] = [
    "trainer.policy.model.path",
    "trainer.ref.model.path",
    "teacher.model_path",
    "generator.inference_engine_tensor_parallel_size",
];

impl Carry {
    /// `s` seconds a step measured on the other run, carried over: the figure and how, as
    /// `9.58 s/step x 4.0 (samples per step 1024 vs 256) = 38.3 s/step`; `None` if it cannot be.
    pub fn apply(&self, s: f64) -> Option<(f64, String)> {
        let Carry::Scaled(factor, basis) = self else {
            return None;
        };
        let at = |s: f64| number(s, Digits::Sig(3));
        let text = match basis.is_empty() {
            true => format!("{} s/step", at(s)),
            false => format!(
                "{} s/step {} = {} s/step",
                at(s),
                basis.join(" "),
                at(s * factor)
            ),
        };
        Some((s * factor, text))
    }
}

/// Interpolations followed at most this deep, as the resolver does.
const DEPTH: usize = 8;

/// SkyRL's defaults of the work knobs, for a run whose knobs leave one unset.
#[derive(Debug, Clone, Default)]
pub struct Defaults(BTreeMap<String, String>);

impl Defaults {
    pub fn of(schema: &Schema) -> Defaults {
        let keys = (SCALED.iter().flat_map(|d| d.keys.iter())).chain(SHAPE.iter());
        Defaults(
            keys.filter_map(|k| Some((k.to_string(), schema.default_text(k)?.to_owned())))
                .collect(),
        )
    }
}

/// One run's work: the value of each dimension and shape knob, `None` where it does not read
/// as one (unset with no default, an interpolation not followed).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Work {
    scaled: [Option<f64>; 3],
    shape: [Option<String>; 4],
}

/// How a speed measured on one run carries over to another.
#[derive(Debug, Clone, PartialEq)]
pub enum Carry {
    /// By this factor (1 when no dimension differs), with each differing dimension's factor
    /// and basis: `x 4.0 (samples per step 1024 vs 256)`.
    Scaled(f64, Vec<String>),
    /// Not at all: what differs, `trainer.policy.model.path (A vs B)`.
    Not(Vec<String>),
}

impl Work {
    /// The work of the run whose knob `key` has the hydra text `lookup(key)`.
    pub fn of(lookup: impl Fn(&str) -> Option<String>, defaults: &Defaults) -> Work {
        let text = |key: &str| value(&lookup, defaults, key);
        let product = |keys: &[&str]| {
            (keys.iter()).try_fold(1.0, |acc, k| {
                let n = text(k)?.parse::<f64>().ok().filter(|n| *n > 0.0)?;
                Some(acc * n)
            })
        };
        Work {
            scaled: SCALED.each_ref().map(|d| product(d.keys)),
            shape: SHAPE.map(|k| text(k).filter(|t| t != "null")),
        }
    }

    /// The work of the run whose knobs are `knobs` (as the ledger keeps them: key → hydra text).
    pub fn of_map(knobs: &BTreeMap<String, String>, defaults: &Defaults) -> Work {
        Work::of(|k| knobs.get(k).cloned(), defaults)
    }

    /// The work of a plan's knobs.
    pub fn of_knobs(knobs: &[Knob], defaults: &Defaults) -> Work {
        let lookup = |key: &str| {
            let knob = knobs.iter().rev().find(|k| k.key == key)?;
            Some(knob.value.hydra_text())
        };
        Work::of(lookup, defaults)
    }

    /// How a speed measured on `self` carries over to `to`.
    pub fn carry(&self, to: &Work) -> Carry {
        let mut pairs = Vec::new();
        let mut shape = Vec::new();
        for (key, (theirs, mine)) in SHAPE.iter().zip(self.shape.iter().zip(&to.shape)) {
            // The ref model follows the policy's unless set: one difference, said once.
            if theirs != mine && !pairs.contains(&(theirs, mine)) {
                pairs.push((theirs, mine));
                let or = |v: &Option<String>| v.clone().unwrap_or_else(|| "unset".to_owned());
                shape.push(format!("{key} ({} vs {})", or(mine), or(theirs)));
            }
        }
        let mut factor = 1.0;
        let mut basis = Vec::new();
        let mut not = shape;
        for (d, (theirs, mine)) in SCALED.iter().zip(self.scaled.iter().zip(&to.scaled)) {
            match (theirs, mine) {
                (a, b) if a == b => {}
                (Some(theirs), Some(mine)) => {
                    let f = if d.grows {
                        mine / theirs
                    } else {
                        theirs / mine
                    };
                    factor *= f;
                    basis.push(format!(
                        "x {} ({} {} vs {})",
                        number(f, Digits::SigKept(2)),
                        d.name,
                        number(*mine, Digits::Sig(6)),
                        number(*theirs, Digits::Sig(6))
                    ));
                }
                _ => not.push(format!("{} ({})", d.name, d.keys.join(" x "))),
            }
        }
        match not.is_empty() {
            true => Carry::Scaled(factor, basis),
            false => Carry::Not(not),
        }
    }
}

/// The hydra text of `key` (also as `+key`), else its default; `${a.b}` followed.
fn value(
    lookup: &impl Fn(&str) -> Option<String>,
    defaults: &Defaults,
    key: &str,
) -> Option<String> {
    let mut key = key.to_owned();
    for _ in 0..DEPTH {
        let text = (["", "+", "++"].iter())
            .find_map(|p| lookup(&format!("{p}{key}")))
            .or_else(|| defaults.0.get(&key).cloned())?;
        match reference(&Scalar::parse_hydra(&text)) {
            Some(target) => key = target,
            None => return Some(text.trim().trim_matches(['"', '\'']).to_owned()),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn work(pairs: &[(&str, &str)]) -> Work {
        let map = (pairs.iter())
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Work::of_map(&map, &Defaults::default())
    }

    const BASE: [(&str, &str); 7] = [
        ("trainer.policy.model.path", "Qwen/A"),
        ("trainer.train_batch_size", "32"),
        ("generator.n_samples_per_prompt", "4"),
        ("generator.sampling_params.max_generate_length", "512"),
        ("trainer.placement.policy_num_nodes", "1"),
        ("trainer.placement.policy_num_gpus_per_node", "4"),
        ("generator.inference_engine_tensor_parallel_size", "1"),
    ];

    fn with(changes: &[(&'static str, &'static str)]) -> Work {
        let mut pairs = BASE.to_vec();
        for (k, v) in changes {
            pairs.retain(|(key, _)| key != k);
            pairs.push((k, v));
        }
        work(&pairs)
    }

    #[test]
    fn samples_length_and_gpus_scale_the_step() {
        let base = with(&[]);
        assert_eq!(base.carry(&base), Carry::Scaled(1.0, vec![]));
        let Carry::Scaled(f, basis) = base.carry(&with(&[
            ("trainer.train_batch_size", "128"),
            ("generator.sampling_params.max_generate_length", "1024"),
            ("trainer.placement.policy_num_nodes", "2"),
        ])) else {
            panic!()
        };
        assert_eq!(f, 4.0);
        assert_eq!(
            basis,
            [
                "x 4.0 (samples per step 512 vs 128)",
                "x 2.0 (generation length 1024 vs 512)",
                "x 0.50 (policy GPUs 8 vs 4)"
            ]
        );
    }

    #[test]
    fn another_model_or_an_interpolation_not_followed_carries_nothing() {
        let base = with(&[]);
        let Carry::Not(why) = base.carry(&with(&[("trainer.policy.model.path", "Qwen/B")])) else {
            panic!()
        };
        assert_eq!(why, ["trainer.policy.model.path (Qwen/B vs Qwen/A)"]);
        let followed = with(&[
            ("trainer.train_batch_size", "${trainer.eval_batch_size}"),
            ("trainer.eval_batch_size", "32"),
        ]);
        assert_eq!(base.carry(&followed), Carry::Scaled(1.0, vec![]));
        let lost = with(&[("trainer.train_batch_size", "${nowhere}")]);
        assert!(matches!(base.carry(&lost), Carry::Not(_)));
    }
}
