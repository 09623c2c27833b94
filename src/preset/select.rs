//! What a name on the command line names, looked up once: the run preset, or the grid and cell.
//! Every "is a cell, not a preset", ambiguity and "did you mean" is decided here; the plan then
//! works on the [`Selection`] and never asks the library again.

use super::{Library, Target, target_name};
use crate::error::{Error, Result};
use crate::preset::run::{CellFile, GridFile, RunPreset};

/// What kind of name a command takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// A run preset (`launch`): a cell's name is refused with the command that runs it.
    Preset,
    /// A grid cell, bare when one grid has it, or as `grid/cell` (`grid`).
    Cell,
    /// A preset or a cell (`show`, `check`, `render`, `estimate`, `stage`); a name that is both
    /// is the preset, and the cell is written `grid/cell`.
    Target,
}

/// A name resolved: the run preset a plan starts from, and the grid and cell when it is one.
#[derive(Debug, Clone)]
pub struct Selection<'a> {
    /// The preset named, or the grid's base.
    pub preset: RunPreset,
    pub cell: Option<GridCell<'a>>,
}

/// A cell and the grid file it is in.
#[derive(Debug, Clone, Copy)]
pub struct GridCell<'a> {
    pub grid: &'a str,
    pub file: &'a GridFile,
    pub cell: &'a CellFile,
}

impl Selection<'_> {
    /// `preset` or `grid/cell`: as the user writes it.
    pub fn name(&self) -> String {
        match &self.cell {
            None => self.preset.name.clone(),
            Some(c) => format!("{}/{}", c.grid, c.cell.name),
        }
    }
}

impl Library {
    /// What `name` names, as the command (`want`) takes it.
    pub fn select(&self, name: &str, want: Want) -> Result<Selection<'_>> {
        let target = match want {
            Want::Preset => self.find_preset(name)?,
            Want::Cell => self.find_cell(name)?,
            Want::Target => self.find_target(name)?,
        };
        match target {
            Target::Preset(name) => self.select_preset(&name),
            Target::Cell { grid, cell } => self.select_cell(&grid, &cell),
        }
    }

    /// The run preset `name`, known to be one (`check --all` walks the names).
    pub fn select_preset(&self, name: &str) -> Result<Selection<'_>> {
        Ok(Selection {
            preset: self.run_preset(name)?,
            cell: None,
        })
    }

    /// Every cell of `grid`, in the grid file's order (`--all GRID`).
    pub fn select_grid(&self, grid: &str) -> Result<Vec<Selection<'_>>> {
        let file = self.grid(grid)?;
        (file.cells.iter())
            .map(|c| self.select_cell(grid, &c.name))
            .collect()
    }

    /// The cell `cell` of `grid`, with the grid's base preset.
    pub fn select_cell(&self, grid: &str, cell: &str) -> Result<Selection<'_>> {
        let file = self.grid(grid)?;
        let cell = self.cell(grid, cell)?;
        let (grid, _) = (self.grids.get_key_value(grid)).expect("the grid was found");
        Ok(Selection {
            preset: self.grid_base(grid)?,
            cell: Some(GridCell { grid, file, cell }),
        })
    }

    /// The name a user writes for `grid`'s cell `cell`: bare when it names this cell, else
    /// `grid/cell`.
    pub fn cell_name(&self, grid: &str, cell: &str) -> String {
        let this = Target::Cell {
            grid: grid.to_owned(),
            cell: cell.to_owned(),
        };
        match self.find_cell(cell) {
            Ok(found) if found == this => cell.to_owned(),
            _ => target_name(&this),
        }
    }

    /// A preset or a cell; a name that is both must be written as `grid/cell` for the cell.
    fn find_target(&self, name: &str) -> Result<Target> {
        if self.runs.contains_key(name) {
            return Ok(Target::Preset(name.to_owned()));
        }
        match self.find_cell(name) {
            Err(Error::UnknownName { .. }) => {
                let mut known: Vec<String> = self.runs.keys().cloned().collect();
                known.extend(self.all_cell_names());
                Err(Error::unknown(
                    "preset or cell",
                    name,
                    known.iter().map(String::as_str),
                ))
            }
            other => other,
        }
    }

    fn find_preset(&self, name: &str) -> Result<Target> {
        if self.runs.contains_key(name) {
            return Ok(Target::Preset(name.to_owned()));
        }
        let hint = self.find_cell(name).ok().map(|t| target_name(&t));
        match hint {
            Some(cell) => Err(Error::WrongKind {
                name: name.to_owned(),
                is: "grid cell",
                wanted: "preset",
                fix: format!("run it with `rlctl grid {cell}`"),
            }),
            None => Err(Error::unknown(
                "preset",
                name,
                self.runs.keys().map(String::as_str),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use camino::Utf8Path;

    /// The embedded presets, plus two grids that share the cell `shared`.
    fn library(dir: &Utf8Path) -> Library {
        std::fs::create_dir_all(dir.join("grids")).unwrap();
        for grid in ["ga", "gb"] {
            let text = format!(
                "description = \"{grid}\"\nbase = \"gsm8k-canary\"\n\
                 [[cells]]\nname = \"shared\"\ndescription = \"in {grid}\"\n\
                 [[cells]]\nname = \"only-{grid}\"\ndescription = \"only in {grid}\"\n"
            );
            std::fs::write(dir.join(format!("grids/{grid}.toml")), text).unwrap();
        }
        Library::load(Some(dir)).unwrap()
    }

    fn error(library: &Library, name: &str, want: Want) -> Error {
        library.select(name, want).expect_err(name)
    }

    #[test]
    fn select_finds_what_a_name_names_once() {
        let dir = tempfile::tempdir().unwrap();
        let library = library(Utf8Path::from_path(dir.path()).unwrap());

        let preset = library.select("gsm8k-canary", Want::Preset).unwrap();
        assert_eq!(preset.preset.name, "gsm8k-canary");
        assert!(preset.cell.is_none());
        assert_eq!(preset.name(), "gsm8k-canary");

        // A bare cell that one grid has, and a cell written `grid/cell`: the grid's base with it.
        for name in ["only-ga", "ga/only-ga"] {
            for want in [Want::Cell, Want::Target] {
                let s = library.select(name, want).unwrap();
                let cell = s.cell.expect("a cell");
                assert_eq!((cell.grid, cell.cell.name.as_str()), ("ga", "only-ga"));
                assert_eq!(cell.cell.description, "only in ga");
                assert_eq!(s.preset.name, "gsm8k-canary");
                assert_eq!(s.name(), "ga/only-ga");
            }
        }
        let s = library.select("gb/shared", Want::Cell).unwrap();
        assert_eq!(s.cell.unwrap().cell.description, "in gb");

        let every = library.select_grid("gb").unwrap();
        let names: Vec<String> = every.iter().map(Selection::name).collect();
        assert_eq!(names, ["gb/shared", "gb/only-gb"]);
    }

    #[test]
    fn select_says_why_a_name_names_nothing_of_the_kind_wanted() {
        let dir = tempfile::tempdir().unwrap();
        let library = library(Utf8Path::from_path(dir.path()).unwrap());
        let text = |name, want| error(&library, name, want).to_string();

        assert!(matches!(
            error(&library, "shared", Want::Cell),
            Error::Ambiguous { name, candidates }
                if name == "shared" && candidates == ["ga/shared", "gb/shared"]
        ));
        assert_eq!(
            text("shared", Want::Target),
            "`shared` is ambiguous: it is `ga/shared` or `gb/shared`; name one of them"
        );
        assert_eq!(
            text("only-ga", Want::Preset),
            "`only-ga` is a grid cell, not a preset: run it with `rlctl grid ga/only-ga`"
        );
        assert_eq!(
            text("ga", Want::Cell),
            "`ga` is a grid, not a cell: run every cell with `rlctl grid --all ga`, or one as \
             `rlctl grid ga/CELL`"
        );
        assert_eq!(
            text("gsm8k-canary", Want::Cell),
            "`gsm8k-canary` is a run preset, not a grid cell: run it with `rlctl launch gsm8k-canary`"
        );
        // A grid where a preset is wanted is no preset, and no cell to point at.
        assert!(matches!(
            error(&library, "ga", Want::Preset),
            Error::UnknownName { kind: "preset", name, suggestion: None, .. } if name == "ga"
        ));
        assert!(matches!(
            error(&library, "gsm8k-canry", Want::Preset),
            Error::UnknownName { kind: "preset", suggestion: Some(s), .. } if s == "gsm8k-canary"
        ));
        assert!(matches!(
            error(&library, "only-gaa", Want::Cell),
            Error::UnknownName { kind: "cell", suggestion: Some(s), .. } if s == "ga/only-ga"
        ));
        assert!(matches!(
            error(&library, "ga/only-gaa", Want::Target),
            Error::UnknownName { kind: "preset or cell", suggestion: Some(s), .. } if s == "ga/only-ga"
        ));
    }
}
