//! Shell quoting: every value rlctl writes into a script arrives as exactly one word.

pub use rlctl_grammar::text::sh;

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
