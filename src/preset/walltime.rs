//! SLURM wall-clock limits (`HH:MM:SS` or `D-HH:MM:SS`), parsed once and compared as seconds.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Walltime {
    seconds: u64,
}

impl Walltime {
    pub fn seconds(self) -> u64 {
        self.seconds
    }

    /// The shortest wall time in whole minutes that holds `secs` (at least a minute, at most
    /// the longest rlctl accepts): what a message suggests for `--time`. Its `to_string` is
    /// the form [`FromStr`] reads back, so a suggestion is always one `--time` takes.
    pub fn holding(secs: f64) -> Walltime {
        let minutes = (secs.max(0.0) / 60.0).ceil().max(1.0);
        let seconds = (minutes * 60.0).min((MAX_DAYS * 86400) as f64) as u64;
        Walltime { seconds }
    }

    /// A limit as SLURM prints it (`sinfo`'s `30:00`, `scontrol`'s `1-00:00:00`, `sacctmgr`'s
    /// `23:59:00`): minutes, `MM:SS`, `HH:MM:SS`, `D-HH`, `D-HH:MM` or `D-HH:MM:SS`; `None` for
    /// no limit (`UNLIMITED`, `INFINITE`, `NONE`, empty) or what is not a time.
    pub fn of_slurm(text: &str) -> Option<Walltime> {
        let text = text.trim();
        let (days, clock) = match text.split_once('-') {
            Some((d, rest)) => (Some(d.parse::<u64>().ok()?), rest),
            None => (None, text),
        };
        let parts: Vec<u64> = (clock.split(':'))
            .map(|p| p.parse::<u64>().ok())
            .collect::<Option<_>>()?;
        let seconds = match (days, parts.as_slice()) {
            (None, [m]) => m * 60,
            (None, [m, s]) => m * 60 + s,
            (None | Some(_), [h, m, s]) => h * 3600 + m * 60 + s,
            (Some(_), [h]) => h * 3600,
            (Some(_), [h, m]) => h * 3600 + m * 60,
            _ => return None,
        } + days.unwrap_or(0) * 86400;
        (seconds > 0 && days.unwrap_or(0) <= MAX_DAYS).then_some(Walltime { seconds })
    }
}

/// The longest wall time rlctl accepts, in days.
const MAX_DAYS: u64 = 365;

impl FromStr for Walltime {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let shown = crate::error::clip(text);
        let bad =
            || format!("`{shown}` is not a wall time: write HH:MM:SS or D-HH:MM:SS, e.g. 00:30:00");
        let (days, clock) = match text.split_once('-') {
            Some((d, rest)) => (d.parse::<u64>().map_err(|_| bad())?, rest),
            None => (0, text),
        };
        // No QOS grants a year; a larger count is a typo, and would overflow the seconds.
        if days > MAX_DAYS {
            return Err(format!(
                "`{shown}` asks for {days} days: a wall time is at most {MAX_DAYS} days; write D-HH:MM:SS, e.g. 1-00:00:00"
            ));
        }
        let parts: Vec<&str> = clock.split(':').collect();
        let [h, m, s] = parts.as_slice() else {
            return Err(bad());
        };
        let field = |t: &str, max: u64| -> Result<u64, String> {
            if t.len() != 2 {
                return Err(bad());
            }
            t.parse::<u64>().ok().filter(|v| *v <= max).ok_or_else(bad)
        };
        let seconds = days * 86400 + field(h, 23)? * 3600 + field(m, 59)? * 60 + field(s, 59)?;
        if seconds == 0 {
            return Err(format!("`{shown}` is a zero wall time"));
        }
        Ok(Walltime { seconds })
    }
}

impl fmt::Display for Walltime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (d, rest) = (self.seconds / 86400, self.seconds % 86400);
        let (h, m, s) = (rest / 3600, rest % 3600 / 60, rest % 60);
        if d > 0 {
            write!(f, "{d}-")?;
        }
        write!(f, "{h:02}:{m:02}:{s:02}")
    }
}

impl<'de> Deserialize<'de> for Walltime {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

impl Serialize for Walltime {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_form_slurm_prints_a_limit_in() {
        let of = |t: &str| Walltime::of_slurm(t).map(|w| w.to_string());
        assert_eq!(of("30:00").as_deref(), Some("00:30:00"));
        assert_eq!(of("30").as_deref(), Some("00:30:00"));
        assert_eq!(of("23:59:00").as_deref(), Some("23:59:00"));
        assert_eq!(of("1-00:00:00").as_deref(), Some("1-00:00:00"));
        assert_eq!(of("2-12").as_deref(), Some("2-12:00:00"));
        assert_eq!(of("1-06:30").as_deref(), Some("1-06:30:00"));
        for none in ["UNLIMITED", "INFINITE", "NONE", "", "n/a", "1:2:3:4"] {
            assert_eq!(of(none), None, "{none}");
        }
    }

    #[test]
    fn parses_and_prints_slurm_forms() {
        let t: Walltime = "00:30:00".parse().unwrap();
        assert_eq!((t.seconds(), t.to_string()), (1800, "00:30:00".to_owned()));
        let t: Walltime = "1-02:03:04".parse().unwrap();
        assert_eq!(
            (t.seconds(), t.to_string()),
            (93784, "1-02:03:04".to_owned())
        );
    }

    proptest::proptest! {
        /// Whatever rlctl prints as a wall time (in a suggestion, a ledger, a plan) it reads
        /// back as the same time.
        #[test]
        fn every_printed_wall_time_parses_back(seconds in 1u64..=MAX_DAYS * 86400) {
            let t = Walltime { seconds };
            proptest::prop_assert_eq!(t.to_string().parse::<Walltime>(), Ok(t));
        }

        #[test]
        fn a_suggested_wall_time_holds_what_it_is_for(secs in 0.0f64..(MAX_DAYS * 86400) as f64) {
            let t = Walltime::holding(secs);
            proptest::prop_assert!(t.seconds() as f64 >= secs && t.seconds().is_multiple_of(60));
            proptest::prop_assert_eq!(t.to_string().parse::<Walltime>(), Ok(t));
        }
    }

    #[test]
    fn a_suggestion_past_a_day_is_written_with_days() {
        assert_eq!(
            Walltime::holding(30.0 * 3600.0 + 1.0).to_string(),
            "1-06:01:00"
        );
        assert_eq!(Walltime::holding(99.5 * 3600.0).to_string(), "4-03:30:00");
        assert_eq!(Walltime::holding(0.0).to_string(), "00:01:00");
    }

    #[test]
    fn refuses_what_slurm_would_misread() {
        for bad in [
            "30",
            "0:30:00",
            "00:60:00",
            "24:00:00",
            "00:00:00",
            "x-01:00:00",
            "",
        ] {
            assert!(bad.parse::<Walltime>().is_err(), "{bad}");
        }
    }

    #[test]
    fn wall_times_parse_or_say_how_to_write_them() {
        assert_eq!("00:30:00".parse::<Walltime>().unwrap().seconds(), 1800);
        assert_eq!("1-02:00:00".parse::<Walltime>().unwrap().seconds(), 93600);
        let huge = "99999999999999999-00:00:00"
            .parse::<Walltime>()
            .unwrap_err();
        assert!(huge.contains("at most 365 days"), "{huge}");
        assert!("24:00:00".parse::<Walltime>().is_err());
        assert!("00:00:00".parse::<Walltime>().unwrap_err().contains("zero"));
    }
}
