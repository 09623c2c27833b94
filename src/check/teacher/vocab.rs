//! `teacher-tokenizer`: the teacher reads the student's token ids as the same tokens. Logit
//! distillation scores the student's own ids with the teacher's weights (the ref worker's
//! `base_action_log_probs`), so a teacher with another vocabulary gives a meaningless KL and no
//! error. What decides it is the id -> token mapping of the staged `tokenizer.json` (its model's
//! vocabulary and its added tokens), and whether the teacher's embedding (`vocab_size` in
//! config.json) has a row for every id the student may emit. Merges and normalizers only decide
//! how text becomes ids, and both sides use the student's ids.

use super::Teacher;
use crate::check::model_size;
use crate::check::skyrl_rules::Values;
use camino::{Utf8Path, Utf8PathBuf};
use std::collections::BTreeMap;

/// A tokenizer file bigger than this is not read (the largest real ones are tens of MB).
const MOST_BYTES: u64 = 256 << 20;

/// A model's vocabulary as the job's tokenizer loads it.
struct Vocab {
    /// id -> token, the model's vocabulary with the added tokens over it.
    ids: BTreeMap<u64, String>,
    /// config.json's `vocab_size`: the embedding's rows.
    rows: Option<u64>,
    /// The file the mapping was read from, for messages.
    source: Utf8PathBuf,
}

impl Vocab {
    /// One more than the largest id: the ids the tokenizer may emit.
    fn span(&self) -> u64 {
        self.ids.keys().next_back().map_or(0, |id| id + 1)
    }

    /// FNV-1a over every (id, token) in id order: equal mappings, equal prints.
    fn fingerprint(&self) -> String {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for (id, token) in &self.ids {
            let bytes = id.to_le_bytes();
            for b in bytes.iter().chain(token.as_bytes()).chain(&[0xff]) {
                hash ^= u64::from(*b);
                hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
        format!("{hash:016x}")
    }

    fn rows(&self) -> String {
        self.rows
            .map_or_else(|| "unknown".to_owned(), |r| r.to_string())
    }
}

/// Per teacher: Ok(a problem) or Err(why it could not be judged).
pub fn check(values: &Values, teachers: &[Teacher], hf: &Utf8Path) -> Vec<Result<String, String>> {
    let Some(student) = values.text("trainer.policy.model.path") else {
        return Vec::new();
    };
    // Models not staged are the `offline` check's: said there, once.
    let Some(student_dir) = snapshot(&student, hf) else {
        return Vec::new();
    };
    let mut said = Vec::new();
    let mut student_vocab = None;
    for teacher in teachers {
        let Some(dir) = snapshot(&teacher.model, hf) else {
            continue;
        };
        if student_vocab.is_none() {
            match read(&student_dir) {
                Ok(v) => student_vocab = Some(v),
                Err(why) => {
                    said.push(Err(skipped(&student, &why)));
                    return said;
                }
            }
        }
        let Some(ours) = &student_vocab else {
            return said;
        };
        match read(&dir) {
            Ok(theirs) => said.extend(compare(&student, ours, teacher, &theirs).map(Ok)),
            Err(why) => said.push(Err(skipped(&teacher.model, &why))),
        }
    }
    said
}

fn skipped(model: &str, why: &str) -> String {
    format!("`{model}`: {why}: the teacher's vocabulary was not compared with the student's")
}

/// The folder of a staged model: a local folder, or the HF cache's newest snapshot.
fn snapshot(model: &str, hf: &Utf8Path) -> Option<Utf8PathBuf> {
    Some(model_size::config_json(model, hf)?.parent()?.to_owned())
}

/// The problem of a teacher whose ids name other tokens than the student's, or that lacks rows
/// for the student's ids; None when the student's ids mean the same to it.
fn compare(student: &str, ours: &Vocab, teacher: &Teacher, theirs: &Vocab) -> Option<String> {
    let figures = format!(
        "the student `{student}` has {} token ids (vocabulary {}, vocab_size {}), the teacher {} {} (vocabulary \
         {}, vocab_size {})",
        ours.ids.len(),
        ours.fingerprint(),
        ours.rows(),
        teacher.shown(),
        theirs.ids.len(),
        theirs.fingerprint(),
        theirs.rows()
    );
    let fix = "distil from a teacher of the student's tokenizer (the same tokenizer.json vocabulary), or pass \
               --allow teacher-tokenizer if the mismatch is meant";
    if ours.ids != theirs.ids {
        let differ = ours
            .ids
            .iter()
            .filter(|(id, token)| theirs.ids.get(id) != Some(token))
            .count();
        let example = ours
            .ids
            .iter()
            .find(|(id, token)| theirs.ids.get(id) != Some(token))
            .map(|(id, token)| match theirs.ids.get(id) {
                Some(other) => {
                    format!("id {id} is {token:?} to the student and {other:?} to the teacher")
                }
                None => format!("id {id} is {token:?} to the student and no token to the teacher"),
            })
            .unwrap_or_else(|| "the teacher has ids the student lacks".to_owned());
        return Some(format!(
            "the teacher reads the student's token ids as other tokens: {figures}; {differ} of the student's ids \
             differ ({example}; from {} and {}), so the distillation KL compares unrelated tokens without an \
             error: {fix}",
            ours.source, theirs.source
        ));
    }
    let span = ours.span();
    match theirs.rows {
        Some(rows) if rows < span => Some(format!(
            "the teacher's embedding has fewer rows than the student's ids: {figures}; the student emits ids up \
             to {} and the teacher has no logits for ids from {rows}: {fix}",
            span - 1
        )),
        _ => None,
    }
}

/// The vocabulary of the model in `dir`: tokenizer.json, else vocab.json with
/// tokenizer_config.json's added tokens.
fn read(dir: &Utf8Path) -> Result<Vocab, String> {
    let rows = json(&dir.join("config.json"))
        .ok()
        .and_then(|c| c.get("vocab_size")?.as_u64());
    let fast = dir.join("tokenizer.json");
    if fast.is_file() {
        let ids = from_tokenizer_json(&json(&fast)?)
            .ok_or_else(|| format!("`{fast}` holds no vocabulary rlctl can read"))?;
        return Ok(Vocab {
            ids,
            rows,
            source: fast,
        });
    }
    let slow = dir.join("vocab.json");
    if slow.is_file() {
        let mut ids = token_ids(json(&slow)?.as_object())
            .ok_or_else(|| format!("`{slow}` is not a token -> id object"))?;
        if let Ok(config) = json(&dir.join("tokenizer_config.json"))
            && let Some(added) = config
                .get("added_tokens_decoder")
                .and_then(|a| a.as_object())
        {
            for (id, token) in added {
                if let (Ok(id), Some(content)) = (id.parse(), token.get("content"))
                    && let Some(content) = content.as_str()
                {
                    ids.insert(id, content.to_owned());
                }
            }
        }
        return Ok(Vocab {
            ids,
            rows,
            source: slow,
        });
    }
    Err(format!(
        "`{dir}` has no tokenizer.json or vocab.json (a sentencepiece-only tokenizer is not read)"
    ))
}

fn json(path: &Utf8Path) -> Result<serde_json::Value, String> {
    let size = std::fs::metadata(path)
        .map_err(|e| format!("`{path}`: {e}"))?
        .len();
    if size > MOST_BYTES {
        return Err(format!("`{path}` is {size} bytes, more than rlctl reads"));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("`{path}`: {e}"))?;
    serde_json::from_str(&text).map_err(|e| format!("`{path}` is not JSON ({e})"))
}

/// id -> token of an HF `tokenizer.json`: `model.vocab` (an object for BPE, WordPiece and
/// WordLevel; a list of `[piece, score]` for Unigram, the id being the place), then
/// `added_tokens`.
fn from_tokenizer_json(json: &serde_json::Value) -> Option<BTreeMap<u64, String>> {
    let vocab = json.get("model")?.get("vocab")?;
    let mut ids = match vocab.as_array() {
        Some(pieces) => (pieces.iter().enumerate())
            .map(|(id, p)| Some((id as u64, p.get(0)?.as_str()?.to_owned())))
            .collect::<Option<BTreeMap<_, _>>>()?,
        None => token_ids(vocab.as_object())?,
    };
    let none = Vec::new();
    let added = json.get("added_tokens").and_then(|a| a.as_array());
    for added in added.unwrap_or(&none) {
        let id = added.get("id")?.as_u64()?;
        ids.insert(id, added.get("content")?.as_str()?.to_owned());
    }
    Some(ids)
}

fn token_ids(
    object: Option<&serde_json::Map<String, serde_json::Value>>,
) -> Option<BTreeMap<u64, String>> {
    (object?.iter())
        .map(|(token, id)| Some((id.as_u64()?, token.clone())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The two shapes of `model.vocab` in HF's tokenizer.json: an object (BPE, WordPiece,
    /// WordLevel) and Unigram's list of `[piece, score]`, both with added tokens over them.
    #[test]
    fn vocabularies_of_both_shapes_with_added_tokens() {
        let bpe = serde_json::json!({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}},
            "added_tokens": [{"id": 2, "content": "<|im_end|>", "special": true}]});
        let unigram = serde_json::json!({"model": {"type": "Unigram",
            "vocab": [["a", -1.0], ["b", -2.0]]},
            "added_tokens": [{"id": 2, "content": "<|im_end|>"}]});
        let (bpe, unigram) = (
            from_tokenizer_json(&bpe).unwrap(),
            from_tokenizer_json(&unigram).unwrap(),
        );
        assert_eq!(bpe, unigram);
        assert_eq!(bpe.get(&2).map(String::as_str), Some("<|im_end|>"));
        let vocab = |ids| Vocab {
            ids,
            rows: None,
            source: Utf8PathBuf::new(),
        };
        let mut other = bpe.clone();
        other.insert(1, "c".to_owned());
        assert_eq!(
            vocab(bpe.clone()).fingerprint(),
            vocab(unigram).fingerprint()
        );
        assert_ne!(vocab(bpe).fingerprint(), vocab(other).fingerprint());
    }
}
