//! `rlctl check --all [GRID]`: every preset and every cell of every grid (or every cell of
//! GRID) through launch's and grid's preflight ([`crate::check::ready`]), one line each, then a
//! summary; a run the ledger holds is `recorded`, as `grid --all` leaves it; exit 1 when any
//! has problems.

use super::{Session, deep_limit};
use crate::check::ready::{self, Ledgered};
use crate::check::{Found, judge};
use crate::cli::CheckArgs;
use crate::error::{Error, Result};
use crate::preset::Selection;
use crate::preset::cluster::Cluster;
use crate::preset::run::GridFile;
use crate::util::out::emit;
use crate::util::versioned::document;
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::BTreeSet;
use std::io::Write;
use std::time::Duration;

/// Checks every target, prints the rows (a table, or JSON), and fails when any has problems.
pub fn run(session: &Session, check: &CheckArgs, out: &mut dyn Write) -> Result<()> {
    let grid = check.all.as_ref().and_then(Option::as_deref);
    let cluster = session.cluster()?;
    session.say_whose(&cluster);
    let checker = Checker {
        session,
        check,
        deep_limit: deep_limit(&check.deep, &cluster),
        ledgered: session.ledgered()?,
        cluster: &cluster,
    };
    // Each row: what was checked, and its verdict.
    let mut rows: Vec<(String, Row)> = Vec::new();
    let targets = targets(session, grid, &mut rows)?;
    // What could not run here, or was allowed, is the same for most plans: said once.
    let mut said = BTreeSet::new();
    for (name, selection) in targets {
        let row = checker.row(selection, &mut said);
        rows.push((name, row));
    }
    let failed = (rows.iter())
        .filter(|(_, r)| matches!(r, Row::Problems(p, _) if !p.is_empty()))
        .count();
    let recorded = (rows.iter())
        .filter(|(_, r)| matches!(r, Row::Recorded(..)))
        .count();
    let total = rows.len();
    let text = match check.json {
        true => json(rows, grid, &cluster, failed, recorded),
        false => table(&rows, grid, failed, recorded),
    };
    emit(out, &text)?;
    match failed {
        0 => Ok(()),
        n => Err(Error::Problems(format!(
            "{n} of {total} {} problems (listed above)",
            if n == 1 { "has" } else { "have" }
        ))),
    }
}

/// Every target by name, selected: GRID's cells, or every preset and every grid's cells. One
/// that does not resolve carries its error; a grid that does not load is a row of `rows`.
fn targets<'a>(
    session: &'a Session,
    grid: Option<&str>,
    rows: &mut Vec<(String, Row)>,
) -> Result<Vec<(String, Result<Selection<'a>>)>> {
    let library = &session.library;
    let cells_of = |name: &str, grid: &GridFile| -> Vec<(String, Result<Selection<'a>>)> {
        (grid.cells.iter())
            .map(|c| {
                (
                    format!("{name}/{}", c.name),
                    library.select_cell(name, &c.name),
                )
            })
            .collect()
    };
    let mut targets = Vec::new();
    match grid {
        // A grid named on the command line must load: not loading is a usage error.
        Some(name) => targets.extend(cells_of(name, library.grid(name)?)),
        None => {
            targets
                .extend((library.preset_names()).map(|p| (p.to_owned(), library.select_preset(p))));
            for name in library.grid_names() {
                match library.grid(name) {
                    Ok(g) => targets.extend(cells_of(name, g)),
                    Err(e) => rows.push((
                        format!("grid {name}"),
                        Row::Problems(vec![e.to_string()], Vec::new()),
                    )),
                }
            }
        }
    }
    Ok(targets)
}

/// What every target is checked with: the command's flags, the profile, and the ledger.
struct Checker<'a> {
    session: &'a Session,
    check: &'a CheckArgs,
    cluster: &'a Cluster,
    deep_limit: Option<Duration>,
    ledgered: Ledgered,
}

impl Checker<'_> {
    /// One target's row: recorded, or its problems (its error, when it does not resolve).
    /// Preflight's notes that are not problems are said once (`said`), not per row.
    fn row(&self, selection: Result<Selection>, said: &mut BTreeSet<String>) -> Row {
        let args = &self.check.plan;
        let plan = match selection.and_then(|s| self.session.plan(self.cluster, &s, args)) {
            Ok(plan) => plan,
            Err(e) => return Row::Problems(vec![e.to_string()], Vec::new()),
        };
        if let Some(record) = self.ledgered.run_of(&plan) {
            return Row::Recorded(record.job_id.clone(), record.run());
        }
        let target = plan.target.clone();
        let verdict = (ready::one(plan, self.check.chain, &self.ledgered, |verb| {
            args.ask(verb)
        }))
        .and_then(|(plans, extra)| {
            let library = &self.session.library;
            judge(
                library,
                self.cluster,
                &args.allow,
                &plans,
                &extra,
                self.deep_limit,
            )
        });
        let verdict = match verdict {
            Ok(verdict) => verdict,
            Err(e) => return Row::Problems(vec![e.to_string()], Vec::new()),
        };
        for (kind, line) in verdict.said {
            // Judged alone, a target's warning does not name it: in a list of many it must.
            let line = match kind == "warning" && !line.starts_with(&format!("{target}: ")) {
                true => format!("rlctl: {kind}: {target}: {line}"),
                false => format!("rlctl: {kind}: {line}"),
            };
            if kind != "note" && said.insert(line.clone()) {
                crate::say!("{line}");
            }
        }
        Row::Problems(verdict.problems, verdict.findings)
    }
}

/// `check --all --json`: a row per target and the counts.
#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct Checked {
    pub grid: Option<String>,
    pub cluster: String,
    pub shipped: bool,
    pub rows: Vec<CheckedRow>,
    pub ok: usize,
    pub recorded: usize,
    pub with_problems: usize,
}

/// One target's verdict.
#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct CheckedRow {
    pub target: String,
    /// `recorded`, `ok` or `problems`.
    pub verdict: &'static str,
    /// A recorded target: its newest job, and the run to ask `rlctl status` about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// The problems as the text says them (none for a recorded target).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problems: Option<Vec<String>>,
    /// Every finding, with its stable `code`.
    pub findings: Vec<Found>,
}

/// The rows and the counts as one JSON document (`--json`).
fn json(
    rows: Vec<(String, Row)>,
    grid: Option<&str>,
    cluster: &Cluster,
    failed: usize,
    recorded: usize,
) -> String {
    let total = rows.len();
    let rows = (rows.into_iter())
        .map(|(target, row)| match row {
            Row::Recorded(job, run) => CheckedRow {
                target,
                verdict: "recorded",
                job_id: Some(job),
                run: Some(run),
                problems: None,
                findings: Vec::new(),
            },
            Row::Problems(problems, findings) => CheckedRow {
                target,
                verdict: if problems.is_empty() {
                    "ok"
                } else {
                    "problems"
                },
                job_id: None,
                run: None,
                problems: Some(problems),
                findings,
            },
        })
        .collect();
    document(&Checked {
        grid: grid.map(str::to_owned),
        cluster: cluster.name.clone(),
        shipped: cluster.shipped,
        rows,
        ok: total - failed - recorded,
        recorded,
        with_problems: failed,
    })
}

/// The rows, one line each, and the summary line.
fn table(rows: &[(String, Row)], grid: Option<&str>, failed: usize, recorded: usize) -> String {
    let width = rows.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    let mut text = String::new();
    for (name, row) in rows {
        let verdict = match row {
            Row::Recorded(job, run) => format!("recorded (job {job}; `rlctl status {run}`)"),
            Row::Problems(problems, _) if problems.is_empty() => "ok".to_owned(),
            Row::Problems(problems, _) => {
                let n = problems.len();
                let s = if n == 1 { "" } else { "s" };
                format!("{n} problem{s}: {}", problems.join("; "))
            }
        };
        text.push_str(&format!("{name:<width$}  {verdict}\n"));
    }
    let scope = grid.map(|g| format!(" of {g}")).unwrap_or_default();
    let recorded_part = match recorded {
        0 => String::new(),
        n => format!(", {n} recorded"),
    };
    text.push_str(&format!(
        "{} checked{scope}: {} ok{recorded_part}, {failed} with problems\n",
        rows.len(),
        rows.len() - failed - recorded
    ));
    text
}

/// One row's verdict: the run the ledger holds (its newest job and its name), or the problems
/// found (none: ok).
enum Row {
    Recorded(String, String),
    /// The problems as lines, and every finding typed (none for a target that did not resolve).
    Problems(Vec<String>, Vec<Found>),
}
