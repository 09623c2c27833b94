//! The YAML reader, on saphyr-parser's events: values as PyYAML's SafeLoader builds them with
//! OmegaConf's loader on top (anchors and `<<` merges, core-schema tags, a key given twice
//! refused).

use super::scalars::{construct_bool, construct_float, construct_int, resolve_plain};
use super::{Map, Y, find};
use saphyr_parser::{Event, Parser, ScalarStyle, Span, Tag};
use std::collections::HashMap;

/// One YAML document as OmegaConf's loader builds it (an empty one is null).
pub fn load_yaml(text: &str) -> Result<Y, String> {
    let first_content = text
        .lines()
        .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    if let Some(line) = first_content
        && line.starts_with("...")
        && line[3..].chars().next().is_none_or(char::is_whitespace)
    {
        // PyYAML wants a document before its end marker; saphyr reads an empty one.
        return Err(
            "expected the node content, but found '<document end>'; quote `...`".to_owned(),
        );
    }
    let mut reader = Reader {
        parser: Parser::new_from_str(text),
        anchors: HashMap::new(),
        text,
    };
    let mut document = None;
    loop {
        let (event, span) = reader.next()?;
        match event {
            Event::StreamStart | Event::DocumentEnd | Event::Nothing => {}
            Event::DocumentStart(_) => {
                if document.is_some() {
                    return Err(at(
                        span,
                        "expected a single YAML document; remove the second `---`",
                    ));
                }
                let (event, span) = reader.next()?;
                document = Some(match event {
                    Event::DocumentEnd => Y::Null,
                    event => reader.node(event, span)?,
                });
            }
            Event::StreamEnd => return Ok(document.unwrap_or(Y::Null)),
            _ => return Err(at(span, "unexpected YAML content")),
        }
    }
}

fn at(span: Span, message: &str) -> String {
    format!(
        "line {}, column {}: {message}",
        span.start.line(),
        span.start.col() + 1
    )
}

struct Reader<'a> {
    parser: Parser<'a, saphyr_parser::StrInput<'a>>,
    anchors: HashMap<usize, Y>,
    text: &'a str,
}

impl<'a> Reader<'a> {
    fn next(&mut self) -> Result<(Event<'a>, Span), String> {
        match self.parser.next_event() {
            Some(Ok(pair)) => Ok(pair),
            Some(Err(e)) => Err(format!(
                "line {}, column {}: {}",
                e.marker().line(),
                e.marker().col() + 1,
                e.info()
            )),
            None => Err("the YAML ends too early".to_owned()),
        }
    }

    fn node(&mut self, event: Event<'a>, span: Span) -> Result<Y, String> {
        let (value, anchor) = match event {
            Event::Alias(id) => {
                return self
                    .anchors
                    .get(&id)
                    .cloned()
                    .ok_or_else(|| at(span, "an alias names no anchor"));
            }
            Event::Scalar(text, style, anchor, tag) => (
                scalar(&text, style, tag.as_deref()).map_err(|m| at(span, &m))?,
                anchor,
            ),
            Event::SequenceStart(anchor, tag) => {
                check_tag(tag.as_deref(), "seq").map_err(|m| at(span, &m))?;
                let mut items = Vec::new();
                loop {
                    let (event, span) = self.next()?;
                    if let Event::SequenceEnd = event {
                        break;
                    }
                    items.push(self.node(event, span)?);
                }
                (Y::Seq(items), anchor)
            }
            Event::MappingStart(anchor, tag) => {
                check_tag(tag.as_deref(), "map").map_err(|m| at(span, &m))?;
                (Y::Map(self.mapping(span)?), anchor)
            }
            _ => return Err(at(span, "unexpected YAML content")),
        };
        if anchor > 0 {
            self.anchors.insert(anchor, value.clone());
        }
        Ok(value)
    }

    /// A mapping as PyYAML's SafeLoader builds it: `<<` merge keys first, later keys win in
    /// the place of the first; OmegaConf refuses a string key given twice.
    fn mapping(&mut self, span: Span) -> Result<Map, String> {
        let mut explicit: Vec<(Y, Y)> = Vec::new();
        let mut merges: Vec<Y> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        loop {
            let (event, key_span) = self.next()?;
            if let Event::MappingEnd = event {
                break;
            }
            let is_merge =
                matches!(&event, Event::Scalar(t, ScalarStyle::Plain, _, None) if t == "<<");
            let omitted = matches!(&event, Event::Scalar(t, ScalarStyle::Plain, 0, None) if t.is_empty())
                && key_span.start.index() == key_span.end.index();
            if omitted && self.text.chars().nth(span.start.index()) != Some('{') {
                // A block mapping's `: value` with no key: saphyr reads a null key, PyYAML
                // refuses it.
                return Err(at(
                    key_span,
                    "while parsing a block mapping: a `:` with no key before it; quote the value",
                ));
            }
            let key = if is_merge {
                Y::Null
            } else {
                self.node(event, key_span)?
            };
            let (event, value_span) = self.next()?;
            let value = self.node(event, value_span)?;
            if is_merge {
                merges.push(value);
                continue;
            }
            if let Y::Str(s) = &key
                && !seen.insert(s.clone())
            {
                return Err(at(
                    key_span,
                    &format!("the key `{s}` is given twice in one mapping"),
                ));
            }
            if matches!(key, Y::Seq(_) | Y::Map(_)) {
                return Err(at(key_span, "a key must be a single value"));
            }
            explicit.push((key, value));
        }
        let mut pairs: Vec<(Y, Y)> = Vec::new();
        for merge in merges {
            match merge {
                Y::Map(m) => pairs.extend(m),
                Y::Seq(items) => {
                    let mut maps = Vec::new();
                    for item in items {
                        match item {
                            Y::Map(m) => maps.push(m),
                            _ => return Err(at(span, "`<<` merges mappings only")),
                        }
                    }
                    for m in maps.into_iter().rev() {
                        pairs.extend(m);
                    }
                }
                _ => return Err(at(span, "`<<` merges mappings only")),
            }
        }
        pairs.extend(explicit);
        let mut map: Map = Vec::new();
        for (k, v) in pairs {
            match find(&mut map, &k) {
                Some((_, slot)) => *slot = v,
                None => map.push((k, v)),
            }
        }
        Ok(map)
    }
}

fn check_tag(tag: Option<&Tag>, expected: &str) -> Result<(), String> {
    match tag {
        None => Ok(()),
        Some(t) if t.is_yaml_core_schema() && t.suffix == expected => Ok(()),
        Some(t) => Err(format!("the YAML tag `{t}` is not supported here")),
    }
}

fn scalar(text: &str, style: ScalarStyle, tag: Option<&Tag>) -> Result<Y, String> {
    match tag {
        None if style == ScalarStyle::Plain => resolve_plain(text),
        None => Ok(Y::Str(text.to_owned())),
        Some(t) if t.handle == "!" && t.suffix.is_empty() => Ok(Y::Str(text.to_owned())),
        Some(t) if t.is_yaml_core_schema() => match t.suffix.as_str() {
            "str" => Ok(Y::Str(text.to_owned())),
            "null" => Ok(Y::Null),
            "bool" => construct_bool(text)
                .map(Y::Bool)
                .ok_or_else(|| format!("`{text}` is not a boolean")),
            "int" => construct_int(text).ok_or_else(|| format!("`{text}` is not an integer")),
            "float" => construct_float(text).ok_or_else(|| format!("`{text}` is not a float")),
            other => Err(format!("the YAML tag `!!{other}` is not supported")),
        },
        Some(t) => Err(format!("the YAML tag `{t}` is not supported")),
    }
}

#[cfg(test)]
mod tests {
    use super::super::pyrepr::json;
    use super::*;

    #[test]
    fn yaml_reads_as_pyyaml() {
        let y = load_yaml("a: &x {b: 1}\nc:\n  <<: *x\n  d: 'yes'\ne: !!str 1\nf:\n").unwrap();
        assert_eq!(
            json(&y),
            r#"{"a": {"b": 1}, "c": {"b": 1, "d": "yes"}, "e": "1", "f": null}"#
        );
        assert!(
            load_yaml("a: 1\na: 2\n")
                .unwrap_err()
                .contains("given twice")
        );
    }
}
