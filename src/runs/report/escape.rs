//! Text from a log or the ledger (metric keys, cell names, states) as it may reach the report's
//! markdown, its SVG and the terminal that prints the table: a key is data, never markup, never a
//! terminal escape.

/// The text with every control character (a newline, an ANSI escape, a bidi override) shown as
/// `?`: one line, nothing a terminal acts on, nothing XML 1.0 forbids.
pub fn plain(s: &str) -> String {
    s.chars().map(|c| if hidden(c) { '?' } else { c }).collect()
}

/// Control characters, and the format characters that reorder what a terminal shows.
fn hidden(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Markdown text that reads as the text itself, in a table cell too: [`plain`], then every
/// character that could open markup (a code span, emphasis, a link, raw HTML, an entity, a
/// table cell's end) backslash-escaped. `_` within a word opens nothing, and is kept.
pub fn md(s: &str) -> String {
    let chars: Vec<char> = plain(s).chars().collect();
    let word = |i: Option<usize>| {
        i.and_then(|i| chars.get(i))
            .is_some_and(|c| c.is_alphanumeric())
    };
    let mut out = String::with_capacity(s.len());
    for (i, &c) in chars.iter().enumerate() {
        let intraword = c == '_' && word(i.checked_sub(1)) && word(Some(i + 1));
        if "\\`*_[]<>|&~".contains(c) && !intraword {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A markdown code span of the text, safe in a table cell: fenced by one backtick more than the
/// longest run inside (CommonMark), padded where the text starts or ends with one, `|` escaped
/// (GFM splits a table row before it reads code spans).
pub fn code(s: &str) -> String {
    let text = plain(s).replace('|', "\\|");
    let longest = (text.split(|c| c != '`')).map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// Text for an SVG element or attribute written by hand: [`plain`], then XML-escaped.
pub fn xml(s: &str) -> String {
    plain(s)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_span_is_never_closed_by_its_text() {
        assert_eq!(code("eval/all/pass_at_8"), "`eval/all/pass_at_8`");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`x``"), "``` `x`` ```");
        assert_eq!(code("a|b\nc"), "`a\\|b?c`");
    }

    #[test]
    fn markdown_text_opens_no_markup() {
        assert_eq!(md("base_long"), "base_long");
        assert_eq!(
            md("_x_ <img src=x onerror=alert(1)>"),
            "\\_x\\_ \\<img src=x onerror=alert(1)\\>"
        );
        assert_eq!(
            md("a|b &amp; *c* [l](u)"),
            "a\\|b \\&amp; \\*c\\* \\[l\\](u)"
        );
        assert_eq!(md("red\x1b[31m\u{202e}"), "red?\\[31m?");
    }
}
