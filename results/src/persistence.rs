//! How a Redis server keeps what it acknowledged across a restart: the setting a durability
//! test sweeps. Redlock's safety argument leans on it (a master that restarts without the keys
//! it granted hands the same lock out again), and so does a fence counter kept in Redis (one
//! that restarts lower hands out old tokens). The default is none: the deployment Redlock's
//! critics point at, and the one every run had before the setting existed.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A Redis server's persistence.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Persistence {
    /// Nothing is written (`--save ""`, no AOF): a restarted server is empty.
    #[default]
    None,
    /// The append-only file, fsynced once a second (`appendfsync everysec`): a crash of the
    /// machine may lose the last second; a crash of the process loses nothing the kernel holds.
    Everysec,
    /// The append-only file, fsynced before each write is acknowledged (`appendfsync always`).
    Always,
}

/// Every setting, in the order messages list them.
pub const ALL_PERSISTENCE: [Persistence; 3] = [
    Persistence::None,
    Persistence::Everysec,
    Persistence::Always,
];

impl Persistence {
    pub fn name(self) -> &'static str {
        match self {
            Persistence::None => "none",
            Persistence::Everysec => "everysec",
            Persistence::Always => "always",
        }
    }

    /// The `redis-server` arguments that set it.
    pub fn redis_args(self) -> &'static [&'static str] {
        match self {
            Persistence::None => &["--save", "", "--appendonly", "no"],
            Persistence::Everysec => &[
                "--save",
                "",
                "--appendonly",
                "yes",
                "--appendfsync",
                "everysec",
            ],
            Persistence::Always => &[
                "--save",
                "",
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
            ],
        }
    }
}

impl fmt::Display for Persistence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A persistence name that is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown persistence {0:?}: expected one of none, everysec, always")]
pub struct UnknownPersistence(pub String);

impl FromStr for Persistence {
    type Err = UnknownPersistence;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ALL_PERSISTENCE
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| UnknownPersistence(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_setting_reads_back_and_names_its_redis_arguments() {
        for p in ALL_PERSISTENCE {
            assert_eq!(p.name().parse::<Persistence>(), Ok(p));
            let args = p.redis_args().join(" ");
            assert_eq!(
                args.contains("appendonly yes"),
                p != Persistence::None,
                "{p}"
            );
        }
        let e = "fsync".parse::<Persistence>().unwrap_err().to_string();
        assert!(e.contains("\"fsync\"") && e.contains("everysec"), "{e}");
    }
}
