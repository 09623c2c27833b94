//! A Python source tokenizer, enough to read dataclass modules: names, numbers, strings (all
//! prefixes and triple quotes), operators, and the logical lines and indentation Python's own
//! tokenizer gives (no line ends inside brackets or after a backslash; comments dropped).

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
    Name(String),
    /// A number as written (`1e-6`, `0x10`, `1_000`).
    Number(String),
    /// A string literal's value; `formatted` for f-strings, whose value rlctl does not compute.
    Str {
        value: String,
        formatted: bool,
    },
    Op(String),
    Newline,
    Indent,
    Dedent,
}

/// A token and the 1-based line it starts on, for messages.
#[derive(Debug, Clone)]
pub(super) struct Token {
    pub tok: Tok,
    pub line: usize,
}

const OPS3: [&str; 4] = ["**=", "//=", ">>=", "<<="];
const OPS2: [&str; 20] = [
    "->", "**", "//", "==", "!=", "<=", ">=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@=",
    ":=", "<<", ">>", "...",
];

/// The tokens of a Python source file, or the line where it stops being Python rlctl reads.
pub(super) fn tokenize(src: &str) -> Result<Vec<Token>, String> {
    let mut lx = Lexer {
        s: src.as_bytes(),
        src,
        i: 0,
        line: 1,
        depth: 0,
        indents: vec![0],
        out: Vec::new(),
        at_line_start: true,
    };
    lx.run()?;
    Ok(lx.out)
}

struct Lexer<'a> {
    s: &'a [u8],
    src: &'a str,
    i: usize,
    line: usize,
    /// Open brackets: inside them, line ends and indentation do not count.
    depth: usize,
    indents: Vec<usize>,
    out: Vec<Token>,
    at_line_start: bool,
}

impl Lexer<'_> {
    fn push(&mut self, tok: Tok, line: usize) {
        self.out.push(Token { tok, line });
    }

    fn run(&mut self) -> Result<(), String> {
        while self.i < self.s.len() {
            if self.at_line_start && self.depth == 0 {
                self.line_start()?;
                continue;
            }
            let c = self.s[self.i];
            match c {
                b' ' | b'\t' | b'\x0c' | b'\r' => self.i += 1,
                b'#' => self.skip_comment(),
                b'\\' if self.s.get(self.i + 1) == Some(&b'\n') => {
                    self.i += 2;
                    self.line += 1;
                }
                b'\\' if self.s.get(self.i + 1) == Some(&b'\r') => {
                    self.i += 3;
                    self.line += 1;
                }
                b'\n' => {
                    self.i += 1;
                    if self.depth == 0 {
                        self.push(Tok::Newline, self.line);
                        self.at_line_start = true;
                    }
                    self.line += 1;
                }
                b'0'..=b'9' => self.number(),
                b'.' if self.s.get(self.i + 1).is_some_and(u8::is_ascii_digit) => self.number(),
                b'"' | b'\'' => self.string(0)?,
                c if c == b'_' || c.is_ascii_alphabetic() || c >= 0x80 => {
                    let start = self.i;
                    while self.i < self.s.len()
                        && (self.s[self.i] == b'_'
                            || self.s[self.i].is_ascii_alphanumeric()
                            || self.s[self.i] >= 0x80)
                    {
                        self.i += 1;
                    }
                    let word = &self.src[start..self.i];
                    let quote = self.s.get(self.i).copied();
                    if matches!(quote, Some(b'"' | b'\''))
                        && word.len() <= 2
                        && word
                            .chars()
                            .all(|c| matches!(c.to_ascii_lowercase(), 'r' | 'b' | 'f' | 'u'))
                    {
                        self.i = start;
                        self.string(word.len())?;
                    } else {
                        self.push(Tok::Name(word.to_owned()), self.line);
                    }
                }
                _ => self.op()?,
            }
        }
        if !self.at_line_start {
            self.push(Tok::Newline, self.line);
        }
        while self.indents.len() > 1 {
            self.indents.pop();
            self.push(Tok::Dedent, self.line);
        }
        Ok(())
    }

    /// Measures a line's indentation; blank and comment-only lines do not count.
    fn line_start(&mut self) -> Result<(), String> {
        let mut col = 0;
        while let Some(&c) = self.s.get(self.i) {
            match c {
                b' ' => col += 1,
                b'\t' => col = (col / 8 + 1) * 8,
                b'\x0c' | b'\r' => {}
                _ => break,
            }
            self.i += 1;
        }
        match self.s.get(self.i) {
            None => return Ok(()),
            Some(b'\n') => {
                self.i += 1;
                self.line += 1;
                return Ok(());
            }
            Some(b'#') => {
                self.skip_comment();
                return Ok(());
            }
            Some(_) => {}
        }
        self.at_line_start = false;
        let top = *self.indents.last().expect("the base level stays");
        if col > top {
            self.indents.push(col);
            self.push(Tok::Indent, self.line);
        } else {
            while col < *self.indents.last().expect("the base level stays") {
                self.indents.pop();
                self.push(Tok::Dedent, self.line);
            }
            if col != *self.indents.last().expect("the base level stays") {
                return Err(format!(
                    "line {}: the indentation matches no outer block",
                    self.line
                ));
            }
        }
        Ok(())
    }

    fn skip_comment(&mut self) {
        while self.i < self.s.len() && self.s[self.i] != b'\n' {
            self.i += 1;
        }
    }

    fn number(&mut self) {
        let start = self.i;
        while let Some(&c) = self.s.get(self.i) {
            let exp_sign = matches!(c, b'+' | b'-')
                && matches!(self.s[self.i - 1], b'e' | b'E')
                && !self.src[start..self.i].starts_with("0x");
            if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || exp_sign {
                self.i += 1;
            } else {
                break;
            }
        }
        let text = self.src[start..self.i].to_owned();
        self.push(Tok::Number(text), self.line);
    }

    /// A string literal starting at `self.i`, after a prefix of `prefix_len` letters.
    fn string(&mut self, prefix_len: usize) -> Result<(), String> {
        let start_line = self.line;
        let prefix = self.src[self.i..self.i + prefix_len].to_ascii_lowercase();
        let raw = prefix.contains('r');
        let formatted = prefix.contains('f');
        self.i += prefix_len;
        let q = self.s[self.i];
        let triple = self.s.get(self.i + 1) == Some(&q) && self.s.get(self.i + 2) == Some(&q);
        self.i += if triple { 3 } else { 1 };
        let mut value = String::new();
        loop {
            let Some(&c) = self.s.get(self.i) else {
                return Err(format!("line {start_line}: a string is never closed"));
            };
            if c == q {
                if !triple {
                    self.i += 1;
                    break;
                }
                if self.s.get(self.i + 1) == Some(&q) && self.s.get(self.i + 2) == Some(&q) {
                    self.i += 3;
                    break;
                }
            }
            if c == b'\n' {
                if !triple {
                    return Err(format!("line {start_line}: a string is never closed"));
                }
                self.line += 1;
            }
            if c == b'\\' && self.i + 1 < self.s.len() {
                let next = self.s[self.i + 1];
                if next == b'\n' {
                    self.line += 1;
                }
                if raw {
                    value.push('\\');
                    value.push(next as char);
                    self.i += 2;
                    continue;
                }
                self.i += 2;
                match next {
                    b'\n' => {}
                    b'n' => value.push('\n'),
                    b't' => value.push('\t'),
                    b'r' => value.push('\r'),
                    b'0' => value.push('\0'),
                    b'\\' | b'\'' | b'"' => value.push(next as char),
                    _ => {
                        // Escapes rlctl has no use for (\x, \u, \N{…}) are kept as written.
                        value.push('\\');
                        self.i -= 1;
                    }
                }
                continue;
            }
            let len = utf8_len(c);
            value.push_str(&self.src[self.i..self.i + len]);
            self.i += len;
        }
        self.push(Tok::Str { value, formatted }, start_line);
        Ok(())
    }

    fn op(&mut self) -> Result<(), String> {
        let rest = &self.src[self.i..];
        let op = OPS3
            .iter()
            .chain(OPS2.iter())
            .find(|op| rest.starts_with(**op))
            .map(|op| (*op).to_owned())
            .unwrap_or_else(|| rest.chars().next().expect("not at the end").to_string());
        match op.as_str() {
            "(" | "[" | "{" => self.depth += 1,
            ")" | "]" | "}" => {
                self.depth = self
                    .depth
                    .checked_sub(1)
                    .ok_or_else(|| format!("line {}: `{op}` closes no open bracket", self.line))?;
            }
            _ => {}
        }
        if !"()[]{}:,.;@=+-*/%<>&|^~!".contains(op.chars().next().unwrap_or(' ')) {
            return Err(format!(
                "line {}: `{op}` is not Python rlctl reads",
                self.line
            ));
        }
        self.i += op.len();
        self.push(Tok::Op(op), self.line);
        Ok(())
    }
}

/// `@register_advantage_estimator("x")`, `register_policy_loss("x")`,
/// `AdvantageEstimatorRegistry.register("x", …)` and `PolicyLossRegistry.register("x", …)`
/// anywhere in the module.
pub(super) fn registered_names(t: &[Token]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (i, tok) in t.iter().enumerate() {
        let Tok::Name(name) = &tok.tok else { continue };
        let (kind, call_at) = match name.as_str() {
            "register_advantage_estimator" => ("advantage_estimator", i + 1),
            "register_policy_loss" => ("policy_loss", i + 1),
            "AdvantageEstimatorRegistry" | "PolicyLossRegistry"
                if matches!(t.get(i + 1).map(|t| &t.tok), Some(Tok::Op(o)) if o == ".")
                    && matches!(t.get(i + 2).map(|t| &t.tok), Some(Tok::Name(n)) if n == "register") =>
            {
                let kind = if name.starts_with("Adv") {
                    "advantage_estimator"
                } else {
                    "policy_loss"
                };
                (kind, i + 3)
            }
            _ => continue,
        };
        let open = matches!(t.get(call_at).map(|t| &t.tok), Some(Tok::Op(o)) if o == "(");
        if let (
            true,
            Some(Tok::Str {
                value,
                formatted: false,
            }),
        ) = (open, t.get(call_at + 1).map(|t| &t.tok))
        {
            out.push((kind.to_owned(), value.clone()));
        }
    }
    out
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(src: &str) -> Vec<Tok> {
        tokenize(src).unwrap().into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn blocks_strings_and_brackets() {
        let src = "class A(B):\n    x: int = field(\n        default=1,  # c\n    )\n    \"\"\"doc\nmore\"\"\"\n\n# top\ny = r'a\\n' + b\"q\"\n";
        let t = toks(src);
        let name = |s: &str| Tok::Name(s.into());
        let op = |s: &str| Tok::Op(s.into());
        assert_eq!(
            t[..7],
            [
                name("class"),
                name("A"),
                op("("),
                name("B"),
                op(")"),
                op(":"),
                Tok::Newline
            ]
        );
        assert_eq!(t[7], Tok::Indent);
        assert!(t.contains(&Tok::Str {
            value: "doc\nmore".into(),
            formatted: false
        }));
        assert!(t.contains(&Tok::Str {
            value: "a\\n".into(),
            formatted: false
        }));
        let dedent = t.iter().position(|t| *t == Tok::Dedent).unwrap();
        assert_eq!(t[dedent + 1], name("y"));
        // No line end inside the call's brackets.
        let newlines = t.iter().filter(|t| **t == Tok::Newline).count();
        assert_eq!(newlines, 4);
    }

    #[test]
    fn numbers_and_errors() {
        assert_eq!(
            toks("x = -1e-6\n")[2..4],
            [Tok::Op("-".into()), Tok::Number("1e-6".into())]
        );
        assert_eq!(toks("x = 0x1F")[2], Tok::Number("0x1F".into()));
        assert!(
            tokenize("x = 'open\n")
                .unwrap_err()
                .contains("never closed")
        );
        assert!(tokenize("if a:\n    b\n  c\n").is_err());
    }
}
