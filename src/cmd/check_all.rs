//! `rlctl check --all [GRID]`: every preset and every cell of every grid (or every cell of
//! GRID) through preflight, one line each, then a summary; exit 1 when any has problems.

use super::{Session, deep_limit};
use crate::check::{Preflight, deep};
use crate::cli::CheckArgs;
use crate::error::{Error, Result};
use crate::preset::Selection;
use crate::preset::run::GridFile;
use crate::util::out::emit;
use std::collections::BTreeSet;
use std::io::Write;

pub fn run(session: &Session, check: &CheckArgs, out: &mut dyn Write) -> Result<()> {
    let (grid, args) = (check.all.as_ref().and_then(Option::as_deref), &check.plan);
    let library = &session.library;
    let cluster = session.cluster()?;
    let schema = library.schema(&cluster.software.schema)?;
    let deep_limit = deep_limit(&check.deep, &cluster);
    let checks = Preflight {
        cluster: &cluster,
        schema: &schema,
        allow: &args.allow,
    };
    // Each row: what was checked, and its problems (none: ok).
    let mut rows: Vec<(String, Vec<String>)> = Vec::new();
    // Each target by name, selected; one that does not resolve is a row with its error.
    let mut targets: Vec<(String, Result<Selection>)> = Vec::new();
    let cells_of = |name: &str, grid: &GridFile| -> Vec<(String, Result<Selection>)> {
        (grid.cells.iter())
            .map(|c| {
                (
                    format!("{name}/{}", c.name),
                    library.select_cell(name, &c.name),
                )
            })
            .collect()
    };
    match grid {
        // A grid named on the command line must load: not loading is a usage error.
        Some(name) => targets.extend(cells_of(name, library.grid(name)?)),
        None => {
            targets
                .extend((library.preset_names()).map(|p| (p.to_owned(), library.select_preset(p))));
            for name in library.grid_names() {
                match library.grid(name) {
                    Ok(g) => targets.extend(cells_of(name, g)),
                    Err(e) => rows.push((format!("grid {name}"), vec![e.to_string()])),
                }
            }
        }
    }
    let mut said = BTreeSet::new();
    for (name, selection) in targets {
        let plan = match selection.and_then(|s| session.plan(&cluster, &s, args)) {
            Ok(plan) => plan,
            Err(e) => {
                rows.push((name, vec![e.to_string()]));
                continue;
            }
        };
        let report = checks.run(&plan);
        // What could not run here, or was allowed, is the same for most plans: said once.
        for (kind, findings) in [("skipped", &report.skipped), ("warning", &report.warnings)] {
            for f in findings {
                let line = format!("rlctl: {kind}: [{}] {}", f.check, f.message);
                if said.insert(line.clone()) {
                    crate::say!("{line}");
                }
            }
        }
        let mut problems: Vec<String> = (report.problems.iter())
            .map(|f| format!("[{}] {}", f.check, f.message))
            .collect();
        // SkyRL itself judges only what the checks in rlctl pass, one plan at a time.
        if let Some(limit) = deep_limit
            && problems.is_empty()
            && let Err(f) = deep::finding(&plan, limit)
        {
            problems.push(format!("[{}] {}", f.check, f.message));
        }
        rows.push((name, problems));
    }
    let width = rows.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    let mut text = String::new();
    let mut failed = 0;
    for (name, problems) in &rows {
        let verdict = match problems.len() {
            0 => "ok".to_owned(),
            n => {
                failed += 1;
                let s = if n == 1 { "" } else { "s" };
                format!("{n} problem{s}: {}", problems.join("; "))
            }
        };
        text.push_str(&format!("{name:<width$}  {verdict}\n"));
    }
    let scope = grid.map(|g| format!(" of {g}")).unwrap_or_default();
    text.push_str(&format!(
        "{} checked{scope}: {} ok, {failed} with problems\n",
        rows.len(),
        rows.len() - failed
    ));
    emit(out, &text)?;
    match failed {
        0 => Ok(()),
        n => Err(Error::Problems(format!(
            "{n} of {} {} problems (listed above)",
            rows.len(),
            if n == 1 { "has" } else { "have" }
        ))),
    }
}
