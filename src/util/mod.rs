//! Leaves every stage may use: files, output, shell quoting, number formats, aligned tables.

pub mod fmt;
pub mod fs;
pub mod out;
pub mod quote;
pub mod table;
