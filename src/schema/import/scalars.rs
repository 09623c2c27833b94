//! Plain YAML scalars typed as OmegaConf's loader types them: PyYAML's YAML 1.1 implicit
//! resolvers, OmegaConf's own float resolver, and no timestamps.

use super::Y;

/// A plain scalar typed by PyYAML's YAML 1.1 resolvers, with OmegaConf's float rule and no
/// timestamps.
pub(super) fn resolve_plain(text: &str) -> Result<Y, String> {
    if text == "=" {
        // PyYAML types a plain `=` as `tag:yaml.org,2002:value`, which nothing constructs.
        return Err("a bare `=` is not a value to PyYAML (\"could not determine a constructor for the tag 'tag:yaml.org,2002:value'\"); quote it: '='".to_owned());
    }
    Ok(resolve_plain_value(text))
}

fn resolve_plain_value(text: &str) -> Y {
    if matches!(text, "" | "~" | "null" | "Null" | "NULL") {
        return Y::Null;
    }
    match text {
        "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return Y::Bool(true);
        }
        "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return Y::Bool(false);
        }
        _ => {}
    }
    let b = text.as_bytes();
    if is_yaml_int(b)
        && let Some(y) = construct_int(text)
    {
        return y;
    }
    if is_yaml_float(b)
        && let Some(y) = construct_float(text)
    {
        return y;
    }
    Y::Str(text.to_owned())
}

/// A cursor for the resolvers' patterns, which need no backtracking.
struct Cur<'a> {
    b: &'a [u8],
    i: usize,
}

impl Cur<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }
    fn eat(&mut self, pred: impl Fn(u8) -> bool) -> bool {
        match self.peek() {
            Some(c) if pred(c) => {
                self.i += 1;
                true
            }
            _ => false,
        }
    }
    fn many(&mut self, pred: impl Fn(u8) -> bool) -> usize {
        let start = self.i;
        while self.eat(&pred) {}
        self.i - start
    }
    fn lit(&mut self, s: &str) -> bool {
        if self.b[self.i..].starts_with(s.as_bytes()) {
            self.i += s.len();
            true
        } else {
            false
        }
    }
    fn sign(&mut self) {
        self.eat(|c| c == b'-' || c == b'+');
    }
    fn end(&self) -> bool {
        self.i == self.b.len()
    }
    /// `[0-9]+(?:_[0-9]+)*`
    fn grouped_digits(&mut self) -> bool {
        if self.many(|c| c.is_ascii_digit()) == 0 {
            return false;
        }
        while self.peek() == Some(b'_') && self.b.get(self.i + 1).is_some_and(u8::is_ascii_digit) {
            self.i += 1;
            self.many(|c| c.is_ascii_digit());
        }
        true
    }
    /// `(?::[0-5]?[0-9])+`
    fn sexagesimal(&mut self) -> bool {
        let mut n = 0;
        while self.peek() == Some(b':') {
            let c1 = self.b.get(self.i + 1).copied();
            let c2 = self.b.get(self.i + 2).copied();
            match (c1, c2) {
                (Some(a), Some(d)) if (b'0'..=b'5').contains(&a) && d.is_ascii_digit() => {
                    self.i += 3
                }
                (Some(a), _) if a.is_ascii_digit() => self.i += 2,
                _ => break,
            }
            n += 1;
        }
        n > 0
    }
    /// `[eE]` + sign (required or optional) + `[0-9]+`, all optional.
    fn exponent(&mut self, sign_required: bool) -> bool {
        let save = self.i;
        if !self.eat(|c| c == b'e' || c == b'E') {
            return true;
        }
        let signed = self.eat(|c| c == b'-' || c == b'+');
        if (sign_required && !signed) || self.many(|c| c.is_ascii_digit()) == 0 {
            self.i = save;
            return false;
        }
        true
    }
}

fn pattern(b: &[u8], f: impl FnOnce(&mut Cur) -> bool) -> bool {
    let mut c = Cur { b, i: 0 };
    f(&mut c) && c.end()
}

fn digit_or_underscore(c: u8) -> bool {
    c.is_ascii_digit() || c == b'_'
}

fn is_yaml_int(b: &[u8]) -> bool {
    let bin = |c: &mut Cur| {
        c.sign();
        c.lit("0b") && c.many(|x| x == b'0' || x == b'1' || x == b'_') > 0
    };
    let oct = |c: &mut Cur| {
        c.sign();
        c.lit("0") && c.many(|x| (b'0'..=b'7').contains(&x) || x == b'_') > 0
    };
    let dec = |c: &mut Cur| {
        c.sign();
        c.lit("0")
            || (c.eat(|x| (b'1'..=b'9').contains(&x)) && c.many(digit_or_underscore) < usize::MAX)
    };
    let hex = |c: &mut Cur| {
        c.sign();
        c.lit("0x") && c.many(|x| x.is_ascii_hexdigit() || x == b'_') > 0
    };
    let sexa = |c: &mut Cur| {
        c.sign();
        c.eat(|x| (b'1'..=b'9').contains(&x)) && {
            c.many(digit_or_underscore);
            c.sexagesimal()
        }
    };
    pattern(b, bin) || pattern(b, oct) || pattern(b, dec) || pattern(b, hex) || pattern(b, sexa)
}

fn is_yaml_float(b: &[u8]) -> bool {
    // PyYAML's YAML 1.1 float.
    let f1 = |c: &mut Cur| {
        c.sign();
        c.eat(|x| x.is_ascii_digit())
            && {
                c.many(digit_or_underscore);
                c.lit(".")
            }
            && {
                c.many(digit_or_underscore);
                c.exponent(true)
            }
    };
    let f2 = |c: &mut Cur| {
        c.lit(".") && c.eat(|x| x.is_ascii_digit()) && {
            c.many(digit_or_underscore);
            c.exponent(true)
        }
    };
    let f3 = |c: &mut Cur| {
        c.sign();
        c.eat(|x| x.is_ascii_digit())
            && {
                c.many(digit_or_underscore);
                c.sexagesimal()
            }
            && c.lit(".")
            && {
                c.many(digit_or_underscore);
                true
            }
    };
    let inf = |c: &mut Cur| {
        c.sign();
        c.lit(".") && (c.lit("inf") || c.lit("Inf") || c.lit("INF"))
    };
    let nan = |c: &mut Cur| c.lit(".") && (c.lit("nan") || c.lit("NaN") || c.lit("NAN"));
    // OmegaConf's additions: `1e-2`, `1.0e5`.
    let g1 = |c: &mut Cur| {
        c.sign();
        c.grouped_digits() && c.lit(".") && {
            c.many(digit_or_underscore);
            c.exponent(false)
        }
    };
    let g2 = |c: &mut Cur| {
        c.sign();
        c.grouped_digits() && c.eat(|x| x == b'e' || x == b'E') && {
            c.eat(|x| x == b'-' || x == b'+');
            c.many(|x| x.is_ascii_digit()) > 0
        }
    };
    let g3 = |c: &mut Cur| c.lit(".") && c.grouped_digits() && c.exponent(true);
    let g4 = |c: &mut Cur| {
        c.sign();
        c.grouped_digits() && c.sexagesimal() && c.lit(".") && {
            c.many(digit_or_underscore);
            true
        }
    };
    pattern(b, f1)
        || pattern(b, f2)
        || pattern(b, f3)
        || pattern(b, inf)
        || pattern(b, nan)
        || pattern(b, g1)
        || pattern(b, g2)
        || pattern(b, g3)
        || pattern(b, g4)
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
    }
}
