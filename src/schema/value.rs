//! Values as the schema reads them: hydra override values, structured as hydra's grammar reads
//! them, and the key list's defaults, written as Python's `json` prints them.

use crate::schema::knob::{KnobValue, Scalar};

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
    let bytes = text.as_bytes();
    let (value, end) = parse_json(bytes, 0)?;
    let end = skip_ws(bytes, end);
    if end != bytes.len() {
        return Err(format!("unexpected `{}` after the value", &text[end..]));
    }
    Ok(value)
}

pub(super) fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

pub(super) fn parse_json(b: &[u8], i: usize) -> Result<(JsonValue, usize), String> {
    let i = skip_ws(b, i);
    let rest = &b[i..];
    let word = |w: &str| rest.starts_with(w.as_bytes());
    match rest.first() {
        None => Err("a value is missing".to_owned()),
        Some(b'"') => parse_json_string(b, i).map(|(s, end)| (JsonValue::Str(s), end)),
        Some(b'[') => {
            let mut items = Vec::new();
            let mut j = skip_ws(b, i + 1);
            if b.get(j) == Some(&b']') {
                return Ok((JsonValue::Array(items), j + 1));
            }
            loop {
                let (v, end) = parse_json(b, j)?;
                items.push(v);
                j = skip_ws(b, end);
                match b.get(j) {
                    Some(b',') => j += 1,
                    Some(b']') => return Ok((JsonValue::Array(items), j + 1)),
                    _ => return Err("a list needs `,` between items and a closing `]`".to_owned()),
                }
            }
        }
        Some(b'{') => {
            let mut items = Vec::new();
            let mut j = skip_ws(b, i + 1);
            if b.get(j) == Some(&b'}') {
                return Ok((JsonValue::Object(items), j + 1));
            }
            loop {
                j = skip_ws(b, j);
                let (key, end) = parse_json_string(b, j)?;
                j = skip_ws(b, end);
                if b.get(j) != Some(&b':') {
                    return Err("a dict needs `\"key\": value` items".to_owned());
                }
                let (v, end) = parse_json(b, j + 1)?;
                items.push((key, v));
                j = skip_ws(b, end);
                match b.get(j) {
                    Some(b',') => j += 1,
                    Some(b'}') => return Ok((JsonValue::Object(items), j + 1)),
                    _ => return Err("a dict needs `,` between items and a closing `}`".to_owned()),
                }
            }
        }
        _ if word("null") => Ok((JsonValue::Null, i + 4)),
        _ if word("true") => Ok((JsonValue::Bool(true), i + 4)),
        _ if word("false") => Ok((JsonValue::Bool(false), i + 5)),
        _ if word("NaN") => Ok((JsonValue::Float(f64::NAN), i + 3)),
        _ if word("Infinity") => Ok((JsonValue::Float(f64::INFINITY), i + 8)),
        _ if word("-Infinity") => Ok((JsonValue::Float(f64::NEG_INFINITY), i + 9)),
        _ => {
            let len = rest
                .iter()
                .take_while(|c| c.is_ascii_digit() || b"+-.eE".contains(c))
                .count();
            let text = std::str::from_utf8(&rest[..len]).unwrap_or("");
            let digits = text.strip_prefix('-').unwrap_or(text);
            if digits.is_empty() || !digits.as_bytes()[0].is_ascii_digit() {
                let shown: String = String::from_utf8_lossy(rest).chars().take(20).collect();
                return Err(format!("`{shown}` is not a value"));
            }
            if let Ok(n) = text.parse::<i128>() {
                return Ok((JsonValue::Int(n), i + len));
            }
            match text.parse::<f64>() {
                Ok(x) => Ok((JsonValue::Float(x), i + len)),
                Err(_) => Err(format!("`{text}` is not a number")),
            }
        }
    }
}

pub(super) fn parse_json_string(b: &[u8], i: usize) -> Result<(String, usize), String> {
    if b.get(i) != Some(&b'"') {
        return Err("a string must be double-quoted".to_owned());
    }
    let mut out: Vec<u16> = Vec::new();
    let mut bytes: Vec<u8> = Vec::new();
    let mut j = i + 1;
    let flush = |bytes: &mut Vec<u8>, out: &mut Vec<u16>| {
        out.extend(String::from_utf8_lossy(bytes).encode_utf16());
        bytes.clear();
    };
    loop {
        match b.get(j) {
            None => return Err("a string has no closing `\"`".to_owned()),
            Some(b'"') => {
                flush(&mut bytes, &mut out);
                return Ok((String::from_utf16_lossy(&out), j + 1));
            }
            Some(b'\\') => {
                flush(&mut bytes, &mut out);
                let unit = match b.get(j + 1) {
                    Some(b'"') => u16::from(b'"'),
                    Some(b'\\') => u16::from(b'\\'),
                    Some(b'/') => u16::from(b'/'),
                    Some(b'b') => 8,
                    Some(b'f') => 12,
                    Some(b'n') => u16::from(b'\n'),
                    Some(b'r') => u16::from(b'\r'),
                    Some(b't') => u16::from(b'\t'),
                    Some(b'u') => {
                        let hex = b
                            .get(j + 2..j + 6)
                            .and_then(|h| std::str::from_utf8(h).ok())
                            .and_then(|h| u16::from_str_radix(h, 16).ok())
                            .ok_or("`\\u` needs four hex digits")?;
                        out.push(hex);
                        j += 6;
                        continue;
                    }
                    _ => return Err("a string has an unknown `\\` escape".to_owned()),
                };
                out.push(unit);
                j += 2;
            }
            Some(&c) => {
                bytes.push(c);
                j += 1;
            }
        }
    }
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
}
