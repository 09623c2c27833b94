//! Plain YAML scalars typed as OmegaConf's loader types them: PyYAML's YAML 1.1 implicit
//! resolvers, OmegaConf's own float resolver, and no timestamps.

use super::Y;
use regex::Regex;
use std::sync::LazyLock;

/// A plain scalar typed by PyYAML's YAML 1.1 resolvers, with OmegaConf's float rule and no
/// timestamps.
pub(super) fn resolve_plain(text: &str) -> Result<Y, String> {
    if text == "=" {
        // PyYAML types a plain `=` as `tag:yaml.org,2002:value`, which nothing constructs.
        return Err("a bare `=` is not a value to PyYAML (\"could not determine a constructor for the tag 'tag:yaml.org,2002:value'\"); quote it: '='".to_owned());
    }
    if text == "<<" {
        // PyYAML types a plain `<<` as a merge key, which only a mapping's key can be.
        return Err("a bare `<<` is a YAML merge key, not a value (\"could not determine a constructor for the tag 'tag:yaml.org,2002:merge'\"); quote it: '<<'".to_owned());
    }
    Ok(resolve_plain_value(text))
}

fn resolve_plain_value(text: &str) -> Y {
    if NULL.is_match(text) {
        return Y::Null;
    }
    if BOOL.is_match(text)
        && let Some(b) = construct_bool(text)
    {
        return Y::Bool(b);
    }
    // Where construction fails (`0b_`, which PyYAML refuses; an integer past i128, which Python
    // holds), the scalar is kept as a string rather than refused.
    if INT.is_match(text)
        && let Some(y) = construct_int(text)
    {
        return y;
    }
    if (FLOAT.is_match(text) || OMEGACONF_FLOAT.is_match(text))
        && let Some(y) = construct_float(text)
    {
        return y;
    }
    Y::Str(text.to_owned())
}

// The implicit resolvers' patterns, copied as written (verbose mode, as Python's `re.X`). Where
// Python's `$` also matches before a final newline, Rust's matches only at the end: the same
// for plain scalars, which never end in a newline. The patterns do not overlap, so the order
// in which PyYAML tries them does not matter.

/// PyYAML's `tag:yaml.org,2002:null` resolver (yaml/resolver.py); its empty alternative is the
/// empty scalar (`key:` with no value).
static NULL: LazyLock<Regex> = LazyLock::new(|| {
    resolver(
        r"^(?: ~
            |null|Null|NULL
            | )$",
    )
});

/// PyYAML's `tag:yaml.org,2002:bool` resolver (yaml/resolver.py): YAML 1.1's yes/no, on/off.
static BOOL: LazyLock<Regex> = LazyLock::new(|| {
    resolver(
        r"^(?:yes|Yes|YES|no|No|NO
            |true|True|TRUE|false|False|FALSE
            |on|On|ON|off|Off|OFF)$",
    )
});

/// PyYAML's `tag:yaml.org,2002:int` resolver (yaml/resolver.py): binary, octal (a leading
/// `0`), decimal, hexadecimal and base 60 (`1:30`).
static INT: LazyLock<Regex> = LazyLock::new(|| {
    resolver(
        r"^(?:[-+]?0b[0-1_]+
            |[-+]?0[0-7_]+
            |[-+]?(?:0|[1-9][0-9_]*)
            |[-+]?0x[0-9a-fA-F_]+
            |[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$",
    )
});

/// PyYAML's `tag:yaml.org,2002:float` resolver (yaml/resolver.py): a float needs a `.`, and an
/// exponent its sign.
static FLOAT: LazyLock<Regex> = LazyLock::new(|| {
    resolver(
        r"^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
            |\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
            |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
            |[-+]?\.(?:inf|Inf|INF)
            |\.(?:nan|NaN|NAN))$",
    )
});

/// The float resolver OmegaConf's loader adds after PyYAML's (omegaconf/_utils.py,
/// `get_yaml_loader`): `1e-2` and `1.0e5` are floats too.
static OMEGACONF_FLOAT: LazyLock<Regex> = LazyLock::new(|| {
    resolver(
        r"^(?:
             [-+]?[0-9]+(?:_[0-9]+)*\.[0-9_]*(?:[eE][-+]?[0-9]+)?
            |[-+]?[0-9]+(?:_[0-9]+)*(?:[eE][-+]?[0-9]+)
            |\.[0-9]+(?:_[0-9]+)*(?:[eE][-+][0-9]+)?
            |[-+]?[0-9]+(?:_[0-9]+)*(?::[0-5]?[0-9])+\.[0-9_]*
            |[-+]?\.(?:inf|Inf|INF)
            |\.(?:nan|NaN|NAN))$",
    )
});

fn resolver(pattern: &str) -> Regex {
    Regex::new(&format!("(?x){pattern}")).expect("a resolver's pattern compiles")
}

/// PyYAML's `construct_yaml_bool`.
pub(super) fn construct_bool(text: &str) -> Option<bool> {
    match text.to_ascii_lowercase().as_str() {
        "yes" | "true" | "on" => Some(true),
        "no" | "false" | "off" => Some(false),
        _ => None,
    }
}

/// PyYAML's `construct_yaml_int`.
pub(super) fn construct_int(text: &str) -> Option<Y> {
    let value = text.replace('_', "");
    let (sign, value) = match value.as_bytes().first()? {
        b'-' => (-1, &value[1..]),
        b'+' => (1, &value[1..]),
        _ => (1, value.as_str()),
    };
    let n: i128 = if value == "0" {
        0
    } else if let Some(bin) = value.strip_prefix("0b") {
        i128::from_str_radix(bin, 2).ok()?
    } else if let Some(hex) = value.strip_prefix("0x") {
        i128::from_str_radix(hex, 16).ok()?
    } else if value.starts_with('0') {
        i128::from_str_radix(value, 8).ok()?
    } else if value.contains(':') {
        value.split(':').try_fold(0i128, |acc, part| {
            acc.checked_mul(60)?.checked_add(part.parse::<i128>().ok()?)
        })?
    } else {
        value.parse().ok()?
    };
    Some(Y::Int(sign * n))
}

/// PyYAML's `construct_yaml_float`.
pub(super) fn construct_float(text: &str) -> Option<Y> {
    let value = text.replace('_', "").to_ascii_lowercase();
    let (sign, value) = match value.as_bytes().first()? {
        b'-' => (-1.0, &value[1..]),
        b'+' => (1.0, &value[1..]),
        _ => (1.0, value.as_str()),
    };
    let x = if value == ".inf" {
        f64::INFINITY
    } else if value == ".nan" {
        return Some(Y::Float(f64::NAN));
    } else if value.contains(':') {
        value.split(':').try_fold(0.0f64, |acc, part| {
            Some(acc * 60.0 + part.parse::<f64>().ok()?)
        })?
    } else {
        value.parse::<f64>().ok()?
    };
    Some(Y::Float(sign * x))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(t: &str) -> Y {
        resolve_plain(t).unwrap()
    }

    #[test]
    fn plain_scalars_follow_omegaconf() {
        assert_eq!(plain("1e-2"), Y::Float(0.01));
        assert_eq!(plain("1.0e-6"), Y::Float(1e-6));
        assert_eq!(plain("1.0e+6"), Y::Float(1e6));
        assert_eq!(plain("1e5"), Y::Float(1e5));
        assert_eq!(plain(".5"), Y::Float(0.5));
        assert_eq!(plain("1."), Y::Float(1.0));
        assert_eq!(plain("1_000"), Y::Int(1000));
        assert_eq!(plain("010"), Y::Int(8));
        assert_eq!(plain("08"), Y::Str("08".into()));
        assert_eq!(plain("0x1F"), Y::Int(31));
        assert_eq!(plain("1:30"), Y::Int(90));
        assert_eq!(plain("-1"), Y::Int(-1));
        assert_eq!(plain("yes"), Y::Bool(true));
        assert_eq!(plain("Off"), Y::Bool(false));
        assert_eq!(plain("~"), Y::Null);
        assert_eq!(plain(".inf"), Y::Float(f64::INFINITY));
        assert_eq!(plain("2024-01-01"), Y::Str("2024-01-01".into()));
        assert_eq!(plain("fsdp2"), Y::Str("fsdp2".into()));
        assert_eq!(plain("1e"), Y::Str("1e".into()));
        assert_eq!(plain("1_"), Y::Int(1));
        assert_eq!(plain(""), Y::Null);
        assert_eq!(plain("NULL"), Y::Null);
        assert_eq!(plain("nULL"), Y::Str("nULL".into()));
        assert_eq!(plain("ON"), Y::Bool(true));
        assert_eq!(plain("yEs"), Y::Str("yEs".into()));
        assert_eq!(plain("1__2.5"), Y::Float(12.5));
        assert_eq!(plain("+.5"), Y::Str("+.5".into()));
    }
}
