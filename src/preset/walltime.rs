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
}

/// The longest wall time rlctl accepts, in days.
const MAX_DAYS: u64 = 365;

impl FromStr for Walltime {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let bad =
            || format!("`{text}` is not a wall time: write HH:MM:SS or D-HH:MM:SS, e.g. 00:30:00");
        let (days, clock) = match text.split_once('-') {
            Some((d, rest)) => (d.parse::<u64>().map_err(|_| bad())?, rest),
            None => (0, text),
        };
        // No QOS grants a year; a larger count is a typo, and would overflow the seconds.
        if days > MAX_DAYS {
            return Err(format!(
                "`{text}` asks for {days} days: a wall time is at most {MAX_DAYS} days; write D-HH:MM:SS, e.g. 1-00:00:00"
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
            return Err(format!("`{text}` is a zero wall time"));
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
    fn parses_and_prints_slurm_forms() {
        let t: Walltime = "00:30:00".parse().unwrap();
        assert_eq!((t.seconds(), t.to_string()), (1800, "00:30:00".to_owned()));
        let t: Walltime = "1-02:03:04".parse().unwrap();
        assert_eq!(
            (t.seconds(), t.to_string()),
            (93784, "1-02:03:04".to_owned())
        );
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
