//! Hydra 1.3's OverrideParser (hydra/grammar/OverrideParser.g4) as a recursive descent over
//! the lexer's tokens. Every decision of the grammar needs at most two tokens of lookahead
//! (`ID POPEN` starts a call, `ID EQUAL` names an argument), so this accepts exactly what
//! ANTLR's parser accepts; hydra stops at the first syntax error, and so does this.

use super::lexer::{Kind, NoToken, Token, tokens};

/// `+`, `++`, `~` or nothing before the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prefix {
    Change,
    Add,
    ForceAdd,
    Delete,
}

impl Prefix {
    pub fn text(self) -> &'static str {
        match self {
            Prefix::Change => "",
            Prefix::Add => "+",
            Prefix::ForceAdd => "++",
            Prefix::Delete => "~",
        }
    }
}

/// A value's syntax tree; `start..end` is its text in the argument.
#[derive(Debug, Clone, PartialEq)]
pub struct Syntax {
    pub start: usize,
    pub end: usize,
    pub node: Node,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// A `primitive` or `dictKey`: its tokens, a lone quoted string included.
    Primitive(Vec<Token>),
    List(Vec<Syntax>),
    Dict(Vec<(Vec<Token>, Syntax)>),
    /// `name(arg, name=arg)`: the arguments with their names, if given.
    Call {
        name: String,
        args: Vec<(Option<String>, Syntax)>,
    },
}

/// What follows the `=`: nothing (`key=`), one element, or elements separated by commas.
#[derive(Debug, Clone, PartialEq)]
pub enum ValueSyntax {
    Empty,
    Element(Syntax),
    Sweep(Vec<Syntax>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct OverrideSyntax {
    pub prefix: Prefix,
    pub key: String,
    pub package: Option<String>,
    /// `None` for `~key` without `=`.
    pub value: Option<ValueSyntax>,
}

/// Where parsing stopped, in hydra's words.
#[derive(Debug, Clone, PartialEq)]
pub enum SyntaxError {
    /// No token starts here (`LexerNoViableAltException`).
    NoToken { at: usize },
    /// A token the grammar does not allow here.
    Unexpected { at: usize, message: String },
}

struct Parser<'a> {
    text: &'a str,
    tokens: Vec<Token>,
    /// Where the lexer stopped, if it did: reading past the last token reports it.
    lexer_error: Option<NoToken>,
    pos: usize,
}

/// Parses a whole override, `override: ... EOF`.
pub fn parse_override(text: &str) -> Result<OverrideSyntax, SyntaxError> {
    let mut p = Parser::new(text, false);
    let prefix = match p.kind(0)? {
        Kind::Tilde => {
            p.pos += 1;
            Prefix::Delete
        }
        Kind::Plus if p.kind(1)? == Kind::Plus => {
            p.pos += 2;
            Prefix::ForceAdd
        }
        Kind::Plus => {
            p.pos += 1;
            Prefix::Add
        }
        _ => Prefix::Change,
    };
    let (key, package) = p.key()?;
    let value = if prefix == Prefix::Delete && p.kind(0)? == Kind::Eof {
        None
    } else {
        p.expect(Kind::Equal, "'='")?;
        Some(match p.kind(0)? {
            Kind::Eof => ValueSyntax::Empty,
            _ => p.value()?,
        })
    };
    p.expect(Kind::Eof, "<EOF>")?;
    Ok(OverrideSyntax {
        prefix,
        key,
        package,
        value,
    })
}

/// Parses a lone value (`value EOF`, the lexer in its value mode), as hydra's `parse_rule`
/// does for a value.
pub fn parse_value(text: &str) -> Result<ValueSyntax, SyntaxError> {
    let mut p = Parser::new(text, true);
    let value = p.value()?;
    p.expect(Kind::Eof, "<EOF>")?;
    Ok(value)
}

const PRIMITIVE: [Kind; 10] = [
    Kind::Id,
    Kind::Null,
    Kind::Int,
    Kind::Float,
    Kind::Bool,
    Kind::Interpolation,
    Kind::UnquotedChar,
    Kind::Colon,
    Kind::Esc,
    Kind::Ws,
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

impl<'a> Parser<'a> {
    fn new(text: &'a str, value_mode: bool) -> Self {
        let (tokens, lexer_error) = tokens(text, value_mode);
        Parser {
            text,
            tokens,
            lexer_error,
            pos: 0,
        }
    }

    fn token(&self, ahead: usize) -> Result<Token, SyntaxError> {
        match (self.tokens.get(self.pos + ahead), self.lexer_error) {
            (Some(t), _) => Ok(*t),
            (None, Some(e)) => Err(SyntaxError::NoToken { at: e.at }),
            (None, None) => unreachable!("the token list ends with EOF"),
        }
    }

    fn kind(&self, ahead: usize) -> Result<Kind, SyntaxError> {
        self.token(ahead).map(|t| t.kind)
    }

    fn next(&mut self) -> Result<Token, SyntaxError> {
        let t = self.token(0)?;
        self.pos += 1;
        Ok(t)
    }

    fn shown(&self, t: Token) -> String {
        match t.kind {
            Kind::Eof => "<EOF>".to_owned(),
            _ => format!("'{}'", &self.text[t.start..t.end]),
        }
    }

    fn unexpected(&self, expecting: &str) -> SyntaxError {
        match self.token(0) {
            Ok(t) => SyntaxError::Unexpected {
                at: t.start,
                message: format!("mismatched input {} expecting {expecting}", self.shown(t)),
            },
            Err(e) => e,
        }
    }

    fn expect(&mut self, kind: Kind, shown: &str) -> Result<Token, SyntaxError> {
        if self.kind(0)? == kind {
            self.next()
        } else {
            Err(self.unexpected(shown))
        }
    }

    /// `key: packageOrGroup (AT package)?`, `packageOrGroup: package | ID (SLASH ID)+`.
    fn key(&mut self) -> Result<(String, Option<String>), SyntaxError> {
        let start = self.token(0)?.start;
        if self.kind(0)? == Kind::Id && self.kind(1)? == Kind::Slash {
            self.pos += 1;
            while self.kind(0)? == Kind::Slash {
                self.pos += 1;
                self.expect(Kind::Id, "ID")?;
            }
        } else {
            self.package()?;
        }
        let key = self.text[start..self.token(0)?.start].to_owned();
        if self.kind(0)? != Kind::At {
            return Ok((key, None));
        }
        self.pos += 1;
        let start = self.token(0)?.start;
        self.package()?;
        let package = self.text[start..self.token(0)?.start].to_owned();
        Ok((key, Some(package)))
    }

    /// `package: ( | ID | KEY_SPECIAL | DOT_PATH)`
    fn package(&mut self) -> Result<(), SyntaxError> {
        if matches!(self.kind(0)?, Kind::Id | Kind::KeySpecial | Kind::DotPath) {
            self.pos += 1;
        }
        Ok(())
    }

    /// `value: element | simpleChoiceSweep`
    fn value(&mut self) -> Result<ValueSyntax, SyntaxError> {
        let first = self.element()?;
        if self.kind(0)? != Kind::Comma {
            return Ok(ValueSyntax::Element(first));
        }
        let mut all = vec![first];
        while self.kind(0)? == Kind::Comma {
            self.pos += 1;
            all.push(self.element()?);
        }
        Ok(ValueSyntax::Sweep(all))
    }

    fn element(&mut self) -> Result<Syntax, SyntaxError> {
        let start = self.token(0)?.start;
        let node = match self.kind(0)? {
            Kind::Id if self.kind(1)? == Kind::POpen => self.call()?,
            Kind::BracketOpen => self.list()?,
            Kind::BraceOpen => self.dict()?,
            Kind::QuotedValue => Node::Primitive(vec![self.next()?]),
            k if PRIMITIVE.contains(&k) => Node::Primitive(self.run(&PRIMITIVE)?),
            _ => {
                let t = self.token(0)?;
                return Err(SyntaxError::Unexpected {
                    at: t.start,
                    message: format!("no viable alternative at input {}", self.shown(t)),
                });
            }
        };
        let end = self.tokens[self.pos - 1].end;
        Ok(Syntax { start, end, node })
    }

    /// One or more tokens of the given kinds.
    fn run(&mut self, kinds: &[Kind]) -> Result<Vec<Token>, SyntaxError> {
        let mut out = Vec::new();
        while kinds.contains(&self.kind(0)?) {
            out.push(self.next()?);
        }
        Ok(out)
    }

    fn list(&mut self) -> Result<Node, SyntaxError> {
        self.pos += 1;
        let mut items = Vec::new();
        if self.kind(0)? != Kind::BracketClose {
            items.push(self.element()?);
            while self.kind(0)? == Kind::Comma {
                self.pos += 1;
                items.push(self.element()?);
            }
        }
        self.expect(Kind::BracketClose, "{',', ']'}")?;
        Ok(Node::List(items))
    }

    fn dict(&mut self) -> Result<Node, SyntaxError> {
        self.pos += 1;
        let mut items = Vec::new();
        if self.kind(0)? != Kind::BraceClose {
            loop {
                if !DICT_KEY.contains(&self.kind(0)?) {
                    return Err(self.unexpected("a dict key"));
                }
                let key = self.run(&DICT_KEY)?;
                self.expect(Kind::Colon, "':'")?;
                items.push((key, self.element()?));
                if self.kind(0)? != Kind::Comma {
                    break;
                }
                self.pos += 1;
            }
        }
        self.expect(Kind::BraceClose, "{',', '}'}")?;
        Ok(Node::Dict(items))
    }

    /// `function: ID POPEN (argName? element (COMMA argName? element)*)? PCLOSE`
    fn call(&mut self) -> Result<Node, SyntaxError> {
        let name = self.next()?;
        let name = self.text[name.start..name.end].to_owned();
        self.pos += 1;
        let mut args = Vec::new();
        if self.kind(0)? != Kind::PClose {
            loop {
                let arg_name = if self.kind(0)? == Kind::Id && self.kind(1)? == Kind::Equal {
                    let t = self.next()?;
                    self.pos += 1;
                    Some(self.text[t.start..t.end].to_owned())
                } else {
                    None
                };
                args.push((arg_name, self.element()?));
                if self.kind(0)? != Kind::Comma {
                    break;
                }
                self.pos += 1;
            }
        }
        self.expect(Kind::PClose, "{',', ')'}")?;
        Ok(Node::Call { name, args })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> OverrideSyntax {
        parse_override(text).unwrap_or_else(|e| panic!("{text}: {e:?}"))
    }

    fn refused(text: &str) -> bool {
        parse_override(text).is_err()
    }

    #[test]
    fn keys_take_prefixes_groups_and_packages() {
        let o = ok("++a.b=1");
        assert_eq!((o.prefix, o.key.as_str()), (Prefix::ForceAdd, "a.b"));
        let o = ok("db/mysql@srv.main=x");
        assert_eq!(o.key, "db/mysql");
        assert_eq!(o.package.as_deref(), Some("srv.main"));
        assert_eq!(ok("~a.b").value, None);
        assert_eq!(ok("~a.b=").value, Some(ValueSyntax::Empty));
        assert_eq!(ok("=1").key, "");
        assert!(refused("a.b"));
        assert!(refused("+a.b"));
        assert!(refused("+++a=1"));
    }

    #[test]
    fn values_follow_the_grammar() {
        for good in [
            "k=a b",
            "k=[1, [2, {a: 3}]]",
            "k={a b: 1, c:${x.y}}",
            "k=f(1, x=2)",
            "k= 'q'",
            "k=a:b",
            r"k=a\,b",
            "k=${oc.env:A,b}",
        ] {
            ok(good);
        }
        for bad in [
            "k=a=b",
            "k='q' ",
            "k='a'b",
            "k=a'b'",
            "k=[1,]",
            "k={'a':1}",
            "k={a}",
            "k=f(x=1",
            "k=${a",
            "k=(1)",
            "k=a f(1)",
        ] {
            assert!(refused(bad), "{bad}");
        }
        assert!(matches!(ok("k=a,b").value, Some(ValueSyntax::Sweep(v)) if v.len() == 2));
    }
}
