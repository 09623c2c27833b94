//! OmegaConf 2.3's interpolation lexer (omegaconf/grammar/OmegaConfGrammarLexer.g4): five
//! modes on a stack (top-level text, resolver arguments, the inside of `${...}`, and single- and
//! double-quoted strings), the longest match of the current mode's rules, the first on a tie.

use super::lexer::{at, byte, class, esc, float, id, int, word, ws_opt};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    AnyStr,
    EscInter,
    TopEsc,
    InterOpen,
    BraceOpen,
    BraceClose,
    QuoteOpen,
    Comma,
    BracketOpen,
    BracketClose,
    Colon,
    Float,
    Int,
    Bool,
    Null,
    UnquotedChar,
    Id,
    Esc,
    Ws,
    InterClose,
    Dot,
    InterKey,
    QuoteClose,
    QuotedEsc,
    Eof,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Top,
    Value,
    Interpolation,
    Quoted(u8),
}

/// What a matched rule does to the mode stack.
#[derive(Clone, Copy)]
enum Action {
    None,
    Push(Mode),
    Pop,
    Set(Mode),
}

type Rule = (Kind, Option<usize>, Action);

/// The tokens of `text`, ending with `Eof`, or the offset where no rule matches.
pub fn tokens(text: &str) -> Result<Vec<Token>, usize> {
    let s = text.as_bytes();
    let mut modes = vec![Mode::Top];
    let mut out = Vec::new();
    let mut p = 0;
    while p < s.len() {
        let mode = *modes.last().expect("the top mode is never popped");
        let rules = match mode {
            Mode::Top => top(s, p),
            Mode::Value => value(s, p),
            Mode::Interpolation => interpolation(s, p),
            Mode::Quoted(q) => quoted(s, p, q),
        };
        let mut best: Option<(Kind, usize, Action)> = None;
        for (kind, end, action) in rules {
            if let Some(end) = end
                && best.is_none_or(|(_, b, _)| end > b)
            {
                best = Some((kind, end, action));
            }
        }
        let Some((kind, end, action)) = best else {
            return Err(p);
        };
        match action {
            Action::None => {}
            Action::Push(m) => modes.push(m),
            // Only a mode pushed earlier pops: the stack never empties.
            Action::Pop => {
                if modes.len() > 1 {
                    modes.pop();
                }
            }
            Action::Set(m) => *modes.last_mut().expect("a mode is always set") = m,
        }
        out.push(Token {
            kind,
            start: p,
            end,
        });
        p = end;
    }
    out.push(Token {
        kind: Kind::Eof,
        start: s.len(),
        end: s.len(),
    });
    Ok(out)
}

/// `${` and the blanks after it (`INTER_OPEN: '${' WS?`).
fn inter_open(s: &[u8], p: usize) -> Option<usize> {
    (s.get(p..p + 2) == Some(b"${")).then(|| ws_opt(s, p + 2))
}

/// `ESC_INTER: ESC_BACKSLASH* '\\${'`: an even run of backslashes, then `\${`.
fn esc_inter(s: &[u8], p: usize) -> Option<usize> {
    let mut q = p;
    while s.get(q..q + 2) == Some(b"\\\\") {
        q += 2;
    }
    (s.get(q..q + 3) == Some(b"\\${")).then_some(q + 3)
}

/// `ESC_BACKSLASH+`: pairs of backslashes.
fn backslash_pairs(s: &[u8], p: usize) -> Option<usize> {
    let mut q = p;
    while s.get(q..q + 2) == Some(b"\\\\") {
        q += 2;
    }
    (q > p).then_some(q)
}

fn backslashes(s: &[u8], p: usize) -> Option<usize> {
    let mut q = p;
    while at(s, q) == Some(b'\\') {
        q += 1;
    }
    (q > p).then_some(q)
}

/// `~[<stop>]* ~[\\<stop>]`: the longest run without a stop character that does not end in
/// a backslash.
fn text_run(s: &[u8], p: usize, stop: &[u8]) -> Option<usize> {
    let mut end = p;
    while at(s, end).is_some_and(|c| !stop.contains(&c)) {
        end += 1;
    }
    while end > p && s[end - 1] == b'\\' {
        end -= 1;
    }
    (end > p).then_some(end)
}

fn top(s: &[u8], p: usize) -> Vec<Rule> {
    vec![
        (
            Kind::InterOpen,
            inter_open(s, p),
            Action::Push(Mode::Interpolation),
        ),
        (Kind::AnyStr, text_run(s, p, b"$"), Action::None),
        (Kind::EscInter, esc_inter(s, p), Action::None),
        (Kind::TopEsc, backslash_pairs(s, p), Action::None),
        (Kind::AnyStr, backslashes(s, p), Action::None),
        (Kind::AnyStr, byte(s, p, b'$'), Action::None),
    ]
}

fn value(s: &[u8], p: usize) -> Vec<Rule> {
    let lead = ws_opt(s, p);
    let trail = |e: Option<usize>| e.map(|e| ws_opt(s, e));
    vec![
        (
            Kind::InterOpen,
            inter_open(s, p),
            Action::Push(Mode::Interpolation),
        ),
        (
            Kind::BraceOpen,
            trail(byte(s, p, b'{')),
            Action::Push(Mode::Value),
        ),
        (Kind::BraceClose, byte(s, lead, b'}'), Action::Pop),
        (
            Kind::QuoteOpen,
            byte(s, p, b'\''),
            Action::Push(Mode::Quoted(b'\'')),
        ),
        (
            Kind::QuoteOpen,
            byte(s, p, b'"'),
            Action::Push(Mode::Quoted(b'"')),
        ),
        (Kind::Comma, trail(byte(s, lead, b',')), Action::None),
        (Kind::BracketOpen, trail(byte(s, p, b'[')), Action::None),
        (Kind::BracketClose, byte(s, lead, b']'), Action::None),
        (Kind::Colon, trail(byte(s, lead, b':')), Action::None),
        (Kind::Float, float(s, p), Action::None),
        (Kind::Int, int(s, p), Action::None),
        (
            Kind::Bool,
            word(s, p, "true").or_else(|| word(s, p, "false")),
            Action::None,
        ),
        (Kind::Null, word(s, p, "null"), Action::None),
        (
            Kind::UnquotedChar,
            class(s, p, |c| b"/-\\+.$%*@?|".contains(&c)),
            Action::None,
        ),
        (Kind::Id, id(s, p), Action::None),
        (Kind::Esc, esc(s, p), Action::None),
        (Kind::Ws, (lead > p).then_some(lead), Action::None),
    ]
}

fn interpolation(s: &[u8], p: usize) -> Vec<Rule> {
    let lead = ws_opt(s, p);
    vec![
        (
            Kind::InterOpen,
            inter_open(s, p),
            Action::Push(Mode::Interpolation),
        ),
        (
            Kind::Colon,
            byte(s, lead, b':').map(|e| ws_opt(s, e)),
            Action::Set(Mode::Value),
        ),
        (Kind::InterClose, byte(s, lead, b'}'), Action::Pop),
        (Kind::Dot, byte(s, p, b'.'), Action::None),
        (Kind::BracketOpen, byte(s, p, b'['), Action::None),
        (Kind::BracketClose, byte(s, p, b']'), Action::None),
        (Kind::Id, id(s, p), Action::None),
        (
            Kind::InterKey,
            {
                let mut e = p;
                while at(s, e).is_some_and(|c| !b"\\{}()[]:. \t'\"".contains(&c)) {
                    e += 1;
                }
                (e > p).then_some(e)
            },
            Action::None,
        ),
    ]
}

fn quoted(s: &[u8], p: usize, q: u8) -> Vec<Rule> {
    let escaped_quote = {
        let mut e = p;
        while s.get(e..e + 2) == Some(b"\\\\") {
            e += 2;
        }
        (at(s, e) == Some(b'\\') && at(s, e + 1) == Some(q)).then_some(e + 2)
    };
    vec![
        (
            Kind::InterOpen,
            inter_open(s, p),
            Action::Push(Mode::Interpolation),
        ),
        (Kind::QuoteClose, byte(s, p, q), Action::Pop),
        (Kind::AnyStr, text_run(s, p, &[q, b'$']), Action::None),
        (Kind::EscInter, esc_inter(s, p), Action::None),
        (Kind::Esc, escaped_quote, Action::None),
        (Kind::QuotedEsc, backslash_pairs(s, p), Action::None),
        (Kind::AnyStr, backslashes(s, p), Action::None),
        (Kind::AnyStr, byte(s, p, b'$'), Action::None),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(Kind, &str)> {
        tokens(text)
            .unwrap()
            .iter()
            .map(|t| (t.kind, &text[t.start..t.end]))
            .collect()
    }

    #[test]
    fn modes_follow_the_interpolation() {
        use Kind::*;
        assert_eq!(
            kinds("a${b.c}d"),
            [
                (AnyStr, "a"),
                (InterOpen, "${"),
                (Id, "b"),
                (Dot, "."),
                (Id, "c"),
                (InterClose, "}"),
                (AnyStr, "d"),
                (Eof, "")
            ]
        );
        assert_eq!(
            kinds("${oc.env:A, 'x}'}"),
            [
                (InterOpen, "${"),
                (Id, "oc"),
                (Dot, "."),
                (Id, "env"),
                (Colon, ":"),
                (Id, "A"),
                (Comma, ", "),
                (QuoteOpen, "'"),
                (AnyStr, "x}"),
                (QuoteClose, "'"),
                (BraceClose, "}"),
                (Eof, "")
            ]
        );
    }

    #[test]
    fn escapes_and_keys() {
        use Kind::*;
        assert_eq!(kinds(r"a\${b}")[..2], [(AnyStr, "a"), (EscInter, r"\${")]);
        assert_eq!(kinds(r"\\${b}")[..2], [(TopEsc, r"\\"), (InterOpen, "${")]);
        assert_eq!(kinds("${a$b}")[1], (InterKey, "a$b"));
        assert_eq!(tokens("${a${b}}"), Err(4));
        assert_eq!(tokens("${a b}"), Err(3));
    }
}
