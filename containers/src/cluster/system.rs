//! The systems fencecheck can start, by the names users type (`etcd`, `redis-sentinel`, ...).

use super::Cluster;
use crate::docker::Role;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

/// A cluster kind fencecheck can start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum System {
    /// etcd 3.4, 3 members.
    Etcd,
    /// ZooKeeper 3.8, 3-member ensemble.
    Zookeeper,
    /// Redis 7, a single master.
    Redis,
    /// Redis 7, 5 independent masters (for Redlock).
    Redlock,
    /// Redis 7, a master with 2 replicas and 3 sentinels.
    RedisSentinel,
    /// PostgreSQL 15, one server (for resources that need a real database).
    Postgres,
}

impl System {
    pub const ALL: [System; 6] = [
        System::Etcd,
        System::Zookeeper,
        System::Redis,
        System::Redlock,
        System::RedisSentinel,
        System::Postgres,
    ];

    pub fn name(self) -> &'static str {
        match self {
            System::Etcd => "etcd",
            System::Zookeeper => "zookeeper",
            System::Redis => "redis",
            System::Redlock => "redlock",
            System::RedisSentinel => "redis-sentinel",
            System::Postgres => "postgres",
        }
    }

    /// The role of the nodes that clients talk to (sentinels, not the Redis servers behind them).
    pub fn client_role(self) -> Role {
        match self {
            System::Etcd | System::Zookeeper => Role::Member,
            System::Redis | System::Redlock => Role::Master,
            System::RedisSentinel => Role::Sentinel,
            System::Postgres => Role::Database,
        }
    }

    /// The description of this system's containers, readiness and leader.
    pub fn cluster(self) -> Arc<dyn Cluster> {
        match self {
            System::Etcd => Arc::new(super::etcd::Etcd),
            System::Zookeeper => Arc::new(super::zookeeper::Zookeeper),
            System::Redis => Arc::new(super::redis::Redis::single()),
            System::Redlock => Arc::new(super::redis::Redis::redlock()),
            System::RedisSentinel => Arc::new(super::sentinel::Sentinel),
            System::Postgres => Arc::new(super::postgres::Postgres),
        }
    }
}

impl fmt::Display for System {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A system name fencecheck does not know; the message lists the ones it does.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown system {given:?}: expected one of {}", System::ALL.map(System::name).join(", "))]
pub struct UnknownSystem {
    pub given: String,
}

impl FromStr for System {
    type Err = UnknownSystem;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        System::ALL
            .into_iter()
            .find(|sys| sys.name() == s)
            .ok_or_else(|| UnknownSystem {
                given: s.to_string(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_parses_back() {
        for system in System::ALL {
            assert_eq!(system.name().parse::<System>(), Ok(system));
        }
    }

    #[test]
    fn an_unknown_name_lists_the_valid_ones() {
        let err = "etdc".parse::<System>().unwrap_err().to_string();
        assert!(err.contains("\"etdc\""), "{err}");
        assert!(
            err.contains("etcd, zookeeper, redis, redlock, redis-sentinel, postgres"),
            "{err}"
        );
    }
}
