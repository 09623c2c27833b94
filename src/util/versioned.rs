//! The envelope of every `--json` document and NDJSON event: `schema_version` at the top level,
//! then the command's own keys. Within one version keys are only appended, never renamed or
//! removed; a change that would rename or remove one bumps [`SCHEMA_VERSION`] (see
//! docs/reference/json.md).

use schemars::JsonSchema;
use serde::Serialize;

/// The version of the shape of every `--json` output of rlctl.
pub const SCHEMA_VERSION: u32 = 1;

/// A command's JSON output: `schema_version`, then the keys of `body` (a struct: an object).
#[derive(Debug, Serialize, JsonSchema)]
pub struct Versioned<T> {
    /// The version of this document's shape (see docs/reference/json.md).
    pub schema_version: u32,
    #[serde(flatten)]
    pub body: T,
}

impl<T> Versioned<T> {
    pub fn new(body: T) -> Versioned<T> {
        Versioned {
            schema_version: SCHEMA_VERSION,
            body,
        }
    }
}

/// `body` as one pretty-printed JSON document with its `schema_version`, and a newline.
pub fn document<T: Serialize>(body: &T) -> String {
    let text = serde_json::to_string_pretty(&Versioned::new(body)).expect("serializes");
    format!("{text}\n")
}

/// `body` as one line of JSON with its `schema_version`: an NDJSON event of a stream, or a
/// document too large to pretty-print (`metrics --json`).
pub fn line<T: Serialize>(body: &T) -> String {
    let text = serde_json::to_string(&Versioned::new(body)).expect("serializes");
    format!("{text}\n")
}

/// A failed command's JSON on stdout: `{"schema_version":1,"error":{"code","message","exit"}}`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ErrorDoc {
    pub error: ErrorBody,
}

/// What went wrong: a stable `code` (kebab-case, one per kind of error), the message the text
/// output prints, and the exit status (1 found something wrong, 2 could not do its job).
#[derive(Debug, Serialize, JsonSchema)]
pub struct ErrorBody {
    pub code: String,
    pub message: String,
    pub exit: u8,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Body {
        a: u32,
    }

    #[test]
    fn the_version_comes_first_and_the_body_s_keys_follow() {
        assert_eq!(line(&Body { a: 3 }), "{\"schema_version\":1,\"a\":3}\n");
        let doc: serde_json::Value = serde_json::from_str(&document(&Body { a: 3 })).unwrap();
        assert_eq!(doc, serde_json::json!({"schema_version": 1, "a": 3}));
    }
}
