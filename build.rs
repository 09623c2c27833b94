//! Embeds every file under `presets/` and `templates/` into the binary, so rlctl works on any
//! machine with no setup and a new preset needs no code change.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for top in ["presets", "templates"] {
        println!("cargo:rerun-if-changed={top}");
        collect(root, &root.join(top), &mut files);
    }
    files.sort();
    let mut out = String::from("pub static FILES: &[(&str, &str)] = &[\n");
    for rel in &files {
        let abs = root.join(rel);
        writeln!(
            out,
            "    ({rel:?}, include_str!({:?})),",
            abs.display().to_string()
        )
        .unwrap();
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap()).join("embedded.rs");
    std::fs::write(dest, out).unwrap();
}

fn collect(root: &Path, dir: &Path, files: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            println!("cargo:rerun-if-changed={}", path.display());
            collect(root, &path, files);
        } else if matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("toml" | "tera" | "keys")
        ) {
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_str()
                .unwrap()
                .replace('\\', "/");
            files.push(rel);
        }
    }
}
