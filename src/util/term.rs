//! A terminal's colours and size: ANSI SGR colours that only a terminal gets, the width a
//! cell shows (its escapes take none), and a line clipped to the window so that a frame redrawn
//! in place takes exactly its lines.

/// The colours rlctl uses, each an SGR code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hue {
    Green,
    Yellow,
    Red,
    Dim,
}

impl Hue {
    fn code(self) -> &'static str {
        match self {
            Hue::Green => "32",
            Hue::Yellow => "33",
            Hue::Red => "31",
            Hue::Dim => "2",
        }
    }
}

/// Whether text is painted: on a terminal, unless `NO_COLOR` (any non-empty value) or
/// `--color never` says no; `--color always` paints into a pipe too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Paint(pub bool);

impl Paint {
    /// `always` / `never` when the user said so (`None` is auto), on stdout `tty` or not.
    pub fn choose(said: Option<bool>, tty: bool) -> Paint {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Paint(said.unwrap_or(tty && !no_color))
    }

    /// `text` in `hue` when painting, else as it is.
    pub fn hue(self, text: &str, hue: Hue) -> String {
        if self.0 && !text.is_empty() {
            format!("\x1b[{}m{text}\x1b[0m", hue.code())
        } else {
            text.to_owned()
        }
    }
}

/// The characters `text` shows: escape sequences (`ESC [ ... letter`) take no room.
pub fn width(text: &str) -> usize {
    let mut n = 0;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            // CSI: parameters up to the final letter.
            if chars.next() == Some('[') {
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
        } else {
            n += 1;
        }
    }
    n
}

/// `line` cut to `max` characters shown, its escapes kept whole and its colour ended where it
/// is cut.
pub fn clip(line: &str, max: usize) -> String {
    if width(line) <= max {
        return line.to_owned();
    }
    let mut out = String::new();
    let (mut shown, mut escape) = (0, false);
    for c in line.chars() {
        if escape || c == '\x1b' {
            out.push(c);
            // An escape ends at its final letter (`[` is none).
            escape = c == '\x1b' || !c.is_ascii_alphabetic();
            continue;
        }
        if shown == max {
            break;
        }
        out.push(c);
        shown += 1;
    }
    if out.contains('\x1b') {
        out.push_str("\x1b[0m");
    }
    out
}

/// The terminal's columns and rows, when stdout is one.
pub fn size() -> Option<(usize, usize)> {
    let (terminal_size::Width(w), terminal_size::Height(h)) =
        terminal_size::terminal_size_of(std::io::stdout())?;
    Some((usize::from(w), usize::from(h)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_take_no_room_and_a_clipped_colour_is_ended() {
        let red = Paint(true).hue("FAILED", Hue::Red);
        assert_eq!(width(&red), 6);
        assert_eq!(width(&format!("ab {red} cd")), 12);
        assert_eq!(clip(&format!("ab {red} cd"), 5), "ab \x1b[31mFA\x1b[0m");
        assert_eq!(clip("abcdef", 3), "abc");
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(Paint(false).hue("FAILED", Hue::Red), "FAILED");
    }
}
