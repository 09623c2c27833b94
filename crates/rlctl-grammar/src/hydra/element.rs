//! A parsed value as hydra's visitor builds it (Python's None, bool, int, float, str, list and
//! dict, plus the sweep objects of hydra's functions), and what OmegaConf then refuses to
//! store.

use super::functions;
use super::lexer::{Kind, Token};
use super::omegaconf;
use super::parser::{Node, Syntax};
use super::python;

#[derive(Debug, Clone, PartialEq)]
pub enum Element {
    Null,
    Bool(bool),
    /// Python's unbounded int, as its decimal text (`-12`).
    Int(String),
    Float(f64),
    Str(String),
    List(Vec<Element>),
    Dict(Vec<(Element, Element)>),
    Sweep(Sweep),
    /// `glob(...)`: a sweep at the top, a plain dataclass (so a dict) inside a list or dict.
    Glob {
        include: Vec<String>,
        exclude: Vec<String>,
    },
}

/// hydra's sweep objects; a value holding one is refused outside --multirun.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sweep {
    /// `a,b` (simple) or `choice(a,b)`.
    Choice {
        simple: bool,
    },
    Range,
    Interval,
}

impl Element {
    /// Python's `type(x).__name__`, for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Element::Null => "NoneType",
            Element::Bool(_) => "bool",
            Element::Int(_) => "int",
            Element::Float(_) => "float",
            Element::Str(_) => "str",
            Element::List(_) => "list",
            Element::Dict(_) => "dict",
            Element::Sweep(Sweep::Choice { .. }) => "ChoiceSweep",
            Element::Sweep(Sweep::Range) => "RangeSweep",
            Element::Sweep(Sweep::Interval) => "IntervalSweep",
            Element::Glob { .. } => "Glob",
        }
    }

    /// The text `str()` gives, for keys and messages (`True` as Python writes it).
    pub fn python_str(&self) -> String {
        match self {
            Element::Null => "None".into(),
            Element::Bool(b) => if *b { "True" } else { "False" }.into(),
            Element::Int(i) => i.clone(),
            Element::Float(x) => python_float(*x),
            Element::Str(s) => s.clone(),
            other => other.type_name().into(),
        }
    }
}

/// Python's `repr(float)`, near enough for keys and messages.
pub fn python_float(x: f64) -> String {
    if x.is_nan() {
        "nan".into()
    } else if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.into()
    } else if x != 0.0 && (x.abs() < 1e-4 || x.abs() >= 1e16) {
        let s = format!("{x:e}");
        let (mantissa, exp) = s.split_once('e').expect("`{:e}` has an exponent");
        let exp: i32 = exp.parse().expect("`{:e}` has a numeric exponent");
        format!(
            "{mantissa}e{}{:02}",
            if exp < 0 { '-' } else { '+' },
            exp.abs()
        )
    } else {
        let s = format!("{x:?}");
        if s.contains('.') { s } else { format!("{s}.0") }
    }
}

/// hydra's visitor: the value a syntax tree stands for, its function calls made.
pub fn evaluate(text: &str, syntax: &Syntax) -> Result<Element, String> {
    match &syntax.node {
        Node::Primitive(tokens) => primitive(text, tokens),
        Node::List(items) => items
            .iter()
            .map(|i| evaluate(text, i))
            .collect::<Result<_, _>>()
            .map(Element::List),
        Node::Dict(pairs) => {
            let mut out: Vec<(Element, Element)> = Vec::new();
            for (key, value) in pairs {
                let key = primitive(text, key)?;
                let value = evaluate(text, value)?;
                // A Python dict: a repeated key keeps its first place and takes the last value.
                match out.iter_mut().find(|(k, _)| same_key(k, &key)) {
                    Some(slot) => slot.1 = value,
                    None => out.push((key, value)),
                }
            }
            Ok(Element::Dict(out))
        }
        Node::Call { name, args } => {
            let mut positional = Vec::new();
            let mut named = Vec::new();
            for (arg_name, arg) in args {
                let value = evaluate(text, arg)?;
                match arg_name {
                    // hydra gathers keyword arguments in a dict: a repeated name keeps the last.
                    Some(n) => match named.iter_mut().find(|(m, _)| m == n) {
                        Some(slot) => slot.1 = value,
                        None => named.push((n.clone(), value)),
                    },
                    None if !named.is_empty() => {
                        return Err("positional argument follows keyword argument".into());
                    }
                    None => positional.push(value),
                }
            }
            functions::call(name, positional, named).map_err(|e| {
                format!(
                    "{} while evaluating '{}': {}",
                    e.kind,
                    without_blanks(&text[syntax.start..syntax.end]),
                    e.message
                )
            })
        }
    }
}

/// ANTLR's `getText()` of a call: its tokens without the blanks the lexer folded into them.
fn without_blanks(text: &str) -> String {
    let (tokens, _) = super::lexer::tokens(text, true);
    tokens
        .iter()
        .map(|t| match t.kind {
            Kind::POpen | Kind::Comma | Kind::PClose | Kind::Equal | Kind::Colon => {
                text[t.start..t.end].trim_matches([' ', '\t'])
            }
            Kind::BracketOpen | Kind::BraceOpen => {
                text[t.start..t.end].trim_end_matches([' ', '\t'])
            }
            Kind::BracketClose | Kind::BraceClose => {
                text[t.start..t.end].trim_start_matches([' ', '\t'])
            }
            _ => &text[t.start..t.end],
        })
        .collect()
}

/// Python's `==` between dict keys (`1`, `1.0` and `True` are one key).
fn same_key(a: &Element, b: &Element) -> bool {
    match (number(a), number(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

pub fn number(e: &Element) -> Option<f64> {
    match e {
        Element::Bool(b) => Some(f64::from(u8::from(*b))),
        Element::Int(i) => i.parse().ok(),
        Element::Float(x) => Some(*x),
        _ => None,
    }
}

/// `_createPrimitive`: one token typed, several joined into a string with the blanks around
/// them dropped and escapes undone.
fn primitive(text: &str, tokens: &[Token]) -> Result<Element, String> {
    let mut body = tokens;
    if body.first().is_some_and(|t| t.kind == Kind::Ws) {
        if body.len() == 1 {
            return Err("Trying to parse a primitive that is all whitespaces".into());
        }
        body = &body[1..];
    }
    if body.last().is_some_and(|t| t.kind == Kind::Ws) {
        body = &body[..body.len() - 1];
    }
    let src = |t: &Token| &text[t.start..t.end];
    if let [t] = body {
        let s = src(t);
        return Ok(match t.kind {
            Kind::QuotedValue => Element::Str(unquote(s)),
            Kind::Int => Element::Int(python::int_text(s).expect("INT tokens are ints")),
            Kind::Float => Element::Float(python::float_text(s).expect("FLOAT tokens are floats")),
            Kind::Null => Element::Null,
            Kind::Bool => Element::Bool(s.eq_ignore_ascii_case("true")),
            Kind::Esc => Element::Str(unescape(s)),
            _ => Element::Str(s.to_owned()),
        });
    }
    Ok(Element::Str(
        body.iter()
            .map(|t| match t.kind {
                Kind::Esc => unescape(src(t)),
                _ => src(t).to_owned(),
            })
            .collect(),
    ))
}

/// An ESC token undone: every other character, from the second.
fn unescape(s: &str) -> String {
    s.chars().skip(1).step_by(2).collect()
}

/// `_unescape_quoted_string`: the quotes dropped, and each run of backslashes before a quote
/// of the same kind halved (an odd run keeps the quote it escapes).
pub fn unquote(token: &str) -> String {
    let q = token.as_bytes()[0];
    let inner = &token[1..];
    let b = inner.as_bytes();
    let mut out = String::new();
    let mut from = 0;
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            i += 1;
            continue;
        }
        let run_start = i;
        while i < b.len() && b[i] == b'\\' {
            i += 1;
        }
        if i < b.len() && b[i] == q {
            out.push_str(&inner[from..run_start]);
            let run = i - run_start;
            out.push_str(&"\\".repeat(run / 2));
            let closing = i + 1 == b.len();
            if run % 2 == 1 && !closing {
                out.push(q as char);
            }
            i += 1;
            from = i;
        }
    }
    if from < b.len() {
        out.push_str(&inner[from..b.len() - 1]);
    }
    out
}

/// Hydra text that reads back as `value`: strings double-quoted, dict keys escaped as hydra's
/// `escape_special_characters` does, a glob as the dict OmegaConf makes of it.
pub fn render(value: &Element) -> String {
    match value {
        Element::Null => "null".into(),
        Element::Bool(b) => b.to_string(),
        Element::Int(i) => i.clone(),
        Element::Float(x) => python_float(*x),
        Element::Str(s) => crate::text::hydra_quote(s),
        Element::List(items) => format!(
            "[{}]",
            items.iter().map(render).collect::<Vec<_>>().join(",")
        ),
        Element::Dict(pairs) => format!(
            "{{{}}}",
            pairs
                .iter()
                .map(|(k, v)| format!("{}:{}", escape_key(&k.python_str()), render(v)))
                .collect::<Vec<_>>()
                .join(",")
        ),
        Element::Glob { include, exclude } => {
            let list = |v: &[String]| {
                render(&Element::List(
                    v.iter().cloned().map(Element::Str).collect(),
                ))
            };
            format!("{{include:{},exclude:{}}}", list(include), list(exclude))
        }
        Element::Sweep(_) => "null".into(),
    }
}

fn escape_key(key: &str) -> String {
    let mut out = String::new();
    for c in key.chars() {
        if "\\()[]{}:=, \t".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A preset's TOML value as hydra reads the text rlctl writes for it (the string `"null"` is
/// TOML's stand-in for null).
pub fn from_toml(value: &toml::Value) -> Element {
    match value {
        toml::Value::String(s) if s == "null" => Element::Null,
        toml::Value::String(s) => Element::Str(s.clone()),
        toml::Value::Integer(i) => Element::Int(i.to_string()),
        toml::Value::Float(x) => Element::Float(*x),
        toml::Value::Boolean(b) => Element::Bool(*b),
        toml::Value::Array(items) => Element::List(items.iter().map(from_toml).collect()),
        toml::Value::Datetime(d) => Element::Str(d.to_string()),
        toml::Value::Table(t) => Element::Str(t.to_string()),
    }
}

/// A command-line value as the TOML value of the type hydra gives it, as hydra's parser reads
/// it. What TOML cannot hold (a null, a sweep, an int past 64 bits) stays its text: the string
/// `"null"` is TOML's stand-in for null, as in presets.
pub fn text_toml(text: &str) -> toml::Value {
    (super::parse_value(text).ok())
        .and_then(|e| to_toml(&e))
        .unwrap_or_else(|| text.to_owned().into())
}

/// The inverse of [`from_toml`], where TOML has the type.
fn to_toml(value: &Element) -> Option<toml::Value> {
    Some(match value {
        Element::Null => "null".into(),
        Element::Bool(b) => (*b).into(),
        Element::Int(i) => i.parse::<i64>().ok()?.into(),
        Element::Float(x) => (*x).into(),
        Element::Str(s) => s.clone().into(),
        Element::List(items) => {
            toml::Value::Array(items.iter().map(to_toml).collect::<Option<_>>()?)
        }
        Element::Dict(pairs) => toml::Value::Table(
            (pairs.iter())
                .map(|(k, v)| match k {
                    Element::Str(k) => Some((k.clone(), to_toml(v)?)),
                    _ => None,
                })
                .collect::<Option<_>>()?,
        ),
        Element::Sweep(_) | Element::Glob { .. } => return None,
    })
}

/// What OmegaConf refuses when hydra stores the value: an interpolation string its grammar
/// rejects, a sweep inside a list or dict, a null dict key.
pub fn storage_refusal(value: &Element) -> Option<String> {
    match value {
        Element::Str(s) if s.contains("${") => omegaconf::parse(s)
            .err()
            .map(|e| format!("GrammarParseError: {e}")),
        Element::List(items) => items.iter().find_map(storage_refusal),
        Element::Dict(pairs) => pairs.iter().find_map(|(k, v)| match k {
            Element::Null => Some("KeyValidationError: Incompatible key type 'NoneType'".into()),
            _ => storage_refusal(v),
        }),
        Element::Sweep(_) => Some("ValidationError: Unexpected type annotation: Set[str]".into()),
        Element::Glob { include, exclude } => include
            .iter()
            .chain(exclude)
            .find_map(|s| storage_refusal(&Element::Str(s.clone()))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_strings_halve_the_backslashes_before_their_quote() {
        assert_eq!(unquote(r#""abc\"def""#), r#"abc"def"#);
        assert_eq!(unquote(r#""abc\\\"def""#), r#"abc\"def"#);
        assert_eq!(unquote(r#""abc\\""#), r"abc\");
        assert_eq!(unquote(r#""abc\\\\""#), r"abc\\");
        assert_eq!(unquote(r"'a\b'"), r"a\b");
        assert_eq!(unquote(r#"'say "hi"'"#), r#"say "hi""#);
        assert_eq!(unquote("''"), "");
    }

    #[test]
    fn floats_print_as_python_prints_them() {
        assert_eq!(python_float(1e-5), "1e-05");
        assert_eq!(python_float(1.0), "1.0");
        assert_eq!(python_float(0.5), "0.5");
        assert_eq!(python_float(1e300), "1e+300");
    }
}
