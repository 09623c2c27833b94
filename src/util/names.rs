//! The one rule for names that become job names, folder names and words in scripts, and the
//! one for environment variable names.

/// What a plain word may hold, for messages: the fix names it.
pub const PLAIN_WORD: &str =
    "use only letters, digits, `_`, `.` and `-`, not starting with `.` (at most 128)";

/// A plain word: letters, digits, `_`, `.` and `-`, at most 128, not starting with `.`. Such a
/// name is one literal word in a shell script and on an `#SBATCH` line, and as a folder name it
/// can never be `.`, `..`, hidden, or a path.
pub fn is_plain_word(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
}

/// Why a folder cannot hold the job's log, for messages: the fix names it.
pub const LOG_FOLDER: &str = "SLURM's --output cannot carry spaces, quotes, `\\`, `$`, `%` or backticks; choose a folder without them";

/// A folder the job's log can be written into: `#SBATCH --output` names it, and sbatch reads
/// that line itself, with no quoting, so whitespace, quotes, `\\`, `$`, `%` and backticks
/// cannot be carried. `storage.run_root` and `render --out` both name such a folder.
pub fn is_log_folder(dir: &str) -> bool {
    !dir.contains(|c: char| c.is_whitespace() || "%'\"\\$`".contains(c))
}

/// A Python module path for `python -m`: dotted identifiers, e.g.
/// `skyrl_train.entrypoints.main_base`.
pub fn is_module_name(name: &str) -> bool {
    name.split('.').all(|part| {
        let mut chars = part.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// A Hugging Face model id: `name` or `org/name`, each a plain word.
pub fn is_model_id(id: &str) -> bool {
    let mut parts = id.split('/');
    parts.next().is_some_and(is_plain_word)
        && parts.next().is_none_or(is_plain_word)
        && parts.next().is_none()
}

/// A POSIX environment variable name: a letter or `_`, then letters, digits and `_`.
pub fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_names_and_model_ids_are_one_word_each() {
        assert!(is_module_name("skyrl_train.entrypoints.main_base"));
        assert!(is_module_name(
            "examples.on_policy_distillation_logits.main"
        ));
        for bad in [
            "",
            "a..b",
            ".a",
            "a.",
            "1a",
            "a$(touch x)",
            "a b",
            "a;b",
            "a-b",
        ] {
            assert!(!is_module_name(bad), "{bad:?}");
        }
        assert!(is_model_id("Qwen/Qwen3-1.7B"));
        assert!(is_model_id("gpt2"));
        for bad in ["", "a/b/c", "../x", "a/.", "/abs", "a b/c", "q/$(x)"] {
            assert!(!is_model_id(bad), "{bad:?}");
        }
    }

    #[test]
    fn a_log_folder_holds_nothing_sbatch_would_misread() {
        assert!(is_log_folder("/work/runs/gsm8k/n4/001"));
        for bad in [
            "/a b", "/a\tb", "/a%j", "/a'b", "/a\"b", "/a\\b", "/a$b", "/a`b`",
        ] {
            assert!(!is_log_folder(bad), "{bad:?}");
        }
    }

    #[test]
    fn plain_words_are_never_paths() {
        for good in ["gsm8k-canary", "tbs128", "lr1e-5", "a.b", "combo_acc"] {
            assert!(is_plain_word(good), "{good}");
        }
        for bad in [
            "",
            ".",
            "..",
            ".hidden",
            "a/b",
            "a b",
            "$(x)",
            "a;b",
            "é",
            &"x".repeat(129),
        ] {
            assert!(!is_plain_word(bad), "{bad:?}");
        }
    }
}
