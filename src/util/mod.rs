//! Leaves every stage may use: files, output, shell quoting, number formats, names.

pub mod fmt;
pub mod fs;
pub mod names;
pub mod out;
pub mod quote;
