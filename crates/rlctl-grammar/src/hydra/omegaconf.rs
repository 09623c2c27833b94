//! OmegaConf 2.3's interpolation parser (omegaconf/grammar/OmegaConfGrammarParser.g4, rule
//! `configValue`): whether a string with `${` is one OmegaConf accepts, and the
//! interpolations it holds. OmegaConf checks every such string when hydra stores it, so a bad
//! one is refused at start-up, before anything resolves.

use super::omegaconf_lexer::{Kind, Token, tokens};

/// One `${...}`.
#[derive(Debug, Clone, PartialEq)]
pub enum Interp {
    /// `${a.b[c]}`, `${..a}`: the leading dots and the keys.
    Node { dots: usize, keys: Vec<Key> },
    /// `${name:args}`.
    Resolver { name: Vec<Key>, args: Vec<Arg> },
}

#[derive(Debug, Clone, PartialEq)]
pub enum Key {
    Name(String),
    Nested(Interp),
}

/// A resolver argument: its text when it is plain (no interpolation), and the interpolations
/// inside it, which resolve before the resolver runs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Arg {
    pub text: Option<String>,
    pub nested: Vec<Interp>,
}

/// The top-level interpolations of `text`, or OmegaConf's `GrammarParseError`.
pub fn parse(text: &str) -> Result<Vec<Interp>, String> {
    parts(text).map(|(found, _)| found)
}

/// The interpolation `text` is, when it is one and nothing around it: OmegaConf then gives
/// the value it points at, not a string.
pub fn lone(text: &str) -> Option<Interp> {
    match parts(text) {
        Ok((mut found, 0)) if found.len() == 1 => found.pop(),
        _ => None,
    }
}

/// The interpolations of `text` and how many other pieces of text it has.
fn parts(text: &str) -> Result<(Vec<Interp>, usize), String> {
    let tokens = tokens(text).map_err(|at| {
        let c = text[at..].chars().next().unwrap_or(' ');
        format!("token recognition error at: '{c}' in '{text}'")
    })?;
    let mut p = Parser {
        text,
        tokens,
        pos: 0,
    };
    let mut found = Vec::new();
    let others = p.text(&mut found)?;
    p.expect(Kind::Eof)?;
    Ok((found, others))
}

struct Parser<'a> {
    text: &'a str,
    tokens: Vec<Token>,
    pos: usize,
}

const TEXT: [Kind; 6] = [
    Kind::InterOpen,
    Kind::AnyStr,
    Kind::Esc,
    Kind::EscInter,
    Kind::TopEsc,
    Kind::QuotedEsc,
];

const PRIMITIVE: [Kind; 10] = [
    Kind::Id,
    Kind::Null,
    Kind::Int,
    Kind::Float,
    Kind::Bool,
    Kind::UnquotedChar,
    Kind::Colon,
    Kind::Esc,
    Kind::Ws,
    Kind::InterOpen,
];

const DICT_KEY: [Kind; 8] = [
    Kind::Id,
    Kind::Null,
    Kind::Int,
    Kind::Float,
    Kind::Bool,
    Kind::UnquotedChar,
    Kind::Esc,
    Kind::Ws,
];

impl Parser<'_> {
    fn kind(&self) -> Kind {
        self.tokens[self.pos].kind
    }

    fn src(&self, t: Token) -> &str {
        &self.text[t.start..t.end]
    }

    fn fail<T>(&self) -> Result<T, String> {
        let t = self.tokens[self.pos];
        let shown = match t.kind {
            Kind::Eof => "<EOF>".to_owned(),
            _ => format!("'{}'", self.src(t)),
        };
        Err(format!(
            "no viable alternative at input {shown} in '{}'",
            self.text
        ))
    }

    fn expect(&mut self, kind: Kind) -> Result<Token, String> {
        if self.kind() == kind {
            self.pos += 1;
            Ok(self.tokens[self.pos - 1])
        } else {
            self.fail()
        }
    }

    /// `text: (interpolation | ANY_STR | ESC | ESC_INTER | TOP_ESC | QUOTED_ESC)+`
    fn text(&mut self, found: &mut Vec<Interp>) -> Result<usize, String> {
        if !TEXT.contains(&self.kind()) {
            return self.fail();
        }
        let mut others = 0;
        while TEXT.contains(&self.kind()) {
            if self.kind() == Kind::InterOpen {
                found.push(self.interpolation()?);
            } else {
                self.pos += 1;
                others += 1;
            }
        }
        Ok(others)
    }

    /// `interpolation: interpolationNode | interpolationResolver`; the two part ways at a
    /// `:` or a `}`, so trying one and then the other decides as ANTLR does.
    fn interpolation(&mut self) -> Result<Interp, String> {
        self.expect(Kind::InterOpen)?;
        let start = self.pos;
        match self.node() {
            Ok(node) => Ok(node),
            Err(node_error) => {
                let node_reach = self.pos;
                self.pos = start;
                match self.resolver() {
                    Ok(resolver) => Ok(resolver),
                    Err(_) if node_reach > self.pos => {
                        self.pos = node_reach;
                        Err(node_error)
                    }
                    Err(e) => Err(e),
                }
            }
        }
    }

    /// `DOT* (configKey | '[' configKey ']') (DOT configKey | '[' configKey ']')* INTER_CLOSE`
    fn node(&mut self) -> Result<Interp, String> {
        let mut dots = 0;
        while self.kind() == Kind::Dot {
            self.pos += 1;
            dots += 1;
        }
        let mut keys = vec![self.bracketed_or_key()?];
        loop {
            match self.kind() {
                Kind::Dot => {
                    self.pos += 1;
                    keys.push(self.config_key()?);
                }
                Kind::BracketOpen => keys.push(self.bracketed_or_key()?),
                _ => break,
            }
        }
        self.expect(Kind::InterClose)?;
        Ok(Interp::Node { dots, keys })
    }

    fn bracketed_or_key(&mut self) -> Result<Key, String> {
        if self.kind() != Kind::BracketOpen {
            return self.config_key();
        }
        self.pos += 1;
        let key = self.config_key()?;
        self.expect(Kind::BracketClose)?;
        Ok(key)
    }

    /// `configKey: interpolation | ID | INTER_KEY`
    fn config_key(&mut self) -> Result<Key, String> {
        match self.kind() {
            Kind::InterOpen => Ok(Key::Nested(self.interpolation()?)),
            Kind::Id | Kind::InterKey => {
                self.pos += 1;
                Ok(Key::Name(self.src(self.tokens[self.pos - 1]).to_owned()))
            }
            _ => self.fail(),
        }
    }

    /// `resolverName COLON sequence? BRACE_CLOSE`, `resolverName: (interpolation | ID) (DOT
    /// (interpolation | ID))*`
    fn resolver(&mut self) -> Result<Interp, String> {
        let mut name = Vec::new();
        loop {
            name.push(match self.kind() {
                Kind::InterOpen => Key::Nested(self.interpolation()?),
                Kind::Id => {
                    self.pos += 1;
                    Key::Name(self.src(self.tokens[self.pos - 1]).to_owned())
                }
                _ => return self.fail(),
            });
            if self.kind() != Kind::Dot {
                break;
            }
            self.pos += 1;
        }
        self.expect(Kind::Colon)?;
        let args = match self.kind() {
            Kind::BraceClose => Vec::new(),
            _ => self.sequence()?,
        };
        self.expect(Kind::BraceClose)?;
        Ok(Interp::Resolver { name, args })
    }

    fn starts_element(&self) -> bool {
        PRIMITIVE.contains(&self.kind())
            || matches!(
                self.kind(),
                Kind::QuoteOpen | Kind::BracketOpen | Kind::BraceOpen
            )
    }

    /// `sequence: (element (COMMA element?)*) | (COMMA element?)+`; a missing element is an
    /// empty string, as OmegaConf's visitor reads it.
    fn sequence(&mut self) -> Result<Vec<Arg>, String> {
        if !(self.kind() == Kind::Comma || self.starts_element()) {
            return self.fail();
        }
        let mut args = Vec::new();
        let mut want_element = true;
        loop {
            if self.kind() == Kind::Comma {
                if want_element {
                    args.push(Arg {
                        text: Some(String::new()),
                        nested: Vec::new(),
                    });
                }
                self.pos += 1;
                want_element = true;
            } else if want_element && self.starts_element() {
                args.push(self.element()?);
                want_element = false;
            } else {
                break;
            }
        }
        if want_element {
            args.push(Arg {
                text: Some(String::new()),
                nested: Vec::new(),
            });
        }
        Ok(args)
    }

    /// `element: primitive | quotedValue | listContainer | dictContainer`
    fn element(&mut self) -> Result<Arg, String> {
        let mut arg = Arg::default();
        match self.kind() {
            Kind::QuoteOpen => {
                self.pos += 1;
                let start = self.tokens[self.pos].start;
                if self.kind() != Kind::QuoteClose {
                    self.text(&mut arg.nested)?;
                }
                let end = self.expect(Kind::QuoteClose)?.start;
                if arg.nested.is_empty() {
                    arg.text = Some(self.text[start..end].to_owned());
                }
            }
            Kind::BracketOpen => {
                self.pos += 1;
                if self.kind() != Kind::BracketClose {
                    for item in self.sequence()? {
                        arg.nested.extend(item.nested);
                    }
                }
                self.expect(Kind::BracketClose)?;
            }
            Kind::BraceOpen => {
                self.pos += 1;
                if self.kind() != Kind::BraceClose {
                    loop {
                        if !DICT_KEY.contains(&self.kind()) {
                            return self.fail();
                        }
                        while DICT_KEY.contains(&self.kind()) {
                            self.pos += 1;
                        }
                        self.expect(Kind::Colon)?;
                        arg.nested.extend(self.element()?.nested);
                        if self.kind() != Kind::Comma {
                            break;
                        }
                        self.pos += 1;
                    }
                }
                self.expect(Kind::BraceClose)?;
            }
            _ => {
                let mut text = String::new();
                while PRIMITIVE.contains(&self.kind()) {
                    if self.kind() == Kind::InterOpen {
                        arg.nested.push(self.interpolation()?);
                        continue;
                    }
                    let t = self.tokens[self.pos];
                    self.pos += 1;
                    match t.kind {
                        Kind::Esc => text.extend(self.src(t).chars().skip(1).step_by(2)),
                        _ => text.push_str(self.src(t)),
                    }
                }
                if arg.nested.is_empty() {
                    arg.text = Some(text.trim_matches([' ', '\t']).to_owned());
                }
            }
        }
        Ok(arg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(s: &str) -> Key {
        Key::Name(s.into())
    }

    #[test]
    fn nodes_and_resolvers() {
        assert_eq!(
            parse("a ${..x.y[0]} b").unwrap(),
            [Interp::Node {
                dots: 2,
                keys: vec![name("x"), name("y"), name("0")]
            }]
        );
        let Interp::Resolver { name: n, args } = &parse("${oc.env:HOME,'x'}").unwrap()[0] else {
            panic!()
        };
        assert_eq!(n, &[name("oc"), name("env")]);
        assert_eq!(args[0].text.as_deref(), Some("HOME"));
        assert_eq!(args[1].text.as_deref(), Some("x"));
        assert_eq!(
            parse("${f:a,,}").map(|i| match &i[0] {
                Interp::Resolver { args, .. } => args.len(),
                _ => 0,
            }),
            Ok(3)
        );
        assert!(parse("${a.${b}}").is_ok());
        assert!(parse(r"\${not one}").unwrap().is_empty());
    }

    #[test]
    fn malformed_interpolations_are_refused() {
        for bad in ["${oops", "${}", "${ }", "${a b}", "${a${b}}", "${a:b"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        for good in [
            "${oc.env:A,b}",
            "$${a}",
            "${ a }",
            "${a}${b}",
            "${f:}",
            "${f:[1,{a:2}]}",
        ] {
            assert!(parse(good).is_ok(), "{good}");
        }
    }
}
