//! Hydra 1.3's override grammar and OmegaConf 2.3's interpolation grammar, by hand: what
//! hydra refuses of one `KEY=VALUE` argument before SkyRL starts (its syntax, its function
//! calls, sweeps outside --multirun, values OmegaConf will not store), and what OmegaConf
//! refuses when it resolves the composed config (interpolations to keys that are not there).
//! This crate's tests/hydra_grammar/ holds a corpus and a proptest proved against hydra itself.

mod config;
mod element;
mod functions;
mod lexer;
mod omegaconf;
mod omegaconf_lexer;
mod parser;
mod python;
mod refusal;

pub use config::{Config, Failure, Problem};
pub use element::{Element, from_toml, render, storage_refusal, text_toml};
pub use parser::Prefix;
pub use refusal::{Refusal, Stage, quoted};

use parser::ValueSyntax;

/// One override as hydra reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Override {
    pub prefix: Prefix,
    /// The config key or group, without prefix or package.
    pub key: String,
    /// `@package`, when given.
    pub package: Option<String>,
    /// The value, `None` for `~key` without `=`; `key=` is the empty string.
    pub value: Option<Element>,
}

/// Hydra's verdict on one argument up to the point where OmegaConf has stored its value.
pub fn check(arg: &str) -> Result<Override, Refusal> {
    let syntax = parser::parse_override(arg).map_err(|e| refusal::syntax(arg, &e))?;
    let value = match &syntax.value {
        None => None,
        Some(ValueSyntax::Empty) => Some(Element::Str(String::new())),
        Some(ValueSyntax::Element(e)) => Some(evaluate(arg, e)?),
        Some(ValueSyntax::Sweep(items)) => {
            for item in items {
                evaluate(arg, item)?;
            }
            return Err(refusal::sweep(arg, true));
        }
    };
    match &value {
        Some(Element::Sweep(element::Sweep::Choice { simple })) => {
            return Err(refusal::sweep(arg, *simple));
        }
        Some(Element::Sweep(_) | Element::Glob { .. }) => return Err(refusal::sweep(arg, false)),
        Some(v) if syntax.prefix != Prefix::Delete => {
            if let Some(says) = element::storage_refusal(v) {
                return Err(refusal::storage(says));
            }
        }
        _ => {}
    }
    Ok(Override {
        prefix: syntax.prefix,
        key: syntax.key,
        package: syntax.package,
        value,
    })
}

fn evaluate(arg: &str, syntax: &parser::Syntax) -> Result<Element, Refusal> {
    element::evaluate(arg, syntax).map_err(|message| refusal::function(arg, &message))
}

/// A lone value as hydra's parser reads it (a key list's default, say).
pub fn parse_value(text: &str) -> Result<Element, Refusal> {
    match parser::parse_value(text).map_err(|e| refusal::syntax(text, &e))? {
        ValueSyntax::Element(e) => evaluate(text, &e),
        ValueSyntax::Empty | ValueSyntax::Sweep(_) => Ok(Element::Str(text.to_owned())),
    }
}
