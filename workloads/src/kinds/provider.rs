//! The lock services a test can run against: one closed set of names, each with the recipe a
//! test gets when it names only the provider.

use super::recipe::RecipeKind;
use std::fmt;

/// The lock service a recipe talks to (and so the cluster the harness starts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Provider {
    /// In-process lock service (no containers): for fast pipeline tests.
    Memory,
    Etcd,
    Zookeeper,
    Redis,
    Redlock,
    RedisSentinel,
}

impl Provider {
    pub const ALL: [Provider; 6] = [
        Provider::Etcd,
        Provider::Zookeeper,
        Provider::Redis,
        Provider::Redlock,
        Provider::RedisSentinel,
        Provider::Memory,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Provider::Memory => "memory",
            Provider::Etcd => "etcd",
            Provider::Zookeeper => "zookeeper",
            Provider::Redis => "redis",
            Provider::Redlock => "redlock",
            Provider::RedisSentinel => "redis-sentinel",
        }
    }

    /// Its name, or the short forms users write (`zk`, `sentinel`).
    pub fn parse(s: &str) -> Option<Provider> {
        match s {
            "zk" => Some(Provider::Zookeeper),
            "sentinel" => Some(Provider::RedisSentinel),
            _ => Provider::ALL.into_iter().find(|p| p.as_str() == s),
        }
    }

    /// Every name, for messages.
    pub fn names() -> String {
        Provider::ALL.map(Provider::as_str).join(", ")
    }

    /// The recipe a test runs when it names only this provider.
    pub fn default_recipe(self) -> RecipeKind {
        match self {
            Provider::Memory => RecipeKind::Memory,
            Provider::Etcd => RecipeKind::EtcdLease,
            Provider::Zookeeper => RecipeKind::ZkLock,
            Provider::Redis => RecipeKind::RedisLock,
            Provider::Redlock => RecipeKind::Redlock,
            Provider::RedisSentinel => RecipeKind::RedisSentinel,
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_provider_round_trips_and_its_default_recipe_runs_on_it() {
        for p in Provider::ALL {
            assert_eq!(Provider::parse(p.as_str()), Some(p));
            assert_eq!(p.default_recipe().provider(), p);
        }
        assert_eq!(Provider::parse("zk"), Some(Provider::Zookeeper));
        assert_eq!(Provider::parse("consul"), None);
    }
}
