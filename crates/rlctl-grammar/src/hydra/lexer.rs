//! Hydra 1.3's OverrideLexer (hydra/grammar/OverrideLexer.g4), by hand: the key mode until the
//! first `=`, the value mode after it.
//!
//! ANTLR's lexer takes the longest match of any rule of the current mode, the first rule on a
//! tie, and a non-greedy loop stops at its first way out: every matcher below returns the
//! longest match of its rule, and the rules are tried in the grammar's order. Bytes stand for
//! characters: every class that holds a non-ASCII character holds all of them, so UTF-8's
//! bytes fall in the same classes as the characters they spell.

/// Token types, named as the grammar names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Equal,
    Tilde,
    Plus,
    At,
    Colon,
    Slash,
    Id,
    KeySpecial,
    DotPath,
    POpen,
    Comma,
    PClose,
    BracketOpen,
    BracketClose,
    BraceOpen,
    BraceClose,
    Float,
    Int,
    Bool,
    Null,
    UnquotedChar,
    Esc,
    Ws,
    QuotedValue,
    Interpolation,
    Eof,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
}

/// Where the lexer found no token: hydra's `LexerNoViableAltException`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoToken {
    pub at: usize,
}

/// Every token of `text` up to the first character no rule matches; the last token is `Eof`
/// when there is none. `value_mode` starts in the value mode, as hydra parses a lone value.
pub fn tokens(text: &str, value_mode: bool) -> (Vec<Token>, Option<NoToken>) {
    let s = text.as_bytes();
    let mut value = value_mode;
    let mut out = Vec::new();
    let mut at = 0;
    while at < s.len() {
        let found = if value {
            value_token(s, at)
        } else {
            key_token(s, at)
        };
        let Some((kind, end)) = found else {
            return (out, Some(NoToken { at }));
        };
        out.push(Token {
            kind,
            start: at,
            end,
        });
        value |= kind == Kind::Equal;
        at = end;
    }
    out.push(Token {
        kind: Kind::Eof,
        start: s.len(),
        end: s.len(),
    });
    (out, None)
}

/// The longest match among `rules`, the first on a tie.
fn longest(rules: &[(Kind, Option<usize>)]) -> Option<(Kind, usize)> {
    let mut best: Option<(Kind, usize)> = None;
    for &(kind, end) in rules {
        if let Some(end) = end
            && best.is_none_or(|(_, b)| end > b)
        {
            best = Some((kind, end));
        }
    }
    best
}

fn key_token(s: &[u8], p: usize) -> Option<(Kind, usize)> {
    longest(&[
        (Kind::Equal, byte(s, p, b'=').map(|e| ws_opt(s, e))),
        (Kind::Tilde, byte(s, p, b'~')),
        (Kind::Plus, byte(s, p, b'+')),
        (Kind::At, byte(s, p, b'@')),
        (Kind::Colon, byte(s, p, b':')),
        (Kind::Slash, byte(s, p, b'/')),
        (Kind::Id, id(s, p)),
        (Kind::KeySpecial, key_special(s, p)),
        (Kind::DotPath, dot_path(s, p)),
    ])
}

fn value_token(s: &[u8], p: usize) -> Option<(Kind, usize)> {
    let lead = ws_opt(s, p);
    longest(&[
        (Kind::POpen, byte(s, lead, b'(').map(|e| ws_opt(s, e))),
        (Kind::Comma, byte(s, lead, b',').map(|e| ws_opt(s, e))),
        (Kind::PClose, byte(s, lead, b')')),
        (Kind::BracketOpen, byte(s, p, b'[').map(|e| ws_opt(s, e))),
        (Kind::BracketClose, byte(s, lead, b']')),
        (Kind::BraceOpen, byte(s, p, b'{').map(|e| ws_opt(s, e))),
        (Kind::BraceClose, byte(s, lead, b'}')),
        (Kind::Colon, byte(s, lead, b':').map(|e| ws_opt(s, e))),
        (Kind::Equal, byte(s, lead, b'=').map(|e| ws_opt(s, e))),
        (Kind::Float, float(s, p)),
        (Kind::Int, int(s, p)),
        (
            Kind::Bool,
            word(s, p, "true").or_else(|| word(s, p, "false")),
        ),
        (Kind::Null, word(s, p, "null")),
        (
            Kind::UnquotedChar,
            class(s, p, |c| b"/-\\+.$%*@?|".contains(&c)),
        ),
        (Kind::Id, id(s, p)),
        (Kind::Esc, esc(s, p)),
        (Kind::Ws, (ws_opt(s, p) > p).then(|| ws_opt(s, p))),
        (Kind::QuotedValue, quoted(s, p)),
        (Kind::Interpolation, interpolation(s, p)),
    ])
}

pub(super) fn at(s: &[u8], p: usize) -> Option<u8> {
    s.get(p).copied()
}

pub(super) fn byte(s: &[u8], p: usize, b: u8) -> Option<usize> {
    (at(s, p) == Some(b)).then_some(p + 1)
}

pub(super) fn class(s: &[u8], p: usize, f: impl Fn(u8) -> bool) -> Option<usize> {
    at(s, p).filter(|&c| f(c)).map(|_| p + 1)
}

/// `WS?` where `WS: [ \t]+`: the end of the blanks at `p`, or `p`.
pub(super) fn ws_opt(s: &[u8], mut p: usize) -> usize {
    while matches!(at(s, p), Some(b' ' | b'\t')) {
        p += 1;
    }
    p
}

pub(super) fn word(s: &[u8], p: usize, w: &str) -> Option<usize> {
    let end = p + w.len();
    (s.get(p..end)?.eq_ignore_ascii_case(w.as_bytes())).then_some(end)
}

fn is_char(c: u8) -> bool {
    c.is_ascii_alphabetic()
}

/// `ID: (CHAR|'_') (CHAR|DIGIT|'_'|'-')*`
pub(super) fn id(s: &[u8], p: usize) -> Option<usize> {
    let c = at(s, p)?;
    if !(is_char(c) || c == b'_') {
        return None;
    }
    let mut e = p + 1;
    while at(s, e).is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-') {
        e += 1;
    }
    Some(e)
}

/// `KEY_SPECIAL: (CHAR|'_'|'$') (CHAR|DIGIT|'_'|'-'|'$')*`
fn key_special(s: &[u8], p: usize) -> Option<usize> {
    let c = at(s, p)?;
    if !(is_char(c) || c == b'_' || c == b'$') {
        return None;
    }
    let mut e = p + 1;
    while at(s, e).is_some_and(|c| c.is_ascii_alphanumeric() || b"_-$".contains(&c)) {
        e += 1;
    }
    Some(e)
}

/// `DOT_PATH: (KEY_SPECIAL | INT_UNSIGNED) ('.' (KEY_SPECIAL | INT_UNSIGNED))+`. A segment
/// can only end where no segment character follows, so the longest segment is the only one
/// a longer path can continue from.
fn dot_path(s: &[u8], p: usize) -> Option<usize> {
    let segment = |q: usize| key_special(s, q).or_else(|| int_unsigned(s, q).last().copied());
    let mut end = segment(p)?;
    let mut dots = 0;
    while at(s, end) == Some(b'.') {
        let Some(next) = segment(end + 1) else { break };
        end = next;
        dots += 1;
    }
    (dots > 0).then_some(end)
}

/// `INT_UNSIGNED: '0' | [1-9] (('_')? DIGIT)*`: every end, shortest first.
fn int_unsigned(s: &[u8], p: usize) -> Vec<usize> {
    match at(s, p) {
        Some(b'0') => vec![p + 1],
        Some(b'1'..=b'9') => digit_run(s, p + 1, vec![p + 1]),
        _ => Vec::new(),
    }
}

/// `(('_')? DIGIT)*` after `p`, appended to `ends`.
fn digit_run(s: &[u8], mut p: usize, mut ends: Vec<usize>) -> Vec<usize> {
    loop {
        let skip = usize::from(at(s, p) == Some(b'_'));
        if at(s, p + skip).is_some_and(|c| c.is_ascii_digit()) {
            p += skip + 1;
            ends.push(p);
        } else {
            return ends;
        }
    }
}

/// `DIGIT (('_')? DIGIT)*`
fn digits(s: &[u8], p: usize) -> Vec<usize> {
    match at(s, p) {
        Some(c) if c.is_ascii_digit() => digit_run(s, p + 1, vec![p + 1]),
        _ => Vec::new(),
    }
}

/// `POINT_FLOAT: INT_UNSIGNED '.' | INT_UNSIGNED? '.' DIGIT (('_')? DIGIT)*`
fn point_float(s: &[u8], p: usize) -> Vec<usize> {
    let ints = int_unsigned(s, p);
    let mut ends: Vec<usize> = ints
        .iter()
        .filter(|&&e| at(s, e) == Some(b'.'))
        .map(|&e| e + 1)
        .collect();
    for start in std::iter::once(p).chain(ints) {
        if at(s, start) == Some(b'.') {
            ends.extend(digits(s, start + 1));
        }
    }
    ends
}

/// `EXPONENT_FLOAT: (INT_UNSIGNED | POINT_FLOAT) [eE] [+-]? DIGIT (('_')? DIGIT)*`
fn exponent_float(s: &[u8], p: usize) -> Vec<usize> {
    let mut ends = Vec::new();
    for base in int_unsigned(s, p).into_iter().chain(point_float(s, p)) {
        if matches!(at(s, base), Some(b'e' | b'E')) {
            let q = base + 1 + usize::from(matches!(at(s, base + 1), Some(b'+' | b'-')));
            ends.extend(digits(s, q));
        }
    }
    ends
}

/// `FLOAT: [+-]? (POINT_FLOAT | EXPONENT_FLOAT | [Ii][Nn][Ff] | [Nn][Aa][Nn])`
pub(super) fn float(s: &[u8], p: usize) -> Option<usize> {
    let q = p + usize::from(matches!(at(s, p), Some(b'+' | b'-')));
    let mut ends = point_float(s, q);
    ends.extend(exponent_float(s, q));
    ends.extend(word(s, q, "inf"));
    ends.extend(word(s, q, "nan"));
    ends.into_iter().max()
}

/// `INT: [+-]? INT_UNSIGNED`
pub(super) fn int(s: &[u8], p: usize) -> Option<usize> {
    let q = p + usize::from(matches!(at(s, p), Some(b'+' | b'-')));
    int_unsigned(s, q).last().copied()
}

/// `ESC: (ESC_BACKSLASH | '\\(' | '\\)' | ... | '\\ ' | '\\\t')+`: a backslash and one of
/// `\()[]{}:=, ` or a tab, repeated.
pub(super) fn esc(s: &[u8], p: usize) -> Option<usize> {
    let mut e = p;
    while at(s, e) == Some(b'\\') && at(s, e + 1).is_some_and(|c| b"\\()[]{}:=, \t".contains(&c)) {
        e += 2;
    }
    (e > p).then_some(e)
}

/// `QUOTED_VALUE`: a quote, then the shortest text up to the same quote that leaves an even
/// number of backslashes before it (the grammar's non-greedy loop).
fn quoted(s: &[u8], p: usize) -> Option<usize> {
    let q = at(s, p).filter(|&c| c == b'\'' || c == b'"')?;
    let mut backslashes = 0;
    for (i, &c) in s.iter().enumerate().skip(p + 1) {
        if c == q && backslashes % 2 == 0 {
            return Some(i + 1);
        }
        backslashes = if c == b'\\' { backslashes + 1 } else { 0 };
    }
    None
}

/// `INTERPOLATION: '${' ~('}')+ '}'`
fn interpolation(s: &[u8], p: usize) -> Option<usize> {
    if s.get(p..p + 2) != Some(b"${") || at(s, p + 2) == Some(b'}') {
        return None;
    }
    let close = s[p + 2..].iter().position(|&c| c == b'}')?;
    Some(p + 2 + close + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(Kind, &str)> {
        let (tokens, error) = tokens(text, false);
        assert_eq!(error, None, "{text}");
        tokens
            .iter()
            .map(|t| (t.kind, &text[t.start..t.end]))
            .collect()
    }

    #[test]
    fn keys_and_values_have_their_own_tokens() {
        use Kind::*;
        assert_eq!(
            kinds("+a.b-c.0=x, 1.5e3"),
            [
                (Plus, "+"),
                (DotPath, "a.b-c.0"),
                (Equal, "="),
                (Id, "x"),
                (Comma, ", "),
                (Float, "1.5e3"),
                (Eof, "")
            ]
        );
        assert_eq!(
            kinds("k=true trueish inf null"),
            [
                (Id, "k"),
                (Equal, "="),
                (Bool, "true"),
                (Ws, " "),
                (Id, "trueish"),
                (Ws, " "),
                (Float, "inf"),
                (Ws, " "),
                (Null, "null"),
                (Eof, "")
            ]
        );
    }

    #[test]
    fn numbers_take_the_longest_match() {
        use Kind::*;
        assert_eq!(kinds("k=00.5")[2..4], [(Int, "0"), (Float, "0.5")]);
        assert_eq!(kinds("k=1e")[2..4], [(Int, "1"), (Id, "e")]);
        assert_eq!(kinds("k=1_000")[2], (Int, "1_000"));
        assert_eq!(kinds("k=1__0")[2..4], [(Int, "1"), (Id, "__0")]);
        assert_eq!(kinds("k=-.5e-3")[2], (Float, "-.5e-3"));
        assert_eq!(kinds("k=1.")[2], (Float, "1."));
    }

    #[test]
    fn quotes_end_at_the_first_unescaped_quote() {
        use Kind::*;
        assert_eq!(kinds(r#"k="a\"b""#)[2], (QuotedValue, r#""a\"b""#));
        assert_eq!(kinds(r#"k='a\\'"#)[2], (QuotedValue, r#"'a\\'"#));
        assert_eq!(
            kinds(r#"k="a"b"#)[2..4],
            [(QuotedValue, r#""a""#), (Id, "b")]
        );
        assert_eq!(tokens(r#"k="a\""#, false).1, Some(NoToken { at: 2 }));
    }

    #[test]
    fn interpolations_end_at_the_first_brace() {
        use Kind::*;
        assert_eq!(
            kinds("k=${a.${b}}")[2..4],
            [(Interpolation, "${a.${b}"), (BraceClose, "}")]
        );
        assert_eq!(
            kinds("k=${}")[2..5],
            [(UnquotedChar, "$"), (BraceOpen, "{"), (BraceClose, "}")]
        );
    }

    #[test]
    fn unknown_characters_stop_the_lexer() {
        assert_eq!(tokens("k=a#b", false).1, Some(NoToken { at: 3 }));
        assert_eq!(tokens(" k=1", false).1, Some(NoToken { at: 0 }));
        assert_eq!(tokens("a.01=1", false).1, Some(NoToken { at: 3 }));
        assert_eq!(tokens("k=é", false).1, Some(NoToken { at: 2 }));
    }
}
