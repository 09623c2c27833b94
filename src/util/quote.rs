//! Shell quoting: every value rlctl writes into a script arrives as exactly one word.

/// `s` as one POSIX shell word: bare when it holds only characters the shell never treats
/// specially, single-quoted otherwise.
pub fn sh(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./:=@%+,-".contains(c))
        && !s.starts_with('=');
    if plain {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// A command line as one shell line.
pub fn sh_join<S: AsRef<str>>(words: &[S]) -> String {
    words
        .iter()
        .map(|w| sh(w.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_when_needed() {
        assert_eq!(sh("/leonardo_work/x"), "/leonardo_work/x");
        assert_eq!(sh("a b"), "'a b'");
        assert_eq!(sh("it's"), r"'it'\''s'");
        assert_eq!(sh(""), "''");
        assert_eq!(sh("$(rm -rf /)"), "'$(rm -rf /)'");
    }
}
