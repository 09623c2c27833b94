//! A `launch` or `grid` command as rlctl prints it for the user to run (a hint, the rest of a
//! chain, a grid asked again): one value, one printer, so that a flag added to the plan is added
//! here once, and a round-trip test proves the printed words parse back into the same value.

use super::Resume;
use crate::preset::walltime::Walltime;
use crate::util::quote::sh_join;

/// What the command submits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verb {
    /// `rlctl launch PRESET`.
    Launch { preset: String },
    /// `rlctl grid CELL` (`grid/cell`, or a cell alone).
    Grid { cell: String },
    /// `rlctl grid --all GRID`.
    GridAll { grid: String },
}

/// A command line that shapes a plan: the target and every plan flag, as the user would type it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ask {
    pub verb: Verb,
    pub nodes: Option<u32>,
    pub qos: Option<String>,
    pub time: Option<Walltime>,
    pub job_name: Option<String>,
    pub resume: Resume,
    /// `--wipe`: printed with a fresh start only, as a resume never wipes (the plan refuses
    /// both), so an ask turned into a resume prints a command that runs.
    pub wipe: bool,
    /// `--until-done --max-slots N`.
    pub until_done: Option<u32>,
    /// `launch --chain K`, when K > 1.
    pub chain: Option<u32>,
    /// `grid --as NEW_CELL`.
    pub as_cell: Option<String>,
    /// `grid --all --skip CELL`, each.
    pub skip: Vec<String>,
    /// `--allow CHECK`, each by its flag value.
    pub allow: Vec<String>,
    /// The hydra overrides after `--`, as given.
    pub overrides: Vec<String>,
}

impl Ask {
    /// `verb` with every flag at its default.
    pub fn bare(verb: Verb) -> Ask {
        Ask {
            verb,
            nodes: None,
            qos: None,
            time: None,
            job_name: None,
            resume: Resume::Fresh,
            wipe: false,
            until_done: None,
            chain: None,
            as_cell: None,
            skip: Vec::new(),
            allow: Vec::new(),
            overrides: Vec::new(),
        }
    }

    /// The command's words, `rlctl` first: flags in one fixed order, the overrides last. Every
    /// field is named here, so a flag added to the ask is a compile error until it is printed.
    pub fn words(&self) -> Vec<String> {
        let Ask {
            verb,
            nodes,
            qos,
            time,
            job_name,
            resume,
            wipe,
            until_done,
            chain,
            as_cell,
            skip,
            allow,
            overrides,
        } = self;
        let mut words: Vec<String> = vec!["rlctl".into()];
        let flag = |words: &mut Vec<String>, name: &str, value: Option<String>| {
            if let Some(value) = value {
                words.extend([name.to_owned(), value]);
            }
        };
        match verb {
            Verb::Launch { preset } => words.extend(["launch".into(), preset.clone()]),
            Verb::Grid { cell } => words.extend(["grid".into(), cell.clone()]),
            Verb::GridAll { grid } => words.extend(["grid".into(), "--all".into(), grid.clone()]),
        }
        flag(&mut words, "--as", as_cell.clone());
        for skip in skip {
            flag(&mut words, "--skip", Some(skip.clone()));
        }
        flag(&mut words, "--nodes", nodes.map(|n| n.to_string()));
        flag(&mut words, "--qos", qos.clone());
        flag(&mut words, "--time", time.map(|t| t.to_string()));
        flag(&mut words, "--job-name", job_name.clone());
        for allow in allow {
            flag(&mut words, "--allow", Some(allow.clone()));
        }
        if let Some(max_slots) = until_done {
            words.push("--until-done".into());
            flag(&mut words, "--max-slots", Some(max_slots.to_string()));
        }
        match resume {
            Resume::Latest => flag(&mut words, "--resume", Some("latest".into())),
            Resume::Fresh if *wipe => words.push("--wipe".into()),
            Resume::Fresh => {}
        }
        flag(
            &mut words,
            "--chain",
            chain.filter(|k| *k > 1).map(|k| k.to_string()),
        );
        if !overrides.is_empty() {
            words.push("--".into());
            words.extend(overrides.iter().cloned());
        }
        words
    }

    /// The command as one shell line, each word quoted where the shell needs it.
    pub fn command(&self) -> String {
        sh_join(&self.words())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_ask_is_the_verb_and_its_target_alone() {
        let ask = Ask::bare(Verb::GridAll { grid: "g".into() });
        assert_eq!(ask.command(), "rlctl grid --all g");
    }

    #[test]
    fn flags_come_before_the_overrides_and_each_word_is_quoted() {
        let ask = Ask {
            resume: Resume::Latest,
            until_done: Some(4),
            chain: Some(2),
            overrides: vec!["a.b=x y".into()],
            ..Ask::bare(Verb::Launch { preset: "p".into() })
        };
        assert_eq!(
            ask.command(),
            "rlctl launch p --until-done --max-slots 4 --resume latest --chain 2 -- 'a.b=x y'"
        );
    }
}
