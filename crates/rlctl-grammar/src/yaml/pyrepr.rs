//! Values written as Python writes them: `json.dumps` for defaults, `repr` for floats.

use super::Y;
use std::fmt::Write as _;

/// Python's `json.dumps` of the value.
pub fn json(value: &Y) -> String {
    match value {
        Y::Null => "null".to_owned(),
        Y::Bool(b) => b.to_string(),
        Y::Int(i) => i.to_string(),
        Y::Float(x) if x.is_nan() => "NaN".to_owned(),
        Y::Float(x) if x.is_infinite() => {
            if *x > 0.0 { "Infinity" } else { "-Infinity" }.to_owned()
        }
        Y::Float(x) => py_float(*x),
        Y::Str(s) => json_string(s),
        Y::Seq(items) => {
            let items: Vec<String> = items.iter().map(json).collect();
            format!("[{}]", items.join(", "))
        }
        Y::Map(entries) => {
            let items: Vec<String> = entries
                .iter()
                .map(|(k, v)| {
                    let key = match k {
                        Y::Str(s) => s.clone(),
                        Y::Bool(b) => b.to_string(),
                        Y::Null => "null".to_owned(),
                        other => json(other),
                    };
                    format!("{}: {}", json_string(&key), json(v))
                })
                .collect();
            format!("{{{}}}", items.join(", "))
        }
    }
}

/// `json.dumps` of a string: ASCII only, `\uXXXX` for the rest.
pub fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (c as u32) > 0x7e && (c as u32) != 0x7f => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Python's `repr` of a float: shortest digits, exponent form below 1e-4 and from 1e16.
pub fn py_float(x: f64) -> String {
    if x.is_nan() {
        return "nan".to_owned();
    }
    if x.is_infinite() {
        return if x < 0.0 { "-inf" } else { "inf" }.to_owned();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0" } else { "0.0" }.to_owned();
    }
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci.split_once('e').expect("{:e} has an exponent");
    let exp: i32 = exp.parse().expect("{:e} exponent is a number");
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if x < 0.0 { "-" } else { "" };
    let decpt = exp + 1;
    if decpt > -4 && decpt <= 16 {
        let n = digits.len() as i32;
        let body = if decpt <= 0 {
            format!("0.{}{digits}", "0".repeat((-decpt) as usize))
        } else if decpt >= n {
            format!("{digits}{}.0", "0".repeat((decpt - n) as usize))
        } else {
            format!(
                "{}.{}",
                &digits[..decpt as usize],
                &digits[decpt as usize..]
            )
        };
        format!("{sign}{body}")
    } else {
        let rest = if digits.len() > 1 {
            format!(".{}", &digits[1..])
        } else {
            String::new()
        };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{}{rest}e{esign}{:02}", &digits[..1], exp.abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_as_python_repr() {
        for (x, text) in [
            (1e-6, "1e-06"),
            (0.0001, "0.0001"),
            (1e-5, "1e-05"),
            (1.0, "1.0"),
            (0.1, "0.1"),
            (123.456, "123.456"),
            (1e16, "1e+16"),
            (1.5e15, "1500000000000000.0"),
            (-2.5e-7, "-2.5e-07"),
            (1e100, "1e+100"),
            (0.0, "0.0"),
        ] {
            assert_eq!(py_float(x), text);
        }
    }

    #[test]
    fn json_strings_escape_like_python() {
        assert_eq!(json_string("a\"b\\c\n"), r#""a\"b\\c\n""#);
        assert_eq!(json_string("é😀"), r#""\u00e9\ud83d\ude00""#);
    }
}
