//! SkyRL's own start-up rules, checked before the queue wait instead of after it: every rule of
//! MarinSkyRL's `validate_cfg` (and what it calls) that the plan's knobs, SkyRL's defaults and the
//! job's GPUs decide, and the refusals of the entrypoint, Ray and vLLM right after it.
//!
//! The target is MarinSkyRL @ a559688 (the schema the profiles name). Where it differs from
//! skyrl-train 0.3.1, the oracle of tests/integration/skyrl_rules.rs, the rule says so. On an
//! upstream plan ([`Values::upstream`]) the rules follow upstream `skyrl` 0.4.0's `validate_cfg`
//! where it differs, each in its own file (oracle: tests/integration/skyrl_rules_upstream.rs).

mod algorithm;
mod batch;
mod generator;
mod names;
mod placement;
mod startup;
mod trainer;

use crate::plan::Plan;
use crate::schema::Schema;
use crate::schema::flavour::Flavour;
use crate::schema::knob::Scalar;
use crate::schema::resolve::Resolver;
use camino::Utf8Path;

/// A knob's effective value: the plan's, else SkyRL's default.
pub struct Values<'a> {
    pub plan: &'a Plan,
    pub schema: &'a Schema,
    /// The offline HF cache, where a model's config.json may be read (DCP's kv-head bound).
    pub hf_cache: &'a Utf8Path,
}

/// SkyRL's own entrypoint, which registers no names of its own and builds no teacher.
const MAIN_BASE: &str = "skyrl_train.entrypoints.main_base";

impl Values<'_> {
    /// The knobs over SkyRL's defaults, through the one resolver the estimate uses too.
    fn resolver(&self) -> Resolver<'_> {
        Resolver {
            knobs: &self.plan.knobs,
            schema: self.schema,
        }
    }

    /// The value as written: the plan's knob, else the default's text, interpolations as is.
    pub fn get(&self, key: &str) -> Option<Scalar> {
        self.resolver().get(key)
    }

    /// The value OmegaConf would hand SkyRL ([`Resolver::value`]).
    pub fn value(&self, key: &str) -> Option<Scalar> {
        self.resolver().value(key)
    }

    pub fn int(&self, key: &str) -> Option<i64> {
        self.value(key)?.as_int()
    }

    pub fn float(&self, key: &str) -> Option<f64> {
        self.value(key)?.as_float()
    }

    /// Python's truth of the value: false for null, false, 0, "" and empty lists.
    pub fn truthy(&self, key: &str) -> bool {
        match self.value(key) {
            None | Some(Scalar::Null) => false,
            Some(Scalar::Bool(b)) => b,
            Some(Scalar::Int(i)) => i != 0,
            Some(Scalar::Float(x)) => x != 0.0,
            Some(Scalar::Str(s)) => !s.is_empty(),
            Some(Scalar::List(t) | Scalar::Dict(t)) => hydra_items(&t).is_some_and(|n| n > 0),
        }
    }

    /// Python's `is not None`.
    pub fn is_set(&self, key: &str) -> bool {
        self.value(key).is_some_and(|s| s != Scalar::Null)
    }

    pub fn text(&self, key: &str) -> Option<String> {
        match self.value(key)? {
            Scalar::Str(s) => Some(s),
            Scalar::List(s) => Some(s),
            _ => None,
        }
    }

    /// The value as hydra writes it, for messages.
    pub fn show(&self, key: &str) -> String {
        match self.value(key) {
            Some(Scalar::Null) | None => "null".to_owned(),
            Some(Scalar::Bool(b)) => b.to_string(),
            Some(Scalar::Int(i)) => i.to_string(),
            Some(Scalar::Float(x)) if x.is_nan() => "nan".to_owned(),
            Some(Scalar::Float(x)) if x.is_finite() && x.fract() == 0.0 => format!("{x:.1}"),
            Some(Scalar::Float(x)) => x.to_string(),
            Some(Scalar::Str(s) | Scalar::List(s) | Scalar::Dict(s)) => s,
        }
    }

    /// The number of items of a list value; None when the value is not a list.
    pub fn list_len(&self, key: &str) -> Option<usize> {
        match self.value(key)? {
            Scalar::List(text) => hydra_items(&text),
            _ => None,
        }
    }

    /// `trainer.algorithm.use_kl_loss or trainer.algorithm.use_kl_in_reward`: SkyRL builds a
    /// ref model only then.
    pub fn uses_ref(&self) -> bool {
        self.truthy("trainer.algorithm.use_kl_loss")
            || self.truthy("trainer.algorithm.use_kl_in_reward")
    }

    /// The critic exists when it has a model path.
    pub fn uses_critic(&self) -> bool {
        self.truthy("trainer.critic.model.path")
    }

    /// MarinSkyRL's vLLM teacher of on-policy distillation: the distillation entrypoints build
    /// it when it has a model path; SkyRL's base entrypoint never does.
    pub fn uses_teacher(&self) -> bool {
        // Upstream's example has no such teacher (its knobs are left out or refused, with the
        // reason); its core OPD places its teacher as its config says, which rlctl does not mirror.
        !self.upstream() && self.entry_module() != MAIN_BASE && self.truthy("teacher.model_path")
    }

    /// Whether the entry module is an on-policy distillation: a known one of either flavour, or
    /// one named so.
    pub fn distills(&self) -> bool {
        let module = &self.plan.entrypoint;
        Flavour::is_opd_entry(module) || module.contains("on_policy_distill")
    }

    /// Whether the trainer is upstream SkyRL, whose validate_cfg differs in places.
    pub fn upstream(&self) -> bool {
        self.plan.flavour == Flavour::Upstream
    }

    /// The names the trainer's flavour accepts.
    pub fn names(&self) -> &'static names::Names {
        names::of(self.plan.flavour)
    }

    /// The plan's entry module under MarinSkyRL's name, which the rules know modules by.
    pub fn entry_module(&self) -> String {
        Flavour::Marin.entry_module(&self.plan.entrypoint)
    }
}

/// The number of top-level items of a hydra list or dict's text, e.g. `["a,b", 'c']` has 2.
fn hydra_items(text: &str) -> Option<usize> {
    crate::schema::value::list_items(text).map(|items| items.len())
}

/// Python's `a // b`: rounds toward minus infinity; None where Python raises ZeroDivisionError.
pub fn floor_div(a: i64, b: i64) -> Option<i64> {
    if b == 0 {
        return None;
    }
    let q = a / b;
    Some(if a % b != 0 && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    })
}

/// Python's `a % b`: takes the divisor's sign.
pub fn py_mod(a: i64, b: i64) -> Option<i64> {
    Some(a - b * floor_div(a, b)?)
}

/// A value SkyRL takes from a fixed list of names: the message says why the list is what it
/// is and suggests the closest name, when one is close.
fn one_of(v: &Values, key: &str, names: &[&str], why: &str, problems: &mut Vec<String>) {
    let value = v.show(key);
    if v.text(key).is_some() && names.contains(&value.as_str()) {
        return;
    }
    let closest = names
        .iter()
        .map(|n| (strsim::jaro_winkler(n, &value), n))
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .filter(|(score, _)| *score >= 0.7);
    let fix = match closest {
        Some((_, name)) => format!("did you mean `{key}={name}`?"),
        None => "set one of them".to_owned(),
    };
    problems.push(format!(
        "`{key}={value}` is not one of {} ({why}): {fix}",
        names.join(", ")
    ));
}

/// Every rule SkyRL would raise on, as a message that names the keys and the fix.
pub fn check(v: &Values) -> Vec<String> {
    let mut problems = Vec::new();
    algorithm::check(v, &mut problems);
    placement::check(v, &mut problems);
    batch::check(v, &mut problems);
    generator::check(v, &mut problems);
    trainer::check(v, &mut problems);
    startup::check(v, &mut problems);
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_floor_division_and_modulo() {
        assert_eq!(floor_div(7, 2), Some(3));
        assert_eq!(floor_div(-7, 2), Some(-4));
        assert_eq!(floor_div(7, -2), Some(-4));
        assert_eq!(floor_div(6, 4), Some(1));
        assert_eq!(floor_div(1, 0), None);
        assert_eq!(py_mod(-7, 2), Some(1));
        assert_eq!(py_mod(7, -2), Some(-1));
        assert_eq!(py_mod(32, 5), Some(2));
    }

    #[test]
    fn items_of_hydra_lists() {
        assert_eq!(hydra_items("[]"), Some(0));
        assert_eq!(hydra_items("[ ]"), Some(0));
        assert_eq!(hydra_items(r#"["a,b", 'c']"#), Some(2));
        assert_eq!(hydra_items("[[1,2],[3]]"), Some(2));
        assert_eq!(hydra_items("{a: 1, b: [2, 3]}"), Some(2));
        assert_eq!(hydra_items("abc"), None);
    }
}
