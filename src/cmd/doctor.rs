//! `rlctl doctor`: the site's own checks, one line each; exit 1 on any problem.

use super::Session;
use crate::check::site::{Status, examine};
use crate::error::{Error, Result};
use crate::util::out::emit;
use std::io::Write;

pub fn run(session: &Session, out: &mut dyn Write) -> Result<()> {
    let cluster = session.cluster()?;
    let lines = examine(&cluster);
    let mut text = String::new();
    for line in &lines {
        text.push_str(&format!(
            "{:<8} {:<20} {}\n",
            line.status.to_string(),
            line.what,
            line.detail
        ));
    }
    emit(out, &text)?;
    let problems = lines.iter().filter(|l| l.status == Status::Problem).count();
    if problems > 0 {
        return Err(Error::Problems(format!(
            "doctor found {problems} problem{} on {}",
            if problems == 1 { "" } else { "s" },
            cluster.name
        )));
    }
    Ok(())
}
