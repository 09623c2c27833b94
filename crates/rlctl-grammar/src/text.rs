//! Text as messages and scripts show it: one shell word, hydra's double-quoted string, and a
//! user's input clipped to a readable length. rlctl re-exports these, so each rule has one home.

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

/// A double-quoted hydra string: quotes escaped, and backslashes doubled only where they
/// precede a quote (hydra's rule; elsewhere a backslash is literal). Double quotes keep the
/// shell word around the whole override free of `'\''` splices.
pub fn hydra_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    let mut backslashes = 0;
    for c in s.chars() {
        match c {
            '\\' => backslashes += 1,
            '"' => {
                out.extend(std::iter::repeat_n('\\', backslashes * 2 + 1));
                out.push('"');
                backslashes = 0;
            }
            c => {
                out.extend(std::iter::repeat_n('\\', backslashes));
                out.push(c);
                backslashes = 0;
            }
        }
    }
    out.extend(std::iter::repeat_n('\\', backslashes * 2));
    out.push('"');
    out
}

/// How many characters of a user's input a message echoes.
pub const ECHO_CHARS: usize = 200;

/// User input as a message echoes it: whole when short, else its first [`ECHO_CHARS`]
/// characters and its size (`abc… (1048576 bytes)`), so a megabyte override or name gives a
/// message one can read, never a megabyte of stderr.
pub fn clip(input: &str) -> std::borrow::Cow<'_, str> {
    match input.char_indices().nth(ECHO_CHARS) {
        None => input.into(),
        Some((end, _)) => format!("{}… ({} bytes)", &input[..end], input.len()).into(),
    }
}
