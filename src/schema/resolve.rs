//! A knob's value as OmegaConf hands it to SkyRL: the last override of the key, else SkyRL's
//! default, with plain `${a.b}` interpolations followed. One resolver for the checks and the
//! estimate, so both read the number the trainer reads.

use crate::schema::Schema;
use crate::schema::knob::{Knob, Scalar};

/// Interpolations followed at most this deep; SkyRL's own chains are one or two long.
const MAX_INTERPOLATION_DEPTH: usize = 8;

/// The knobs of a plan over SkyRL's defaults.
pub struct Resolver<'a> {
    pub knobs: &'a [Knob],
    pub schema: &'a Schema,
}

impl Resolver<'_> {
    /// The value as written: the plan's knob, else the default's text, interpolations as is.
    pub fn get(&self, key: &str) -> Option<Scalar> {
        match self.knob(key) {
            Some(value) => Some(value),
            None => self.schema.default_text(key).map(Scalar::parse_hydra),
        }
    }

    fn knob(&self, key: &str) -> Option<Scalar> {
        let knob = self.knobs.iter().rev().find(|k| k.path() == key)?;
        Some(knob.value.scalar())
    }

    fn written(&self, key: &str) -> Option<Scalar> {
        self.knob(key).or_else(|| self.schema.default_scalar(key))
    }

    /// The value OmegaConf would hand SkyRL: `${a.b}` followed to a.b's value, also for keys
    /// under an interpolated node (`trainer.policy.deepspeed_config.zero_optimization.stage`
    /// reads `deepspeed_config.train.zero_optimization.stage`). Resolvers such as `${oc.env:X}`
    /// stay text.
    pub fn value(&self, key: &str) -> Option<Scalar> {
        self.resolve(key, 0)
    }

    fn resolve(&self, key: &str, depth: usize) -> Option<Scalar> {
        if depth > MAX_INTERPOLATION_DEPTH {
            return None;
        }
        if let Some(value) = self.written(key) {
            return match reference(&value) {
                Some(target) => self.resolve(&target, depth + 1),
                None => Some(value),
            };
        }
        let mut prefix = key;
        while let Some((parent, _)) = prefix.rsplit_once('.') {
            prefix = parent;
            if let Some(value) = self.written(prefix) {
                let target = reference(&value)?;
                let rest = &key[prefix.len()..];
                return self.resolve(&format!("{target}{rest}"), depth + 1);
            }
        }
        None
    }

    pub fn int(&self, key: &str) -> Option<i64> {
        self.value(key)?.as_int()
    }
}

/// `a.b` of a value that is exactly `${a.b}`.
pub fn reference(value: &Scalar) -> Option<String> {
    let text = value.as_str()?.trim();
    let inner = text.strip_prefix("${")?.strip_suffix('}')?;
    (!inner.contains([':', '$', '{', '}'])).then(|| inner.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_are_plain_interpolations_only() {
        let s = |t: &str| Scalar::Str(t.to_owned());
        assert_eq!(
            reference(&s("${trainer.max_prompt_length}")).as_deref(),
            Some("trainer.max_prompt_length")
        );
        assert_eq!(reference(&s("${oc.env:HOME}/ckpts/")), None);
        assert_eq!(reference(&s("${oc.env:HOME}")), None);
        assert_eq!(reference(&s("fsdp2")), None);
    }
}
