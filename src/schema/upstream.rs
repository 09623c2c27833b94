//! Upstream SkyRL's key list seen under MarinSkyRL's names, so that one preset, and every rule
//! of rlctl's, reads the same keys on either flavour; the trainer gets upstream's own names.
//!
//! The view holds upstream's keys, the renamed ones under their Marin name. A knob of a Marin
//! key with no counterpart is refused with the reason; `+` (which `from_cli_overrides` refuses)
//! is dropped from a key upstream has, and refused on one it lacks.

use crate::schema::Schema;
use crate::schema::flavour::{Flavour, UPSTREAM_OPD_CORE, UPSTREAM_OPD_CORE_FILE};
use crate::schema::grammar::{KeyList, dotlist};
use crate::schema::knob::{Knob, Scalar};
use crate::schema::renames::rename_pairs;
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Write as _;

pub(super) struct View {
    /// MarinSkyRL's name → upstream's.
    to_upstream: HashMap<String, String>,
    /// Upstream's name → MarinSkyRL's.
    to_marin: HashMap<String, String>,
    /// MarinSkyRL keys upstream lacks, by name, kept to say so rather than "unknown key".
    marin_only: std::collections::HashSet<String>,
    /// `(MarinSkyRL key, upstream key)`, in the Marin list's order.
    pairs: Vec<(String, String)>,
    /// Upstream's own keys and defaults: what its parser judges the job's command line by.
    keys: TrainerKeys,
    /// The config has upstream's core on-policy distillation (`trainer.teacher.*`): MarinSkyRL's
    /// `teacher.*` keys then translate to it where it has them.
    core_opd: bool,
}

/// A key list under the trainer's own names.
struct TrainerKeys(Vec<(String, String)>);

impl KeyList for TrainerKeys {
    fn key_defaults(&self) -> Vec<(&str, &str)> {
        self.0
            .iter()
            .map(|(k, d)| (k.as_str(), d.as_str()))
            .collect()
    }
}

/// Marin sections upstream has no counterpart for, and what to do instead.
const NO_COUNTERPART: [(&str, &str); 1] = [(
    "teacher.",
    "MarinSkyRL's vLLM teacher has no counterpart in upstream skyrl's on-policy distillation \
     example, where the reference model (`trainer.ref.model.path`) is the teacher, scored by the FSDP \
     ref worker: drop the knob (a preset's own teacher knobs are left out there, with a warning), or \
     run on a checkout with upstream's core OPD (`skyrl/train/entrypoints/main_opd.py`) or on \
     MarinSkyRL",
)];

/// Where upstream's core OPD keeps the teacher MarinSkyRL keeps at the top level.
const CORE_TEACHER: &str = "trainer.teacher.";

/// Marin's switch for vLLM's async engine (its OPD scripts set it false): upstream's config
/// has no such field, but its parser takes `true` (and drops it) and refuses anything else.
const ASYNC_ENGINE: (&str, &str) = (
    "generator.async_engine",
    "generator.inference_engine.async_engine",
);

impl Schema {
    /// `upstream`'s keys under `marin`'s names where a key was renamed (see `renames.rs`).
    pub fn upstream_view(upstream: &Schema, marin: &Schema) -> Result<Schema, String> {
        let mut pairs = rename_pairs(marin.keys(), upstream.keys());
        let core_opd = upstream.keys().any(|(k, _)| k.starts_with(CORE_TEACHER));
        if core_opd {
            pairs.extend(teacher_pairs(marin, upstream));
        }
        pairs.push((ASYNC_ENGINE.0.to_owned(), ASYNC_ENGINE.1.to_owned()));
        let to_marin: HashMap<String, String> =
            pairs.iter().map(|(m, u)| (u.clone(), m.clone())).collect();
        // The header first: the flavour and the names the entry module registers stay the list's.
        let mut text = String::from("# flavour: upstream\n");
        for (kind, name) in &upstream.registered {
            let _ = writeln!(text, "# registered {kind}: {name}");
        }
        for key in upstream.open_keys() {
            let name = to_marin.get(key).map_or(key, String::as_str);
            let _ = writeln!(text, "# open: {name}");
        }
        for (key, default) in upstream.keys() {
            let name = to_marin.get(key).map_or(key, String::as_str);
            let _ = writeln!(text, "{name}={default}");
        }
        let _ = writeln!(text, "{}=true", ASYNC_ENGINE.0);
        let mut view = Schema::parse(&upstream.name, &text)?;
        let marin_only = (marin.keys())
            .map(|(k, _)| k)
            .filter(|k| view.default_text(k).is_none())
            .map(str::to_owned)
            .collect();
        view.upstream = Some(Box::new(View {
            to_upstream: pairs.iter().map(|(m, u)| (m.clone(), u.clone())).collect(),
            to_marin,
            marin_only,
            pairs,
            // An open field is a dict to upstream's parser: any key below it is taken.
            keys: TrainerKeys(
                (upstream.keys())
                    .map(|(k, d)| {
                        let open = upstream.open_keys().any(|o| o == k);
                        (k.to_owned(), if open { "{}" } else { d }.to_owned())
                    })
                    .collect(),
            ),
            core_opd,
        }));
        Ok(view)
    }

    /// Whether the trainer builds a teacher of its own for on-policy distillation (a
    /// `teacher.*` section): MarinSkyRL's vLLM teacher, or upstream's core OPD; not upstream's
    /// example, whose teacher is the reference model.
    pub fn teacher_section(&self) -> bool {
        self.upstream.as_ref().is_none_or(|v| v.core_opd)
    }

    /// A preset's entry module as this trainer runs it: the flavour's name of it, and on an
    /// upstream checkout with the core OPD entry, that entry for any on-policy distillation.
    pub fn entry_module(&self, module: &str) -> String {
        let core = self.upstream.as_ref().is_some_and(|v| v.core_opd);
        if core && Flavour::is_opd_entry(module) {
            return UPSTREAM_OPD_CORE.to_owned();
        }
        self.flavour().entry_module(module)
    }

    /// Which SkyRL the schema's trainer is.
    pub fn flavour(&self) -> Flavour {
        if self.upstream.is_some() {
            Flavour::Upstream
        } else {
            Flavour::Marin
        }
    }

    /// The renamed keys: `(MarinSkyRL key, upstream key)`; none for a Marin schema.
    pub fn renamed(&self) -> &[(String, String)] {
        self.upstream.as_ref().map_or(&[], |v| &v.pairs)
    }

    /// A key (without prefix) as the trainer spells it; a key below a renamed one (a sub-key
    /// of a dict such as `generator.engine_init_kwargs`) moves with it.
    pub fn trainer_key<'a>(&'a self, key: &'a str) -> Cow<'a, str> {
        match self
            .upstream
            .as_ref()
            .and_then(|v| renamed(&v.to_upstream, key))
        {
            Some(name) => Cow::Owned(name),
            None => Cow::Borrowed(key),
        }
    }

    /// A knob's key as rlctl names it: a key typed under upstream's name (or below one) gets
    /// Marin's, its prefix kept.
    pub fn own_key(&self, key: &str) -> String {
        let path = key.trim_start_matches(['+', '~']);
        let prefix = &key[..key.len() - path.len()];
        match self
            .upstream
            .as_ref()
            .and_then(|v| renamed(&v.to_marin, path))
        {
            Some(name) => format!("{prefix}{name}"),
            None => key.to_owned(),
        }
    }

    /// Whether `path` lies below a dict-typed field of upstream's config (a default `{...}`):
    /// `from_cli_overrides` takes any key there, without `+`.
    pub(super) fn under_upstream_dict(&self, path: &str) -> bool {
        let is_dict =
            |key: &str| (self.default_text(key)).is_some_and(|d| d.trim_start().starts_with('{'));
        self.upstream.is_some() && path.match_indices('.').any(|(i, _)| is_dict(&path[..i]))
    }

    /// Whether the knob gives a dict-typed field of upstream's config a dict: OmegaConf merges
    /// it into the field whatever its keys, no `+` needed.
    pub(super) fn upstream_dict_value(&self, knob: &Knob) -> bool {
        let is_dict = |text: &str| text.trim_start().starts_with('{');
        self.upstream.is_some()
            && self.default_text(knob.path()).is_some_and(is_dict)
            && is_dict(&knob.value.hydra_text())
    }

    /// Why a key of a MarinSkyRL section upstream has no counterpart for cannot be set here;
    /// one reason for the whole section (`teacher.*`), so it is said once for all its knobs.
    pub fn no_counterpart(&self, key: &str) -> Option<&'static str> {
        if self.upstream.as_ref()?.core_opd {
            // Each teacher key translates, or is refused by name ([`Schema::as_trainer_takes`]).
            return None;
        }
        NO_COUNTERPART
            .iter()
            .find(|(section, _)| key.starts_with(section))
            .map(|(_, why)| *why)
    }

    /// The job's whole command line (`argv`, the trainer's own names) as the trainer's parser
    /// reads it: upstream's `from_cli_overrides` judges the items together (its interpolations
    /// resolve against the command line only); MarinSkyRL's hydra judges each knob, done by
    /// [`Schema::check`].
    pub fn check_trainer_args(&self, argv: &[String]) -> Result<(), String> {
        let Some(view) = &self.upstream else {
            return Ok(());
        };
        dotlist::check_argv(&view.keys, argv)
            .map(|_| ())
            .map_err(|refusal| refusal.message)
    }

    /// The knob as upstream's parser would take it (no `+`), or why it cannot; a Marin
    /// schema takes every knob as it is.
    pub(super) fn as_trainer_takes<'a>(&self, knob: &'a Knob) -> Result<Cow<'a, Knob>, String> {
        let Some(view) = &self.upstream else {
            return Ok(Cow::Borrowed(knob));
        };
        let path = knob.path();
        if let Some(why) = self.no_counterpart(path) {
            return Err(format!("`{path}`: {why}"));
        }
        if path == ASYNC_ENGINE.0 && knob.value.scalar() != Scalar::Bool(true) {
            return Err(format!(
                "`{path}={}`: upstream skyrl always runs the async engine and refuses any value \
                 but true for `{}` when it parses its config: drop the knob",
                knob.value.hydra_text(),
                ASYNC_ENGINE.1
            ));
        }
        if view.core_opd && path.starts_with("teacher.") && view.marin_only.contains(path) {
            return Err(format!(
                "`{path}` has no counterpart under `{CORE_TEACHER}*` in this checkout's core on-policy \
                 distillation ({}): drop it, set the teacher by the checkout's own `{CORE_TEACHER}*` keys \
                 (`rlctl schema import CHECKOUT --entry {UPSTREAM_OPD_CORE_FILE}` lists them), or run on \
                 MarinSkyRL",
                self.name
            ));
        }
        if view.marin_only.contains(path) {
            return Err(format!(
                "`{path}` is MarinSkyRL's and has no counterpart in upstream skyrl ({}): drop it, \
                 or run on a MarinSkyRL checkout",
                self.name
            ));
        }
        if knob.key.starts_with('~') {
            return Err(format!(
                "`{}`: upstream skyrl's config cannot delete a key; set it to null instead",
                knob.key
            ));
        }
        if knob.key.starts_with('+') {
            let plain = Knob {
                key: path.to_owned(),
                value: knob.value.clone(),
                origin: knob.origin.clone(),
            };
            // Below a dict-typed field upstream takes any key as it is: `+` (which MarinSkyRL's
            // hydra needs there) is dropped like on a key upstream has.
            if !self.under_upstream_dict(path) && self.key_verdict(&plain).is_err() {
                return Err(format!(
                    "`{}`: upstream skyrl refuses `+` and has no `{}`: a new key needs a subclass \
                     of its config dataclass in the entry module",
                    knob.key,
                    self.trainer_key(path)
                ));
            }
            return Ok(Cow::Owned(plain));
        }
        Ok(Cow::Borrowed(knob))
    }
}

/// MarinSkyRL's `teacher.*` keys paired with upstream's core `trainer.teacher.*`: the same key
/// below `trainer.`, or one renamed by the rules of `renames.rs` among those left.
fn teacher_pairs(marin: &Schema, upstream: &Schema) -> Vec<(String, String)> {
    let rooted: Vec<(String, String)> = (marin.keys())
        .filter(|(k, _)| k.starts_with("teacher."))
        .map(|(k, d)| (format!("trainer.{k}"), d.to_owned()))
        .collect();
    let core: Vec<(&str, &str)> = (upstream.keys())
        .filter(|(k, _)| k.starts_with(CORE_TEACHER))
        .collect();
    let same = (rooted.iter())
        .filter(|(k, _)| core.iter().any(|(c, _)| c == k))
        .map(|(k, _)| (k.clone(), k.clone()));
    let renamed = rename_pairs(
        rooted.iter().map(|(k, d)| (k.as_str(), d.as_str())),
        core.iter().copied(),
    );
    (same.chain(renamed))
        .map(|(m, u)| (m["trainer.".len()..].to_owned(), u))
        .collect()
}

/// `path` under its new name: the path itself renamed, or its longest renamed dotted prefix.
fn renamed(names: &HashMap<String, String>, path: &str) -> Option<String> {
    if let Some(name) = names.get(path) {
        return Some(name.clone());
    }
    let (i, _) = (path.rmatch_indices('.')).find(|(i, _)| names.contains_key(&path[..*i]))?;
    Some(format!("{}{}", names[&path[..i]], &path[i..]))
}
