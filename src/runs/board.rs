//! A live table of several runs (`watch GRID`, `status --watch`): the `status` rows, each
//! with the alerts its log raised since the watch began, and a totals line, redrawn every
//! refresh. On a terminal the table is redrawn in place (the cursor goes back up over the last
//! one); into a pipe or a file each refresh is a block of plain lines.
//!
//! Redrawn in the normal screen, not the alternate one: nothing is left to restore when Ctrl-C
//! ends the process (rlctl installs no signal handler), the last table stays on screen after it
//! ends, and the scrollback above it is untouched. Each line is clipped to the window and the
//! frame to its height, so that the frame takes exactly the lines it counts; a window whose
//! width changed between two refreshes (the terminal may have re-wrapped the old frame) is
//! cleared and the table drawn from its top.

use crate::error::{Error, Result};
use crate::runs::alerts::{AlertKind, Thresholds};
use crate::runs::history;
use crate::runs::seen::{self, Reader};
use crate::runs::state::{RunState, alert_kinds};
use crate::runs::status::{Statuses, status_table, totals};
use crate::runs::watch::is_dead;
use crate::util::out::emit;
use crate::util::term::{self, Paint};
use crate::util::versioned::document;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::time::Duration;

pub struct Options {
    /// What the table shows, for its title: the grid or run asked, or `all runs`.
    pub title: String,
    pub interval: Duration,
    pub once: bool,
    /// With `once`: the rows as `status --json` prints them, in place of the table.
    pub json: bool,
    pub thresholds: Thresholds,
    pub paint: Paint,
    /// Redraw in place: stdout is a terminal.
    pub redraw: bool,
}

/// One refresh's rows, and lines to print under the totals (the cells waiting for room).
pub type Snapshot = (Vec<RunState>, String);

/// Shows the rows `refresh` reads until SLURM holds none of their jobs (or once); a run that
/// raised an alert, stalled or ended without finishing makes the result an error (exit 1).
pub fn board(
    options: &Options,
    refresh: &mut dyn FnMut() -> Result<Snapshot>,
    out: &mut dyn Write,
) -> Result<()> {
    let mut raised: BTreeMap<String, BTreeSet<AlertKind>> = BTreeMap::new();
    let mut stalled: BTreeSet<String> = BTreeSet::new();
    let mut screen: Option<Screen> = None;
    let mut first = true;
    loop {
        let (mut rows, below) = refresh()?;
        for row in &mut rows {
            let kinds = raised.entry(row.target.clone()).or_default();
            // An ended job's log is written for good: judged once, at the first refresh. The
            // run's whole history is judged (a resumed job's alerts compare with its start).
            if (first || row.source == "squeue")
                && let Ok(history) = history::read_logs(row.history.iter().map(|l| l.as_path()))
            {
                let series = history.series;
                // What fired since the last look, and what still holds (as `status` shows it).
                let new = seen::judge(&row.log, Reader::Watch, &series, &options.thresholds);
                kinds.extend(new.iter().map(|a| a.kind));
                kinds.extend(alert_kinds(&series, &options.thresholds));
            }
            row.alerts = kinds.iter().copied().collect();
            if row.stall.is_some() {
                stalled.insert(row.target.clone());
            }
        }
        first = false;
        let held = rows.iter().any(|r| r.source == "squeue");
        let last = options.once || !held;
        if options.json {
            emit(out, &document(&Statuses { runs: &rows }))?;
        } else {
            let mut frame = format!(
                "{}: {}{}\n",
                options.title,
                clock(),
                match last {
                    true => String::new(),
                    false => format!(", every {}s (Ctrl-C stops)", options.interval.as_secs()),
                }
            );
            if !rows.is_empty() {
                frame.push_str(&status_table(&rows, options.paint));
            }
            frame.push_str(&totals(&rows));
            frame.push_str(&below);
            draw(&frame, options.redraw, &mut screen, out)?;
        }
        out.flush()
            .map_err(|e| Error::io("write", "standard output", e))?;
        if last {
            return verdict(&rows, &raised, &stalled);
        }
        std::thread::sleep(options.interval);
    }
}

/// The watch's end: the runs that ended without finishing, else the alerts and stalls seen.
fn verdict(
    rows: &[RunState],
    raised: &BTreeMap<String, BTreeSet<AlertKind>>,
    stalled: &BTreeSet<String>,
) -> Result<()> {
    let dead: Vec<&RunState> = (rows.iter())
        .filter(|r| r.source != "squeue" && is_dead(&r.state))
        .collect();
    let alerts = raised.values().map(BTreeSet::len).sum::<usize>() + stalled.len();
    if !dead.is_empty() {
        let names: Vec<String> = (dead.iter())
            .map(|r| format!("{} ({})", r.target, r.state))
            .collect();
        return Err(Error::Problems(format!(
            "{} run{} ended without finishing: {}{}; read why with `rlctl logs RUN --errors`, fix the cause, then resume it with `--resume latest`",
            dead.len(),
            if dead.len() == 1 { "" } else { "s" },
            names.join(", "),
            match alerts {
                0 => String::new(),
                n => format!(", and {n} alert{} raised", if n == 1 { "" } else { "s" }),
            }
        )));
    }
    match alerts {
        0 => Ok(()),
        count => Err(Error::Alerts { count }),
    }
}

/// What the last frame drawn in place took: its lines, at the window's width.
struct Screen {
    lines: usize,
    width: usize,
}

/// Prints `frame`: over the last one on a terminal, else as the next block of lines.
fn draw(frame: &str, redraw: bool, screen: &mut Option<Screen>, out: &mut dyn Write) -> Result<()> {
    if !redraw {
        let gap = if screen.is_some() { "\n" } else { "" };
        *screen = Some(Screen { lines: 0, width: 0 });
        return emit(out, &format!("{gap}{frame}"));
    }
    let (width, height) = term::size().unwrap_or((usize::MAX, usize::MAX));
    // One column spare: a line the window's exact width wraps early on some terminals.
    let mut lines: Vec<String> = (frame.lines())
        .map(|l| term::clip(l, width.saturating_sub(1)))
        .collect();
    if height >= 5 && lines.len() > height - 1 {
        // The totals line is kept: the rows it cuts are the ones said missing.
        let totals = lines.pop().unwrap_or_default();
        let keep = height - 3;
        let cut = lines.len() - keep;
        lines.truncate(keep);
        lines.push(format!("… {cut} more lines: a taller window shows them"));
        lines.push(totals);
    }
    let mut text = match screen {
        Some(last) if last.width == width && last.lines > 0 => {
            format!("\x1b[{}A\r\x1b[J", last.lines)
        }
        Some(_) => "\x1b[H\x1b[2J".to_owned(),
        None => String::new(),
    };
    for line in &lines {
        text.push_str(line);
        text.push('\n');
    }
    *screen = Some(Screen {
        lines: lines.len(),
        width,
    });
    emit(out, &text)
}

/// The time of day, UTC, as `HH:MM:SS UTC`.
pub(crate) fn clock() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let s = now % 86_400;
    format!("{:02}:{:02}:{:02} UTC", s / 3600, (s % 3600) / 60, s % 60)
}
