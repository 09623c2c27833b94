//! Why hydra refuses an override, in hydra's (or OmegaConf's) words, and the fix, worded for
//! the shell the user types into.

use super::parser::SyntaxError;
use crate::text::{clip, hydra_quote, sh};

/// Where in hydra's start-up the override fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// The key: hydra's lexer or parser stops before the `=`.
    Key,
    /// The value's syntax.
    Syntax,
    /// A function call in the value.
    Function,
    /// A sweep, which needs --multirun.
    Sweep,
    /// OmegaConf storing the value (an interpolation its grammar rejects, a nested sweep).
    Storage,
    /// OmegaConf resolving an interpolation of the composed config.
    Resolution,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    pub stage: Stage,
    /// What hydra or OmegaConf says.
    pub says: String,
    pub fix: String,
}

impl Refusal {
    /// The text after `override `ARG`: `.
    pub fn reason(&self) -> String {
        let who = match self.stage {
            Stage::Storage | Stage::Resolution => "OmegaConf",
            _ => "hydra",
        };
        // What hydra says quotes the override: clipped, as every echo of the user's input.
        let says = clip(&self.says);
        format!("{who} refuses it ({says}); {}", self.fix)
    }
}

/// The override with its value double-quoted for hydra and the whole quoted for the shell.
pub fn quoted(arg: &str) -> String {
    let (key, value) = arg.split_once('=').unwrap_or((arg, ""));
    let quoted = sh(&format!(
        "{key}={}",
        hydra_quote(value.trim_matches([' ', '\t']))
    ));
    clip(&quoted).into_owned()
}

fn column(arg: &str, at: usize) -> usize {
    arg[..at].chars().count() + 1
}

/// A value hydra's parser cannot read.
pub fn syntax(arg: &str, error: &SyntaxError) -> Refusal {
    let eq = arg.find('=');
    let lexer = matches!(error, SyntaxError::NoToken { .. });
    let (at, says) = match error {
        SyntaxError::NoToken { at } => {
            let c = arg[*at..].chars().next().unwrap_or(' ');
            (
                *at,
                format!(
                    "LexerNoViableAltException: no token starts at {c:?}, column {}",
                    column(arg, *at)
                ),
            )
        }
        SyntaxError::Unexpected { at, message } => (*at, message.clone()),
    };
    if eq.is_none_or(|eq| at <= eq) {
        return Refusal {
            stage: Stage::Key,
            says,
            fix: "keys are dotted names such as `trainer.train_batch_size`".into(),
        };
    }
    let value = &arg[eq.map_or(0, |e| e + 1)..];
    let unclosed = value
        .match_indices("${")
        .any(|(i, _)| !value[i..].contains('}'));
    let fix = if unclosed {
        format!(
            "an interpolation `${{...}}` must end with `}}`; for a literal `${{`, quote the value and \
             escape the dollar, e.g. {}",
            clip(&sh(&format!(
                "{}=\"{}\"",
                &arg[..eq.unwrap_or(0)],
                value.replace("${", "\\${")
            )))
        )
    } else {
        let c = arg[at..].chars().next().unwrap_or(' ');
        let what = match c {
            '=' => "an `=` inside a value starts another override for hydra".to_owned(),
            ',' => "a comma outside brackets makes a sweep".to_owned(),
            '\'' | '"' => format!(
                "the quote at column {} is not closed where hydra expects",
                column(arg, at)
            ),
            '}' if value.contains("${") => {
                "hydra ends an unquoted interpolation at its first `}`, so nested ones need quotes"
                    .to_owned()
            }
            c if !c.is_ascii() => "hydra takes non-ASCII characters only inside quotes".to_owned(),
            c if lexer => format!("hydra takes {c:?} only inside quotes"),
            _ => "the value does not follow hydra's grammar (lists `[a,b]`, dicts `{k:v}`, calls \
                  `f(x)`)"
                .to_owned(),
        };
        format!("{what}; quote the value: {}", quoted(arg))
    };
    Refusal {
        stage: Stage::Syntax,
        says,
        fix,
    }
}

/// A function call hydra refuses to evaluate.
pub fn function(arg: &str, message: &str) -> Refusal {
    let unknown = message.contains("Unknown function");
    let fix = if unknown {
        format!(
            "`name(...)` is hydra's function-call syntax; to pass the text itself, quote the value: {}",
            quoted(arg)
        )
    } else {
        format!(
            "fix the call (hydra's functions: https://hydra.cc/docs/advanced/override_grammar/extended/), \
             or quote the value to pass the text itself: {}",
            quoted(arg)
        )
    };
    Refusal {
        stage: Stage::Function,
        says: message.lines().next().unwrap_or(message).to_owned(),
        fix,
    }
}

/// A sweep, which hydra takes only with --multirun; rlctl launches one run per job.
pub fn sweep(arg: &str, simple: bool) -> Refusal {
    let (key, value) = arg.split_once('=').unwrap_or((arg, ""));
    if simple {
        Refusal {
            stage: Stage::Sweep,
            says: format!("Ambiguous value for argument '{arg}'"),
            fix: format!(
                "a comma outside quotes or brackets is a sweep, which needs --multirun: for one \
                 string quote the value ({}), for a list use brackets ({}); for several runs \
                 write a grid (see `rlctl grid --help`)",
                quoted(arg),
                clip(&sh(&format!("{key}=[{}]", value.trim_matches([' ', '\t']))))
            ),
        }
    } else {
        Refusal {
            stage: Stage::Sweep,
            says: format!("Sweep parameters '{arg}' requires --multirun"),
            fix: format!(
                "rlctl launches one run per job and never passes --multirun: give one value, or \
                 write a grid (see `rlctl grid --help`); to pass the text itself, quote the value: {}",
                quoted(arg)
            ),
        }
    }
}

/// A value OmegaConf refuses to store.
pub fn storage(says: String) -> Refusal {
    let fix = if says.starts_with("GrammarParseError") {
        "close every `${` with `}` (e.g. `${trainer.seed}`); for a literal `${`, write `\\${` \
         inside quotes"
            .to_owned()
    } else if says.contains("NoneType") {
        "hydra reads an unquoted `null` dict key as None: pick another key".to_owned()
    } else {
        "a list or dict holds plain values, never a sweep".to_owned()
    };
    Refusal {
        stage: Stage::Storage,
        says,
        fix,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quoted_form_is_one_shell_word_hydra_reads_as_one_string() {
        assert_eq!(
            quoted("trainer.project_name=a,b"),
            r#"'trainer.project_name="a,b"'"#
        );
        assert_eq!(quoted("k=it's"), r#"'k="it'\''s"'"#);
    }
}
