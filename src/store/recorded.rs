//! The ledger's records grouped by knob fingerprint, for the speeds `estimate`, `launch` and
//! `grid` look up: kept next to the ledger (`.ledger.jsonl.groups`) with the offset it was read
//! to, so that a ledger of thousands of runs is parsed once and later only what was appended.
//!
//! A ledger of many runs holds few distinct fingerprints, and those share most of their
//! `key=value` pairs: each pair is stored once, a fingerprint as the pair numbers, and a record
//! only as the byte offset of its ledger line, read back for the few records a speed needs.
//! Like the log cache, the groups file is replaced atomically, and one that cannot be read or
//! written is only a slower read.

use crate::error::{Error, Result};
use crate::store::ledger::{Ledger, Record};
use crate::util::mark::{Mark, Since, load_kept, store_kept};
use camino::{Utf8Path, Utf8PathBuf};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

/// What the groups file's layout is; a file of another is read as none. 2: the mark samples the
/// whole ledger and the file carries its checksum.
const FORMAT: u32 = 2;

/// One distinct fingerprint and the records that have it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Group {
    /// Numbers of its `key=value` pairs, increasing.
    knobs: Vec<u32>,
    /// The offsets of its records' ledger lines, oldest first.
    lines: Vec<u64>,
    /// The place of its newest record in the ledger (0 the oldest).
    newest: u64,
}

/// The ledger's records grouped by fingerprint.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Groups {
    /// Each distinct `key=value` of any fingerprint, once.
    pairs: Vec<(String, String)>,
    groups: Vec<Group>,
    /// Records grouped so far.
    records: u64,
}

impl Groups {
    /// Whether these groups can be of a ledger read up to `end`: every pair once, every
    /// group's pair numbers increasing and in range and its knobs its own, every record's line
    /// before `end` and in one group once, each group's newest among the records. Anything else
    /// is not this program's groups file, and the ledger is grouped again.
    fn valid(&self, end: u64) -> bool {
        let pairs: std::collections::HashSet<&(String, String)> = self.pairs.iter().collect();
        let mut knobs = std::collections::HashSet::new();
        let mut lines = std::collections::HashSet::new();
        let mut count = 0u64;
        let fits = |g: &Group| {
            g.knobs.windows(2).all(|w| w[0] < w[1])
                && g.knobs
                    .last()
                    .is_none_or(|&k| (k as usize) < self.pairs.len())
                && g.lines.windows(2).all(|w| w[0] < w[1])
                && g.lines.last().is_some_and(|&l| l < end)
                && g.newest < self.records
        };
        pairs.len() == self.pairs.len()
            && self.groups.iter().all(|g| {
                count += g.lines.len() as u64;
                fits(g) && knobs.insert(&g.knobs) && g.lines.iter().all(|&l| lines.insert(l))
            })
            && count == self.records
    }

    /// Adds a record whose ledger line starts at `line`.
    fn add(&mut self, line: u64, knobs: &BTreeMap<Cow<str>, Cow<str>>, index: &mut Index) {
        let mut ids: Vec<u32> = (knobs.iter())
            .map(
                |(k, v)| match index.pairs.get(&**k).and_then(|m| m.get(&**v)) {
                    Some(&id) => id,
                    None => {
                        let id = self.pairs.len() as u32;
                        self.pairs.push((k.to_string(), v.to_string()));
                        (index.pairs.entry(k.to_string()).or_default()).insert(v.to_string(), id);
                        id
                    }
                },
            )
            .collect();
        ids.sort_unstable();
        let place = self.records;
        self.records += 1;
        match index.groups.get(&ids) {
            Some(&i) => {
                self.groups[i].lines.push(line);
                self.groups[i].newest = place;
            }
            None => {
                index.groups.insert(ids.clone(), self.groups.len());
                self.groups.push(Group {
                    knobs: ids,
                    lines: vec![line],
                    newest: place,
                });
            }
        }
    }
}

/// A ledger line read for its knobs alone.
#[derive(Deserialize)]
struct KnobsOf<'a> {
    #[serde(borrow)]
    knobs: BTreeMap<Cow<'a, str>, Cow<'a, str>>,
}

/// The number of each pair (key, then value) and the place of each group of [`Groups`], for
/// adding records.
struct Index {
    pairs: HashMap<String, HashMap<String, u32>>,
    groups: HashMap<Vec<u32>, usize>,
}

impl Index {
    fn of(groups: &Groups) -> Index {
        let mut pairs: HashMap<String, HashMap<String, u32>> = HashMap::new();
        for (i, (k, v)) in groups.pairs.iter().enumerate() {
            pairs
                .entry(k.clone())
                .or_default()
                .insert(v.clone(), i as u32);
        }
        Index {
            pairs,
            groups: (groups.groups.iter().enumerate())
                .map(|(i, g)| (g.knobs.clone(), i))
                .collect(),
        }
    }
}

/// The recorded runs of a ledger, grouped by fingerprint.
pub struct Recorded {
    ledger: Ledger,
    groups: Groups,
}

/// A fingerprint looked up among the recorded ones.
pub struct Query<'r> {
    recorded: &'r Recorded,
    /// The number of each of the fingerprint's pairs, `None` for a pair no record has.
    ids: Vec<Option<u32>>,
    knobs: &'r BTreeMap<String, String>,
}

impl Recorded {
    /// The groups of `ledger`: from its groups file, plus the records appended since.
    pub fn read(ledger: Ledger) -> Result<Recorded> {
        let path = ledger.path().to_owned();
        let mut file = match std::fs::File::open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Recorded {
                    ledger,
                    groups: Groups::default(),
                });
            }
            Err(e) => return Err(Error::io("open", &path, e)),
        };
        let meta = file.metadata().map_err(|e| Error::io("read", &path, e))?;
        let store = groups_path(&path);
        let since = match load(&store) {
            Some((mark, groups)) => {
                let since =
                    (mark.since(&mut file, &meta)).map_err(|e| Error::io("read", &path, e))?;
                Some((since, groups))
            }
            None => None,
        };
        let (mut groups, start) = match since {
            Some((Since::Unchanged, groups)) => return Ok(Recorded { ledger, groups }),
            Some((Since::Appended(offset), groups)) => (groups, offset),
            _ => (Groups::default(), 0),
        };
        let mut index = Index::of(&groups);
        let end = ledger.lines_from(&mut file, start, |line, bytes| {
            let record: KnobsOf = serde_json::from_slice(bytes)?;
            groups.add(line, &record.knobs, &mut index);
            Ok(())
        })?;
        // Only a slower next read if it cannot be written.
        if let Ok(mark) = Mark::new(&mut file, &meta, end) {
            let _ = save(&store, mark, &groups);
        }
        Ok(Recorded { ledger, groups })
    }

    /// `knobs` looked up among the recorded fingerprints.
    pub fn query<'r>(&'r self, knobs: &'r BTreeMap<String, String>) -> Query<'r> {
        let numbers: HashMap<(&str, &str), u32> = (self.groups.pairs.iter().enumerate())
            .map(|(i, (k, v))| ((k.as_str(), v.as_str()), i as u32))
            .collect();
        let ids = (knobs.iter())
            .map(|(k, v)| numbers.get(&(k.as_str(), v.as_str())).copied())
            .collect();
        Query {
            recorded: self,
            ids,
            knobs,
        }
    }

    /// The record whose ledger line starts at `line`.
    fn record(&self, line: u64) -> Option<Record> {
        self.ledger.record_at(line)
    }
}

impl<'r> Query<'r> {
    /// The group with exactly these knobs, if one was recorded.
    pub fn same(&self) -> Option<&'r Group> {
        let mut ids: Vec<u32> = self.ids.iter().copied().collect::<Option<_>>()?;
        ids.sort_unstable();
        self.recorded.groups.groups.iter().find(|g| g.knobs == ids)
    }

    /// The other groups whose values of `keys` are these knobs' values, nearest first (fewest
    /// knobs that differ), among as near the one with the newest record first; with how many
    /// knobs differ.
    pub fn near(&self, keys: &[&str]) -> Vec<(usize, &'r Group)> {
        let pairs = &self.recorded.groups.pairs;
        let mine: Vec<Option<&str>> = keys.iter().map(|k| self.value(k)).collect();
        let same = self.same().map(|g| g as *const Group);
        let mut near: Vec<(usize, &Group)> = (self.recorded.groups.groups.iter())
            .filter(|g| Some(*g as *const Group) != same)
            .filter(|g| {
                (keys.iter().zip(&mine)).all(|(key, mine)| {
                    let theirs = (g.knobs.iter())
                        .map(|&i| &pairs[i as usize])
                        .find(|(k, _)| k == key)
                        .map(|(_, v)| v.as_str());
                    theirs == *mine
                })
            })
            .map(|g| (self.distance(g), g))
            .collect();
        near.sort_by_key(|(d, g)| (*d, std::cmp::Reverse(g.newest)));
        near
    }

    /// `group`'s value of `key`, if it has one.
    pub fn value_in(&self, group: &Group, key: &str) -> Option<String> {
        let pairs = &self.recorded.groups.pairs;
        (group.knobs.iter())
            .map(|&i| &pairs[i as usize])
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    }

    /// This fingerprint's value of `key`.
    fn value(&self, key: &str) -> Option<&str> {
        self.knobs.get(key).map(String::as_str)
    }

    /// How many knobs differ: a value that differs, or a key only one side has.
    fn distance(&self, group: &Group) -> usize {
        let pairs = &self.recorded.groups.pairs;
        let shared = (self.ids.iter().flatten())
            .filter(|id| group.knobs.binary_search(id).is_ok())
            .count();
        let only_theirs = (group.knobs.iter())
            .filter(|&&i| !self.knobs.contains_key(&pairs[i as usize].0))
            .count();
        (self.ids.len() - shared) + only_theirs
    }

    /// The group's records, newest first.
    pub fn records(&self, group: &'r Group) -> impl Iterator<Item = Record> + 'r {
        let recorded = self.recorded;
        (group.lines.iter().rev()).filter_map(move |&line| recorded.record(line))
    }
}

/// Where the groups of the ledger at `ledger` are kept.
fn groups_path(ledger: &Utf8Path) -> Utf8PathBuf {
    let name = ledger.file_name().unwrap_or("ledger.jsonl");
    ledger.with_file_name(format!(".{name}.groups"))
}

fn load(path: &Utf8Path) -> Option<(Mark, Groups)> {
    let (mark, body) = load_kept(path, FORMAT)?;
    let groups: Groups = serde_json::from_slice(&body).ok()?;
    groups.valid(mark.offset).then_some((mark, groups))
}

fn save(path: &Utf8Path, mark: Mark, groups: &Groups) -> std::io::Result<()> {
    let body = serde_json::to_vec(groups).map_err(std::io::Error::other)?;
    store_kept(path, FORMAT, mark, &body)
}
