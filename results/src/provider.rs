//! Every system fencecheck knows, in one table: its name and the short forms users type, whether
//! a test can take a lock from it, whether it has servers to start, and what it offers to the
//! nemesis ([`Capabilities`]). Users name all of them with `provider` (`provider:` in YAML,
//! `--provider`): memory is the provider that runs in the harness's own process, and postgres is
//! both the store a resource writes to and a lock service (advisory locks: fencecheck's
//! `pg-advisory` recipe, and tooz through its adapter). What a crate does with a provider (its
//! default recipe, its cluster of containers) stays in that crate, as functions over this one
//! enum.

use std::fmt;

/// A system fencecheck can test or start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Provider {
    /// etcd 3.4, 3 members.
    Etcd,
    /// ZooKeeper 3.8, a 3-member ensemble.
    Zookeeper,
    /// Redis 7, a single master.
    Redis,
    /// Redis 7, 5 independent masters (for Redlock).
    Redlock,
    /// Redis 7, a master with 2 replicas and 3 sentinels.
    RedisSentinel,
    /// PostgreSQL 15, one server: a store for resources, and a lock service through its
    /// advisory locks (the `pg-advisory` recipe, and tooz's adapter).
    Postgres,
    /// The in-process lock service (no containers): for fast pipeline tests.
    Memory,
}

/// What a system offers to the nemesis: which faults can act on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// The system these describe (refusals name it).
    pub provider: Provider,
    /// One node is the leader / master at any time.
    pub leader: bool,
    /// The nodes replicate among themselves, so partitioning them means something.
    pub quorum: bool,
    /// Something promotes a replica when the master is gone.
    pub failover: bool,
    /// Why libfaketime cannot move its servers' wall clocks, if it cannot.
    pub no_fake_clock: Option<&'static str>,
    /// It runs in the harness's own process (memory): no nodes, network, clocks or links to
    /// fault, only its workers, which can be paused and killed.
    pub in_process: bool,
    /// Why its clients' replies do not pass through the run's link proxy, if they do not.
    pub replies_past_proxy: Option<&'static str>,
    /// Why one of its servers cannot be restarted without its data, if it cannot.
    pub no_empty_restart: Option<&'static str>,
}

/// Go reads the clock through the vDSO: the one wording of every clock-fault refusal of etcd.
/// An etcd member cannot come back from a lost disk by restarting.
const ETCD_MEMBER: &str = "an etcd member without its data directory cannot rejoin under its old \
                           member id: it must be removed and added again, a change of \
                           membership, not a crash";
/// What fencecheck has not built.
const PG_EMPTY: &str = "a PostgreSQL server restarted without its data is not built: it would \
                        need a fresh initdb, and the resource's store lives there too";

const GO_CLOCK: &str = "its servers are Go programs, and libfaketime cannot reach them: Go reads \
                        the clock through the vDSO, not libc";
/// Sentinel hands clients the master's own address, past the link proxy: only the sentinels'
/// replies would be held back, not the lock's.
const PAST_PROXY: &str = "its clients reach the master at the address the sentinels give them, \
                          past the link proxy that would hold the replies back";
/// Memory's lock service is a value in the harness, not a server.
const IN_PROCESS: &str = "runs inside the harness's process, with no server to start";

/// One row of the table. Every fact of a system is here, so a new system is one new row.
struct Row {
    name: &'static str,
    aliases: &'static [&'static str],
    /// Why fencecheck starts no servers for it, if it starts none.
    no_servers: Option<&'static str>,
    leader: bool,
    quorum: bool,
    failover: bool,
    no_fake_clock: Option<&'static str>,
    replies_past_proxy: Option<&'static str>,
    /// Its lock servers are Redis servers, whose persistence a test sets.
    redis: bool,
    /// Why one of its servers cannot be restarted without its data, if it cannot.
    no_empty_restart: Option<&'static str>,
}

impl Provider {
    /// Every provider, in the order messages list them (lock services with servers first).
    pub const ALL: [Provider; 7] = [
        Provider::Etcd,
        Provider::Zookeeper,
        Provider::Redis,
        Provider::Redlock,
        Provider::RedisSentinel,
        Provider::Postgres,
        Provider::Memory,
    ];

    fn row(self) -> Row {
        let servers = Row {
            name: "",
            aliases: &[],
            no_servers: None,
            leader: true,
            quorum: false,
            failover: false,
            no_fake_clock: None,
            replies_past_proxy: None,
            redis: false,
            no_empty_restart: None,
        };
        match self {
            Provider::Etcd => Row {
                name: "etcd",
                quorum: true,
                no_fake_clock: Some(GO_CLOCK),
                no_empty_restart: Some(ETCD_MEMBER),
                ..servers
            },
            Provider::Zookeeper => Row {
                name: "zookeeper",
                aliases: &["zk"],
                quorum: true,
                ..servers
            },
            Provider::Redis => Row {
                name: "redis",
                redis: true,
                ..servers
            },
            Provider::Redlock => Row {
                name: "redlock",
                leader: false,
                redis: true,
                ..servers
            },
            Provider::RedisSentinel => Row {
                name: "redis-sentinel",
                aliases: &["sentinel"],
                quorum: true,
                failover: true,
                replies_past_proxy: Some(PAST_PROXY),
                redis: true,
                ..servers
            },
            Provider::Postgres => Row {
                name: "postgres",
                no_empty_restart: Some(PG_EMPTY),
                ..servers
            },
            Provider::Memory => Row {
                name: "memory",
                no_servers: Some(IN_PROCESS),
                leader: false,
                no_fake_clock: Some(IN_PROCESS),
                no_empty_restart: Some(IN_PROCESS),
                ..servers
            },
        }
    }

    /// The name users type and messages print.
    pub fn as_str(self) -> &'static str {
        self.row().name
    }

    /// The short forms users may type instead (`zk`, `sentinel`).
    pub fn aliases(self) -> &'static [&'static str] {
        self.row().aliases
    }

    /// Why fencecheck starts no servers for this provider, if it starts none (memory).
    pub fn no_servers_because(self) -> Option<&'static str> {
        self.row().no_servers
    }

    /// Whether its lock servers are Redis servers, whose persistence a test sets
    /// ([`crate::persistence::Persistence`]).
    pub fn takes_persistence(self) -> bool {
        self.row().redis
    }

    /// What it offers to the nemesis.
    pub fn capabilities(self) -> Capabilities {
        let row = self.row();
        Capabilities {
            provider: self,
            leader: row.leader,
            quorum: row.quorum,
            failover: row.failover,
            no_fake_clock: row.no_fake_clock,
            in_process: row.no_servers.is_some(),
            replies_past_proxy: row.replies_past_proxy,
            no_empty_restart: row.no_empty_restart,
        }
    }

    /// The lock provider of this name (or short form): every provider is one (postgres through
    /// a client adapter's advisory locks).
    pub fn parse_lock(name: &str) -> Result<Provider, ProviderError> {
        Self::parse_where(name, |_| None)
    }

    /// The provider of this name whose servers fencecheck can start: every one but memory.
    pub fn parse_with_servers(name: &str) -> Result<Provider, ProviderError> {
        Self::parse_where(name, Provider::no_servers_because)
    }

    /// The provider of this name, if `unfit` has nothing against it; errors list the fit ones.
    fn parse_where(
        name: &str,
        unfit: fn(Provider) -> Option<&'static str>,
    ) -> Result<Provider, ProviderError> {
        let expected = || {
            Provider::ALL
                .into_iter()
                .filter(|p| unfit(*p).is_none())
                .map(Provider::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let provider = Provider::ALL
            .into_iter()
            .find(|p| p.as_str() == name || p.aliases().contains(&name))
            .ok_or_else(|| ProviderError::Unknown {
                given: name.to_string(),
                expected: expected(),
            })?;
        match unfit(provider) {
            Some(why) => Err(ProviderError::Unfit {
                provider,
                why,
                expected: expected(),
            }),
            None => Ok(provider),
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A provider name that is unknown, or names a provider that cannot serve where it was written;
/// the message lists the ones that can.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    #[error("unknown provider {given:?}: expected one of {expected}")]
    Unknown { given: String, expected: String },
    #[error("{provider} {why}: expected one of {expected}")]
    Unfit {
        provider: Provider,
        why: &'static str,
        expected: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_and_short_form_parses_back() {
        for p in Provider::ALL {
            assert_eq!(Provider::parse_lock(p.as_str()), Ok(p));
            for alias in p.aliases() {
                assert_eq!(Provider::parse_lock(alias), Ok(p));
            }
        }
        assert_eq!(Provider::parse_lock("zk"), Ok(Provider::Zookeeper));
        assert_eq!(
            Provider::parse_lock("sentinel"),
            Ok(Provider::RedisSentinel)
        );
    }

    #[test]
    fn an_unknown_name_lists_the_valid_ones_for_where_it_was_written() {
        let err = Provider::parse_with_servers("etdc")
            .unwrap_err()
            .to_string();
        assert!(err.contains("\"etdc\""), "{err}");
        assert!(
            err.contains(
                "expected one of etcd, zookeeper, redis, redlock, redis-sentinel, postgres"
            ),
            "{err}"
        );
        assert!(!err.contains("memory"), "{err}");
        let err = Provider::parse_lock("consul").unwrap_err().to_string();
        assert!(
            err.contains("etcd, zookeeper, redis, redlock, redis-sentinel, postgres, memory"),
            "{err}"
        );
    }

    #[test]
    fn memory_has_no_servers() {
        let err = Provider::parse_with_servers("memory")
            .unwrap_err()
            .to_string();
        assert!(err.contains("harness's process"), "{err}");
    }

    #[test]
    fn only_etcd_and_memory_are_out_of_libfaketime_s_reach() {
        let out: Vec<Provider> = Provider::ALL
            .into_iter()
            .filter(|p| p.capabilities().no_fake_clock.is_some())
            .collect();
        assert_eq!(out, [Provider::Etcd, Provider::Memory]);
        let why = Provider::Etcd.capabilities().no_fake_clock.unwrap();
        assert!(
            why.contains("Go programs") && why.contains("libfaketime"),
            "{why}"
        );
    }

    #[test]
    fn capabilities_name_the_system_they_describe() {
        for p in Provider::ALL {
            assert_eq!(p.capabilities().provider, p);
        }
        let sentinel = Provider::RedisSentinel.capabilities();
        assert!(sentinel.leader && sentinel.quorum && sentinel.failover);
        assert!(!Provider::Redlock.capabilities().leader);
    }
}
