//! A TOML parse error said in bounded space: the `toml` crate's own rendering echoes the whole
//! line it failed on, and a line of 200 KB (a value pasted whole, a file that is not TOML) made
//! an error of 400 KB. Here the line is cut to an excerpt around the error's column, saying how
//! much was left out on each side, and its control characters are shown escaped.

use std::ops::Range;

/// Characters of the line shown on each side of the error's column.
const AROUND: usize = 60;

/// The most characters of the parser's message shown (a message may quote a value whole).
const MESSAGE: usize = 300;

/// What a parse error of `text` at byte `span` with `message` says, as the `toml` crate says it
/// (`TOML parse error at line L, column C`, the line, a caret, the message), the line and the
/// message cut to a bounded excerpt.
pub fn describe(text: &str, span: Option<Range<usize>>, message: &str) -> String {
    let message = bounded(message.trim_end());
    let Some(span) = span.filter(|s| s.start <= text.len() && text.is_char_boundary(s.start))
    else {
        return message;
    };
    let line_start = text[..span.start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[span.start..]
        .find('\n')
        .map_or(text.len(), |i| span.start + i);
    let line = text[line_start..line_end].trim_end_matches('\r');
    let number = text[..line_start].matches('\n').count() + 1;
    let at = span.start - line_start;
    let column = line[..at.min(line.len())].chars().count() + 1;
    let before: Vec<char> = line[..at.min(line.len())].chars().collect();
    let after: Vec<char> = line[at.min(line.len())..].chars().collect();
    let shown_before = &before[before.len().saturating_sub(AROUND)..];
    let shown_after = &after[..after.len().min(AROUND)];
    let left = |chars: &[char]| chars.iter().collect::<String>().len();
    let (cut_before, cut_after) = (
        left(&before[..before.len() - shown_before.len()]),
        left(&after[shown_after.len()..]),
    );
    let head = escaped(shown_before);
    let tail = escaped(shown_after);
    let width = span.len().clamp(1, tail.chars().count().max(1)).min(AROUND);
    let gutter = " ".repeat(number.to_string().len());
    let mut out = format!("TOML parse error at line {number}, column {column}\n{gutter} |\n");
    out.push_str(&format!(
        "{number} | {}{head}{tail}{}\n",
        if cut_before > 0 { "…" } else { "" },
        if cut_after > 0 { "…" } else { "" },
    ));
    let pad = head.chars().count() + usize::from(cut_before > 0);
    out.push_str(&format!(
        "{gutter} | {}{}\n",
        " ".repeat(pad),
        "^".repeat(width)
    ));
    if cut_before + cut_after > 0 {
        out.push_str(&format!(
            "(line {number} is {} bytes: {cut_before} before and {cut_after} after this excerpt \
             were left out)\n",
            line.len()
        ));
    }
    out.push_str(&message);
    out
}

/// `message` cut to [`MESSAGE`] characters, saying how many bytes were left out.
pub fn bounded(message: &str) -> String {
    match message.char_indices().nth(MESSAGE) {
        Some((end, _)) => format!(
            "{}… ({} more bytes left out)",
            &message[..end],
            message.len() - end
        ),
        None => message.to_owned(),
    }
}

/// The characters, control characters shown as Rust escapes (`\u{1b}`, `\t`).
fn escaped(chars: &[char]) -> String {
    (chars.iter())
        .map(|c| match c.is_control() {
            true => c.escape_debug().to_string(),
            false => c.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(text: &str) -> String {
        let e = toml::from_str::<toml::Table>(text).unwrap_err();
        describe(text, e.span(), e.message())
    }

    #[test]
    fn a_short_line_reads_as_the_toml_crate_says_it() {
        let text = "[job]\nname = \"abc\" oops\n";
        let e = toml::from_str::<toml::Table>(text).unwrap_err();
        assert_eq!(error(text), e.to_string().trim_end());
    }

    #[test]
    fn a_long_line_is_cut_around_the_column() {
        let text = format!("[job]\nname = \"{}\" oops\n", "x".repeat(200_000));
        let said = error(&text);
        assert!(said.len() < 1_000, "{} bytes:\n{said}", said.len());
        assert!(said.contains("line 2, column 200011"), "{said}");
        assert!(said.contains("\" oops"), "{said}");
        assert!(
            said.contains("(line 2 is 200014 bytes: 199950 before and 0 after"),
            "{said}"
        );
        let lines: Vec<&str> = said.lines().collect();
        let (shown, caret) = (lines[2], lines[3]);
        let at = caret.find('^').unwrap();
        assert_eq!(
            &shown[shown.char_indices().nth(at).unwrap().0..],
            "oops",
            "{said}"
        );
    }

    #[test]
    fn control_characters_are_shown_escaped_and_long_messages_cut() {
        let said = error("a = 1\nb = \u{1b}[31m\n");
        assert!(said.contains("b = \\u{1b}[31m"), "{said}");
        assert!(!said.contains('\u{1b}'));
        let cut = bounded(&"y".repeat(10_000));
        assert!(cut.ends_with("… (9700 more bytes left out)"), "{cut}");
    }
}
