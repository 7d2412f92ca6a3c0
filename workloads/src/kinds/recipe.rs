//! The shipped lock recipes (fencecheck's own textbook baselines): each name, the provider it
//! runs on, whether its acquisitions carry a fence token, and which one a test runs when it
//! names only a provider.

use super::{find, Provider, UnknownName};
use std::fmt;
use std::str::FromStr;

/// Which recipe a worker runs (the `--recipe` values of docs/design.md, "The command line").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RecipeKind {
    EtcdLease,
    EtcdLock,
    ZkLock,
    RedisLock,
    RedisLockDel,
    Redlock,
    RedisSentinel,
    PgAdvisory,
    Memory,
}

impl RecipeKind {
    pub const ALL: [RecipeKind; 9] = [
        RecipeKind::EtcdLease,
        RecipeKind::EtcdLock,
        RecipeKind::ZkLock,
        RecipeKind::RedisLock,
        RecipeKind::RedisLockDel,
        RecipeKind::Redlock,
        RecipeKind::RedisSentinel,
        RecipeKind::PgAdvisory,
        RecipeKind::Memory,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RecipeKind::EtcdLease => "etcd-lease",
            RecipeKind::EtcdLock => "etcd-lock",
            RecipeKind::ZkLock => "zk-lock",
            RecipeKind::RedisLock => "redis-lock",
            RecipeKind::RedisLockDel => "redis-lock-del",
            RecipeKind::Redlock => "redlock",
            RecipeKind::RedisSentinel => "redis-sentinel",
            RecipeKind::PgAdvisory => "pg-advisory",
            RecipeKind::Memory => "memory",
        }
    }

    /// The lock service it talks to.
    pub fn provider(self) -> Provider {
        match self {
            RecipeKind::EtcdLease | RecipeKind::EtcdLock => Provider::Etcd,
            RecipeKind::ZkLock => Provider::Zookeeper,
            RecipeKind::RedisLock | RecipeKind::RedisLockDel => Provider::Redis,
            RecipeKind::Redlock => Provider::Redlock,
            RecipeKind::RedisSentinel => Provider::RedisSentinel,
            RecipeKind::PgAdvisory => Provider::Postgres,
            RecipeKind::Memory => Provider::Memory,
        }
    }

    /// Whether acquisitions carry a fence token (Redlock has none).
    pub fn has_token(self) -> bool {
        self != RecipeKind::Redlock
    }

    /// Whether its lease is an etcd lease (whole seconds, at least 2 s).
    pub fn is_etcd(self) -> bool {
        self.provider() == Provider::Etcd
    }

    /// The recipe a test runs when it names only its provider.
    pub fn default_for(provider: Provider) -> RecipeKind {
        match provider {
            Provider::Etcd => RecipeKind::EtcdLease,
            Provider::Zookeeper => RecipeKind::ZkLock,
            Provider::Redis => RecipeKind::RedisLock,
            Provider::Redlock => RecipeKind::Redlock,
            Provider::RedisSentinel => RecipeKind::RedisSentinel,
            Provider::Memory => RecipeKind::Memory,
            Provider::Postgres => RecipeKind::PgAdvisory,
        }
    }
}

impl fmt::Display for RecipeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for RecipeKind {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        find("recipe", s, &RecipeKind::ALL, RecipeKind::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_provider_has_a_default_recipe_that_runs_on_it() {
        for p in Provider::ALL {
            assert_eq!(RecipeKind::default_for(p).provider(), p);
        }
    }
}
