//! JSON as Python's `json.dumps` writes it, read with serde_json: bare `NaN`, `Infinity` and
//! `-Infinity` (outside strings) stand for non-finite floats, which JSON has no words for.
//!
//! [`quote_non_finite`] writes each such token as a sentinel string, so that serde_json reads
//! the text; a visitor's `visit_str` gives the float back with [`non_finite`].

use memchr::memmem;
use std::borrow::Cow;
use std::sync::LazyLock;

/// The bare tokens and their values. A sentinel is the token behind a NUL, a character no
/// metric name or config string holds, so no real string is read as a float.
const TOKENS: [(&str, f64); 3] = [
    ("NaN", f64::NAN),
    ("Infinity", f64::INFINITY),
    ("-Infinity", f64::NEG_INFINITY),
];

/// How a sentinel string opens in the JSON text: a quote and the NUL, escaped as JSON wants.
const OPEN: &[u8] = br#""\u0000"#;

// Built once: the metrics scanner asks these of every metric line.
static NAN: LazyLock<memmem::Finder<'static>> = LazyLock::new(|| memmem::Finder::new("NaN"));
static INFINITY: LazyLock<memmem::Finder<'static>> =
    LazyLock::new(|| memmem::Finder::new("Infinity"));

/// `json` with every bare `NaN`, `Infinity` and `-Infinity` written as a sentinel string;
/// borrowed, with no copy, when it has none (the common case).
pub fn quote_non_finite(json: &[u8]) -> Cow<'_, [u8]> {
    // `-Infinity` holds `Infinity`: two searches find any token, at memchr's speed.
    if NAN.find(json).is_none() && INFINITY.find(json).is_none() {
        return Cow::Borrowed(json);
    }
    // Allocated at the first bare token: a `NaN` inside a string needs no copy either.
    let mut out: Option<Vec<u8>> = None;
    // json[..copied] is in `out`.
    let mut copied = 0;
    let mut in_string = false;
    let mut i = 0;
    while i < json.len() {
        let b = json[i];
        if in_string {
            match b {
                // The escaped byte may be a quote: skip it.
                b'\\' => i += 2,
                b'"' => {
                    in_string = false;
                    i += 1;
                }
                _ => i += 1,
            }
            continue;
        }
        let token = match b {
            b'N' | b'I' | b'-' => TOKENS
                .iter()
                .map(|(token, _)| token.as_bytes())
                .find(|token| json[i..].starts_with(token)),
            _ => None,
        };
        let Some(token) = token else {
            in_string = b == b'"';
            i += 1;
            continue;
        };
        let out = out.get_or_insert_with(|| Vec::with_capacity(json.len() + 64));
        out.extend_from_slice(&json[copied..i]);
        out.extend_from_slice(OPEN);
        out.extend_from_slice(token);
        out.push(b'"');
        i += token.len();
        copied = i;
    }
    match out {
        None => Cow::Borrowed(json),
        Some(mut out) => {
            out.extend_from_slice(&json[copied..]);
            Cow::Owned(out)
        }
    }
}

/// The float a sentinel string of [`quote_non_finite`] stands for; `None` for any other string.
pub fn non_finite(s: &str) -> Option<f64> {
    let token = s.strip_prefix('\0')?;
    TOKENS
        .iter()
        .find(|(t, _)| *t == token)
        .map(|&(_, value)| value)
}

/// Where byte `at` of [`quote_non_finite`]'s output was in its input, for a message that quotes
/// the text as it was written.
pub fn original_offset(quoted: &[u8], at: usize) -> usize {
    let at = at.min(quoted.len());
    // Each sentinel before `at` added its opening and its closing quote.
    let sentinels = memmem::find_iter(&quoted[..at], OPEN).count();
    at.saturating_sub(sentinels * (OPEN.len() + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quoted(json: &str) -> Cow<'_, [u8]> {
        quote_non_finite(json.as_bytes())
    }

    #[test]
    fn bare_tokens_become_sentinels_and_strings_stay() {
        let text = r#"{"a": NaN, "b": [Infinity, -Infinity], "NaN": "x\"NaN", "c": -1}"#;
        let out = quoted(text);
        assert_eq!(
            std::str::from_utf8(&out).unwrap(),
            r#"{"a": "\u0000NaN", "b": ["\u0000Infinity", "\u0000-Infinity"], "NaN": "x\"NaN", "c": -1}"#
        );
        let value: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert!(non_finite(value["a"].as_str().unwrap()).unwrap().is_nan());
        assert_eq!(
            non_finite(value["b"][0].as_str().unwrap()),
            Some(f64::INFINITY)
        );
        assert_eq!(
            non_finite(value["b"][1].as_str().unwrap()),
            Some(f64::NEG_INFINITY)
        );
        assert_eq!(non_finite("NaN"), None);
        assert_eq!(non_finite("\0nan"), None);
    }

    #[test]
    fn text_without_bare_tokens_is_borrowed() {
        for text in [
            r#"{"a": 1.5}"#,
            r#"{"NaN": "Infinity"}"#,
            r#"["\\", "NaN"]"#,
        ] {
            assert!(matches!(quoted(text), Cow::Borrowed(_)), "{text}");
        }
    }

    #[test]
    fn offsets_map_back_to_the_text_as_written() {
        let text = "[NaN, -Infinity, oops]";
        let out = quoted(text);
        let at = memmem::find(&out, b"oops").unwrap();
        assert_eq!(original_offset(&out, at), text.find("oops").unwrap());
        assert_eq!(original_offset(&out, 1), 1);
    }
}
