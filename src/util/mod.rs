//! Leaves every stage may use: files, where a reader of a growing file left off, output, child
//! processes, shell quoting, number formats, aligned tables, a terminal's colours and size, Python's JSON, names, the
//! version of rlctl's own JSON.

pub mod fmt;
pub mod fs;
pub mod json;
pub mod mark;
pub mod names;
pub mod out;
pub mod process;
pub mod quote;
pub mod table;
pub mod term;
pub mod toml_error;
pub mod turn;
pub mod versioned;
