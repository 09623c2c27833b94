//! Values as the schema reads them: hydra override values, structured as hydra's grammar reads
//! them, and the key list's defaults, written as Python's `json` prints them.

use crate::schema::knob::{KnobValue, Scalar};
use crate::util::json;
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::error::Category;
use std::fmt;

/// An override's value, structured as hydra's grammar reads it.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Value {
    Prim(Scalar),
    List(Vec<Value>),
    Dict(Vec<(String, Value)>),
}

impl Value {
    pub(super) fn is_container(&self) -> bool {
        matches!(self, Value::List(_) | Value::Dict(_))
    }

    pub(super) fn is_interpolation(&self) -> bool {
        matches!(self, Value::Prim(Scalar::Str(s)) if s.contains("${"))
    }
}

/// An override's value as hydra's grammar structures it.
pub(super) fn knob_value(value: &KnobValue) -> Value {
    match value {
        KnobValue::Typed(v) => toml_value(v),
        KnobValue::Verbatim(text) => parse_override_value(text),
    }
}

pub(super) fn toml_value(value: &toml::Value) -> Value {
    match value {
        toml::Value::Array(items) => Value::List(items.iter().map(toml_value).collect()),
        toml::Value::Table(t) => {
            Value::Dict(t.iter().map(|(k, v)| (k.clone(), toml_value(v))).collect())
        }
        other => Value::Prim(KnobValue::Typed(other.clone()).scalar()),
    }
}

/// Reads hydra override text: `[…]` and `{…}` structured, anything else one primitive.
pub(super) fn parse_override_value(text: &str) -> Value {
    let t = text.trim();
    if (t.starts_with('[') || t.starts_with('{'))
        && closing(t, 0) == Some(t.len() - 1)
        && let Some(v) = parse_container(t)
    {
        return v;
    }
    Value::Prim(Scalar::parse_hydra(t))
}

pub(super) fn parse_container(t: &str) -> Option<Value> {
    let inner = &t[1..t.len() - 1];
    let items = split_top(inner, ',')?;
    if t.starts_with('[') {
        if inner.trim().is_empty() {
            return Some(Value::List(Vec::new()));
        }
        return Some(Value::List(
            items.iter().map(|i| parse_override_value(i)).collect(),
        ));
    }
    if inner.trim().is_empty() {
        return Some(Value::Dict(Vec::new()));
    }
    let mut entries = Vec::new();
    for item in items {
        let parts = split_top(item, ':')?;
        if parts.len() < 2 {
            return None;
        }
        let rest = item[parts[0].len() + 1..].trim();
        let key = parts[0].trim().trim_matches(|c| c == '\'' || c == '"');
        if key.is_empty() {
            return None;
        }
        entries.push((key.to_owned(), parse_override_value(rest)));
    }
    Some(Value::Dict(entries))
}

/// The index of the bracket closing the one at `open`.
pub(super) fn closing(t: &str, open: usize) -> Option<usize> {
    let bytes = t.as_bytes();
    let mut depth = 0usize;
    let mut quote: Option<u8> = None;
    let mut i = open;
    while i < bytes.len() {
        let c = bytes[i];
        match quote {
            Some(q) => {
                if c == b'\\' {
                    i += 1;
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                b'\'' | b'"' => quote = Some(c),
                b'[' | b'{' => depth += 1,
                b']' | b'}' => {
                    depth = depth.checked_sub(1)?;
                    if depth == 0 {
                        return Some(i);
                    }
                }
                _ => {}
            },
        }
        i += 1;
    }
    None
}

/// The top-level items of a hydra list or dict's text, trimmed, quotes kept: `["a,b", 'c']` has
/// `"a,b"` and `'c'`; `None` for text that is not one (or whose brackets do not balance).
pub fn list_items(text: &str) -> Option<Vec<&str>> {
    let t = text.trim();
    let inner = (t.strip_prefix('[').and_then(|r| r.strip_suffix(']')))
        .or_else(|| t.strip_prefix('{').and_then(|r| r.strip_suffix('}')))?;
    if inner.trim().is_empty() {
        return Some(Vec::new());
    }
    Some(split_top(inner, ',')?.into_iter().map(str::trim).collect())
}

/// Splits at `sep` outside quotes and brackets (`${…}` counts as brackets).
pub(super) fn split_top(t: &str, sep: char) -> Option<Vec<&str>> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut start = 0;
    let mut escaped = false;
    for (i, c) in t.char_indices() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '\'' | '"' => quote = Some(c),
            '[' | '{' => depth += 1,
            ']' | '}' => depth = depth.checked_sub(1)?,
            c if c == sep && depth == 0 => {
                parts.push(&t[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(&t[start..]);
    Some(parts)
}

/// A default as the key list writes it: JSON, plus bare interpolations and Python's `NaN`,
/// `Infinity`.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum JsonValue {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Interp(String),
    Array(Vec<JsonValue>),
    Object(Vec<(String, JsonValue)>),
}

pub(super) fn parse_default(text: &str) -> Result<JsonValue, String> {
    if text.is_empty() {
        return Err("the default is empty (write null for none)".to_owned());
    }
    if text.contains("${") && !text.starts_with(['"', '[', '{']) {
        return Ok(JsonValue::Interp(text.to_owned()));
    }
    let quoted = json::quote_non_finite(text.as_bytes());
    serde_json::from_slice(&quoted).map_err(|e| json_error(text, &quoted, &e))
}

impl<'de> Deserialize<'de> for JsonValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = JsonValue;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<JsonValue, E> {
        Ok(JsonValue::Null)
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<JsonValue, E> {
        Ok(JsonValue::Bool(b))
    }

    fn visit_i64<E: de::Error>(self, i: i64) -> Result<JsonValue, E> {
        Ok(JsonValue::Int(i.into()))
    }

    fn visit_u64<E: de::Error>(self, i: u64) -> Result<JsonValue, E> {
        Ok(JsonValue::Int(i.into()))
    }

    fn visit_f64<E: de::Error>(self, x: f64) -> Result<JsonValue, E> {
        Ok(JsonValue::Float(x))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<JsonValue, E> {
        Ok(match json::non_finite(s) {
            Some(x) => JsonValue::Float(x),
            None => JsonValue::Str(s.to_owned()),
        })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<JsonValue, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(JsonValue::Array(items))
    }

    /// Keys in the list's order, a repeated key kept twice: the tree is built in this order.
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<JsonValue, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = map.next_entry()? {
            items.push(item);
        }
        Ok(JsonValue::Object(items))
    }
}

/// serde_json's complaint about a default, said in the key list's terms, quoting the text where
/// it goes wrong. serde_json tells its error codes only through their messages, so those are
/// matched; one not listed is passed on as serde_json says it.
fn json_error(text: &str, quoted: &[u8], error: &serde_json::Error) -> String {
    // serde_json counts columns from 1, at the byte where it gave up.
    let mut at = match error.classify() {
        Category::Eof => text.len(),
        _ => json::original_offset(quoted, error.column().saturating_sub(1)).min(text.len()),
    };
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let message = error.to_string();
    let what = message.split(" at line ").next().unwrap_or(&message);
    match what {
        "EOF while parsing a value"
        | "expected value"
        | "expected ident"
        | "invalid number"
        | "number out of range" => bad_word(text, at),
        "trailing comma" if text[at..].starts_with('}') => {
            "a string must be double-quoted".to_owned()
        }
        "trailing comma" => bad_word(text, at),
        "trailing characters" => {
            // A number that runs on (`1.5.5`) is one bad number, not a number and more text.
            let (start, number) = number_at(text, at);
            if start < at
                && start + number.len() > at
                && number.starts_with(|c: char| c.is_ascii_digit() || c == '-')
            {
                bad_word(text, at)
            } else {
                format!("unexpected `{}` after the value", &text[at..])
            }
        }
        "expected `,` or `]`" | "EOF while parsing a list" => {
            "a list needs `,` between items and a closing `]`".to_owned()
        }
        "expected `,` or `}`" | "EOF while parsing an object" => {
            "a dict needs `,` between items and a closing `}`".to_owned()
        }
        "expected `:`" => "a dict needs `\"key\": value` items".to_owned(),
        "key must be a string" => "a string must be double-quoted".to_owned(),
        "invalid escape" | "unexpected end of hex escape" | "EOF while parsing a string"
            if text[..at]
                .rfind('\\')
                .is_some_and(|b| text[b + 1..].starts_with('u') && at - b <= 6) =>
        {
            "`\\u` needs four hex digits".to_owned()
        }
        "invalid escape" => "a string has an unknown `\\` escape".to_owned(),
        "EOF while parsing a string" => "a string has no closing `\"`".to_owned(),
        other if other.starts_with("control character") => {
            "a string holds a control character; write it escaped (`\\t`, `\\n`, `\\u0000`)"
                .to_owned()
        }
        other => other.to_owned(),
    }
}

/// The word at `at` that is not a value: a number (`1e`) or anything else (`fsdp2`).
fn bad_word(text: &str, at: usize) -> String {
    let (start, number) = number_at(text, at);
    let rest = &text[start..];
    if rest.is_empty() {
        return "a value is missing".to_owned();
    }
    if number
        .strip_prefix('-')
        .unwrap_or(number)
        .starts_with(|c: char| c.is_ascii_digit())
    {
        return format!("`{number}` is not a number");
    }
    let shown: String = rest.chars().take(20).collect();
    format!("`{shown}` is not a value")
}

/// The start of the word around `at`, and the number-like text (digits, signs, `.`, `e`) it
/// starts with.
fn number_at(text: &str, at: usize) -> (usize, &str) {
    let in_word = |c: char| c.is_ascii_alphanumeric() || "+-.".contains(c);
    let start = text[..at]
        .char_indices()
        .rev()
        .take_while(|&(_, c)| in_word(c))
        .last()
        .map_or(at, |(i, _)| i);
    let rest = &text[start..];
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || "+-.eE".contains(c)))
        .unwrap_or(rest.len());
    (start, &rest[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hydra_values_are_structured() {
        assert_eq!(
            parse_override_value("{a:1, b:[x,'y,z'], c:${oc.env:A,b}}"),
            Value::Dict(vec![
                ("a".into(), Value::Prim(Scalar::Int(1))),
                (
                    "b".into(),
                    Value::List(vec![
                        Value::Prim(Scalar::Str("x".into())),
                        Value::Prim(Scalar::Str("y,z".into())),
                    ])
                ),
                ("c".into(), Value::Prim(Scalar::Str("${oc.env:A,b}".into()))),
            ])
        );
        assert_eq!(parse_override_value("[]"), Value::List(vec![]));
        assert_eq!(
            parse_override_value("[1,2"),
            Value::Prim(Scalar::List("[1,2".into()))
        );
    }

    #[test]
    fn defaults_read_as_python_writes_them() {
        let read = |text: &str| format!("{:?}", parse_default(text));
        // Keys stay in the list's order; NaN is compared through its Debug text.
        assert_eq!(
            read(r#"{"b": [1, -2.5, NaN, -Infinity], "a": {"x": "\u00e9"}, "c": null}"#),
            r#"Ok(Object([("b", Array([Int(1), Float(-2.5), Float(NaN), Float(-inf)])), ("a", Object([("x", Str("é"))])), ("c", Null)]))"#
        );
        assert_eq!(
            parse_default("${oc.env:HOME}/x"),
            Ok(JsonValue::Interp("${oc.env:HOME}/x".into()))
        );
        assert_eq!(parse_default(r#""NaN""#), Ok(JsonValue::Str("NaN".into())));
        assert_eq!(parse_default("1e-06"), Ok(JsonValue::Float(1e-6)));
    }

    #[test]
    fn malformed_defaults_say_where() {
        let err = |text: &str| parse_default(text).unwrap_err();
        assert_eq!(err("fsdp2"), "`fsdp2` is not a value");
        assert_eq!(err("[NaN, tru]"), "`tru]` is not a value");
        assert_eq!(err("1e"), "`1e` is not a number");
        assert_eq!(err("1.5.5"), "`1.5.5` is not a number");
        assert_eq!(err("[NaN] x"), "unexpected `x` after the value");
        assert_eq!(err("[1,"), "a value is missing");
        assert_eq!(
            err("[1 2]"),
            "a list needs `,` between items and a closing `]`"
        );
        assert_eq!(err(r#"{"a" 1}"#), "a dict needs `\"key\": value` items");
        assert_eq!(err(r#"{"a": 1,}"#), "a string must be double-quoted");
        assert_eq!(err(r#""abc"#), "a string has no closing `\"`");
        assert_eq!(err(r#""\x""#), "a string has an unknown `\\` escape");
        assert_eq!(err(r#""\u12zz""#), "`\\u` needs four hex digits");
        assert_eq!(err(""), "the default is empty (write null for none)");
    }
}
