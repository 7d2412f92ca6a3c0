//! Where the counter workload keeps its counter: a plain store (what a lock alone protects), or
//! one whose write-back is guarded by the etcd lock key's revision.

use super::{find, Provider, UnknownName};
use std::fmt;
use std::str::FromStr;

/// The counter workload's store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CounterStore {
    Redis,
    Postgres,
    /// Each write-back guarded by the etcd lock key's create revision (provider etcd).
    EtcdGuard,
    /// In-process (provider memory).
    Memory,
}

impl CounterStore {
    pub const ALL: [CounterStore; 4] = [
        CounterStore::Redis,
        CounterStore::Postgres,
        CounterStore::EtcdGuard,
        CounterStore::Memory,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            CounterStore::Redis => "redis",
            CounterStore::Postgres => "postgres",
            CounterStore::EtcdGuard => "etcd-guard",
            CounterStore::Memory => "memory",
        }
    }

    /// The provider it is bound to, if any.
    pub fn bound_to(self) -> Option<Provider> {
        match self {
            CounterStore::EtcdGuard => Some(Provider::Etcd),
            CounterStore::Memory => Some(Provider::Memory),
            CounterStore::Redis | CounterStore::Postgres => None,
        }
    }

    /// The store a provider's counter workload uses when the test names none.
    pub fn default_for(provider: Provider) -> CounterStore {
        match provider {
            Provider::Memory => CounterStore::Memory,
            _ => CounterStore::Redis,
        }
    }
}

impl fmt::Display for CounterStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for CounterStore {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        find("counter store", s, &CounterStore::ALL, CounterStore::as_str)
    }
}
