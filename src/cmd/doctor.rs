//! `rlctl doctor`: the site's own checks, one line each (or one JSON object); exit 1 on any
//! problem.

use super::Session;
use crate::check::site::{Line, Status, examine};
use crate::cli::DoctorArgs;
use crate::error::{Error, Result};
use crate::util::out::emit;
use crate::util::table::{Table, left};
use crate::util::versioned::document;
use schemars::JsonSchema;
use serde::Serialize;
use std::io::Write;

pub fn run(session: &Session, args: &DoctorArgs, out: &mut dyn Write) -> Result<()> {
    let cluster = session.cluster()?;
    let mut lines = examine(&cluster);
    // What `init --discover` guessed and the user has not yet confirmed.
    if let Some((file, text)) = session.library.source("clusters", &cluster.name) {
        for guess in crate::preset::discover::guesses(text) {
            lines.push(Line {
                status: Status::Problem,
                what: "profile guess",
                detail: format!(
                    "{}: {}; confirm it in {file}, then delete its `# {}` line",
                    guess.key,
                    guess.why,
                    crate::preset::discover::GUESS
                ),
            });
        }
    }
    let problems = lines.iter().filter(|l| l.status == Status::Problem).count();
    if args.json {
        let doc = Doctored {
            cluster: cluster.name.clone(),
            shipped: cluster.shipped,
            checks: (lines.iter())
                .map(|l| DoctorCheck {
                    status: l.status.to_string(),
                    check: l.what.to_owned(),
                    detail: l.detail.clone(),
                })
                .collect(),
            problems,
        };
        emit(out, &document(&doc))?;
    } else {
        // Minimum widths: the checks line up the same whichever of them run.
        let mut table = Table::new([left().min(8), left().min(20), left()]).gap(1);
        for line in &lines {
            table.row([
                line.status.to_string(),
                line.what.to_owned(),
                line.detail.clone(),
            ]);
        }
        emit(out, &table.render())?;
    }
    if problems > 0 {
        return Err(Error::Problems(format!(
            "doctor found {problems} problem{} on {}",
            if problems == 1 { "" } else { "s" },
            cluster.name
        )));
    }
    Ok(())
}

/// `doctor --json`: the profile and each check.
#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct Doctored {
    pub cluster: String,
    pub shipped: bool,
    pub checks: Vec<DoctorCheck>,
    pub problems: usize,
}

/// One site check: `ok`, `problem` or `skipped`, its name (stable: the code) and what it saw.
#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct DoctorCheck {
    pub status: String,
    pub check: String,
    pub detail: String,
}
