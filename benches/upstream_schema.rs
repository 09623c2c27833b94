//! What reading upstream SkyRL's key list costs: the skyrl 0.4.0 wheel's
//! `skyrl/train/config/config.py` (about 100 KB, with skyrl-gym's two config modules) read
//! statically and flattened (cold: an empty cache folder), against the same call served from
//! the cache (warm: one stat per source file, then the cached list parsed), and the static
//! read alone (tokenize, parse, flatten; no cache). Figures are the median of
//! `RLCTL_BENCH_ROUNDS` calls (default 50).
//!
//! Run with `cargo bench --bench upstream_schema`. The checkout is the site-packages folder of
//! the installed `skyrl` (tests/setup.sh), or `RLCTL_BENCH_CHECKOUT`.

use camino::Utf8PathBuf;
use rlctl::schema::Schema;
use std::process::Command;
use std::time::{Duration, Instant};

fn checkout() -> Utf8PathBuf {
    if let Ok(dir) = std::env::var("RLCTL_BENCH_CHECKOUT") {
        return dir.into();
    }
    let oracle = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/crates/rlctl-grammar/tests/skyrl_upstream_schema_oracle.py"
    );
    let out = Command::new("python3")
        .args([oracle, "locate"])
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "cannot locate the skyrl wheel: run `bash tests/setup.sh`\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().into()
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let rounds: usize = std::env::var("RLCTL_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let checkout = checkout();
    let tmp = tempfile::tempdir().unwrap();
    let root = Utf8PathBuf::from_path_buf(tmp.path().to_owned()).unwrap();
    let mut cold = Vec::new();
    let mut keys = 0;
    for i in 0..rounds {
        let cache = root.join(format!("cold-{i}"));
        let start = Instant::now();
        let schema = Schema::from_checkout(&checkout, None, &cache).unwrap();
        cold.push(start.elapsed());
        keys = schema.keys().count();
    }
    let mut read = Vec::new();
    for _ in 0..rounds {
        let start = Instant::now();
        let (text, _) = rlctl_grammar::import::import_upstream(&checkout, None).unwrap();
        read.push(start.elapsed());
        assert!(text.len() > 1000);
    }
    let warm_cache = root.join("warm");
    Schema::from_checkout(&checkout, None, &warm_cache).unwrap();
    let mut warm = Vec::new();
    for _ in 0..rounds {
        let start = Instant::now();
        let schema = Schema::from_checkout(&checkout, None, &warm_cache).unwrap();
        warm.push(start.elapsed());
        assert_eq!(schema.keys().count(), keys);
    }
    let (cold, read, warm) = (median(cold), median(read), median(warm));
    println!("upstream schema of {checkout} ({keys} keys), median of {rounds}:");
    println!("  cold (read config.py, flatten, write cache): {cold:.2?}");
    println!("  of which the static read of the sources:     {read:.2?}");
    println!("  warm (stat sources, parse cached list):      {warm:.2?}");
    println!(
        "  warm is {:.1}x faster",
        cold.as_secs_f64() / warm.as_secs_f64()
    );
}
