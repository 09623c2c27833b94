//! Number, size and duration formats: one definition each, for every table and message.

/// What a table cell shows for a value the run has not logged.
pub const MISSING: &str = "-";

/// How many digits [`number`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Digits {
    /// This many significant digits, trailing zeros dropped (`0.62`, `12.4`, `1234`): numbers in
    /// sentences, and cells that are read one at a time.
    Sig(usize),
    /// This many significant digits, trailing zeros kept (`0.500`, `0.0300`): cells that compare
    /// runs, where the zeros say how precise every value is.
    SigKept(usize),
    /// This many decimals (`41.2`, `0.2500`): a column of one metric, its points aligned.
    Decimals(usize),
}

/// `v` with `digits`. Common to every kind of digits: non-finite values are `NaN`, `inf` and
/// `-inf`; no digit left of the point is dropped (`1234` with 3 significant digits); a rounding
/// that adds a digit keeps the count (`9.996` is `10.0`, not `10.00`); and a value of 1e6 or more,
/// or a non-zero one too small to show (below 1e-3 with significant digits, rounding to zero
/// with decimals), is written in scientific notation (`3.20e-5`, `1.23e6`; `3.2e-5` with
/// [`Digits::Sig`], which drops trailing zeros there too). Zero is `0` with significant digits.
pub fn number(v: f64, digits: Digits) -> String {
    if v.is_nan() {
        return "NaN".to_owned();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.to_owned();
    }
    let a = v.abs();
    let (sig, trim) = match digits {
        Digits::Decimals(decimals) => {
            let hidden = a != 0.0 && a < 0.5 * 10f64.powi(-(decimals as i32));
            return if hidden || a >= 1e6 {
                format!("{v:.2e}")
            } else {
                format!("{v:.decimals$}")
            };
        }
        Digits::Sig(n) => (n.max(1), true),
        Digits::SigKept(n) => (n.max(1), false),
    };
    if v == 0.0 {
        return "0".to_owned();
    }
    if !(1e-3..1e6).contains(&a) {
        let s = format!("{v:.*e}", sig - 1);
        match s.split_once('e') {
            Some((mantissa, exp)) if trim => format!("{}e{exp}", trim_zeros(mantissa)),
            _ => s,
        }
    } else {
        let decimals = |x: f64| (sig as i32 - 1 - x.abs().log10().floor() as i32).max(0) as usize;
        // 9.996 to 3 digits is 10.00 at first: the decimals of the rounded value are the right ones.
        let rounded: f64 = format!("{v:.*}", decimals(v)).parse().unwrap_or(v);
        let s = format!("{rounded:.*}", decimals(rounded));
        if trim { trim_zeros(&s).to_owned() } else { s }
    }
}

/// [`number`] of a value that may be missing: [`MISSING`] then.
pub fn cell(v: Option<f64>, digits: Digits) -> String {
    v.map_or_else(|| MISSING.to_owned(), |v| number(v, digits))
}

/// `62%`: a fraction as a whole percentage.
pub fn percent(fraction: f64) -> String {
    format!("{:.0}%", 100.0 * fraction)
}

/// `+12%`, `-3%`, `0%`: a relative change as a signed whole percentage (a change that rounds to
/// none is `0%`, never `-0%`).
pub fn change(fraction: f64) -> String {
    let p = (100.0 * fraction).round();
    if p == 0.0 {
        "0%".to_owned()
    } else {
        format!("{p:+.0}%")
    }
}

/// `45s`, `12m05s`, `4h27m`, `2d03h`: the two largest units, negative times as `0s`.
pub fn duration(secs: f64) -> String {
    let s = secs.max(0.0).round() as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        3600..86400 => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
        _ => format!("{}d{:02}h", s / 86400, (s % 86400) / 3600),
    }
}

/// The inverse of [`duration`] for what a person types: `90s`, `10m`, `2h`, `1d`, `500ms`, a
/// sum of them (`1h30m`), or bare seconds (`90`). The error says what is accepted.
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let bad = || {
        format!(
            "`{}` is not a duration: write e.g. 90s, 10m, 2h, 1h30m or 500ms",
            crate::error::clip(text)
        )
    };
    let text = text.trim();
    if let Ok(secs) = text.parse::<u64>() {
        return Ok(std::time::Duration::from_secs(secs));
    }
    let (mut ms, mut rest) = (0u64, text);
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
        let n: u64 = rest[..digits].parse().map_err(|_| bad())?;
        let unit_end =
            (rest[digits..].find(|c: char| c.is_ascii_digit())).map_or(rest.len(), |i| digits + i);
        let scale = match &rest[digits..unit_end] {
            "ms" => 1,
            "s" => 1000,
            "m" => 60_000,
            "h" => 3_600_000,
            "d" => 86_400_000,
            _ => return Err(bad()),
        };
        ms = n
            .checked_mul(scale)
            .and_then(|v| ms.checked_add(v))
            .ok_or_else(bad)?;
        rest = &rest[unit_end..];
    }
    match text.is_empty() {
        true => Err(bad()),
        false => Ok(std::time::Duration::from_millis(ms)),
    }
}

/// `512 B`, `1.5 GiB`: binary units, one decimal.
pub fn human(bytes: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < units.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{} {}", number(value, Digits::Decimals(1)), units[unit])
    }
}

/// `s` without the zeros after its point, nor the point then left alone.
fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Digits::*;

    #[test]
    fn significant_digits_in_sentences_drop_trailing_zeros() {
        let cases = [
            (0.62, 3, "0.62"),
            (0.0645, 2, "0.065"),
            (12.4, 3, "12.4"),
            (1234.0, 3, "1234"),
            (0.5, 3, "0.5"),
            (9.996, 3, "10"),
            (0.0, 3, "0"),
            (0.00001234, 3, "1.23e-5"),
            (0.00001, 3, "1e-5"),
            (2_500_000.0, 3, "2.5e6"),
            (f64::NAN, 3, "NaN"),
            (f64::NEG_INFINITY, 3, "-inf"),
            (-0.25, 2, "-0.25"),
        ];
        for (v, n, want) in cases {
            assert_eq!(number(v, Sig(n)), want, "{v}");
        }
    }

    #[test]
    fn significant_digits_in_tables_keep_trailing_zeros() {
        let cases = [
            (0.0, "0"),
            (0.5, "0.500"),
            (0.71249, "0.712"),
            (0.03, "0.0300"),
            (9.996, "10.0"),
            (41.25, "41.2"),
            (99.96, "100"),
            (1234.4, "1234"),
            (-0.4, "-0.400"),
            (0.000032, "3.20e-5"),
            (f64::INFINITY, "inf"),
        ];
        for (v, want) in cases {
            assert_eq!(number(v, SigKept(3)), want, "{v}");
        }
    }

    #[test]
    fn decimals_turn_scientific_only_when_the_value_would_not_show() {
        let cases = [
            (41.25, 1, "41.2"),
            (0.25, 3, "0.250"),
            (0.0, 3, "0.000"),
            (0.00012, 4, "0.0001"),
            (0.0000004, 3, "4.00e-7"),
            (-0.6, 3, "-0.600"),
            (1_234_567.0, 1, "1.23e6"),
            (f64::NAN, 3, "NaN"),
        ];
        for (v, d, want) in cases {
            assert_eq!(number(v, Decimals(d)), want, "{v}");
        }
    }

    #[test]
    fn a_missing_value_is_a_dash() {
        assert_eq!(cell(None, SigKept(3)), "-");
        assert_eq!(cell(Some(0.5), SigKept(3)), "0.500");
    }

    #[test]
    fn changes_are_signed_whole_percentages() {
        let cases = [
            (0.12, "+12%"),
            (-0.034, "-3%"),
            (-0.004, "0%"),
            (0.0, "0%"),
            (1.5, "+150%"),
        ];
        for (f, want) in cases {
            assert_eq!(change(f), want, "{f}");
        }
    }

    #[test]
    fn typed_durations_read_back() {
        let ms = |t: &str| parse_duration(t).map(|d| d.as_millis());
        assert_eq!(ms("90s"), Ok(90_000));
        assert_eq!(ms("10m"), Ok(600_000));
        assert_eq!(ms("2h"), Ok(7_200_000));
        assert_eq!(ms("1h30m"), Ok(5_400_000));
        assert_eq!(ms("250ms"), Ok(250));
        assert_eq!(ms("45"), Ok(45_000));
        for bad in [
            "",
            "m",
            "10x",
            "1.5h",
            "-3s",
            "s10",
            "99999999999999999999d",
        ] {
            assert!(ms(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn durations_read_naturally() {
        let cases = [
            (0.0, "0s"),
            (59.4, "59s"),
            (61.0, "1m01s"),
            (3599.0, "59m59s"),
            (3600.0, "1h00m"),
            (16020.0, "4h27m"),
            (183600.0, "2d03h"),
            (-5.0, "0s"),
        ];
        for (secs, want) in cases {
            assert_eq!(duration(secs), want, "{secs}");
        }
    }

    #[test]
    fn sizes_in_binary_units() {
        assert_eq!(human(512), "512 B");
        assert_eq!(human(1536), "1.5 KiB");
        assert_eq!(human(3 << 30), "3.0 GiB");
    }
}
