//! Python's `int()`, `float()` and `bool()` on the values hydra's casts hand them, with the
//! exceptions Python raises: what `int(a)` or `float('1._5')` in an override runs into.

use super::element::{Element, number};
use super::functions::PyErr;

fn err<T>(kind: &'static str, message: impl Into<String>) -> Result<T, PyErr> {
    Err(PyErr {
        kind,
        message: message.into(),
    })
}

/// Python's `int(v)`.
pub(super) fn to_int(v: &Element) -> Result<String, PyErr> {
    match v {
        Element::Bool(b) => Ok(u8::from(*b).to_string()),
        Element::Int(i) => Ok(i.clone()),
        Element::Float(x) if x.is_nan() => err("ValueError", "cannot convert float NaN to integer"),
        Element::Float(x) if x.is_infinite() => {
            err("OverflowError", "cannot convert float infinity to integer")
        }
        Element::Float(x) if x.trunc() == 0.0 => Ok("0".to_owned()),
        Element::Float(x) => Ok(format!("{:.0}", x.trunc())),
        Element::Str(s) => int_text(py_strip(s)).ok_or_else(|| PyErr {
            kind: "ValueError",
            message: format!("invalid literal for int() with base 10: '{s}'"),
        }),
        _ => err("TypeError", "int() argument must be a string or a number"),
    }
}

/// Python's `float(v)`.
pub(super) fn to_float(v: &Element) -> Result<f64, PyErr> {
    match v {
        Element::Str(s) => float_text(py_strip(s)).ok_or_else(|| PyErr {
            kind: "ValueError",
            message: format!("could not convert string to float: '{s}'"),
        }),
        other => match number(other) {
            Some(x) if x.is_finite() || matches!(other, Element::Float(_)) => Ok(x),
            Some(_) => err("OverflowError", "int too large to convert to float"),
            None => err(
                "TypeError",
                "float() argument must be a string or a real number",
            ),
        },
    }
}

pub(super) fn to_bool(v: &Element) -> Result<bool, PyErr> {
    match v {
        Element::Str(s) if s.eq_ignore_ascii_case("true") => Ok(true),
        Element::Str(s) if s.eq_ignore_ascii_case("false") => Ok(false),
        Element::Str(s) => err("ValueError", format!("Cannot cast '{s}' to bool")),
        other => Ok(number(other).is_some_and(|x| x != 0.0)),
    }
}

/// `str.strip()`: Python's whitespace, which also counts the separators `\x1c`..`\x1f`.
fn py_strip(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
}

/// Digits with single underscores between them, as Python's literals and `int()` take them.
fn digit_groups(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('_')
        && !s.ends_with('_')
        && !s.contains("__")
        && s.chars().all(|c| c.is_ascii_digit() || c == '_')
}

/// `int(text)` in base 10: the decimal text of the number, or `None` when Python refuses.
pub fn int_text(s: &str) -> Option<String> {
    let (negative, body) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    if !digit_groups(body) {
        return None;
    }
    let digits = body.replace('_', "");
    let digits = digits.trim_start_matches('0');
    Some(match (digits.is_empty(), negative) {
        (true, _) => "0".to_owned(),
        (false, true) => format!("-{digits}"),
        (false, false) => digits.to_owned(),
    })
}

/// `float(text)`, or `None` when Python refuses.
pub fn float_text(s: &str) -> Option<f64> {
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    let sign = if s.starts_with('-') { -1.0 } else { 1.0 };
    let lower = body.to_ascii_lowercase();
    if matches!(lower.as_str(), "inf" | "infinity") {
        return Some(sign * f64::INFINITY);
    }
    if lower == "nan" {
        return Some(f64::NAN);
    }
    let (mantissa, exponent) = match lower.split_once('e') {
        Some((m, e)) => (m, Some(e)),
        None => (lower.as_str(), None),
    };
    let (whole, fraction) = match mantissa.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (mantissa, None),
    };
    let whole_ok = whole.is_empty() || digit_groups(whole);
    let fraction_ok = fraction.is_none_or(|f| f.is_empty() || digit_groups(f));
    let some_digits = !whole.is_empty() || fraction.is_some_and(|f| !f.is_empty());
    let exponent_ok =
        exponent.is_none_or(|e| digit_groups(e.strip_prefix(['+', '-']).unwrap_or(e)));
    if !(whole_ok && fraction_ok && some_digits && exponent_ok) {
        return None;
    }
    lower.replace('_', "").parse::<f64>().ok().map(|x| sign * x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_and_float_take_pythons_literals() {
        assert_eq!(int_text("-007"), Some("-7".into()));
        assert_eq!(int_text("1_000"), Some("1000".into()));
        assert_eq!(int_text("1__0"), None);
        assert_eq!(int_text("0x10"), None);
        assert_eq!(float_text("1_0.5e1"), Some(105.0));
        assert_eq!(float_text("-Infinity"), Some(f64::NEG_INFINITY));
        assert_eq!(float_text("1._5"), None);
        assert_eq!(float_text("."), None);
        assert_eq!(py_strip("\u{1c} 5\n"), "5");
    }
}
