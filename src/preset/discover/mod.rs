//! `rlctl init --discover`: what a login node's SLURM (sinfo, scontrol, sacctmgr), container
//! program and network say of the cluster, each value kept with where it came from, and the
//! profile draft written from them.

pub mod draft;
pub mod host;
pub mod sacctmgr;
pub mod scontrol;
pub mod sinfo;

use crate::util::process::run_capped;
use std::time::Duration;

/// How long one SLURM client may take: a controller or slurmdbd that does not answer makes it
/// retry for minutes, and a draft without that source is still a draft.
pub const CALL_LIMIT: Duration = Duration::from_secs(20);

/// How much one SLURM client may print: `scontrol show node` of a 5,000-node cluster is about
/// 6 MiB. Past this it is stopped and its answer dropped, a truncated list being no list.
pub const CALL_BYTES: usize = 16 << 20;

/// The SLURM programs discovery calls; each can be pointed elsewhere (`RLCTL_SINFO`, ...).
#[derive(Debug, Clone)]
pub struct Programs {
    pub sinfo: String,
    pub scontrol: String,
    pub sacctmgr: String,
}

/// A value of the draft and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Sourced<T> {
    pub value: T,
    pub origin: Origin,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Read from the site: the command or file, and what it said.
    Discovered(String),
    /// Given on the command line or by the environment (`--account`, `$WORK/$USER`).
    Given(String),
    /// rlctl's guess, and why it could not do better: the user confirms it.
    Guess(String),
}

impl<T> Sourced<T> {
    pub fn discovered(value: T, how: impl Into<String>) -> Self {
        Sourced {
            value,
            origin: Origin::Discovered(how.into()),
        }
    }

    pub fn given(value: T, how: impl Into<String>) -> Self {
        Sourced {
            value,
            origin: Origin::Given(how.into()),
        }
    }

    pub fn guess(value: T, why: impl Into<String>) -> Self {
        Sourced {
            value,
            origin: Origin::Guess(why.into()),
        }
    }
}

impl Origin {
    /// The comment line(s) the draft writes above the value.
    pub fn comment(&self) -> String {
        // A comment is one line: an error a program printed may carry anything.
        let one_line = |t: &str| t.replace(|c: char| c.is_control(), " ");
        match self {
            Origin::Discovered(how) => format!("# discovered: {}", one_line(how)),
            Origin::Given(how) => format!("# given: {}", one_line(how)),
            Origin::Guess(why) => format!("# {GUESS} ({})", one_line(why)),
        }
    }
}

/// The mark of a value the user must confirm; `rlctl doctor` lists the ones left.
pub const GUESS: &str = "guess: confirm";

/// Where a guess sits in a profile and why: the lines under which `rlctl doctor` reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guess {
    pub key: String,
    pub why: String,
}

/// Every value of a profile still under a `# guess: confirm` line, as `table.key`.
pub fn guesses(text: &str) -> Vec<Guess> {
    let mut table = String::new();
    let mut pending: Option<String> = None;
    let mut out = Vec::new();
    for line in text.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix('#') {
            if let Some(why) = rest.trim().strip_prefix(GUESS) {
                pending = Some(
                    why.trim()
                        .trim_start_matches('(')
                        .trim_end_matches(')')
                        .to_owned(),
                );
            }
            continue;
        }
        if line.starts_with('[') {
            table = line
                .trim_matches(|c| c == '[' || c == ']')
                .trim()
                .to_owned();
            pending = None;
            continue;
        }
        let Some((key, _)) = line.split_once('=') else {
            continue;
        };
        if let Some(why) = pending.take() {
            let key = key.trim();
            out.push(Guess {
                key: if table.is_empty() {
                    key.to_owned()
                } else {
                    format!("{table}.{key}")
                },
                why,
            });
        }
    }
    out
}

/// Runs one SLURM client within [`CALL_LIMIT`] and [`CALL_BYTES`]; the error says what failed
/// and its last words.
pub fn ask(program: &str, args: &[&str]) -> Result<String, String> {
    let mut argv = vec![program];
    argv.extend_from_slice(args);
    let shown = argv.join(" ");
    let done = run_capped(&argv, &shown, CALL_LIMIT, CALL_BYTES)?;
    if !done.status.success() {
        let last = (done.stderr.lines().rev())
            .find(|l| !l.trim().is_empty())
            .unwrap_or("(nothing on stderr)");
        return Err(format!(
            "`{shown}` failed ({}): {}",
            done.status,
            last.trim()
        ));
    }
    Ok(done.stdout)
}

/// `key=value` fields of one `scontrol --oneliner` line, in order. A word without `=` belongs
/// to the value before it (`OS=Linux 6.1.0-18-amd64 #1 SMP ...`).
pub fn fields(line: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for word in line.split_whitespace() {
        let key = word.split_once('=').filter(|(k, _)| {
            !k.is_empty()
                && k.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_/:.".contains(c))
        });
        match (key, out.last_mut()) {
            (Some((k, v)), _) => out.push((k.to_owned(), v.to_owned())),
            (None, Some((_, value))) => {
                value.push(' ');
                value.push_str(word);
            }
            (None, None) => {}
        }
    }
    out
}

/// The value of `key` among [`fields`].
pub fn field<'a>(fields: &'a [(String, String)], key: &str) -> Option<&'a str> {
    (fields.iter())
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// GPUs in a GRES list, as sinfo's `%G` and scontrol's `Gres=` print it: `gpu:4`,
/// `gpu:a100:4(S:0-1)`, `gpu:a100:2,gpu:v100:2`, `nvme:1,gpu:h100:4(S:0,1)`; `(count, type)`,
/// the type when every GPU entry names the same one; `None` without GPUs (`(null)`).
pub fn gres_gpus(gres: &str) -> Option<(u32, Option<String>)> {
    let mut depth = 0;
    let mut entries = vec![String::new()];
    for c in gres.trim().chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                entries.push(String::new());
                continue;
            }
            _ => {}
        }
        if depth == 0 && c != ')' {
            entries.last_mut().expect("one entry").push(c);
        }
    }
    let mut count = 0;
    let mut types: Vec<Option<String>> = Vec::new();
    for entry in entries {
        let parts: Vec<&str> = entry.split(':').collect();
        let (n, kind) = match parts.as_slice() {
            ["gpu", n] => (n, None),
            ["gpu", kind, n] => (n, Some((*kind).to_owned())),
            _ => continue,
        };
        // `gpu:4` or, from some sites' plugins, `gpu:4(IDX:0-3)` already cut above.
        let Ok(n) = n.parse::<u32>() else { continue };
        count += n;
        types.push(kind);
    }
    types.dedup();
    let kind = match types.as_slice() {
        [one] => one.clone(),
        _ => None,
    };
    (count > 0).then_some((count, kind))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gres_lists_as_slurm_prints_them() {
        assert_eq!(gres_gpus("gpu:4"), Some((4, None)));
        assert_eq!(
            gres_gpus("gpu:a100:4(S:0-1)"),
            Some((4, Some("a100".into())))
        );
        assert_eq!(
            gres_gpus("nvme:1,gpu:h100:4(S:0,1)"),
            Some((4, Some("h100".into())))
        );
        assert_eq!(gres_gpus("gpu:a100:2,gpu:v100:2"), Some((4, None)));
        assert_eq!(gres_gpus("(null)"), None);
        assert_eq!(gres_gpus(""), None);
        assert_eq!(gres_gpus("nvme:1"), None);
    }

    #[test]
    fn oneliner_fields_keep_values_with_spaces() {
        let f = fields(
            "NodeName=n1 Arch=x86_64 OS=Linux 6.1.0 #1 SMP RealMemory=494000 Reason=x [root@2026]",
        );
        assert_eq!(field(&f, "Arch"), Some("x86_64"));
        assert_eq!(field(&f, "OS"), Some("Linux 6.1.0 #1 SMP"));
        assert_eq!(field(&f, "RealMemory"), Some("494000"));
        assert_eq!(field(&f, "Reason"), Some("x [root@2026]"));
    }
}
