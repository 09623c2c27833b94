//! The docs cannot drift: every field the preset types accept is named in the reference, and
//! every field the reference names is one they accept (the binary itself says which fields each
//! table takes), every relative link resolves, and the
//! README's two commands are the ones CI runs.

use crate::common::{Sandbox, fails};
use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const PROBE: &str = "zz_probe";

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(ROOT).join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The fields a table of a preset file accepts, as the binary's own error for an unknown field
/// lists them (serde's "expected one of `a`, `b`"): the types, not a list kept by hand.
fn fields_of(sandbox: &Sandbox, file: &str, text: &str, args: &[&str]) -> Vec<String> {
    let path = sandbox.presets().join(file);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    let err = fails(sandbox.rlctl().args(args));
    let line = err
        .lines()
        .find(|l| l.contains(&format!("unknown field `{PROBE}`, expected")))
        .unwrap_or_else(|| panic!("no unknown-field error for {file}:\n{text}\n{err}"));
    let listed = line.split_once("expected").unwrap().1;
    listed
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// `text` with the probe key in `table` ("" the top level; `[[x]]` arrays of tables included):
/// after its header where the file has one, else in a table of that name appended.
fn with_probe(text: &str, table: &str) -> String {
    let probe = format!("{PROBE} = 1\n");
    if table.is_empty() {
        return format!("{probe}{text}");
    }
    for header in [format!("[{table}]\n"), format!("[[{table}]]\n")] {
        if let Some(at) = text.find(&header) {
            let at = at + header.len();
            return format!("{}{probe}{}", &text[..at], &text[at..]);
        }
    }
    format!("{text}\n[{table}]\n{probe}")
}

/// The first cells of the table rows in the `## heading` section of docs/reference/presets.md.
fn first_cells(section: &str) -> Vec<String> {
    let page = read("docs/reference/presets.md");
    let start = page
        .find(&format!("\n## {section}\n"))
        .unwrap_or_else(|| panic!("docs/reference/presets.md has no section `## {section}`"));
    let body = &page[start + 1..];
    let body = &body[..body[3..].find("\n## ").map_or(body.len(), |end| end + 3)];
    body.lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| l.split('|').nth(1).unwrap().to_owned())
        .collect()
}

/// A field is documented when a row names it under its table's header (`` `[T]` `field` ``),
/// or names it as a table of its own (`` `[T.field]` ``, `` `[[T.field]]` ``).
fn documented(cells: &[String], table: &str, field: &str) -> bool {
    let full = if table.is_empty() {
        field.to_owned()
    } else {
        format!("{table}.{field}")
    };
    let as_table =
        |c: &String| c.contains(&format!("`[{full}]`")) || c.contains(&format!("`[[{full}]]`"));
    let under_header = |c: &String| {
        let in_table = if table.is_empty() {
            !c.contains("`[")
        } else {
            c.contains(&format!("`[{table}]`")) || c.contains(&format!("`[[{table}]]`"))
        };
        in_table && c.contains(&format!("`{field}`"))
    };
    cells.iter().any(|c| as_table(c) || under_header(c))
}

fn missing(section: &str, probes: &[(&str, Vec<String>)]) -> Vec<String> {
    let cells = first_cells(section);
    let mut missing = Vec::new();
    for (table, fields) in probes {
        assert!(!fields.is_empty(), "no fields read for `[{table}]`");
        for field in fields {
            if !documented(&cells, table, field) {
                missing.push(format!("{section}: `[{table}]` `{field}`"));
            }
        }
    }
    missing
}

#[test]
fn every_field_of_the_preset_types_is_in_the_reference() {
    let sandbox = Sandbox::new();
    let profile = read("presets/clusters/leonardo.toml");
    let launch = ["--cluster", "probe", "launch", "gsm8k-canary", "--dry-run"];
    let cluster: Vec<_> = [
        "",
        "slurm",
        "slurm.qos",
        "node",
        "storage",
        "storage.purge",
        "software",
        "container",
        "network",
        "check",
        "watch",
    ]
    .into_iter()
    .map(|t| {
        let text = with_probe(&profile, t);
        (
            t,
            fields_of(&sandbox, "clusters/probe.toml", &text, &launch),
        )
    })
    .collect();
    let run = "description = \"probe\"\nextends = \"gsm8k-canary\"\n";
    let runs: Vec<_> = ["", "model", "data", "reference"]
        .into_iter()
        .map(|t| {
            let text = with_probe(run, t);
            let args = ["launch", "probe-run", "--dry-run"];
            (t, fields_of(&sandbox, "runs/probe-run.toml", &text, &args))
        })
        .collect();
    let grid = "description = \"probe\"\nbase = \"gsm8k-canary\"\n\n[[cells]]\nname = \"a\"\ndescription = \"a\"\n";
    let grids: Vec<_> = ["", "cells"]
        .into_iter()
        .map(|t| {
            let text = with_probe(grid, t);
            let args = ["grid", "--all", "probe-grid", "--dry-run"];
            (
                t,
                fields_of(&sandbox, "grids/probe-grid.toml", &text, &args),
            )
        })
        .collect();
    let mut gaps = missing("Cluster profile", &cluster);
    gaps.extend(missing("Run preset", &runs));
    gaps.extend(missing("Grid catalog", &grids));
    assert!(
        gaps.is_empty(),
        "docs/reference/presets.md does not name these fields (a row whose first cell holds the table and the field):\n{}",
        gaps.join("\n")
    );
    let mut extra = invented("Cluster profile", &cluster);
    extra.extend(invented("Run preset", &runs));
    extra.extend(invented("Grid catalog", &grids));
    assert!(
        extra.is_empty(),
        "docs/reference/presets.md names fields the types do not take:\n{}",
        extra.join("\n")
    );
}

/// The other direction: every field a row of `section` names is one its table takes, and every
/// table a row names is a field of its parent (`[slurm.qos]`: `qos` of `[slurm]`).
fn invented(section: &str, probes: &[(&str, Vec<String>)]) -> Vec<String> {
    let takes = |table: &str, field: &str| {
        (probes.iter()).any(|(t, fields)| *t == table && fields.iter().any(|f| f == field))
    };
    let mut invented = Vec::new();
    for cell in first_cells(section) {
        let names: Vec<&str> = cell.split('`').skip(1).step_by(2).collect();
        let (table, fields) = match names.first() {
            Some(first) if first.starts_with('[') => {
                let table = first.trim_matches(|c| c == '[' || c == ']');
                let (parent, name) = table.rsplit_once('.').unwrap_or(("", table));
                if !takes(parent, name) {
                    invented.push(format!(
                        "{section}: `[{table}]` is not a table the types take"
                    ));
                }
                (table, &names[1..])
            }
            _ => ("", &names[..]),
        };
        for field in fields {
            if !takes(table, field) {
                invented.push(format!("{section}: `[{table}]` `{field}`"));
            }
        }
    }
    invented
}

/// The Markdown files a reader follows links through.
fn markdown_files() -> Vec<PathBuf> {
    let root = Path::new(ROOT);
    let mut files: Vec<PathBuf> = [
        "README.md",
        "CONTRIBUTING.md",
        "tests/README.md",
        "benches/README.md",
    ]
    .iter()
    .map(|f| root.join(f))
    .collect();
    let mut folders = vec![root.join("docs")];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files
}

/// A heading's anchor as GitHub and most forges make it: lower case, spaces to `-`, punctuation
/// other than `-` and `_` dropped.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The page's links and its headings' anchors.
fn links_and_anchors(text: &str) -> (Vec<String>, Vec<String>) {
    let (mut links, mut anchors) = (Vec::new(), Vec::new());
    let mut heading: Option<String> = None;
    for event in Parser::new_ext(text, Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                links.push(dest_url.to_string());
            }
            Event::Start(Tag::Heading { level, .. }) if level != HeadingLevel::H6 => {
                heading = Some(String::new());
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => anchors.extend(heading.take().map(|h| anchor(&h))),
            _ => {}
        }
    }
    (links, anchors)
}

#[test]
fn every_relative_link_in_the_docs_resolves() {
    let mut broken = Vec::new();
    for file in markdown_files() {
        let (links, own_anchors) = links_and_anchors(&std::fs::read_to_string(&file).unwrap());
        for link in links {
            if link.contains("://") || link.starts_with("mailto:") {
                continue;
            }
            let (path, fragment) = link.split_once('#').unwrap_or((&link, ""));
            let target = if path.is_empty() {
                file.clone()
            } else {
                file.parent().unwrap().join(path)
            };
            let shown = file.strip_prefix(ROOT).unwrap().display();
            if !target.exists() {
                broken.push(format!("{shown}: `{link}`: no such file"));
                continue;
            }
            if fragment.is_empty() || target.extension().is_none_or(|e| e != "md") {
                continue;
            }
            let anchors = if path.is_empty() {
                own_anchors.clone()
            } else {
                links_and_anchors(&std::fs::read_to_string(&target).unwrap()).1
            };
            if !anchors.iter().any(|a| a == fragment) {
                broken.push(format!("{shown}: `{link}`: no heading with that anchor"));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_readme_gives_the_two_commands_and_ci_runs_its_test_command() {
    let readme = read("README.md");
    let test = "bash tests/setup.sh && cargo test --locked";
    for command in ["cargo run --release -- launch gsm8k-canary --dry-run", test] {
        assert!(
            readme.contains(&format!("```sh\n{command}\n```")),
            "README.md lost `{command}`"
        );
    }
    assert!(
        read(".ci/run").lines().any(|l| l == test),
        ".ci/run does not run the README's test command `{test}`"
    );
    let lines = readme.lines().count();
    assert!(
        lines <= 150,
        "README.md is {lines} lines; at most 150, the rest in docs/"
    );
}
