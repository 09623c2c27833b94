//! Hydra knobs: one `key=value` override, where it came from, and its exact hydra text.

use serde::Serialize;
use std::fmt;

/// Where a knob's final value was set; the run script groups knobs under these headings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "name")]
pub enum Origin {
    Preset(String),
    /// The cluster profile, e.g. its GPUs per node.
    Profile(String),
    Grid(String),
    Cell(String),
    /// What a flag implies, e.g. `--nodes 2`.
    Flag(String),
    CommandLine,
    /// Computed from other knobs' final values, e.g. the teacher's `max_model_len` from the
    /// prompt and generation lengths; the text says from what.
    Derived(String),
    /// Keys rlctl computes and no preset or user may set (resume mode, checkpoint paths).
    Rlctl,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Preset(name) => write!(f, "preset {name}"),
            Origin::Profile(name) => write!(f, "profile {name}"),
            Origin::Grid(name) => write!(f, "grid {name}"),
            Origin::Cell(name) => write!(f, "cell {name}"),
            Origin::Flag(flag) => write!(f, "implied by {flag}"),
            Origin::CommandLine => f.write_str("command line"),
            Origin::Derived(what) => write!(f, "derived: {what}"),
            Origin::Rlctl => f.write_str("set by rlctl"),
        }
    }
}

impl Origin {
    /// The layer's name alone (`preset`, `grid`, `cell`...): what `diff` and the ledger say.
    pub fn layer(&self) -> &'static str {
        match self {
            Origin::Preset(_) => "preset",
            Origin::Profile(_) => "profile",
            Origin::Grid(_) => "grid",
            Origin::Cell(_) => "cell",
            Origin::Flag(_) => "flag",
            Origin::CommandLine => "command line",
            Origin::Derived(_) => "derived",
            Origin::Rlctl => "rlctl",
        }
    }
}

/// A knob's value: typed when it comes from a preset, the user's own hydra text when it comes
/// from the command line (passed on exactly as written).
#[derive(Debug, Clone, PartialEq)]
pub enum KnobValue {
    Typed(toml::Value),
    Verbatim(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Knob {
    /// The key as hydra sees it, with any `+`/`++`/`~` prefix.
    pub key: String,
    pub value: KnobValue,
    pub origin: Origin,
}

impl Knob {
    pub fn typed(key: &str, value: toml::Value, origin: Origin) -> Self {
        Knob {
            key: key.to_owned(),
            value: KnobValue::Typed(value),
            origin,
        }
    }

    /// The key without hydra's `+`, `++` or `~` prefix: what the config tree calls it.
    pub fn path(&self) -> &str {
        self.key.trim_start_matches(['+', '~'])
    }

    /// The whole override as hydra parses it, e.g. `data.train_data=['/w/train.parquet']`.
    pub fn hydra_arg(&self) -> String {
        match &self.value {
            KnobValue::Verbatim(text) if self.key.starts_with('~') && text.is_empty() => {
                self.key.clone()
            }
            value => format!("{}={}", self.key, value.hydra_text()),
        }
    }
}

/// Last wins, and the winner moves to the end, so the rendered order reads as the order of
/// precedence.
pub fn set_knob(knobs: &mut Vec<Knob>, knob: Knob) {
    knobs.retain(|k| k.path() != knob.path());
    knobs.push(knob);
}

/// What a knob's value is, as hydra would type it: enough to check types and do arithmetic.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    /// A list or dict, kept as its hydra text.
    List(String),
    Dict(String),
}

impl Scalar {
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Scalar::Int(i) => Some(*i),
            _ => None,
        }
    }

    pub fn as_float(&self) -> Option<f64> {
        match self {
            Scalar::Int(i) => Some(*i as f64),
            Scalar::Float(x) => Some(*x),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Scalar::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Scalar::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Reads hydra text the way hydra's grammar types a primitive (quoted strings unquoted).
    pub fn parse_hydra(text: &str) -> Scalar {
        let t = text.trim();
        let lower = t.to_ascii_lowercase();
        if lower == "null" {
            return Scalar::Null;
        }
        if lower == "true" || lower == "false" {
            return Scalar::Bool(lower == "true");
        }
        let digits = t.replace('_', "");
        if let Ok(i) = digits.parse::<i64>() {
            return Scalar::Int(i);
        }
        let float_like = t.chars().any(|c| c.is_ascii_digit())
            && t.chars()
                .all(|c| c.is_ascii_digit() || "+-.eE_".contains(c));
        if float_like && let Ok(x) = digits.parse::<f64>() {
            return Scalar::Float(x);
        }
        if matches!(lower.as_str(), "inf" | "+inf" | "-inf" | "nan") {
            return Scalar::Float(lower.parse().unwrap_or(f64::NAN));
        }
        if t.starts_with('[') {
            return Scalar::List(t.to_owned());
        }
        if t.starts_with('{') {
            return Scalar::Dict(t.to_owned());
        }
        for quote in ['\'', '"'] {
            if t.len() >= 2 && t.starts_with(quote) && t.ends_with(quote) {
                let inner = &t[1..t.len() - 1];
                let escaped = format!("\\{quote}");
                return Scalar::Str(inner.replace(&escaped, &quote.to_string()));
            }
        }
        Scalar::Str(t.to_owned())
    }
}

impl KnobValue {
    pub fn hydra_text(&self) -> String {
        match self {
            KnobValue::Typed(value) => hydra_value(value, false),
            KnobValue::Verbatim(text) => text.clone(),
        }
    }

    /// The value as hydra would type it.
    pub fn scalar(&self) -> Scalar {
        match self {
            KnobValue::Typed(toml::Value::String(s)) if s == "null" => Scalar::Null,
            KnobValue::Typed(toml::Value::String(s)) => Scalar::Str(s.clone()),
            KnobValue::Typed(toml::Value::Integer(i)) => Scalar::Int(*i),
            KnobValue::Typed(toml::Value::Float(x)) => Scalar::Float(*x),
            KnobValue::Typed(toml::Value::Boolean(b)) => Scalar::Bool(*b),
            KnobValue::Typed(other) => Scalar::List(hydra_value(other, false)),
            KnobValue::Verbatim(text) => Scalar::parse_hydra(text),
        }
    }
}

/// A TOML value as TOML text, floats written as hydra writes them (`1e-6`, not `0.000001`);
/// both read the same.
pub fn toml_text(value: &toml::Value) -> String {
    match value {
        toml::Value::Float(x) => hydra_float(*x),
        value => value.to_string(),
    }
}

/// Hydra's text for a TOML value. TOML has no null, so the string `"null"` stands for it.
fn hydra_value(value: &toml::Value, in_list: bool) -> String {
    match value {
        toml::Value::String(s) if s == "null" => "null".to_owned(),
        toml::Value::String(s) if !in_list && is_plain_string(s) => s.clone(),
        toml::Value::String(s) => hydra_quote(s),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(x) => hydra_float(*x),
        toml::Value::Boolean(b) => b.to_string(),
        toml::Value::Array(items) => {
            let items: Vec<String> = items.iter().map(|v| hydra_value(v, true)).collect();
            format!("[{}]", items.join(","))
        }
        // Presets are checked on load: datetimes and tables never reach a knob value.
        toml::Value::Datetime(d) => hydra_quote(&d.to_string()),
        toml::Value::Table(t) => hydra_quote(&t.to_string()),
    }
}

/// A string hydra reads back as the same string when written without quotes.
fn is_plain_string(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./@-".contains(c))
        && s.parse::<f64>().is_err()
        && !matches!(lower.as_str(), "true" | "false" | "null" | "inf" | "nan")
}

pub use rlctl_grammar::text::hydra_quote;

/// Floats as hydra reads them: always with a `.` or an exponent, small ones as `1e-6`.
fn hydra_float(x: f64) -> String {
    if x.is_nan() {
        return "nan".to_owned();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.to_owned();
    }
    if x != 0.0 && (x.abs() < 1e-3 || x.abs() >= 1e7) {
        return format!("{x:e}");
    }
    let text = x.to_string();
    if text.contains('.') {
        text
    } else {
        format!("{text}.0")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(v: toml::Value) -> String {
        KnobValue::Typed(v).hydra_text()
    }

    #[test]
    fn floats_keep_their_type_and_read_like_the_reference() {
        assert_eq!(text(toml::Value::Float(1.0e-6)), "1e-6");
        assert_eq!(text(toml::Value::Float(3.0e-5)), "3e-5");
        assert_eq!(text(toml::Value::Float(0.7)), "0.7");
        assert_eq!(text(toml::Value::Float(1.0)), "1.0");
        assert_eq!(text(toml::Value::Float(0.001)), "0.001");
    }

    #[test]
    fn strings_that_would_change_type_are_quoted() {
        assert_eq!(text("grpo".into()), "grpo");
        assert_eq!(
            text("Qwen/Qwen2.5-1.5B-Instruct".into()),
            "Qwen/Qwen2.5-1.5B-Instruct"
        );
        assert_eq!(text("1e-6".into()), r#""1e-6""#);
        assert_eq!(text("true".into()), r#""true""#);
        assert_eq!(text("null".into()), "null");
        assert_eq!(text("a b,c".into()), r#""a b,c""#);
    }

    #[test]
    fn hydra_quoting_escapes_quotes_and_the_backslashes_before_them() {
        assert_eq!(hydra_quote(r#"say "hi""#), r#""say \"hi\"""#);
        assert_eq!(hydra_quote(r"a\b"), r#""a\b""#);
        assert_eq!(hydra_quote(r#"a\"b"#), r#""a\\\"b""#);
        assert_eq!(hydra_quote(r"end\"), r#""end\\""#);
    }

    #[test]
    fn verbatim_text_is_typed_as_hydra_types_it() {
        let scalar = |t: &str| KnobValue::Verbatim(t.to_owned()).scalar();
        assert_eq!(scalar("128"), Scalar::Int(128));
        assert_eq!(scalar("1e-6"), Scalar::Float(1e-6));
        assert_eq!(scalar("0.85"), Scalar::Float(0.85));
        assert_eq!(scalar("False"), Scalar::Bool(false));
        assert_eq!(scalar("null"), Scalar::Null);
        assert_eq!(scalar("abc"), Scalar::Str("abc".into()));
        assert_eq!(scalar("'12'"), Scalar::Str("12".into()));
        assert_eq!(scalar("[1,2]"), Scalar::List("[1,2]".into()));
    }

    #[test]
    fn lists_quote_every_string() {
        let list = toml::Value::Array(vec!["/w/data/train.parquet".into()]);
        assert_eq!(text(list), r#"["/w/data/train.parquet"]"#);
    }
}
