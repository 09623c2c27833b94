//! One step's metric values, and the names they go by, shared: the steps of a log nearly all
//! log the same few dozen metrics, so steps with the same names hold one counted copy of that
//! list and a vector of values. Reading a cached log of 10,000 steps back is then 10,000 vectors
//! of numbers, not 400,000 strings and tree inserts.

use serde::{Serialize, Serializer, ser::SerializeMap};
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

/// The names of a step's metrics, in strictly increasing order.
pub(crate) type Names = Arc<[Box<str>]>;

/// A step's metric values by name, in name order.
#[derive(Debug, Clone, PartialEq)]
pub struct Metrics {
    names: Names,
    /// `values[i]` is the value of `names[i]`.
    values: Vec<f64>,
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics {
            names: Arc::new([]),
            values: Vec::new(),
        }
    }
}

impl Metrics {
    /// `values[i]` of `names[i]` (strictly increasing, see [`ordered`]); `None` unless there
    /// are as many values as names.
    pub(crate) fn new(names: Names, values: Vec<f64>) -> Option<Metrics> {
        debug_assert!(ordered(&names));
        (names.len() == values.len()).then_some(Metrics { names, values })
    }

    /// The value of `key`, if the step has it.
    pub fn get(&self, key: &str) -> Option<f64> {
        (self.names.binary_search_by(|k| (**k).cmp(key)))
            .ok()
            .map(|i| self.values[i])
    }

    /// The metric names, in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(|k| &**k)
    }

    /// Names and values, in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, f64)> {
        self.keys().zip(self.values.iter().copied())
    }

    /// The names as shared with other steps.
    pub(crate) fn names(&self) -> &Names {
        &self.names
    }

    /// The values, in the order of [`Metrics::names`].
    pub(crate) fn values(&self) -> &[f64] {
        &self.values
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

/// One name looked up in many steps: steps that share a list of names share the answer, so a
/// series of 10,000 steps is searched once per list, not once per step.
pub struct Lookup<'k> {
    key: &'k str,
    /// The last list searched (its address) and where the name is in it.
    last: Option<(*const Box<str>, Option<usize>)>,
}

impl<'k> Lookup<'k> {
    pub fn new(key: &'k str) -> Lookup<'k> {
        Lookup { key, last: None }
    }

    /// The value of the name in `metrics`, if it has it.
    pub fn get(&mut self, metrics: &Metrics) -> Option<f64> {
        let list = metrics.names.as_ptr();
        let at = match self.last {
            Some((seen, at)) if seen == list => at,
            _ => {
                let at = metrics.names.binary_search_by(|k| (**k).cmp(self.key)).ok();
                self.last = Some((list, at));
                at
            }
        };
        at.map(|i| metrics.values[i])
    }
}

/// Whether `names` are strictly increasing, as every list of [`Metrics`] must be.
pub(crate) fn ordered(names: &[Box<str>]) -> bool {
    names.windows(2).all(|w| w[0] < w[1])
}

/// The last value of a name given twice wins, as in a map.
impl<K: AsRef<str>> FromIterator<(K, f64)> for Metrics {
    fn from_iter<I: IntoIterator<Item = (K, f64)>>(iter: I) -> Metrics {
        let map: BTreeMap<String, f64> = (iter.into_iter())
            .map(|(k, v)| (k.as_ref().to_owned(), v))
            .collect();
        NameLists::default().metrics(map)
    }
}

impl<K: AsRef<str>, const N: usize> From<[(K, f64); N]> for Metrics {
    fn from(entries: [(K, f64); N]) -> Metrics {
        entries.into_iter().collect()
    }
}

/// A JSON object, as the map it stands for.
impl Serialize for Metrics {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.len()))?;
        for (k, v) in self.iter() {
            map.serialize_entry(k, &v)?;
        }
        map.end()
    }
}

/// One copy of each list of names seen while reading a log.
#[derive(Debug, Default)]
pub(crate) struct NameLists {
    seen: HashSet<Names>,
    /// The list the last step had: most often the next one's too.
    last: Option<Names>,
}

impl NameLists {
    /// The shared copy of `names` (strictly increasing).
    pub(crate) fn share<'n>(
        &mut self,
        names: impl ExactSizeIterator<Item = &'n str> + Clone,
    ) -> Names {
        let same =
            |list: &Names| list.len() == names.len() && list.iter().map(|k| &**k).eq(names.clone());
        if let Some(last) = self.last.as_ref().filter(|l| same(l)) {
            return last.clone();
        }
        let list: Names = names.map(Box::from).collect();
        let shared = match self.seen.get(&list) {
            Some(seen) => seen.clone(),
            None => {
                self.seen.insert(list.clone());
                list
            }
        };
        self.last = Some(shared.clone());
        shared
    }

    /// `values` with the shared copy of their names.
    pub(crate) fn metrics(&mut self, values: BTreeMap<String, f64>) -> Metrics {
        let names = self.share(values.keys().map(String::as_str));
        Metrics {
            names,
            values: values.into_values().collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lookup_answers_as_get_whichever_list_each_step_has() {
        let mut lists = NameLists::default();
        let step = |lists: &mut NameLists, pairs: &[(&str, f64)]| {
            lists.metrics(pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect())
        };
        let steps = [
            step(&mut lists, &[("a", 1.0), ("b", 2.0)]),
            step(&mut lists, &[("a", 3.0), ("b", 4.0)]),
            step(&mut lists, &[("b", 5.0)]),
            step(&mut lists, &[("a", 6.0), ("b", 7.0)]),
            // The same names as the first, not its list: equal lists are shared too.
            [("a", 8.0), ("b", 9.0)].into(),
        ];
        assert!(Arc::ptr_eq(steps[0].names(), steps[3].names()));
        for key in ["a", "b", "c"] {
            let mut lookup = Lookup::new(key);
            let got: Vec<Option<f64>> = steps.iter().map(|m| lookup.get(m)).collect();
            let want: Vec<Option<f64>> = steps.iter().map(|m| m.get(key)).collect();
            assert_eq!(got, want, "{key}");
        }
        assert_eq!(steps[2].get("a"), None);
        assert_eq!(steps[4].get("b"), Some(9.0));
    }
}
