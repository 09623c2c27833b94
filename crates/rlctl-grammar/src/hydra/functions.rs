//! hydra's grammar functions (hydra/_internal/grammar/grammar_functions.py): how each binds
//! its arguments, which types it takes, what it refuses and what it returns. Sweeps are only
//! told apart from plain values: outside --multirun hydra refuses every one of them.

use super::element::{Element, Sweep, number};
use super::python::{to_bool, to_float, to_int};

/// A Python exception: its type's name and its message.
#[derive(Debug, Clone, PartialEq)]
pub struct PyErr {
    pub kind: &'static str,
    pub message: String,
}

fn err<T>(kind: &'static str, message: impl Into<String>) -> Result<T, PyErr> {
    Err(PyErr {
        kind,
        message: message.into(),
    })
}

/// The Python classes an argument may be checked against (`is_type_matching`).
#[derive(Clone, Copy, PartialEq)]
enum Class {
    Str,
    Int,
    Float,
    Bool,
    List,
    Dict,
    None,
    Choice,
    Range,
    Sweep,
}

use Class as C;

/// `isinstance(value, classes)`: bool is an int, every sweep a Sweep.
fn isinstance(value: &Element, classes: &[Class]) -> bool {
    classes.iter().any(|&c| {
        matches!(
            (value, c),
            (Element::Str(_), C::Str)
                | (Element::Float(_), C::Float)
                | (Element::Int(_) | Element::Bool(_), C::Int)
                | (Element::Bool(_), C::Bool)
                | (Element::List(_), C::List)
                | (Element::Dict(_), C::Dict)
                | (Element::Null, C::None)
                | (Element::Sweep(Sweep::Choice { .. }), C::Choice)
                | (Element::Sweep(Sweep::Range), C::Range)
                | (Element::Sweep(_), C::Sweep)
        )
    })
}

/// A parameter: its name, the classes its annotation allows, and whether it must be given.
/// `exact` is a lone primitive annotation (`type(v) is bool`).
struct Param {
    name: &'static str,
    classes: &'static [Class],
    required: bool,
    exact: bool,
}

const fn p(name: &'static str, classes: &'static [Class], required: bool) -> Param {
    Param {
        name,
        classes,
        required,
        exact: false,
    }
}

struct Signature {
    /// Parameters before `*args` (or all of them, when there is none).
    positional: &'static [Param],
    /// `*args` and the classes each of its items must be.
    var: Option<&'static [Class]>,
    keyword_only: &'static [Param],
}

const CAST: &[Class] = &[
    C::Str,
    C::Int,
    C::Float,
    C::Bool,
    C::List,
    C::Dict,
    C::None,
    C::Sweep,
];
const NUMBER: &[Class] = &[C::Int, C::Float];
const ORDERED: &[Class] = &[
    C::Str,
    C::Int,
    C::Bool,
    C::Float,
    C::List,
    C::Dict,
    C::Choice,
    C::Range,
];

const CAST_SIG: Signature = Signature {
    positional: &[],
    var: Some(CAST),
    keyword_only: &[p("value", CAST, false)],
};
const SORT_SIG: Signature = Signature {
    positional: &[],
    var: Some(ORDERED),
    keyword_only: &[
        p("sweep", &[C::Choice, C::Range, C::None], false),
        p("list", &[C::List, C::None], false),
        Param {
            name: "reverse",
            classes: &[C::Bool],
            required: false,
            exact: true,
        },
    ],
};
const SHUFFLE_SIG: Signature = Signature {
    positional: &[],
    var: Some(ORDERED),
    keyword_only: &[
        p("sweep", &[C::Choice, C::Range, C::None], false),
        p("list", &[C::List, C::None], false),
    ],
};

const FUNCTIONS: [&str; 11] = [
    "bool", "choice", "float", "glob", "int", "interval", "range", "shuffle", "sort", "str", "tag",
];

const CHOICE_SIG: Signature = Signature {
    positional: &[],
    var: Some(&[
        C::Str,
        C::Int,
        C::Float,
        C::Bool,
        C::Dict,
        C::List,
        C::Choice,
    ]),
    keyword_only: &[],
};
const RANGE_SIG: Signature = Signature {
    positional: &[
        p("start", NUMBER, true),
        p("stop", &[C::Int, C::Float, C::None], false),
        p("step", NUMBER, false),
    ],
    var: None,
    keyword_only: &[],
};
const INTERVAL_SIG: Signature = Signature {
    positional: &[p("start", NUMBER, true), p("end", NUMBER, true)],
    var: None,
    keyword_only: &[],
};
const TAG_SIG: Signature = Signature {
    positional: &[],
    var: Some(&[C::Str, C::Sweep]),
    keyword_only: &[p("sweep", &[C::Sweep, C::None], false)],
};
const GLOB_SIG: Signature = Signature {
    positional: &[
        p("include", &[C::List, C::Str], true),
        p("exclude", &[C::List, C::Str, C::None], false),
    ],
    var: None,
    keyword_only: &[],
};

fn signature(name: &str) -> Option<&'static Signature> {
    Some(match name {
        "int" | "float" | "str" | "bool" => &CAST_SIG,
        "choice" => &CHOICE_SIG,
        "range" => &RANGE_SIG,
        "interval" => &INTERVAL_SIG,
        "tag" => &TAG_SIG,
        "sort" => &SORT_SIG,
        "shuffle" => &SHUFFLE_SIG,
        "glob" => &GLOB_SIG,
        _ => return None,
    })
}

/// `Functions.eval`: binds the arguments as `inspect.Signature.bind` does, checks their types,
/// and runs the function.
pub fn call(
    name: &str,
    args: Vec<Element>,
    kwargs: Vec<(String, Element)>,
) -> Result<Element, PyErr> {
    let Some(sig) = signature(name) else {
        return err(
            "HydraException",
            format!(
                "Unknown function '{name}'\nAvailable: {}",
                FUNCTIONS.join(",")
            ),
        );
    };
    let bound = bind(sig, args, kwargs)?;
    for (param, value) in &bound.named {
        let ok = if param.exact {
            matches!(value, Element::Bool(_))
        } else {
            isinstance(value, param.classes)
        };
        if !ok {
            return err(
                "TypeError",
                format!(
                    "mismatch type argument {}: {} is incompatible with the annotation",
                    param.name,
                    value.type_name()
                ),
            );
        }
    }
    if let Some(classes) = sig.var {
        for (i, value) in bound.var.iter().enumerate() {
            if !isinstance(value, classes) {
                return err(
                    "TypeError",
                    format!(
                        "mismatch type argument args[{i}]: {} is incompatible with the annotation",
                        value.type_name()
                    ),
                );
            }
        }
    }
    let kw = |n: &str| {
        bound
            .named
            .iter()
            .find(|(p, _)| p.name == n)
            .map(|(_, v)| v)
    };
    match name {
        "int" | "float" | "str" | "bool" => {
            let value = normalize_cast(bound.var, kw("value").cloned())?;
            cast(name, value)
        }
        "choice" => match bound.var.as_slice() {
            [] => err("ValueError", "empty choice is not legal"),
            [Element::Sweep(Sweep::Choice { simple: false })] => {
                err("ValueError", "nesting choices is not supported")
            }
            _ => Ok(Element::Sweep(Sweep::Choice { simple: false })),
        },
        "range" => Ok(Element::Sweep(Sweep::Range)),
        "interval" => {
            for v in [kw("start"), kw("end")].into_iter().flatten() {
                to_float(v)?;
            }
            Ok(Element::Sweep(Sweep::Interval))
        }
        "tag" => tag(bound.var, kw("sweep").cloned()),
        "sort" => sort(bound.var, kw("sweep"), kw("list"), kw("reverse")),
        "shuffle" => shuffle(bound.var, kw("sweep"), kw("list")),
        "glob" => Ok(glob(kw("include"), kw("exclude"))),
        _ => unreachable!("every function has a signature"),
    }
}

struct Bound {
    named: Vec<(&'static Param, Element)>,
    var: Vec<Element>,
}

fn bind(
    sig: &'static Signature,
    args: Vec<Element>,
    kwargs: Vec<(String, Element)>,
) -> Result<Bound, PyErr> {
    let mut named: Vec<(&'static Param, Element)> = Vec::new();
    let mut var = Vec::new();
    let mut params = sig.positional.iter();
    for value in args {
        match params.next() {
            Some(param) => named.push((param, value)),
            None if sig.var.is_some() => var.push(value),
            None => return err("TypeError", "too many positional arguments"),
        }
    }
    for (key, value) in kwargs {
        let param = sig
            .positional
            .iter()
            .chain(sig.keyword_only)
            .find(|p| p.name == key);
        let Some(param) = param else {
            return err(
                "TypeError",
                format!("got an unexpected keyword argument '{key}'"),
            );
        };
        if named.iter().any(|(p, _)| p.name == key) {
            return err("TypeError", format!("multiple values for argument '{key}'"));
        }
        named.push((param, value));
    }
    for param in sig.positional.iter().chain(sig.keyword_only) {
        if param.required && !named.iter().any(|(p, _)| p.name == param.name) {
            return err(
                "TypeError",
                format!("missing a required argument: '{}'", param.name),
            );
        }
    }
    Ok(Bound { named, var })
}

/// `_normalize_cast_value`: one value, from `value=` or the only positional argument; more
/// than one is a simple choice sweep.
fn normalize_cast(args: Vec<Element>, value: Option<Element>) -> Result<Element, PyErr> {
    let value = value.filter(|v| *v != Element::Null);
    match (args.len(), value) {
        (n, Some(_)) if n > 0 => err("TypeError", "cannot use both position and named arguments"),
        (_, Some(v)) => Ok(v),
        (0, None) => err("TypeError", "No positional args or value specified"),
        (1, None) => Ok(args.into_iter().next().expect("one argument")),
        (_, None) => {
            if args.iter().any(|a| matches!(a, Element::Sweep(_))) {
                return err("AssertionError", "");
            }
            Ok(Element::Sweep(Sweep::Choice { simple: true }))
        }
    }
}

fn cast(name: &str, value: Element) -> Result<Element, PyErr> {
    match value {
        Element::Dict(pairs) => pairs
            .into_iter()
            .map(|(k, v)| Ok((k, cast(name, v)?)))
            .collect::<Result<_, _>>()
            .map(Element::Dict),
        Element::List(items) => items
            .into_iter()
            .map(|v| cast(name, v))
            .collect::<Result<_, _>>()
            .map(Element::List),
        Element::Sweep(Sweep::Interval) if matches!(name, "str" | "bool") => {
            err("ValueError", format!("Intervals cannot be cast to {name}"))
        }
        Element::Sweep(s) => Ok(Element::Sweep(s)),
        Element::Null if name == "bool" => Ok(Element::Bool(false)),
        Element::Null | Element::Glob { .. } => err("AssertionError", ""),
        v => match name {
            "int" => to_int(&v).map(Element::Int),
            "float" => to_float(&v).map(Element::Float),
            "str" => Ok(Element::Str(match v {
                Element::Bool(b) => b.to_string(),
                other => other.python_str(),
            })),
            _ => to_bool(&v).map(Element::Bool),
        },
    }
}

fn tag(args: Vec<Element>, sweep: Option<Element>) -> Result<Element, PyErr> {
    let mut args = args;
    args.extend(sweep.filter(|s| *s != Element::Null));
    match args.split_last() {
        None => err(
            "ValueError",
            "Not enough arguments to tag, must take at least a sweep",
        ),
        Some((Element::Sweep(s), tags)) => {
            match tags.iter().find(|t| !matches!(t, Element::Str(_))) {
                Some(t) => err(
                    "ValueError",
                    format!("tag arguments type must be string, got {}", t.type_name()),
                ),
                None => Ok(Element::Sweep(*s)),
            }
        }
        Some(_) => err(
            "ValueError",
            "Last argument to tag() must be a choice(), range() or interval(), got NoneType",
        ),
    }
}

fn sort(
    args: Vec<Element>,
    sweep: Option<&Element>,
    list: Option<&Element>,
    reverse: Option<&Element>,
) -> Result<Element, PyErr> {
    if let Some(list) = list.filter(|l| **l != Element::Null) {
        return sort(vec![list.clone()], None, None, reverse);
    }
    if let Some(sweep) = sweep.filter(|s| **s != Element::Null) {
        return Ok(sweep.clone());
    }
    match args.as_slice() {
        [Element::Sweep(s)] => Ok(Element::Sweep(*s)),
        [Element::List(items)] => {
            sorted_check(items)?;
            let mut items = items.clone();
            if reverse == Some(&Element::Bool(true)) {
                items.reverse();
            }
            Ok(Element::List(items))
        }
        [one] => Ok(one.clone()),
        [] => err("ValueError", "empty sort input"),
        many => {
            if many
                .iter()
                .any(|a| !isinstance(a, &[C::Int, C::Float, C::Str]))
            {
                return err("TypeError", "Invalid arguments");
            }
            sorted_check(many)?;
            Ok(Element::Sweep(Sweep::Choice { simple: true }))
        }
    }
}

/// Whether Python's `sorted` can order these: numbers with numbers, strings with strings,
/// lists item by item; None, dicts and other objects with nothing. One item needs no order.
fn sorted_check(items: &[Element]) -> Result<(), PyErr> {
    if items.len() < 2 {
        return Ok(());
    }
    let fail = |a: &Element, b: &Element| {
        err(
            "TypeError",
            format!(
                "'<' not supported between instances of '{}' and '{}'",
                a.type_name(),
                b.type_name()
            ),
        )
    };
    for pair in items.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        match (a, b) {
            (x, y) if number(x).is_some() && number(y).is_some() => {}
            (Element::Str(_), Element::Str(_)) => {}
            (Element::List(x), Element::List(y)) => {
                // Lists compare at their first unequal item.
                if let Some((p, q)) = x.iter().zip(y).find(|(p, q)| p != q) {
                    sorted_check(&[p.clone(), q.clone()])?;
                }
            }
            _ => return fail(a, b),
        }
    }
    Ok(())
}

fn shuffle(
    args: Vec<Element>,
    sweep: Option<&Element>,
    list: Option<&Element>,
) -> Result<Element, PyErr> {
    if let Some(list) = list.filter(|l| **l != Element::Null) {
        return shuffle(vec![list.clone()], None, None);
    }
    if let Some(sweep) = sweep.filter(|s| **s != Element::Null) {
        return Ok(sweep.clone());
    }
    match args.as_slice() {
        [Element::Sweep(s)] => Ok(Element::Sweep(*s)),
        [Element::List(items)] => Ok(Element::List(items.clone())),
        [one] => Ok(Element::List(vec![one.clone()])),
        many => {
            if many.iter().any(|a| matches!(a, Element::Sweep(_))) {
                return err("AssertionError", "");
            }
            Ok(Element::Sweep(Sweep::Choice { simple: true }))
        }
    }
}

fn glob(include: Option<&Element>, exclude: Option<&Element>) -> Element {
    let strings = |v: Option<&Element>| match v {
        Some(Element::List(items)) => items.iter().map(Element::python_str).collect(),
        Some(Element::Str(s)) => vec![s.clone()],
        _ => Vec::new(),
    };
    Element::Glob {
        include: strings(include),
        exclude: strings(exclude),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> Element {
        Element::Str(v.into())
    }

    fn int(v: &str) -> Element {
        Element::Int(v.into())
    }

    #[test]
    fn casts_refuse_what_python_refuses() {
        assert_eq!(call("int", vec![s(" 1_0 ")], vec![]), Ok(int("10")));
        assert_eq!(
            call("int", vec![Element::Float(-2.7)], vec![]),
            Ok(int("-2"))
        );
        assert!(call("int", vec![s("1.5")], vec![]).is_err());
        assert!(call("int", vec![Element::Null], vec![]).is_err());
        assert!(call("int", vec![Element::Float(f64::INFINITY)], vec![]).is_err());
        assert_eq!(
            call("bool", vec![Element::Null], vec![]),
            Ok(Element::Bool(false))
        );
        assert!(call("bool", vec![s("yes")], vec![]).is_err());
        assert_eq!(
            call("float", vec![s("1_0.5e1")], vec![]),
            Ok(Element::Float(105.0))
        );
        assert!(call("float", vec![s("1._5")], vec![]).is_err());
        assert_eq!(
            call("str", vec![Element::Bool(true)], vec![]),
            Ok(s("true"))
        );
        assert!(call("int", vec![], vec![]).is_err());
        assert!(call("int", vec![int("1")], vec![("value".into(), int("2"))]).is_err());
        assert_eq!(
            call("int", vec![int("1"), int("2")], vec![]),
            Ok(Element::Sweep(Sweep::Choice { simple: true }))
        );
    }

    #[test]
    fn signatures_bind_as_python_binds_them() {
        assert!(
            call(
                "range",
                vec![int("1"), int("2"), int("3"), int("4")],
                vec![]
            )
            .is_err()
        );
        assert!(call("range", vec![s("a")], vec![]).is_err());
        assert!(call("range", vec![], vec![("stop".into(), int("2"))]).is_err());
        assert!(call("glob", vec![s("a")], vec![("include".into(), s("b"))]).is_err());
        assert!(call("sort", vec![], vec![("bogus".into(), int("1"))]).is_err());
        assert!(
            call(
                "sort",
                vec![Element::List(vec![])],
                vec![("reverse".into(), int("1"))]
            )
            .is_err()
        );
        assert!(call("nope", vec![], vec![]).is_err());
    }

    #[test]
    fn sort_and_shuffle_keep_lists_and_refuse_unorderable_items() {
        let list = Element::List(vec![int("3"), Element::Float(1.5)]);
        assert!(matches!(
            call("sort", vec![list.clone()], vec![]),
            Ok(Element::List(_))
        ));
        assert!(call("sort", vec![Element::List(vec![int("1"), s("a")])], vec![]).is_err());
        assert!(call("sort", vec![Element::List(vec![Element::Null])], vec![]).is_ok());
        assert!(call("sort", vec![Element::Null], vec![]).is_err());
        assert_eq!(
            call("shuffle", vec![s("a")], vec![]),
            Ok(Element::List(vec![s("a")]))
        );
        assert!(matches!(
            call("shuffle", vec![], vec![]),
            Ok(Element::Sweep(_))
        ));
    }
}
