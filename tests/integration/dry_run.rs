//! The full `--dry-run` output of every embedded preset and grid cell, and the help texts,
//! pinned as snapshots: any change to what rlctl would submit shows up in review.

use crate::common::{ok, rlctl, stdout};
use rlctl::preset::Library;

fn all_targets() -> Vec<(String, Vec<String>)> {
    let library = Library::load(None).unwrap();
    let mut targets: Vec<(String, Vec<String>)> = library
        .preset_names()
        .map(|p| (p.to_owned(), vec!["launch".to_owned(), p.to_owned()]))
        .collect();
    for grid in library.grid_names() {
        for cell in &library.grid(grid).unwrap().cells {
            let qualified = format!("{grid}/{}", cell.name);
            targets.push((qualified.clone(), vec!["grid".to_owned(), qualified]));
        }
    }
    targets
}

#[test]
fn dry_run_of_every_preset_and_cell() {
    let targets = all_targets();
    assert_eq!(
        targets.len(),
        6 + 20 + 18 + 15 + 13,
        "6 presets; 20, 18, 15 and 13 cells (gsm8k-accuracy, gsm8k-throughput, opd-speed-convergence, \
         opd-throughput)"
    );
    for (name, args) in targets {
        let output = ok(rlctl().args(&args).arg("--dry-run"));
        insta::assert_snapshot!(name.replace('/', "__"), stdout(&output));
    }
}

#[test]
fn help_texts() {
    for sub in ["", "launch", "grid", "render", "show", "list"] {
        let mut cmd = rlctl();
        if !sub.is_empty() {
            cmd.arg(sub);
        }
        let output = ok(cmd.arg("--help").env("COLUMNS", "100"));
        let name = if sub.is_empty() {
            "help".to_owned()
        } else {
            format!("help_{sub}")
        };
        insta::assert_snapshot!(name, stdout(&output));
    }
}

#[test]
fn list_names_every_preset_grid_and_cell() {
    let output = ok(rlctl().arg("list"));
    insta::assert_snapshot!("list", stdout(&output));
}

#[test]
fn show_prints_the_resolved_plan_as_toml() {
    let output = ok(rlctl().args(["show", "tbs128", "--", "trainer.epochs=2"]));
    let text = stdout(&output);
    let plan: toml::Table = toml::from_str(&text).unwrap();
    let knobs = plan["knobs"].as_table().unwrap();
    assert_eq!(knobs["trainer.train_batch_size"].as_str(), Some("128"));
    assert_eq!(knobs["trainer.epochs"].as_str(), Some("2"));
    assert_eq!(
        plan["job"]["name"].as_str(),
        Some("gsm8k-throughput.tbs128")
    );
    insta::assert_snapshot!("show_tbs128", text);
}
