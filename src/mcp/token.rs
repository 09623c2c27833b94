//! Confirmation tokens: an HMAC-SHA256, under a key drawn anew by each server process, over the
//! tool, its exact inputs and a digest of what its dry run printed. A token acts once; one whose
//! inputs or state no longer match acts on nothing and says which.

use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a token stays good: a plan read an hour ago is no plan to act on.
pub const LIFETIME: Duration = Duration::from_secs(30 * 60);

/// What a token was issued for, kept to say why a token does not match.
struct Issued {
    tool: String,
    inputs: String,
    at: Instant,
    spent: bool,
}

/// The tokens this server issued.
pub struct Tokens {
    key: [u8; 32],
    issued: Mutex<HashMap<String, Issued>>,
}

/// Why a token acts on nothing.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    /// Not issued by this server process (a restart draws a new key), or not a token at all.
    Unknown,
    /// Used once already.
    Spent,
    /// Older than [`LIFETIME`].
    Expired,
    /// Issued for another tool or other inputs.
    Altered,
    /// The dry run now prints something else: the ledger, the queue or a folder changed.
    Stale,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Refused::Unknown => {
                "the confirm token was not issued by this server (it draws a new key each \
                 start): call the tool without `confirm` for a new one"
            }
            Refused::Spent => {
                "the confirm token was used already (a token acts once): call the tool without \
                 `confirm` to see what it would do now"
            }
            Refused::Expired => "the confirm token is older than 30 minutes: plan again",
            Refused::Altered => {
                "the confirm token was issued for other inputs or another tool: call the tool \
                 without `confirm` with these inputs and confirm what it says"
            }
            Refused::Stale => {
                "what the tool would do changed since the token was issued (the ledger, the \
                 queue or a folder changed): read the new dry run below and confirm it again"
            }
        })
    }
}

impl Tokens {
    /// A fresh key from the system's random source.
    pub fn new() -> std::io::Result<Tokens> {
        use std::io::Read;
        let mut key = [0u8; 32];
        std::fs::File::open("/dev/urandom")?.read_exact(&mut key)?;
        Ok(Tokens {
            key,
            issued: Mutex::new(HashMap::new()),
        })
    }

    /// A token for `tool` with `inputs` (canonical JSON) whose dry run printed `seen`.
    pub fn issue(&self, tool: &str, inputs: &str, seen: &str) -> String {
        let mut nonce = [0u8; 16];
        // The key's first bytes and the time: a nonce need be unique, not secret.
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let mut issued = self.issued.lock().unwrap_or_else(|e| e.into_inner());
        // Memory holds the tokens of the last two lifetimes, not every token a long session
        // issued: one older than that is unknown, where it was expired.
        issued.retain(|_, t| t.at.elapsed() <= 2 * LIFETIME);
        let salt = format!("{}:{}", now.as_nanos(), issued.len());
        nonce.copy_from_slice(&Sha256::digest(salt.as_bytes())[..16]);
        let nonce = hex(&nonce);
        let token = format!("{nonce}.{}", self.mac(&nonce, tool, inputs, seen));
        issued.insert(
            nonce,
            Issued {
                tool: tool.to_owned(),
                inputs: inputs.to_owned(),
                at: Instant::now(),
                spent: false,
            },
        );
        token
    }

    /// Spends `token` when it was issued for exactly `tool`, `inputs` and `seen` (the dry run
    /// just run again); else says why not, spending nothing.
    pub fn redeem(&self, token: &str, tool: &str, inputs: &str, seen: &str) -> Result<(), Refused> {
        let (nonce, mac) = token.split_once('.').ok_or(Refused::Unknown)?;
        let mut issued = self.issued.lock().unwrap_or_else(|e| e.into_inner());
        let entry = issued.get_mut(nonce).ok_or(Refused::Unknown)?;
        let good = self.mac(nonce, tool, inputs, seen);
        match () {
            () if entry.spent => Err(Refused::Spent),
            () if entry.at.elapsed() > LIFETIME => Err(Refused::Expired),
            () if entry.tool != tool || entry.inputs != inputs => Err(Refused::Altered),
            () if !same(&good, mac) => Err(Refused::Stale),
            () => {
                entry.spent = true;
                Ok(())
            }
        }
    }

    fn mac(&self, nonce: &str, tool: &str, inputs: &str, seen: &str) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("any key length");
        // Each part's length first: no two different tuples hash alike.
        for part in [nonce, tool, inputs, &digest(seen)] {
            mac.update(&(part.len() as u64).to_be_bytes());
            mac.update(part.as_bytes());
        }
        hex(&mac.finalize().into_bytes())
    }
}

/// The SHA-256 of `text`, in hex.
pub fn digest(text: &str) -> String {
    hex(&Sha256::digest(text.as_bytes()))
}

/// Compared in time independent of where they differ.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_acts_once_for_its_inputs_and_state() {
        let tokens = Tokens::new().unwrap();
        let t = tokens.issue("launch", r#"{"preset":"a"}"#, "plan 1");
        let other = tokens.issue("launch", r#"{"preset":"a"}"#, "plan 1");
        assert_ne!(t, other);
        let redeem = |t: &str, tool, inputs, seen| tokens.redeem(t, tool, inputs, seen);
        assert_eq!(
            redeem(&t, "launch", r#"{"preset":"b"}"#, "plan 1"),
            Err(Refused::Altered)
        );
        assert_eq!(
            redeem(&t, "cancel", r#"{"preset":"a"}"#, "plan 1"),
            Err(Refused::Altered)
        );
        assert_eq!(
            redeem(&t, "launch", r#"{"preset":"a"}"#, "plan 2"),
            Err(Refused::Stale)
        );
        assert_eq!(redeem(&t, "launch", r#"{"preset":"a"}"#, "plan 1"), Ok(()));
        assert_eq!(
            redeem(&t, "launch", r#"{"preset":"a"}"#, "plan 1"),
            Err(Refused::Spent)
        );
        let forged = format!("{}.{}", t.split('.').next().unwrap(), "0".repeat(64));
        assert_eq!(
            redeem(&forged, "launch", r#"{"preset":"a"}"#, "plan 1"),
            Err(Refused::Spent)
        );
        let forged = format!("{}.{}", other.split('.').next().unwrap(), "0".repeat(64));
        assert_eq!(
            redeem(&forged, "launch", r#"{"preset":"a"}"#, "plan 1"),
            Err(Refused::Stale)
        );
        assert_eq!(redeem("nonsense", "launch", "", ""), Err(Refused::Unknown));
    }
}
