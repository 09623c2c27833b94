//! rlctl's type rule, stricter than hydra (which takes any type, SkyRL's YAML being untyped):
//! which values a default accepts.
//!
//! An integer default takes an integer; a float default an integer or a float; a boolean
//! default `true` or `false`; a list default a list; a dict a dict. A string default takes any
//! single value, numbers and null included: SkyRL's string knobs take numbers where their tools
//! do (DeepSpeed's `"auto"` sizes take integers), null where they are optional
//! (`trainer.resume_mode`), and SkyRL checks their values itself; a list or dict is refused. A
//! null, `???` or interpolation default takes anything, as does a value that is itself an
//! interpolation (`${...}`), whose type rlctl cannot know.

use super::hydra::Landing;
use super::value::{Value, knob_value};
use super::{Kind, Leaf, Schema, join};
use crate::schema::knob::{Knob, Scalar};

impl Schema {
    /// The type rule on an override hydra accepted, where it landed.
    pub(super) fn check_type(&self, knob: &Knob, landing: Landing) -> Result<(), String> {
        let arg = crate::error::clip(&knob.hydra_arg()).into_owned();
        match landing {
            Landing::Deleted | Landing::Unchecked | Landing::New { replaced: None } => Ok(()),
            Landing::New {
                replaced: Some(leaf),
            } => match self.leaf(leaf) {
                Some(Leaf::Null | Leaf::Missing) => Ok(()),
                _ => Err(self.replaced_message(knob, leaf)),
            },
            Landing::Node(node) => {
                let value = knob_value(&knob.value);
                self.type_of(node, &value).map_err(|(at, want)| {
                    if self.nodes[at].path == knob.path() {
                        format!("`{arg}`: SkyRL's default is {want}")
                    } else {
                        format!(
                            "`{arg}`: SkyRL's default for `{}` is {want}",
                            self.nodes[at].path
                        )
                    }
                })
            }
        }
    }

    /// rlctl's type rule at `node`: `Err((node, "the integer 1024; give an integer"))`.
    fn type_of(&self, node: usize, value: &Value) -> Result<(), (usize, String)> {
        if value.is_interpolation() {
            return Ok(());
        }
        let shown = self.shown(node);
        let fail = |want: &str| Err((node, format!("{shown}; {want}")));
        match (&self.nodes[node].kind, value) {
            (Kind::Leaf(Leaf::Null | Leaf::Missing | Leaf::Interp(_)), _) => Ok(()),
            (Kind::Leaf(Leaf::Int(_)), Value::Prim(Scalar::Int(_))) => Ok(()),
            (Kind::Leaf(Leaf::Int(_)), _) => fail("give an integer"),
            (Kind::Leaf(Leaf::Float(_)), Value::Prim(Scalar::Int(_) | Scalar::Float(_))) => Ok(()),
            (Kind::Leaf(Leaf::Float(_)), _) => fail("give a number"),
            (Kind::Leaf(Leaf::Bool(_)), Value::Prim(Scalar::Bool(_))) => Ok(()),
            (Kind::Leaf(Leaf::Bool(_)), Value::Prim(Scalar::Str(s)))
                if matches!(
                    s.to_ascii_lowercase().as_str(),
                    "yes" | "no" | "on" | "off" | "y" | "n"
                ) =>
            {
                fail(&format!(
                    "give true or false (hydra reads `{s}` as a string, which Python takes as true)"
                ))
            }
            (Kind::Leaf(Leaf::Bool(_)), _) => fail("give true or false"),
            (Kind::Leaf(Leaf::Str(_)), Value::Prim(_)) => Ok(()),
            (Kind::Leaf(Leaf::Str(_)), _) => fail("give a single value, not a list or dict"),
            (Kind::List(_), Value::List(_)) => Ok(()),
            (Kind::List(_), _) => fail("give a list, e.g. `[a,b]`"),
            (Kind::Dict { .. }, Value::Dict(items)) => {
                for (k, v) in items {
                    if let Some(c) = self.child(node, k) {
                        self.type_of(c, v)?;
                    }
                }
                Ok(())
            }
            (Kind::Dict { children, .. }, _) if children.is_empty() => {
                let path = &self.nodes[node].path;
                fail(&format!(
                    "give a dict, or add its keys one by one with `+{path}.KEY=VALUE`"
                ))
            }
            (Kind::Dict { children, .. }, _) => {
                let path = &self.nodes[node].path;
                let example = join(path, &children[0].0);
                fail(&format!(
                    "set its keys one by one, e.g. `{example}=…`, not the whole section"
                ))
            }
        }
    }
}
