//! `rlctl list`: which profile and presets folder are in use, then every cluster, preset, grid
//! and cell; `--json` gives the same as one JSON document.

use super::Session;
use crate::cli::ListArgs;
use crate::error::{Error, Result};
use crate::preset::Library;
use crate::preset::user_dir::Chosen;
use crate::util::out::emit;
use crate::util::table::{Table, left};
use crate::util::versioned::line;
use schemars::JsonSchema;
use serde::Serialize;
use std::io::Write;

pub fn run(session: &Session, args: &ListArgs, out: &mut dyn Write) -> Result<()> {
    let listing = Listing::of(session)?;
    if args.json {
        // One line, as it always was.
        emit(out, &line(&listing))?;
        let broken = (listing.presets.iter().filter_map(|p| p.error.as_ref()))
            .chain(listing.grids.iter().filter_map(|g| g.error.as_ref()))
            .count();
        return match broken {
            0 => Ok(()),
            n => Err(Error::Problems(format!(
                "{n} preset file{} did not load: see their `error`",
                if n == 1 { "" } else { "s" }
            ))),
        };
    }
    let p = &listing.profile;
    let mut text = format!("profile  {}, from {}", p.cluster, p.file);
    match (&p.account, &p.work, &p.error) {
        (Some(account), Some(work), _) => {
            text.push_str(&format!(": account {account}, work {work}\n"))
        }
        (_, _, Some(error)) => text.push_str(&format!(": does not load: {error}\n")),
        _ => text.push('\n'),
    }
    text.push_str(&match &listing.presets_dir {
        Some(d) if d.in_use => format!(
            "presets  {}, {}, over the embedded ones\n",
            d.path,
            match d.chosen {
                "given" => "from --presets or RLCTL_PRESETS",
                _ => "your default folder",
            }
        ),
        Some(d) => format!(
            "presets  the embedded ones; `rlctl init CLUSTER` writes your profile into {}\n",
            d.path
        ),
        None => "presets  the embedded ones\n".to_owned(),
    });
    text.push('\n');
    emit(out, &text)?;
    catalog(&session.library, out)
}

/// Everything `rlctl list` shows, for `--json`.
#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct Listing {
    profile: Profile,
    presets_dir: Option<PresetsDir>,
    clusters: Vec<Named>,
    presets: Vec<Preset>,
    grids: Vec<Grid>,
}

/// The cluster profile in use (`--cluster`), resolved when it loads.
#[derive(Debug, Serialize, JsonSchema)]
struct Profile {
    cluster: String,
    file: String,
    account: Option<String>,
    work: Option<String>,
    run_root: Option<String>,
    error: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct PresetsDir {
    /// The folder given, or the default one.
    path: String,
    /// `given` (--presets, RLCTL_PRESETS) or `default` ($XDG_CONFIG_HOME/rlctl).
    chosen: &'static str,
    /// Whether its files are read: a default folder that holds no presets is not.
    in_use: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
struct Named {
    name: String,
    file: String,
}

#[derive(Debug, Serialize, JsonSchema)]
struct Preset {
    name: String,
    description: String,
    file: String,
    /// Why the preset does not load, when it does not.
    error: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct Grid {
    name: String,
    description: String,
    base: String,
    file: String,
    cells: Vec<Cell>,
    /// Why the grid does not load, when it does not.
    error: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct Cell {
    name: String,
    /// What `rlctl grid` takes: the bare name when one grid has it, `grid/cell` otherwise.
    target: String,
    description: String,
    max_steps: Option<i64>,
}

impl Listing {
    /// Everything `list --json` says: the profile in use, the presets folder, and every
    /// cluster, preset and grid of the library.
    fn of(session: &Session) -> Result<Listing> {
        let library = &session.library;
        let presets_dir = session.presets.path.as_ref().map(|path| PresetsDir {
            path: path.to_string(),
            chosen: match session.presets.chosen {
                Chosen::Given => "given",
                Chosen::Default => "default",
            },
            in_use: session.presets.in_use().is_some(),
        });
        let clusters = (library.cluster_names())
            .map(|n| Named {
                name: n.to_owned(),
                file: source_file(library, "clusters", n),
            })
            .collect();
        Ok(Listing {
            profile: Profile::of(session),
            presets_dir,
            clusters,
            presets: library
                .preset_names()
                .map(|n| Preset::of(library, n))
                .collect(),
            grids: library.grid_names().map(|n| Grid::of(library, n)).collect(),
        })
    }
}

/// The file a preset of `kind` (`clusters`, `runs`, `grids`) comes from; empty when none.
fn source_file(library: &Library, kind: &str, name: &str) -> String {
    library
        .source(kind, name)
        .map(|(f, _)| f.to_owned())
        .unwrap_or_default()
}

impl Profile {
    /// The profile in use, or why it does not load.
    fn of(session: &Session) -> Profile {
        let name = session.cluster_name();
        let mut profile = Profile {
            cluster: name.to_owned(),
            file: source_file(&session.library, "clusters", name),
            account: None,
            work: None,
            run_root: None,
            error: None,
        };
        match session.cluster() {
            Ok(c) => {
                profile.account = Some(c.sbatch.account);
                profile.work = Some(c.storage.work.into_string());
                profile.run_root = Some(c.storage.run_root.into_string());
            }
            Err(e) => profile.error = Some(e.to_string()),
        }
        profile
    }
}

impl Preset {
    /// Run preset `name`, or why it does not load.
    fn of(library: &Library, name: &str) -> Preset {
        let (description, error) = match library.run_preset(name) {
            Ok(preset) => (preset.description, None),
            Err(e) => (String::new(), Some(e.to_string())),
        };
        Preset {
            name: name.to_owned(),
            description,
            file: source_file(library, "runs", name),
            error,
        }
    }
}

impl Grid {
    /// Grid `name` and its cells, or why it (or its base preset) does not load.
    fn of(library: &Library, name: &str) -> Grid {
        let file = source_file(library, "grids", name);
        let grid = match (library.grid(name)).and_then(|g| library.grid_base(name).map(|_| g)) {
            Ok(grid) => grid,
            Err(e) => {
                return Grid {
                    name: name.to_owned(),
                    description: String::new(),
                    base: String::new(),
                    file,
                    cells: Vec::new(),
                    error: Some(e.to_string()),
                };
            }
        };
        let cells = (grid.cells.iter())
            .map(|cell| Cell {
                name: cell.name.clone(),
                target: library.cell_name(name, &cell.name),
                description: cell.description.clone(),
                max_steps: cell.max_steps,
            })
            .collect();
        Grid {
            name: name.to_owned(),
            description: grid.description.clone(),
            base: grid.base.clone(),
            file,
            cells,
            error: None,
        }
    }
}

/// The clusters, presets, grids and their cells, as a table; a file that does not load is
/// listed as broken and named after the table (exit 1).
fn catalog(library: &Library, out: &mut dyn Write) -> Result<()> {
    // One layout for both lists, so that every description starts in the same column; a cell's
    // name is indented under its grid's.
    let names = || Table::new([left().min(22), left()]).indent(2).gap(1);
    let mut text = String::from("clusters:\n");
    for name in library.cluster_names() {
        text.push_str(&format!("  {name}\n"));
    }
    // A broken file is listed with its error, and the others still are: `list` is where a
    // user looks when something does not resolve.
    let mut broken = Vec::new();
    text.push_str("\npresets (rlctl launch PRESET):\n");
    let mut presets = names();
    for name in library.preset_names() {
        match library.run_preset(name) {
            Ok(preset) => presets.row([name.to_owned(), preset.description.clone()]),
            Err(e) => {
                presets.row([name.to_owned(), "(broken: see below)".to_owned()]);
                broken.push(e.to_string());
            }
        }
    }
    text.push_str(&presets.render());
    text.push_str("\ngrids (rlctl grid CELL, rlctl grid --all GRID):\n");
    let mut grids = names();
    for name in library.grid_names() {
        let grid = match (library.grid(name)).and_then(|g| library.grid_base(name).map(|_| g)) {
            Ok(grid) => grid,
            Err(e) => {
                grids.row([name.to_owned(), "(broken: see below)".to_owned()]);
                broken.push(e.to_string());
                continue;
            }
        };
        grids.row([
            name.to_owned(),
            format!(
                "{} ({} cells, base {})",
                grid.description,
                grid.cells.len(),
                grid.base
            ),
        ]);
        for cell in &grid.cells {
            grids.row([format!("  {}", cell.name), cell.description.clone()]);
        }
    }
    text.push_str(&grids.render());
    emit(out, &text)?;
    if broken.is_empty() {
        return Ok(());
    }
    Err(Error::Problems(format!(
        "{} preset file{} did not load:\n  {}",
        broken.len(),
        if broken.len() == 1 { "" } else { "s" },
        broken.join("\n  ")
    )))
}
