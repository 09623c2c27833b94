//! The per-log cache of parsed steps: a second reader reads only what the log gained, a
//! truncated or replaced log is read again, non-finite values survive, and readers may run at
//! once while the log grows. A step trained again by a resumed slot takes its last values.

use camino::{Utf8Path, Utf8PathBuf};
use rlctl::runs::metrics::cache::path_for;
use rlctl::runs::metrics::{Kind, Step, Tail, scan};
use rlctl::runs::read_series;
use std::io::Write;

fn line(n: u64, t: &str) -> String {
    format!(
        "\x1b[36m(skyrl_entrypoint pid=7)\x1b[0m WANDB_MIRROR kind=train step={n} metrics={{\"timing/step\": {t}}}\n"
    )
}

fn steps(log: &Utf8Path) -> Vec<(u64, String)> {
    read_series(log)
        .unwrap()
        .train
        .iter()
        .map(|s| (s.step, format!("{}", s.get("timing/step").unwrap())))
        .collect()
}

/// Where the cache's last part read the log to: each part is a header line, then `len` bytes.
fn offset(log: &Utf8Path) -> u64 {
    let bytes = std::fs::read(path_for(log)).unwrap();
    let (mut at, mut offset) = (0, None);
    while at < bytes.len() {
        let end = at + bytes[at..].iter().position(|&b| b == b'\n').unwrap();
        let header: serde_json::Value = serde_json::from_slice(&bytes[at..end]).unwrap();
        offset = header["offset"].as_u64();
        at = end + 1 + header["len"].as_u64().unwrap() as usize;
    }
    offset.unwrap()
}

fn temp_log() -> (tempfile::TempDir, Utf8PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let log = Utf8PathBuf::from_path_buf(dir.path().join("run_1.out")).unwrap();
    (dir, log)
}

#[test]
fn a_second_read_starts_where_the_first_stopped() {
    let (_dir, log) = temp_log();
    std::fs::write(&log, line(1, "1.5") + &line(2, "NaN") + "half a li").unwrap();
    assert_eq!(steps(&log), [(1, "1.5".into()), (2, "NaN".into())]);
    let first = offset(&log);
    assert_eq!(first, (line(1, "1.5") + &line(2, "NaN")).len() as u64);
    assert_eq!(steps(&log), [(1, "1.5".into()), (2, "NaN".into())]);
    let mut file = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    file.write_all(b"ne\n").unwrap();
    file.write_all(line(3, "Infinity").as_bytes()).unwrap();
    assert_eq!(
        steps(&log),
        [(1, "1.5".into()), (2, "NaN".into()), (3, "inf".into())]
    );
    assert_eq!(offset(&log), std::fs::metadata(&log).unwrap().len());
}

#[test]
fn a_truncated_or_replaced_log_is_read_again() {
    let (dir, log) = temp_log();
    std::fs::write(&log, line(1, "1") + &line(2, "2") + &line(3, "3")).unwrap();
    assert_eq!(steps(&log).len(), 3);
    // Truncated in place, then written again: shorter than what was read.
    std::fs::write(&log, line(1, "10")).unwrap();
    assert_eq!(steps(&log), [(1, "10".into())]);
    // Replaced by another file, longer, with other bytes before the old offset.
    let other = dir.path().join("other");
    std::fs::write(&other, line(1, "20") + &line(2, "21") + &line(3, "22")).unwrap();
    std::fs::rename(&other, &log).unwrap();
    assert_eq!(
        steps(&log),
        [(1, "20".into()), (2, "21".into()), (3, "22".into())]
    );
    // A cache that is not JSON is ignored (and rewritten).
    std::fs::write(path_for(&log), "garbage").unwrap();
    assert_eq!(steps(&log).len(), 3);
    // So is one cut short.
    let bytes = std::fs::read(path_for(&log)).unwrap();
    std::fs::write(path_for(&log), &bytes[..bytes.len() - 3]).unwrap();
    assert_eq!(steps(&log).len(), 3);
    assert_eq!(offset(&log), std::fs::metadata(&log).unwrap().len());
}

#[test]
fn readers_at_once_while_the_log_grows_see_a_prefix_of_it() {
    let (_dir, log) = temp_log();
    std::fs::write(&log, "").unwrap();
    let writer = {
        let log = log.clone();
        std::thread::spawn(move || {
            let mut file = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
            for n in 1..=300 {
                file.write_all(line(n, &n.to_string()).as_bytes()).unwrap();
            }
        })
    };
    let readers: Vec<_> = (0..4)
        .map(|_| {
            let log = log.clone();
            std::thread::spawn(move || {
                for _ in 0..20 {
                    let got = steps(&log);
                    for (i, (n, t)) in got.iter().enumerate() {
                        assert_eq!(
                            (*n, t.as_str()),
                            (i as u64 + 1, (i + 1).to_string().as_str())
                        );
                    }
                }
            })
        })
        .collect();
    writer.join().unwrap();
    for r in readers {
        r.join().unwrap();
    }
    assert_eq!(steps(&log).len(), 300);
}

fn step(n: u64, t: f64) -> Step {
    Step {
        kind: Kind::Train,
        step: n,
        metrics: [("timing/step".to_owned(), t)].into(),
        rounded: false,
    }
}

/// A requeued job's log: the second slot resumes from the checkpoint of step 2 and trains step 3
/// again; the run's step 3 is the second slot's, in its place, whether the log is read at once
/// or followed across the requeue.
#[test]
fn a_step_trained_again_by_a_resumed_slot_takes_its_last_values() {
    let line = |n: u64, t: f64| {
        format!(
            "(skyrl_entrypoint pid=7) WANDB_MIRROR kind=train step={n} metrics={{\"timing/step\": {t}}}\n"
        )
    };
    let first_slot = line(1, 10.0) + &line(2, 11.0) + &line(3, 12.0);
    let second_slot =
        "rlctl: slot 2 of job 7 started\n".to_owned() + &line(3, 30.0) + &line(4, 31.0);
    let want = vec![step(1, 10.0), step(2, 11.0), step(3, 30.0), step(4, 31.0)];
    let whole = scan((first_slot.clone() + &second_slot).as_bytes()).unwrap();
    assert_eq!(whole.train, want);

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job.out");
    std::fs::write(&path, &first_slot).unwrap();
    let mut tail = Tail::new(&path);
    assert_eq!(tail.poll().unwrap(), 3);
    let mut log = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    std::io::Write::write_all(&mut log, second_slot.as_bytes()).unwrap();
    assert_eq!(tail.poll().unwrap(), 1, "only step 4 is new");
    assert_eq!(tail.series().train, want);
}
