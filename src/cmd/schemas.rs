//! The JSON Schema of every `--json` output, generated from the types the commands print:
//! shipped as docs/reference/schemas/NAME.schema.json, which a test keeps equal to these.

use crate::util::versioned::{ErrorDoc, Versioned};
use schemars::{JsonSchema, Schema, schema_for};

/// Each output's file name (without `.schema.json`) and its schema as pretty JSON with a
/// trailing newline, in a fixed order.
pub fn all() -> Vec<(&'static str, String)> {
    use crate::runs::{metrics, status, wait, watch};
    let schemas = [
        ("cancel", of::<crate::runs::cancel::Cancelled>()),
        ("check", of::<super::inspect::Checked>()),
        ("check-all", of::<super::check_all::Checked>()),
        ("clean", of::<crate::runs::clean::Cleaned>()),
        ("diff", of::<super::diff::Diffed>()),
        ("doctor", of::<super::doctor::Doctored>()),
        ("error", of::<ErrorDoc>()),
        ("estimate", of::<crate::plan::estimate::Estimate>()),
        ("estimate-all", of::<super::estimate::Estimates>()),
        ("grid", of::<super::launch::GridLaunched>()),
        ("launch", of::<super::launch::Launched>()),
        ("list", of::<super::list::Listing>()),
        ("logs", of::<super::runs::Logs>()),
        ("metrics", of::<metrics::Series>()),
        ("report", of::<super::report::Reported>()),
        ("retire", of::<crate::runs::retire::Retired>()),
        ("show", of::<super::inspect::Shown>()),
        ("status", of::<status::Statuses<'static>>()),
        ("tend", of::<super::tend::Tended>()),
        ("wait-change", of::<wait::ChangeEvent<'static>>()),
        ("wait-outcome", of::<wait::OutcomeEvent<'static>>()),
        ("watch", of::<watch::Watched>()),
    ];
    (schemas.into_iter())
        .map(|(name, mut schema)| {
            schema.insert("title".to_owned(), format!("rlctl {name} --json").into());
            let text = serde_json::to_string_pretty(&schema).expect("a schema serializes");
            (name, format!("{text}\n"))
        })
        .collect()
}

/// The schema of `T`'s document: `schema_version` and `T`'s keys.
fn of<T: JsonSchema>() -> Schema {
    schema_for!(Versioned<T>)
}
