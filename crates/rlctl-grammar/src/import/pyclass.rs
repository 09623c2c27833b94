//! A Python module's top level as a dataclass reader needs it: its imports, its constants, and
//! its classes with their decorators, bases and annotated fields. Function bodies and other
//! statements are skipped; expressions rlctl does not evaluate (arithmetic, comprehensions,
//! conditionals) are kept as [`Expr::Other`].

use super::pysrc::{Tok, Token, registered_names, tokenize};

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Expr {
    /// A name or dotted attribute path (`dict`, `os.path.expanduser`).
    Name(String),
    Str(String),
    /// An f-string, whose value depends on run time.
    FStr,
    Num(String),
    Neg(Box<Expr>),
    List(Vec<Expr>),
    Tuple(Vec<Expr>),
    Dict(Vec<(Expr, Expr)>),
    Call {
        func: Box<Expr>,
        args: Vec<Expr>,
        kwargs: Vec<(String, Expr)>,
    },
    /// `value[index]`, the index's tuple items as a list (`Dict[str, Any]` has two).
    Subscript {
        value: Box<Expr>,
        index: Vec<Expr>,
    },
    /// `a | b` in an annotation (PEP 604).
    Union(Vec<Expr>),
    /// A lambda's body (its parameters do not matter to a default factory).
    Lambda(Box<Expr>),
    Other,
}

impl Expr {
    /// The dotted name this expression is, if it is one.
    pub(super) fn name(&self) -> Option<&str> {
        match self {
            Expr::Name(n) => Some(n),
            _ => None,
        }
    }
}

/// `from module import name as local` (`name` None for `import module as local`).
#[derive(Debug, Clone)]
pub(super) struct Import {
    pub local: String,
    pub module: String,
    /// Leading dots of a relative import.
    pub level: usize,
    pub name: Option<String>,
}

#[derive(Debug, Clone)]
pub(super) struct Field {
    pub name: String,
    pub annotation: Expr,
    pub default: Option<Expr>,
    pub line: usize,
}

#[derive(Debug, Clone)]
pub(super) struct Class {
    pub name: String,
    pub bases: Vec<Expr>,
    pub decorators: Vec<Expr>,
    pub fields: Vec<Field>,
}

impl Class {
    pub(super) fn is_dataclass(&self) -> bool {
        self.decorators.iter().any(|d| {
            let d = match d {
                Expr::Call { func, .. } => func,
                other => other,
            };
            matches!(d.name(), Some("dataclass" | "dataclasses.dataclass"))
        })
    }
}

#[derive(Debug, Default)]
pub(super) struct Module {
    pub imports: Vec<Import>,
    pub consts: Vec<(String, Expr)>,
    pub classes: Vec<Class>,
    /// Names given to SkyRL's registries: (`advantage_estimator` | `policy_loss`, name).
    pub registered: Vec<(String, String)>,
}

impl Module {
    pub(super) fn class(&self, name: &str) -> Option<&Class> {
        self.classes.iter().rev().find(|c| c.name == name)
    }

    pub(super) fn constant(&self, name: &str) -> Option<&Expr> {
        self.consts
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, e)| e)
    }
}

/// Reads a module's source.
pub(super) fn parse_module(src: &str) -> Result<Module, String> {
    let tokens = tokenize(src)?;
    let mut p = Parser {
        t: &tokens,
        i: 0,
        module: Module::default(),
    };
    p.module.registered = registered_names(&tokens);
    while p.i < p.t.len() {
        p.statement(&mut Vec::new())?;
    }
    Ok(p.module)
}

/// A call's positional and keyword arguments.
type CallArgs = (Vec<Expr>, Vec<(String, Expr)>);

struct Parser<'a> {
    t: &'a [Token],
    i: usize,
    module: Module,
}

const TERMINATORS: [&str; 7] = [",", ")", "]", "}", ":", "=", ";"];

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<&'a Tok> {
        self.t.get(self.i).map(|t| &t.tok)
    }

    fn line(&self) -> usize {
        self.t
            .get(self.i)
            .or(self.t.last())
            .map(|t| t.line)
            .unwrap_or(1)
    }

    fn is_op(&self, op: &str) -> bool {
        matches!(self.peek(), Some(Tok::Op(o)) if o == op)
    }

    fn is_name(&self, name: &str) -> bool {
        matches!(self.peek(), Some(Tok::Name(n)) if n == name)
    }

    fn eat_op(&mut self, op: &str) -> bool {
        let yes = self.is_op(op);
        if yes {
            self.i += 1;
        }
        yes
    }

    fn expect_op(&mut self, op: &str) -> Result<(), String> {
        if self.eat_op(op) {
            Ok(())
        } else {
            Err(format!("line {}: expected `{op}`", self.line()))
        }
    }

    fn ident(&mut self) -> Result<String, String> {
        match self.peek() {
            Some(Tok::Name(n)) => {
                let n = n.clone();
                self.i += 1;
                Ok(n)
            }
            _ => Err(format!("line {}: expected a name", self.line())),
        }
    }

    fn dotted(&mut self) -> Result<String, String> {
        let mut name = self.ident()?;
        while self.eat_op(".") {
            name.push('.');
            name.push_str(&self.ident()?);
        }
        Ok(name)
    }

    /// Skips to the end of the logical line, and the block after it if it opens one.
    fn skip_statement(&mut self) {
        while let Some(tok) = self.peek() {
            self.i += 1;
            if *tok == Tok::Newline {
                break;
            }
        }
        if self.peek() == Some(&Tok::Indent) {
            self.skip_block();
        }
    }

    /// Skips from an `Indent` to its `Dedent`.
    fn skip_block(&mut self) {
        let mut level = 0usize;
        while let Some(tok) = self.peek() {
            self.i += 1;
            match tok {
                Tok::Indent => level += 1,
                Tok::Dedent => {
                    level -= 1;
                    if level == 0 {
                        return;
                    }
                }
                _ => {}
            }
        }
    }

    /// One top-level statement; `decorators` collects `@…` lines for the class or def after.
    fn statement(&mut self, decorators: &mut Vec<Expr>) -> Result<(), String> {
        match self.peek() {
            Some(Tok::Newline | Tok::Dedent | Tok::Indent) => self.i += 1,
            Some(Tok::Op(o)) if o == "@" => {
                self.i += 1;
                decorators.push(self.expr()?);
                self.skip_statement();
                return self.statement(decorators);
            }
            Some(Tok::Name(n)) => match n.as_str() {
                "from" => self.import_from()?,
                "import" => self.import()?,
                "class" => {
                    let class = self.class(std::mem::take(decorators))?;
                    self.module.classes.push(class);
                }
                _ => {
                    let start = self.i;
                    if let Ok(name) = self.ident() {
                        if self.eat_op(":") && self.expr().is_ok() && !self.is_op("=") {
                            // A bare annotation sets nothing.
                        } else if self.eat_op("=") {
                            let value = self.expr().unwrap_or(Expr::Other);
                            if self.peek() == Some(&Tok::Newline) {
                                self.module.consts.push((name, value));
                            }
                        }
                    }
                    self.i = start;
                    self.skip_statement();
                }
            },
            _ => self.skip_statement(),
        }
        decorators.clear();
        Ok(())
    }

    fn import_from(&mut self) -> Result<(), String> {
        self.i += 1;
        let mut level = 0;
        loop {
            if self.eat_op(".") {
                level += 1;
            } else if self.eat_op("...") {
                level += 3;
            } else {
                break;
            }
        }
        let module = if self.is_name("import") {
            String::new()
        } else {
            self.dotted()?
        };
        if !self.is_name("import") {
            return Err(format!("line {}: expected `import`", self.line()));
        }
        self.i += 1;
        let paren = self.eat_op("(");
        while let Some(Tok::Name(_)) = self.peek() {
            let name = self.ident()?;
            let local = if self.is_name("as") {
                self.i += 1;
                self.ident()?
            } else {
                name.clone()
            };
            self.module.imports.push(Import {
                local,
                module: module.clone(),
                level,
                name: Some(name),
            });
            if !self.eat_op(",") {
                break;
            }
        }
        if paren {
            self.expect_op(")")?;
        }
        self.skip_statement();
        Ok(())
    }

    fn import(&mut self) -> Result<(), String> {
        self.i += 1;
        loop {
            let module = self.dotted()?;
            let local = if self.is_name("as") {
                self.i += 1;
                self.ident()?
            } else {
                module.clone()
            };
            self.module.imports.push(Import {
                local,
                module,
                level: 0,
                name: None,
            });
            if !self.eat_op(",") {
                break;
            }
        }
        self.skip_statement();
        Ok(())
    }

    fn class(&mut self, decorators: Vec<Expr>) -> Result<Class, String> {
        self.i += 1;
        let name = self.ident()?;
        let mut bases = Vec::new();
        if self.eat_op("(") {
            while !self.eat_op(")") {
                if matches!(self.peek(), Some(Tok::Name(_)))
                    && matches!(self.t.get(self.i + 1).map(|t| &t.tok), Some(Tok::Op(o)) if o == "=")
                {
                    // `metaclass=…` and other class keywords.
                    self.i += 2;
                    self.expr()?;
                } else {
                    bases.push(self.expr()?);
                }
                if !self.eat_op(",") {
                    self.expect_op(")")?;
                    break;
                }
            }
        }
        self.expect_op(":")?;
        let mut fields = Vec::new();
        if self.peek() != Some(&Tok::Newline) {
            // A one-line body (`class A(B): pass`).
            self.skip_statement();
            return Ok(Class {
                name,
                bases,
                decorators,
                fields,
            });
        }
        self.i += 1;
        if self.peek() != Some(&Tok::Indent) {
            return Err(format!(
                "line {}: a class body must be indented",
                self.line()
            ));
        }
        self.i += 1;
        while let Some(tok) = self.peek() {
            match tok {
                Tok::Dedent => {
                    self.i += 1;
                    break;
                }
                Tok::Name(n)
                    if !matches!(n.as_str(), "def" | "class" | "if" | "for" | "try" | "with")
                        && matches!(self.t.get(self.i + 1).map(|t| &t.tok), Some(Tok::Op(o)) if o == ":") =>
                {
                    let field_line = self.line();
                    let name = self.ident()?;
                    self.i += 1;
                    let annotation = self.expr()?;
                    let default = if self.eat_op("=") {
                        Some(self.expr()?)
                    } else {
                        None
                    };
                    self.skip_statement();
                    if !is_classvar(&annotation) {
                        fields.push(Field {
                            name,
                            annotation,
                            default,
                            line: field_line,
                        });
                    }
                }
                _ => self.skip_statement(),
            }
        }
        Ok(Class {
            name,
            bases,
            decorators,
            fields,
        })
    }

    fn at_terminator(&self) -> bool {
        match self.peek() {
            None | Some(Tok::Newline | Tok::Indent | Tok::Dedent) => true,
            Some(Tok::Op(o)) => TERMINATORS.contains(&o.as_str()),
            Some(Tok::Name(n)) => matches!(n.as_str(), "for" | "if" | "else" | "as"),
            _ => false,
        }
    }

    /// An expression; what rlctl does not evaluate is skipped to the next terminator at its
    /// bracket level and read as [`Expr::Other`].
    fn expr(&mut self) -> Result<Expr, String> {
        let first = self.unary()?;
        if self.at_terminator() && !self.is_name("if") && !self.is_name("for") {
            return Ok(first);
        }
        if self.is_op("|") {
            let mut items = vec![first];
            while self.eat_op("|") {
                items.push(self.unary()?);
            }
            if self.at_terminator() && !self.is_name("if") && !self.is_name("for") {
                return Ok(Expr::Union(items));
            }
        }
        self.skip_rest();
        Ok(Expr::Other)
    }

    /// Skips what is left of an expression rlctl does not read.
    fn skip_rest(&mut self) {
        loop {
            match self.peek() {
                Some(Tok::Op(o)) if ["(", "[", "{"].contains(&o.as_str()) => {
                    self.i += 1;
                    self.skip_to_close();
                }
                Some(Tok::Name(n)) if matches!(n.as_str(), "if" | "else" | "for") => self.i += 1,
                _ if self.at_terminator() => return,
                _ => self.i += 1,
            }
        }
    }

    /// Skips past the bracket that closes the one just opened.
    fn skip_to_close(&mut self) {
        let mut depth = 1usize;
        while let Some(tok) = self.peek() {
            self.i += 1;
            if let Tok::Op(o) = tok {
                match o.as_str() {
                    "(" | "[" | "{" => depth += 1,
                    ")" | "]" | "}" => {
                        depth -= 1;
                        if depth == 0 {
                            return;
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    fn unary(&mut self) -> Result<Expr, String> {
        if self.eat_op("-") {
            return Ok(Expr::Neg(Box::new(self.unary()?)));
        }
        if self.eat_op("+") {
            return self.unary();
        }
        if self.is_name("lambda") {
            while !self.eat_op(":") {
                if self.peek().is_none() {
                    return Err(format!("line {}: a lambda without `:`", self.line()));
                }
                self.i += 1;
            }
            return Ok(Expr::Lambda(Box::new(self.expr()?)));
        }
        let mut e = self.atom()?;
        loop {
            if self.eat_op(".") {
                let attr = self.ident()?;
                e = match e {
                    Expr::Name(n) => Expr::Name(format!("{n}.{attr}")),
                    _ => Expr::Other,
                };
            } else if self.eat_op("(") {
                let (args, kwargs) = self.call_args()?;
                e = Expr::Call {
                    func: Box::new(e),
                    args,
                    kwargs,
                };
            } else if self.eat_op("[") {
                let index = self.items("]")?;
                e = Expr::Subscript {
                    value: Box::new(e),
                    index,
                };
            } else {
                return Ok(e);
            }
        }
    }

    fn call_args(&mut self) -> Result<CallArgs, String> {
        let (mut args, mut kwargs) = (Vec::new(), Vec::new());
        while !self.eat_op(")") {
            let keyword = matches!(self.peek(), Some(Tok::Name(_)))
                && matches!(self.t.get(self.i + 1).map(|t| &t.tok), Some(Tok::Op(o)) if o == "=");
            if keyword {
                let k = self.ident()?;
                self.i += 1;
                kwargs.push((k, self.expr()?));
            } else {
                if self.eat_op("**") || self.eat_op("*") {
                    self.expr()?;
                    args.push(Expr::Other);
                } else {
                    args.push(self.expr()?);
                }
            }
            if !self.eat_op(",") {
                self.expect_op(")")?;
                break;
            }
        }
        Ok((args, kwargs))
    }

    /// Comma-separated expressions up to `close`.
    fn items(&mut self, close: &str) -> Result<Vec<Expr>, String> {
        let mut items = Vec::new();
        while !self.eat_op(close) {
            items.push(self.expr()?);
            if !self.eat_op(",") {
                self.expect_op(close)?;
                break;
            }
        }
        Ok(items)
    }

    fn atom(&mut self) -> Result<Expr, String> {
        let line = self.line();
        let Some(tok) = self.peek().cloned() else {
            return Err(format!("line {line}: the file ends inside an expression"));
        };
        self.i += 1;
        Ok(match tok {
            Tok::Name(n) => Expr::Name(n),
            Tok::Number(n) => Expr::Num(n),
            Tok::Str { value, formatted } => {
                let mut text = value;
                let mut any_formatted = formatted;
                // Adjacent literals are one string.
                while let Some(Tok::Str { value, formatted }) = self.peek() {
                    text.push_str(value);
                    any_formatted |= *formatted;
                    self.i += 1;
                }
                if any_formatted {
                    Expr::FStr
                } else {
                    Expr::Str(text)
                }
            }
            Tok::Op(o) if o == "(" => {
                let items = self.items(")")?;
                let single = !matches!(&self.t[self.i - 2].tok, Tok::Op(o) if o == ",");
                match items.len() {
                    1 if single => items.into_iter().next().expect("one item"),
                    _ => Expr::Tuple(items),
                }
            }
            Tok::Op(o) if o == "[" => Expr::List(self.items("]")?),
            Tok::Op(o) if o == "{" => {
                let mut entries = Vec::new();
                while !self.eat_op("}") {
                    let k = self.expr()?;
                    if !self.eat_op(":") {
                        // A set or a comprehension.
                        self.skip_to_close();
                        return Ok(Expr::Other);
                    }
                    entries.push((k, self.expr()?));
                    if !self.eat_op(",") {
                        self.expect_op("}")?;
                        break;
                    }
                }
                Expr::Dict(entries)
            }
            Tok::Op(o) if o == "..." => Expr::Other,
            Tok::Op(o) => return Err(format!("line {line}: unexpected `{o}` in an expression")),
            Tok::Newline | Tok::Indent | Tok::Dedent => {
                return Err(format!(
                    "line {line}: the line ends inside an expression (a half-written line?)"
                ));
            }
        })
    }
}

fn is_classvar(annotation: &Expr) -> bool {
    let base = match annotation {
        Expr::Subscript { value, .. } => value.as_ref(),
        other => other,
    };
    matches!(
        base.name(),
        Some("ClassVar" | "typing.ClassVar" | "KW_ONLY" | "dataclasses.KW_ONLY")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_fields_and_imports() {
        let src = r#"
from typing import Optional, Dict
from .sub import (A as B,
   C)
import os.path

K = {"a": 1, "b": [True, None]}

@dataclass
class X(Base, metaclass=M):
    """doc"""
    a: int = 1
    b: Optional[Dict[str, Any]] = None
    c: "Y" = field(default_factory=lambda: Y(k=-2.5))
    d: list = field(default_factory=list)
    e: ClassVar[int] = 3
    f: int | None = x if y else z

    def m(self):
        a: int = 2
        return a

@register_advantage_estimator("no_op")
def f(): pass
AdvantageEstimatorRegistry.register("simple", g)
"#;
        let m = parse_module(src).unwrap();
        assert_eq!(m.imports.len(), 5);
        assert_eq!(m.imports[2].local, "B");
        assert_eq!(m.imports[2].level, 1);
        assert!(matches!(m.constant("K"), Some(Expr::Dict(d)) if d.len() == 2));
        let x = m.class("X").unwrap();
        assert!(x.is_dataclass());
        assert_eq!(x.bases, [Expr::Name("Base".into())]);
        let names: Vec<&str> = x.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c", "d", "f"]);
        assert_eq!(x.fields[4].default, Some(Expr::Other));
        assert!(
            matches!(&x.fields[2].default, Some(Expr::Call { kwargs, .. })
            if matches!(&kwargs[0].1, Expr::Lambda(_)))
        );
        assert_eq!(
            m.registered,
            [
                ("advantage_estimator".to_owned(), "no_op".to_owned()),
                ("advantage_estimator".to_owned(), "simple".to_owned())
            ]
        );
    }
}
