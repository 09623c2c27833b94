//! Leaves every stage may use: files, output, shell quoting, number formats, aligned tables,
//! Python's JSON, names.

pub mod fmt;
pub mod fs;
pub mod json;
pub mod names;
pub mod out;
pub mod quote;
pub mod table;
