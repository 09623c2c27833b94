//! Every cache is only a faster read: a log's steps (`.<log>.steps`) and the ledger's groups
//! (`.ledger.jsonl.groups`) give what a cold read (no cache) gives, whatever happened to the
//! file they summarise (appended, rewritten in place with the same size and the same last bytes,
//! truncated, its modification time set back) or to the cache itself (cut short, corrupted,
//! garbage). A corrupt cache never panics and is never an error.

use crate::common::staged;
use crate::common::{Sandbox, ok, rlctl, stderr};
use camino::{Utf8Path, Utf8PathBuf};
use proptest::prelude::*;
use rlctl::runs::read_series;
use rlctl::store::ledger::{Ledger, Record};
use rlctl::store::recorded::Recorded;
use std::collections::BTreeMap;
use std::path::Path;

fn line(n: u64, value: &str) -> String {
    format!("WANDB_MIRROR kind=train step={n} metrics={{\"timing/step\": {value}}}\n")
}

/// `rlctl metrics LOG --json`: what the user reads, through the cache next to the log.
fn metrics_json(log: &Path) -> String {
    let out = ok(rlctl().arg("metrics").arg(log).arg("--json"));
    String::from_utf8(out.stdout).unwrap()
}

/// The file's times set back to what they were: what `touch -r` does after an edit.
fn set_mtime(path: &Path, to: std::time::SystemTime) {
    let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    file.set_modified(to).unwrap();
}

#[test]
fn a_log_rewritten_in_place_with_the_same_size_and_last_bytes_is_read_again() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("job_1.out");
    let tail = line(3, "3.5");
    std::fs::write(&log, line(1, "1.5") + &line(2, "2.5") + &tail).unwrap();
    assert!(metrics_json(&log).contains("1.5"));
    // Step 1 written again with another value of the same length; the last bytes are the same.
    std::fs::write(&log, line(1, "9.5") + &line(2, "2.5") + &tail).unwrap();
    let json = metrics_json(&log);
    assert!(json.contains("9.5") && !json.contains("1.5"), "{json}");

    // Edited again and its modification time set back (`touch -r`): still read again.
    let before = std::fs::metadata(&log).unwrap().modified().unwrap();
    std::fs::write(&log, line(1, "7.5") + &line(2, "2.5") + &tail).unwrap();
    set_mtime(&log, before);
    let json = metrics_json(&log);
    assert!(json.contains("7.5") && !json.contains("9.5"), "{json}");
}

/// `estimate gsm8k-canary --json`'s source of speed, and its stderr.
fn canary_from(sandbox: &Sandbox) -> (String, String) {
    let out = sandbox
        .rlctl()
        .args(["estimate", "gsm8k-canary", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let e: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    (
        e["s_per_step_from"].as_str().unwrap().to_owned(),
        stderr(&out),
    )
}

#[test]
fn a_corrupt_groups_file_is_grouped_again_without_a_panic() {
    let sandbox = staged();
    let root = sandbox.root();
    ok(sandbox.rlctl().args(["launch", "gsm8k-canary"]));
    let ledger = root.join("work/runs/ledger.jsonl");
    let record: serde_json::Value =
        serde_json::from_str(std::fs::read_to_string(&ledger).unwrap().trim()).unwrap();
    let log = Path::new(record["log"].as_str().unwrap());
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    std::fs::write(log, line(1, "60") + &line(2, "3") + &line(3, "3")).unwrap();
    // Another run of other knobs, so that the canary's own group is not the only one.
    ok(sandbox.rlctl().args([
        "launch",
        "gsm8k-canary",
        "--job-name",
        "other",
        "--",
        "trainer.policy.optimizer_config.lr=2e-6",
    ]));
    let cold = canary_from(&sandbox);
    let groups = root.join("work/runs/.ledger.jsonl.groups");
    let kept = std::fs::read(&groups).unwrap();
    let end = kept.iter().position(|&b| b == b'\n').unwrap();

    // Pair numbers out of range in every group, the header left as it was.
    let mut body: serde_json::Value = serde_json::from_slice(&kept[end + 1..]).unwrap();
    for group in body["groups"].as_array_mut().unwrap() {
        group["knobs"].as_array_mut().unwrap().push(99_999.into());
    }
    let mut bad = kept[..=end].to_vec();
    bad.extend(serde_json::to_vec(&body).unwrap());
    let corrupt: [(&str, Vec<u8>); 4] = [
        ("an index out of range", bad),
        ("cut short", kept[..kept.len() - 7].to_vec()),
        ("garbage", b"{\"format\":2}\n\x00\xffgarbage".to_vec()),
        (
            "another format",
            kept.replacen(b"\"format\":", b"\"format\":9", 1),
        ),
    ];
    for (what, bytes) in corrupt {
        std::fs::write(&groups, bytes).unwrap();
        assert_eq!(canary_from(&sandbox), cold, "a groups file {what}");
        // Grouped again and kept: the next call reads it.
        assert_eq!(canary_from(&sandbox), cold, "after a groups file {what}");
    }
}

trait Replace {
    fn replacen(&self, from: &[u8], to: &[u8], n: usize) -> Vec<u8>;
}

impl Replace for Vec<u8> {
    fn replacen(&self, from: &[u8], to: &[u8], _: usize) -> Vec<u8> {
        let at = (self.windows(from.len()))
            .position(|w| w == from)
            .expect("present");
        [&self[..at], to, &self[at + from.len()..]].concat()
    }
}

// ---------------------------------------------------------------------------------------------
// Property: any sequence of changes to a file and its cache answers as a cold read.

/// A change to a summarised file or to its cache.
#[derive(Debug, Clone)]
enum Change {
    /// Lines appended (the last maybe without its newline).
    Append(u8, bool),
    /// One digit of the file changed in place: the same size and, mostly, the same tail.
    Rewrite(u16, bool),
    /// Cut to a fraction (per 256) of its length.
    Truncate(u8),
    /// A byte of the cache flipped.
    Flip(u16, u8),
    /// The cache cut to a fraction (per 256) of its length.
    CutCache(u8),
    /// The cache replaced by garbage.
    Garbage,
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        3 => (1u8..4, any::<bool>()).prop_map(|(n, whole)| Change::Append(n, whole)),
        3 => (any::<u16>(), any::<bool>()).prop_map(|(at, keep)| Change::Rewrite(at, keep)),
        1 => any::<u8>().prop_map(Change::Truncate),
        2 => (any::<u16>(), 1u8..=255).prop_map(|(at, x)| Change::Flip(at, x)),
        1 => any::<u8>().prop_map(Change::CutCache),
        1 => Just(Change::Garbage),
    ]
}

/// Applies `change` to `file` (whose lines `next` makes) and its cache `cache`.
fn apply(change: &Change, file: &Path, cache: &Path, next: &mut dyn FnMut() -> String) {
    let mut bytes = std::fs::read(file).unwrap_or_default();
    let mtime = std::fs::metadata(file).and_then(|m| m.modified()).ok();
    match *change {
        Change::Append(n, whole) => {
            // A torn line left by the last append is ended first, as writers do.
            if bytes.last().is_some_and(|&b| b != b'\n') {
                bytes.push(b'\n');
            }
            for i in 0..n {
                let mut l = next();
                if !whole && i + 1 == n {
                    l.pop();
                }
                bytes.extend(l.into_bytes());
            }
            std::fs::write(file, bytes).unwrap();
        }
        Change::Rewrite(at, keep_mtime) => {
            let digits: Vec<usize> = (0..bytes.len().saturating_sub(80))
                .filter(|&i| bytes[i].is_ascii_digit())
                .collect();
            if digits.is_empty() {
                return;
            }
            let i = digits[at as usize % digits.len()];
            bytes[i] = b'0' + (bytes[i] - b'0' + 1) % 10;
            std::fs::write(file, bytes).unwrap();
            if let (true, Some(t)) = (keep_mtime, mtime) {
                set_mtime(file, t);
            }
        }
        Change::Truncate(f) => {
            let len = bytes.len() * f as usize / 256;
            std::fs::write(file, &bytes[..len]).unwrap();
        }
        Change::Flip(at, x) => {
            if let Ok(mut kept) = std::fs::read(cache)
                && !kept.is_empty()
            {
                let i = at as usize % kept.len();
                kept[i] ^= x;
                std::fs::write(cache, kept).unwrap();
            }
        }
        Change::CutCache(f) => {
            if let Ok(kept) = std::fs::read(cache) {
                std::fs::write(cache, &kept[..kept.len() * f as usize / 256]).unwrap();
            }
        }
        Change::Garbage => std::fs::write(cache, b"\x7f\x00not a cache\n{}").unwrap(),
    }
}

/// A log's steps as read through its cache, and as read cold (a copy with no cache).
fn log_answers(log: &Utf8Path) -> (String, String) {
    let warm = format!("{:?}", read_series(log).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let copy = Utf8PathBuf::from_path_buf(dir.path().join("cold.out")).unwrap();
    std::fs::copy(log, &copy).unwrap();
    (warm, format!("{:?}", read_series(&copy).unwrap()))
}

fn record(n: u64, lr: u64) -> Record {
    let knobs: BTreeMap<String, String> = (0..6)
        .map(|k| (format!("trainer.k{k}"), format!("{}", (n + k) % 3)))
        .chain([("trainer.lr".to_owned(), format!("{lr}e-6"))])
        .collect();
    Record {
        job_id: (1000 + n).to_string(),
        target: format!("g/c{lr}"),
        group: "g".into(),
        member: format!("c{lr}"),
        grid: Some("g".into()),
        job_name: format!("c{lr}"),
        run_dir: "/r".into(),
        checkpoint_dir: "/c".into(),
        ckpt_resolved: None,
        log: format!("/l/{n}.out").into(),
        dependency: None,
        max_steps: Some(10),
        max_slots: None,
        attempt: 1,
        resumed_from: None,
        knobs: knobs.into(),
        layers: Default::default(),
        sbatch: vec![],
        submitted_unix: n as i64,
        expected_s_per_step: None,
        startup_s: None,
        nodes: None,
        startup_measured: false,
        prints_steps: true,
        lora: false,
        flavour: None,
        rlctl_version: "0".into(),
        skyrl_commit: None,
    }
}

/// What `estimate` reads of the groups of the ledger in `dir`, for every fingerprint recorded
/// so far: the jobs of the same knobs, and the nearer groups' jobs with their distance.
fn ledger_answers(dir: &Path, fingerprints: &[BTreeMap<String, String>]) -> String {
    let root = Utf8Path::from_path(dir).unwrap();
    let recorded = Recorded::read(Ledger::at(root)).unwrap();
    let mut out = String::new();
    for knobs in fingerprints {
        let query = recorded.query(knobs);
        let same: Vec<String> = (query.same().into_iter())
            .flat_map(|g| query.records(g).map(|r| r.job_id))
            .collect();
        let near: Vec<(usize, Vec<String>)> = (query.near(&["trainer.k0"]).into_iter())
            .map(|(d, g)| (d, query.records(g).map(|r| r.job_id).collect()))
            .collect();
        out.push_str(&format!("{same:?} {near:?}\n"));
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn a_logs_steps_read_through_its_cache_are_a_cold_read(
        changes in prop::collection::vec(change(), 1..12)
    ) {
        let dir = tempfile::tempdir().unwrap();
        let log = Utf8PathBuf::from_path_buf(dir.path().join("job_1.out")).unwrap();
        let cache = rlctl::runs::metrics::cache::path_for(&log);
        let mut n = 0u64;
        let mut next = || {
            n += 1;
            line(n, &format!("{}.{}", n * 7 % 13, n % 10))
        };
        std::fs::write(&log, next() + &next()).unwrap();
        read_series(&log).unwrap();
        for c in &changes {
            apply(c, log.as_std_path(), cache.as_std_path(), &mut next);
            let (warm, cold) = log_answers(&log);
            prop_assert_eq!(warm, cold, "after {:?}", c);
        }
    }

    #[test]
    fn the_ledgers_groups_read_through_their_file_are_a_cold_read(
        changes in prop::collection::vec(change(), 1..10)
    ) {
        let dir = tempfile::tempdir().unwrap();
        let ledger = dir.path().join("ledger.jsonl");
        let cache = dir.path().join(".ledger.jsonl.groups");
        let cold = tempfile::tempdir().unwrap();
        let mut n = 0u64;
        let mut next = || {
            n += 1;
            serde_json::to_string(&record(n, n % 4)).unwrap() + "\n"
        };
        std::fs::write(&ledger, next() + &next() + &next()).unwrap();
        ledger_answers(dir.path(), &[]);
        for c in &changes {
            apply(c, &ledger, &cache, &mut next);
            std::fs::copy(&ledger, cold.path().join("ledger.jsonl")).unwrap();
            let _ = std::fs::remove_file(cold.path().join(".ledger.jsonl.groups"));
            let asked: Vec<BTreeMap<String, String>> =
                (0..8).map(|i| (*record(i, i % 4).knobs).clone()).collect();
            prop_assert_eq!(
                ledger_answers(dir.path(), &asked),
                ledger_answers(cold.path(), &asked),
                "after {:?}", c
            );
        }
    }
}
