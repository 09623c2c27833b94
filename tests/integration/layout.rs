//! The code's shape, held by the suite: imports go one way, down the floors of [`FLOORS`] (the
//! leaves `slurm` and `store` below the stages that use them), and no function of the workspace is
//! over 120 lines. The team's `../shared/tools/module-cycles` (through its `fn-lengths`)
//! measures functions this way, but it lives outside the repository, where CI (`.ci/run`) cannot
//! reach it; this is a minimal brace-counting copy of its function check, not a Rust parser: comments, strings and character
//! literals are blanked so that braces balance, a function runs from its `fn` line to its closing
//! brace, and unit tests (`tests.rs` files, and everything after a `#[cfg(test)]` line) are left
//! out, as the tool leaves them out.

use std::path::{Path, PathBuf};

/// The longest a function may be; a longer one is split along its seams.
const MAX_FN_LINES: usize = 120;

#[test]
fn no_function_of_the_workspace_is_over_120_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut folders = vec![root.join("src")];
    let crates = std::fs::read_dir(root.join("crates")).expect("crates/ is readable");
    folders.extend(crates.map(|c| c.expect("a crate folder").path().join("src")));
    let mut files = Vec::new();
    for folder in folders {
        rust_files(&folder, &mut files);
    }
    assert!(files.len() > 100, "the sources were found: {files:?}");
    let mut long = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("a source file is UTF-8");
        for f in functions(&text) {
            if f.lines > MAX_FN_LINES {
                let file = file.strip_prefix(root).unwrap_or(file).display();
                long.push(format!(
                    "  {} ({} lines, {file}:{})",
                    f.name, f.lines, f.line
                ));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over {MAX_FN_LINES} lines; split each along its seams:\n{}",
        long.join("\n")
    );
}

#[test]
fn the_measure_ignores_braces_in_comments_strings_and_characters_and_skips_unit_tests() {
    let text = r####"
fn short() {
    let s = "}}}"; let c = '}'; let r = r#"}"#; let b = b'{';
    // }
    /* } /* nested } */ } */
    let lifetime: &'static str = "";
}
fn no_body();
fn typed<T: Into<String>>(x: T) -> Vec<u8> where T: Clone {
    x.into().into_bytes()
}
#[cfg(test)]
mod tests {
    fn unit() {}
}
"####;
    let found: Vec<(String, usize, usize)> = (functions(text).into_iter())
        .map(|f| (f.name, f.line, f.lines))
        .collect();
    assert_eq!(
        found,
        [("short".to_owned(), 2, 6), ("typed".to_owned(), 9, 3)]
    );
}

/// Every `.rs` file under `folder`.
fn rust_files(folder: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    for entry in entries {
        let path = entry.expect("a folder entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") && !path.ends_with("tests.rs") {
            out.push(path);
        }
    }
}

/// One function: its name, the line its `fn` is on, and how many lines it spans.
struct Function {
    name: String,
    line: usize,
    lines: usize,
}

/// The functions of a source file that have a body, before its first `#[cfg(test)]` line.
fn functions(text: &str) -> Vec<Function> {
    let code = blanked(text);
    let line_of = |at: usize| 1 + code[..at].iter().filter(|&&b| b == b'\n').count();
    let tests_from = (text.lines())
        .position(|l| l.trim_start().starts_with("#[cfg(test)]"))
        .map_or(usize::MAX, |i| i + 1);
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(found) = find_fn(&code, at) {
        let (start, name_end) = found;
        at = name_end;
        let Some(open) = body_start(&code, name_end) else {
            continue;
        };
        let Some(close) = matching_brace(&code, open) else {
            continue;
        };
        let (line, end_line) = (line_of(start), line_of(close));
        if line < tests_from {
            let name = String::from_utf8_lossy(&code[start + 2..name_end]);
            out.push(Function {
                name: name.trim().to_owned(),
                line,
                lines: end_line - line + 1,
            });
        }
    }
    out
}

/// The next `fn NAME` from `from`: where `fn` starts and where the name ends.
fn find_fn(code: &[u8], from: usize) -> Option<(usize, usize)> {
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut i = from;
    while i + 2 < code.len() {
        let at_word = i == 0 || !ident(code[i - 1]);
        if at_word && code[i..].starts_with(b"fn") && code[i + 2].is_ascii_whitespace() {
            let mut j = i + 2;
            while j < code.len() && code[j].is_ascii_whitespace() {
                j += 1;
            }
            let name_start = j;
            while j < code.len() && ident(code[j]) {
                j += 1;
            }
            if j > name_start && !code[name_start].is_ascii_digit() {
                return Some((i, j));
            }
        }
        i += 1;
    }
    None
}

/// The `{` that opens the body after a signature, or `None` where a `;` ends it first.
fn body_start(code: &[u8], from: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (i, &b) in code.iter().enumerate().skip(from) {
        match b {
            b'(' | b'[' | b'<' => depth += 1,
            // `->` is no closing angle bracket.
            b'>' if code[i - 1] == b'-' => {}
            b')' | b']' | b'>' => depth -= 1,
            b';' if depth <= 0 => return None,
            b'{' if depth <= 0 => return Some(i),
            _ => {}
        }
    }
    None
}

/// The `}` that closes the `{` at `open`.
fn matching_brace(code: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, &b) in code.iter().enumerate().skip(open) {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// `text` with every comment, string and character literal turned to spaces (newlines kept).
fn blanked(text: &str) -> Vec<u8> {
    let src = text.as_bytes();
    let mut out = src.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for b in &mut out[from..to.min(src.len())] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    };
    let mut i = 0;
    while i < src.len() {
        let end = if src[i..].starts_with(b"//") {
            src[i..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(src.len(), |j| i + j)
        } else if src[i..].starts_with(b"/*") {
            block_comment_end(src, i)
        } else if let Some(end) = raw_string_end(src, i) {
            end
        } else if src[i] == b'"' {
            string_end(src, i)
        } else if src[i] == b'\'' {
            // A lifetime (`'a`) is no literal: it is left as it is.
            char_end(src, i).unwrap_or(i + 1)
        } else {
            i + 1
        };
        if end > i + 1 {
            blank(&mut out, i, end);
        }
        i = end;
    }
    out
}

/// Just past the block comment at `i`, which may nest.
fn block_comment_end(src: &[u8], i: usize) -> usize {
    let (mut depth, mut j) = (0, i);
    while j < src.len() {
        if src[j..].starts_with(b"/*") {
            depth += 1;
            j += 2;
        } else if src[j..].starts_with(b"*/") {
            depth -= 1;
            j += 2;
            if depth == 0 {
                return j;
            }
        } else {
            j += 1;
        }
    }
    src.len()
}

/// Just past a raw string (`r"…"`, `r#"…"#`, `br"…"`) starting at `i`, if one does.
fn raw_string_end(src: &[u8], i: usize) -> Option<usize> {
    if i > 0 && (src[i - 1].is_ascii_alphanumeric() || src[i - 1] == b'_') {
        return None;
    }
    let mut j = i;
    if src.get(j) == Some(&b'b') {
        j += 1;
    }
    if src.get(j) != Some(&b'r') {
        return None;
    }
    j += 1;
    let hashes = src[j..].iter().take_while(|&&b| b == b'#').count();
    j += hashes;
    if src.get(j) != Some(&b'"') {
        return None;
    }
    let mut close = vec![b'"'];
    close.extend(std::iter::repeat_n(b'#', hashes));
    let body = j + 1;
    Some(
        (src[body..].windows(close.len()))
            .position(|w| w == close.as_slice())
            .map_or(src.len(), |k| body + k + close.len()),
    )
}

/// Just past the string whose opening quote is at `i`.
fn string_end(src: &[u8], i: usize) -> usize {
    let mut j = i + 1;
    while j < src.len() && src[j] != b'"' {
        j += if src[j] == b'\\' { 2 } else { 1 };
    }
    j + 1
}

/// Just past the character literal at `i` (`'x'`, `'\n'`, `'\u{…}'`, `'é'`), or `None` for a
/// lifetime.
fn char_end(src: &[u8], i: usize) -> Option<usize> {
    let at = |k: usize| src.get(k).copied();
    let close = match at(i + 1)? {
        b'\\' if at(i + 2) == Some(b'u') => {
            i + 3 + src[i + 3..].iter().position(|&b| b == b'}')? + 1
        }
        b'\\' if at(i + 2) == Some(b'x') => i + 5,
        b'\\' => i + 3,
        b'\'' => return None,
        lead => {
            // One character, of however many UTF-8 bytes.
            let len = match lead {
                0x00..=0x7f => 1,
                0xc0..=0xdf => 2,
                0xe0..=0xef => 3,
                _ => 4,
            };
            i + 1 + len
        }
    };
    (at(close) == Some(b'\'')).then_some(close + 1)
}

/// The floors of the crate's top-level modules: a module imports only from lower floors, so
/// data and imports go one way (`preset` -> `plan` -> `check` / `render` -> `stage` / `submit`
/// -> `runs`, then the commands), and the leaves (`slurm`, the run store `store`) stay below
/// the stages that use them. A new top-level module takes a floor here. A path the table does
/// not name (`crate::say!`, util's macro) is not judged.
const FLOORS: &[(&str, u8)] = &[
    ("error", 0),
    ("util", 1),
    ("exit", 1),
    ("schema", 2),
    ("checkpoint", 2),
    ("slurm", 2),
    ("preset", 3),
    ("plan", 4),
    ("store", 5),
    ("check", 6),
    ("render", 6),
    ("stage", 7),
    ("submit", 7),
    ("runs", 8),
    ("cli", 9),
    ("mcp", 10),
    ("cmd", 11),
];

#[test]
fn every_module_imports_only_from_lower_floors() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let floor = |m: &str| FLOORS.iter().find(|(n, _)| *n == m).map(|(_, f)| *f);
    let mut up = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(&src).expect("a file under src/");
        let first = rel.components().next().expect("a path").as_os_str();
        let module = first
            .to_str()
            .expect("a UTF-8 name")
            .trim_end_matches(".rs");
        if module == "main" || module == "lib" {
            continue;
        }
        let Some(own) = floor(module) else {
            up.push(format!("  {module} has no floor in FLOORS"));
            continue;
        };
        let text = std::fs::read_to_string(file).expect("a source file is UTF-8");
        let text = text.split("#[cfg(test)]").next().unwrap_or_default();
        for used in crate_paths(text) {
            match floor(&used) {
                Some(f) if used != module && f >= own => {
                    up.push(format!("  {} uses crate::{used}", rel.display()))
                }
                _ => {}
            }
        }
    }
    up.sort();
    up.dedup();
    assert!(
        up.is_empty(),
        "imports up or across the floors of FLOORS:\n{}",
        up.join("\n")
    );
}

#[test]
fn the_floor_measure_reads_paths_and_grouped_uses() {
    let text = "use crate::plan::Plan;\nuse crate::{check::{A, B}, store::ledger};\n\
                /// [`crate::runs::sealed`]\nfn f() { crate::say!(\"x\"); }";
    assert_eq!(crate_paths(text), ["plan", "check", "store", "runs", "say"]);
}

/// The first segment of every `crate::` path in `text`, `use crate::{a::x, b}` giving `a` and `b`.
fn crate_paths(text: &str) -> Vec<String> {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = Vec::new();
    for (at, _) in text.match_indices("crate::") {
        let before = text[..at].chars().next_back();
        if before.is_some_and(ident) {
            continue;
        }
        let rest = &text[at + "crate::".len()..];
        let Some(group) = rest.strip_prefix('{') else {
            out.push(rest.chars().take_while(|&c| ident(c)).collect());
            continue;
        };
        let (mut depth, mut item) = (0, String::new());
        for c in group.chars() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    out.push(std::mem::take(&mut item));
                    continue;
                }
                _ => {}
            }
            if depth == 0 && ident(c) || !item.is_empty() && depth == 0 && c == ':' {
                item.push(c);
            }
        }
        out.push(item);
    }
    (out.into_iter())
        .map(|p| p.split("::").next().unwrap_or_default().trim().to_owned())
        .filter(|p| !p.is_empty())
        .collect()
}
