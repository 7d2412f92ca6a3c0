//! Durations as people write them in a test file or on the command line (`2s`, `500ms`, `1m30s`),
//! serialized back the same way so `test.yaml` stays readable and re-runnable.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::time::Duration;

/// A duration that reads and writes as `2s`, `500ms`...
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Dur(pub Duration);

impl Dur {
    pub fn from_millis(ms: u64) -> Self {
        Dur(Duration::from_millis(ms))
    }

    pub fn secs(s: u64) -> Self {
        Dur(Duration::from_secs(s))
    }

    pub fn get(self) -> Duration {
        self.0
    }

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
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.0.as_millis();
        if ms.is_multiple_of(1000) {
            write!(f, "{}s", ms / 1000)
        } else {
            write!(f, "{ms}ms")
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
        assert!(Dur::parse("-2s").unwrap_err().contains("negative"));
        assert!(Dur::parse("soon").unwrap_err().contains("2s"));
    }
}
