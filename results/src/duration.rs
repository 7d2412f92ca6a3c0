//! Durations as people write them in a test file, a stored run's `test.yaml` or on the command
//! line (`2s`, `500ms`, `1m30s`), serialized back the same way so `test.yaml` stays readable
//! and re-runnable. One type and one grammar for every reader: the harness validating a test
//! and `fencecheck check` reading a stored one must agree on what `recovery_slack: 1.5s` means.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::time::Duration;

/// A duration that reads and writes as `2s`, `500ms`...
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Dur(pub Duration);

impl Dur {
    pub const fn from_millis(ms: u64) -> Self {
        Dur(Duration::from_millis(ms))
    }

    pub const fn secs(s: u64) -> Self {
        Dur(Duration::from_secs(s))
    }

    pub const fn get(self) -> Duration {
        self.0
    }

    /// Reads humantime's grammar (units may be combined and spaced: `1m 30s`, `1.5s`, `250us`);
    /// a negative duration is refused with its own message rather than humantime's.
    pub fn parse(s: &str) -> Result<Self, String> {
        let t = s.trim();
        if t.starts_with('-') {
            return Err(format!(
                "{s:?} is negative: durations must be positive, e.g. 2s or 500ms"
            ));
        }
        humantime::parse_duration(t)
            .map(Dur)
            .map_err(|e| format!("{s:?} is not a duration ({e}); write e.g. 2s, 500ms or 1m30s"))
    }
}

impl fmt::Display for Dur {
    /// The largest unit that writes the value exactly, so what is recorded parses back to
    /// the value that was used (`250us` stays `250us`, not `0ms`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0.as_nanos();
        if ns.is_multiple_of(1_000_000_000) {
            write!(f, "{}s", ns / 1_000_000_000)
        } else if ns.is_multiple_of(1_000_000) {
            write!(f, "{}ms", ns / 1_000_000)
        } else if ns.is_multiple_of(1_000) {
            write!(f, "{}us", ns / 1_000)
        } else {
            write!(f, "{ns}ns")
        }
    }
}

impl std::str::FromStr for Dur {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Dur::parse(s)
    }
}

impl Serialize for Dur {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Dur {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Dur::parse(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_human_durations() {
        assert_eq!(Dur::parse("2s").unwrap(), Dur::secs(2));
        assert_eq!(Dur::parse("500ms").unwrap(), Dur::from_millis(500));
        assert_eq!(Dur::parse("1m30s").unwrap().to_string(), "90s");
        assert_eq!(Dur::from_millis(1500).to_string(), "1500ms");
        // What is written parses back to what was used, below a millisecond too.
        for text in ["250us", "10ns", "1500ms", "0s"] {
            assert_eq!(Dur::parse(text).unwrap().to_string(), text);
        }
        assert!(Dur::parse("-2s").unwrap_err().contains("negative"));
        assert!(Dur::parse("soon").unwrap_err().contains("2s"));
    }

    #[test]
    fn the_grammar_is_the_one_people_write() {
        let ok = |s: &str| Dur::parse(s).map(Dur::get);
        assert_eq!(ok(" 250us "), Ok(Duration::from_micros(250)));
        assert_eq!(ok("1m 30s"), Ok(Duration::from_secs(90)));
        assert_eq!(ok("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(ok("10ns"), Ok(Duration::from_nanos(10)));
        assert_eq!(ok("1h"), Ok(Duration::from_secs(3600)));
        for bad in ["", "2", "s", "-1s", "2 fortnights", "soon"] {
            assert!(Dur::parse(bad).is_err(), "{bad}");
        }
    }
}
