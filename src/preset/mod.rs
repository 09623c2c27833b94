//! The preset library: embedded files, overlaid by a user folder, looked up by name.

pub mod cluster;
pub mod container;
pub mod discover;
mod fields;
pub mod network;
pub mod node;
pub mod run;
mod select;
pub mod storage;
pub mod user_dir;
pub mod walltime;

use crate::error::{Error, Result, closest};
use crate::preset::cluster::{Cluster, ProfileFile};
use crate::preset::run::{CellFile, GridFile, RunPreset, RunPresetFile, resolve_run_preset};
pub use crate::preset::select::{GridCell, Selection, Want};
use crate::schema::Schema;
use crate::schema::flavour::Flavour;

/// The MarinSkyRL key list rlctl's rules and presets name keys by: an upstream list is seen
/// under its names.
pub const MARIN_KEYS: &str = "marinskyrl-a559688";
use crate::util::names::{PLAIN_WORD, is_plain_word};
use crate::util::toml_error;
use camino::{Utf8Path, Utf8PathBuf};
use serde::de::DeserializeOwned;
use std::borrow::Cow;
use std::cell::OnceCell;
use std::collections::BTreeMap;

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded.rs"));
}

/// The embedded template with this file name (e.g. `sbatch.sh.tera`).
pub fn template(name: &str) -> &'static str {
    let path = format!("templates/{name}");
    embedded::FILES
        .iter()
        .find(|(p, _)| *p == path)
        .map(|(_, text)| *text)
        .unwrap_or_else(|| panic!("template {path} is not embedded"))
}

/// The embedded preset file at `rel` under presets/ (e.g. `clusters/leonardo.toml`).
pub fn embedded(rel: &str) -> Option<&'static str> {
    let path = format!("presets/{rel}");
    embedded::FILES
        .iter()
        .find(|(p, _)| *p == path)
        .map(|(_, text)| *text)
}

/// One preset file: read at start-up, parsed the first time a command asks for it, so a
/// command pays only for the files it uses.
struct Entry<T> {
    file: String,
    text: Cow<'static, str>,
    parsed: OnceCell<T>,
}

impl<T: DeserializeOwned> Entry<T> {
    fn new(file: String, text: Cow<'static, str>) -> Entry<T> {
        Entry {
            file,
            text,
            parsed: OnceCell::new(),
        }
    }

    /// The parsed file; `check` runs once, on the first parse.
    fn get(&self, check: impl FnOnce(&str, &T) -> Result<()>) -> Result<&T> {
        if let Some(parsed) = self.parsed.get() {
            return Ok(parsed);
        }
        let parsed: T =
            toml::from_str(&self.text).map_err(|e| syntax(&self.file, &self.text, e))?;
        check(&self.file, &parsed)?;
        Ok(self.parsed.get_or_init(|| parsed))
    }
}

fn no_check<T>(_: &str, _: &T) -> Result<()> {
    Ok(())
}

/// What a name given on the command line refers to, inside `preset/` only: every other stage
/// gets a [`select::Selection`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    Preset(String),
    Cell { grid: String, cell: String },
}

pub struct Library {
    /// SkyRL key lists: the file name and its text, parsed by [`Library::schema`].
    schemas: BTreeMap<String, (String, Cow<'static, str>)>,
    /// Each key list parsed once per process: every plan of a grid checks against it.
    parsed_schemas: std::cell::RefCell<BTreeMap<String, std::rc::Rc<Schema>>>,
    clusters: BTreeMap<String, Entry<ProfileFile>>,
    runs: BTreeMap<String, Entry<RunPresetFile>>,
    grids: BTreeMap<String, Entry<GridFile>>,
}

impl Library {
    /// The embedded presets, with files of the same name in `user_dir` taking their place.
    pub fn load(user_dir: Option<&Utf8Path>) -> Result<Library> {
        let mut sources: BTreeMap<String, (String, Cow<'static, str>)> = BTreeMap::new();
        for (path, text) in embedded::FILES {
            if let Some(rel) = path.strip_prefix("presets/") {
                sources.insert(
                    rel.to_owned(),
                    (format!("{path} (embedded)"), Cow::Borrowed(*text)),
                );
            }
        }
        if let Some(dir) = user_dir {
            read_user_dir(dir, &mut sources)?;
        }
        let mut library = Library {
            schemas: BTreeMap::new(),
            parsed_schemas: Default::default(),
            clusters: BTreeMap::new(),
            runs: BTreeMap::new(),
            grids: BTreeMap::new(),
        };
        for (rel, (file, text)) in sources {
            if let Some(name) = rel
                .strip_prefix("schemas/")
                .and_then(|r| r.strip_suffix(".keys"))
            {
                library.schemas.insert(name.to_owned(), (file, text));
                continue;
            }
            let Some((kind, name)) = rel.strip_suffix(".toml").and_then(|r| r.split_once('/'))
            else {
                continue;
            };
            // Names become job names, folder names and words in the rendered scripts.
            if !is_plain_word(name) {
                return Err(Error::PresetInvalid {
                    file,
                    message: format!(
                        "`{name}` cannot name a preset: {PLAIN_WORD} in the file name"
                    ),
                });
            }
            let name = name.to_owned();
            match kind {
                "clusters" => _ = library.clusters.insert(name, Entry::new(file, text)),
                "runs" => _ = library.runs.insert(name, Entry::new(file, text)),
                "grids" => _ = library.grids.insert(name, Entry::new(file, text)),
                _ => {}
            }
        }
        library.no_shared_group()?;
        Ok(library)
    }

    /// A preset's runs live in `<root>/PRESET/<job name>` and a grid's cells in
    /// `<root>/GRID/<cell>`: with one name for both, a job name and a cell would be one
    /// checkpoint folder. One rule makes that impossible: no preset and grid share a name.
    fn no_shared_group(&self) -> Result<()> {
        let Some(name) = self.runs.keys().find(|n| self.grids.contains_key(*n)) else {
            return Ok(());
        };
        Err(Error::PresetInvalid {
            file: self.grids[name].file.clone(),
            message: format!(
                "`{name}` names both a run preset ({}) and a grid: their runs and cells would share the folders \
                 `<checkpoint_root>/{name}/...`, and a --job-name equal to a cell would write into that cell's \
                 checkpoints; rename the grid or the preset",
                self.runs[name].file
            ),
        })
    }

    /// A cluster profile, resolved. It is `shipped` when it is the embedded one, or a copy of it
    /// word for word: a profile file of your own (the one `rlctl init` writes, or one you wrote)
    /// is yours, whatever account it names.
    pub fn cluster(&self, name: &str) -> Result<Cluster> {
        let entry = self.clusters.get(name).ok_or_else(|| {
            Error::unknown("cluster", name, self.clusters.keys().map(String::as_str))
        })?;
        let mut cluster = Cluster::resolve(name, &entry.file, entry.get(no_check)?.clone())?;
        cluster.shipped = matches!(entry.text, Cow::Borrowed(_))
            || embedded(&format!("clusters/{name}.toml")) == Some(entry.text.as_ref());
        Ok(cluster)
    }

    /// A SkyRL key list by name (presets/schemas/NAME.keys).
    pub fn schema(&self, name: &str) -> Result<std::rc::Rc<Schema>> {
        if let Some(schema) = self.parsed_schemas.borrow().get(name) {
            return Ok(schema.clone());
        }
        let (file, text) = self.schemas.get(name).ok_or_else(|| {
            Error::unknown("schema", name, self.schemas.keys().map(String::as_str))
        })?;
        let schema = Schema::parse(name, text).map_err(|message| Error::PresetInvalid {
            file: file.clone(),
            message,
        })?;
        let schema = std::rc::Rc::new(schema);
        (self.parsed_schemas.borrow_mut()).insert(name.to_owned(), schema.clone());
        Ok(schema)
    }

    /// The schema a cluster's trainer is checked against: the profile's key list, or the
    /// checkout's own config; an upstream list is seen under MarinSkyRL's names (the view of
    /// [`Schema::upstream_view`]), against the shipped Marin list.
    pub fn trainer_schema(&self, cluster: &Cluster) -> Result<std::rc::Rc<Schema>> {
        let checkout = &cluster.software.skyrl;
        let found = Flavour::of_checkout(checkout);
        let Some(name) = &cluster.software.schema else {
            return self.checkout_schema(cluster, found);
        };
        let listed = self.schema_flavour(name)?;
        if let Some(found) = found.filter(|f| *f != listed) {
            return Err(Error::Unsupported(format!(
                "profile `{}`: `{checkout}` is a {found} checkout, but software.schema `{name}` \
                 lists {listed}'s keys: run `rlctl schema import {checkout}` and name the list it \
                 writes, or remove software.schema to read the checkout's own",
                cluster.name
            )));
        }
        match listed {
            Flavour::Marin => self.schema(name),
            Flavour::Upstream => self.upstream_view(name),
        }
    }

    /// The schema a plan with `knobs` is checked against: the cluster's, with the config group
    /// choices among the knobs (`algorithm_recipe=opd`) composed in where its MarinSkyRL
    /// checkout has those groups. A choice hydra would refuse (an option without a file, `+` on
    /// a group the defaults list names) is refused with the fix.
    pub fn plan_schema(
        &self,
        cluster: &Cluster,
        knobs: &[crate::schema::knob::Knob],
    ) -> Result<std::rc::Rc<Schema>> {
        let schema = self.trainer_schema(cluster)?;
        let choices: Vec<rlctl_grammar::import::Choice> = (knobs.iter())
            .filter(|k| !k.key.starts_with('~') && schema.group(k.path()).is_some())
            .map(|k| rlctl_grammar::import::Choice {
                group: k.path().to_owned(),
                option: k.value.hydra_text(),
                append: k.key.starts_with('+'),
            })
            .collect();
        if choices.is_empty() {
            return Ok(schema);
        }
        for knob in knobs.iter().filter(|k| schema.group(k.path()).is_some()) {
            schema.check(knob).map_err(Error::Unsupported)?;
        }
        let composed = Schema::with_choices(&cluster.software.skyrl, &choices)
            .map_err(|e| Error::Unsupported(format!("profile `{}`: {e}", cluster.name)))?;
        Ok(std::rc::Rc::new(composed))
    }

    /// The schema read from the profile's checkout itself (no `software.schema`), cached under
    /// the profile's cache root; an upstream one under MarinSkyRL's names.
    fn checkout_schema(
        &self,
        cluster: &Cluster,
        found: Option<Flavour>,
    ) -> Result<std::rc::Rc<Schema>> {
        let checkout = &cluster.software.skyrl;
        let Some(flavour) = found else {
            return Err(Error::Unsupported(format!(
                "profile `{}`: software.schema is not set and `{checkout}` holds no SkyRL checkout \
                 to read the keys from (neither `{}` nor `{}`): set software.schema to a key list \
                 (`rlctl list schemas`) or fix software.skyrl",
                cluster.name,
                Flavour::Marin.marker(),
                Flavour::Upstream.marker()
            )));
        };
        let id = format!("checkout:{checkout}");
        if let Some(schema) = self.parsed_schemas.borrow().get(&id) {
            return Ok(schema.clone());
        }
        let cache = cluster.storage.cache_root.join("rlctl");
        // Upstream's core OPD entry adds its teacher's and algorithm's keys to the config.
        let core_opd = crate::schema::flavour::UPSTREAM_OPD_CORE_FILE;
        let entry =
            (flavour == Flavour::Upstream && checkout.join(core_opd).is_file()).then_some(core_opd);
        let read = Schema::from_checkout(checkout, entry, &cache)
            .map_err(|e| Error::Unsupported(format!("profile `{}`: {e}", cluster.name)))?;
        let schema = match flavour {
            Flavour::Marin => read,
            Flavour::Upstream => {
                let marin = self.schema(MARIN_KEYS)?;
                Schema::upstream_view(&read, &marin).map_err(Error::Unsupported)?
            }
        };
        let schema = std::rc::Rc::new(schema);
        (self.parsed_schemas.borrow_mut()).insert(id, schema.clone());
        Ok(schema)
    }

    /// Which SkyRL a key list describes, by its header (MarinSkyRL's lists predate it).
    fn schema_flavour(&self, name: &str) -> Result<Flavour> {
        Ok(self.schema(name)?.flavour_header().unwrap_or_default())
    }

    /// An upstream list under MarinSkyRL's names, built once per process.
    fn upstream_view(&self, name: &str) -> Result<std::rc::Rc<Schema>> {
        let id = format!("{name} as {MARIN_KEYS}");
        if let Some(schema) = self.parsed_schemas.borrow().get(&id) {
            return Ok(schema.clone());
        }
        let upstream = self.schema(name)?;
        let marin = self.schema(MARIN_KEYS)?;
        let view =
            Schema::upstream_view(&upstream, &marin).map_err(|message| Error::PresetInvalid {
                file: self.schemas[name].0.clone(),
                message,
            })?;
        let view = std::rc::Rc::new(view);
        (self.parsed_schemas.borrow_mut()).insert(id, view.clone());
        Ok(view)
    }

    pub fn run_preset(&self, name: &str) -> Result<RunPreset> {
        let lookup = |n: &str| -> Result<(&str, &RunPresetFile)> {
            let entry = self
                .runs
                .get(n)
                .ok_or_else(|| Error::unknown("preset", n, self.runs.keys().map(String::as_str)))?;
            Ok((entry.file.as_str(), entry.get(no_check)?))
        };
        resolve_run_preset(name, &lookup)
    }

    /// The run preset a grid's cells start from; a missing one names the grid file to fix.
    pub fn grid_base(&self, grid: &str) -> Result<RunPreset> {
        let base = &self.grid(grid)?.base;
        self.run_preset(base).map_err(|e| Error::PresetInvalid {
            file: self.grids[grid].file.clone(),
            message: format!("grid `{grid}` has base `{base}`: {e}"),
        })
    }

    pub fn grid(&self, name: &str) -> Result<&GridFile> {
        let entry = (self.grids.get(name))
            .ok_or_else(|| Error::unknown("grid", name, self.grids.keys().map(String::as_str)))?;
        entry.get(check_cells)
    }

    pub fn cell(&self, grid: &str, cell: &str) -> Result<&CellFile> {
        let g = self.grid(grid)?;
        g.cells.iter().find(|c| c.name == cell).ok_or_else(|| {
            // Compared bare, named whole: `tbs65` is near `tbs64`, `g/tbs65` near nothing.
            let names = g.cells.iter().map(|c| c.name.as_str());
            Error::UnknownName {
                kind: "cell",
                name: format!("{grid}/{cell}"),
                suggestion: crate::error::closest(cell, names.clone())
                    .map(|c| format!("{grid}/{c}")),
                known: names.map(str::to_owned).collect(),
            }
        })
    }

    /// A cell by bare name (when only one grid has it) or as `grid/cell`.
    pub(crate) fn find_cell(&self, name: &str) -> Result<Target> {
        if let Some((grid, cell)) = name.split_once('/') {
            self.cell(grid, cell)?;
            return Ok(Target::Cell {
                grid: grid.to_owned(),
                cell: cell.to_owned(),
            });
        }
        // A grid that does not load cannot be searched; its error is the answer only when no
        // other grid has the cell and the name is nothing else.
        let mut matches: Vec<Target> = Vec::new();
        let mut broken = None;
        for grid in self.grids.keys() {
            match self.grid(grid) {
                Ok(g) if g.cells.iter().any(|c| c.name == name) => matches.push(Target::Cell {
                    grid: grid.clone(),
                    cell: name.to_owned(),
                }),
                Ok(_) => {}
                Err(e) => broken = broken.or(Some(e)),
            }
        }
        match matches.len() {
            1 => Ok(matches.into_iter().next().unwrap()),
            0 if self.runs.contains_key(name) => Err(Error::WrongKind {
                name: name.to_owned(),
                is: "run preset",
                wanted: "grid cell",
                fix: format!("run it with `rlctl launch {name}`"),
            }),
            0 if self.grids.contains_key(name) => Err(Error::WrongKind {
                name: name.to_owned(),
                is: "grid",
                wanted: "cell",
                fix: format!(
                    "run every cell with `rlctl grid --all {name}`, or one as `rlctl grid {name}/CELL`"
                ),
            }),
            0 if broken.is_some() => Err(broken.expect("checked")),
            0 => {
                let mut bare: Vec<&str> = Vec::new();
                for grid in self.grids.keys() {
                    bare.extend(self.grid(grid)?.cells.iter().map(|c| c.name.as_str()));
                }
                let suggestion = closest(name, bare.iter().copied())
                    .map(|s| self.find_cell(&s).map(|t| target_name(&t)).unwrap_or(s));
                Err(Error::UnknownName {
                    kind: "cell",
                    name: name.to_owned(),
                    suggestion,
                    known: self.all_cell_names(),
                })
            }
            _ => Err(Error::Ambiguous {
                name: name.to_owned(),
                candidates: matches.iter().map(target_name).collect(),
            }),
        }
    }

    /// Where a cluster profile, run preset or grid (`kind`: `clusters`, `runs`, `grids`) comes
    /// from, and its text: for `rlctl init` and `rlctl list`.
    pub fn source(&self, kind: &str, name: &str) -> Option<(&str, &str)> {
        fn of<T>(e: &Entry<T>) -> (&str, &str) {
            (&e.file, &e.text)
        }
        match kind {
            "clusters" => self.clusters.get(name).map(of),
            "runs" => self.runs.get(name).map(of),
            "grids" => self.grids.get(name).map(of),
            _ => None,
        }
    }

    pub fn preset_names(&self) -> impl Iterator<Item = &str> {
        self.runs.keys().map(String::as_str)
    }

    pub fn grid_names(&self) -> impl Iterator<Item = &str> {
        self.grids.keys().map(String::as_str)
    }

    pub fn cluster_names(&self) -> impl Iterator<Item = &str> {
        self.clusters.keys().map(String::as_str)
    }

    /// `grid/cell` of every cell of every grid that parses.
    pub(crate) fn all_cell_names(&self) -> Vec<String> {
        (self.grids.keys())
            .filter_map(|g| Some((g, self.grid(g).ok()?)))
            .flat_map(|(g, grid)| grid.cells.iter().map(move |c| format!("{g}/{}", c.name)))
            .collect()
    }
}

pub(crate) fn target_name(target: &Target) -> String {
    match target {
        Target::Preset(name) => name.clone(),
        Target::Cell { grid, cell } => format!("{grid}/{cell}"),
    }
}

/// A file that is not TOML, said with an excerpt of its line (see [`toml_error`]).
pub(crate) fn syntax(file: &str, text: &str, e: toml::de::Error) -> Error {
    Error::PresetSyntax {
        file: file.to_owned(),
        message: toml_error::describe(text, e.span(), e.message()),
    }
}

/// Cell names are plain words, each once in its grid.
fn check_cells(file: &str, grid: &GridFile) -> Result<()> {
    if grid.cells.is_empty() {
        return Err(Error::PresetInvalid {
            file: file.to_owned(),
            message: "the grid has no cells: add `[[cells]]` tables, each with a `name`".to_owned(),
        });
    }
    let mut seen = std::collections::BTreeSet::new();
    for cell in &grid.cells {
        if !is_plain_word(&cell.name) {
            return Err(Error::PresetInvalid {
                file: file.to_owned(),
                message: format!("cell name `{}`: {PLAIN_WORD}", cell.name),
            });
        }
        if !seen.insert(cell.name.as_str()) {
            return Err(Error::PresetInvalid {
                file: file.to_owned(),
                message: format!("cell `{}` is defined twice", cell.name),
            });
        }
    }
    Ok(())
}

fn read_user_dir(
    dir: &Utf8Path,
    sources: &mut BTreeMap<String, (String, Cow<'static, str>)>,
) -> Result<()> {
    let meta = std::fs::metadata(dir).map_err(|e| Error::io("read the presets folder", dir, e))?;
    if !meta.is_dir() {
        return Err(Error::BadPresetsDir {
            dir: dir.to_owned(),
            problem: "is not a folder",
        });
    }
    const KINDS: [&str; 4] = ["clusters", "runs", "grids", "schemas"];
    for entry in dir.read_dir_utf8().map_err(|e| Error::io("read", dir, e))? {
        let entry = entry.map_err(|e| Error::io("read", dir, e))?;
        let name = entry.file_name();
        if entry.path().is_dir() && !name.starts_with('.') && !KINDS.contains(&name) {
            return Err(Error::UnknownName {
                kind: "presets subfolder",
                name: format!("{dir}/{name}"),
                suggestion: closest(name, KINDS).map(|k| format!("{dir}/{k}")),
                known: KINDS.iter().map(|k| format!("{k}/")).collect(),
            });
        }
    }
    let mut found = false;
    for kind in KINDS {
        let sub: Utf8PathBuf = dir.join(kind);
        let Ok(entries) = sub.read_dir_utf8() else {
            continue;
        };
        found = true;
        for entry in entries {
            let entry = entry.map_err(|e| Error::io("read", sub.clone(), e))?;
            let path = entry.path();
            // Editors leave lock and backup files (`.#x.toml`, `.x.toml.swp`) beside the ones
            // being edited: hidden files are never presets.
            if entry.file_name().starts_with('.')
                || !matches!(path.extension(), Some("toml" | "keys"))
            {
                continue;
            }
            let text = std::fs::read_to_string(path).map_err(|e| Error::io("read", path, e))?;
            let name = path.file_name().unwrap_or_default();
            sources.insert(
                format!("{kind}/{name}"),
                (path.to_string(), Cow::Owned(text)),
            );
        }
    }
    if !found {
        return Err(Error::BadPresetsDir {
            dir: dir.to_owned(),
            problem: "holds none of the folders clusters/, runs/, grids/ or schemas/",
        });
    }
    Ok(())
}
