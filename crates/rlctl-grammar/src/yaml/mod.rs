//! YAML as OmegaConf's loader reads it: PyYAML's SafeLoader (YAML 1.1 scalars, anchors and `<<`
//! merges, core-schema tags) with OmegaConf's float rule, no timestamps, and a key given twice
//! refused. MarinSkyRL's config files and upstream SkyRL's command-line values both go through it.

mod pyrepr;
mod reader;
mod scalars;

pub use pyrepr::{json, json_string, py_float};
pub use reader::load_yaml;

/// A YAML value as OmegaConf holds it.
#[derive(Debug, Clone, PartialEq)]
pub enum Y {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Seq(Vec<Y>),
    Map(Vec<(Y, Y)>),
}

pub type Map = Vec<(Y, Y)>;

impl Y {
    /// Python's `str(key)`, as a flattened key shows it.
    pub fn key_text(&self) -> String {
        match self {
            Y::Str(s) => s.clone(),
            Y::Bool(b) => if *b { "True" } else { "False" }.to_owned(),
            Y::Int(i) => i.to_string(),
            Y::Float(x) => py_float(*x),
            Y::Null => "None".to_owned(),
            Y::Seq(_) | Y::Map(_) => json(self),
        }
    }

    /// Keys equal as Python dict keys are (1 == 1.0 == True).
    pub fn key_id(&self) -> String {
        match self {
            Y::Str(s) => format!("s{s}"),
            Y::Bool(b) => format!("n{}", u8::from(*b)),
            Y::Int(i) => format!("n{i}"),
            Y::Float(x) if x.fract() == 0.0 && x.abs() < 1e30 => format!("n{}", *x as i128),
            Y::Float(x) => format!("f{}", py_float(*x)),
            Y::Null => "null".to_owned(),
            other => format!("x{}", json(other)),
        }
    }

    pub fn is_missing(&self) -> bool {
        matches!(self, Y::Str(s) if s == "???")
    }
}

/// The entry of `map` whose key equals `key` as Python dict keys are equal.
pub fn find<'a>(map: &'a mut Map, key: &Y) -> Option<&'a mut (Y, Y)> {
    let id = key.key_id();
    map.iter_mut().find(|(k, _)| k.key_id() == id)
}
