//! The cluster each provider runs as: the one map from the data model's [`Provider`] to the
//! description of its containers. Memory has none: it lives in the harness's process.

use super::Cluster;
use results::persistence::Persistence;
use results::Provider;
use std::sync::Arc;

/// The description of this provider's containers, readiness and leader; `None` for memory.
/// `persistence` is its Redis servers' (the others have none to set).
pub fn cluster_of(provider: Provider, persistence: Persistence) -> Option<Arc<dyn Cluster>> {
    Some(match provider {
        Provider::Etcd => Arc::new(super::etcd::Etcd),
        Provider::Zookeeper => Arc::new(super::zookeeper::Zookeeper),
        Provider::Redis => Arc::new(super::redis::Redis::single(persistence)),
        Provider::Redlock => Arc::new(super::redis::Redis::redlock(persistence)),
        Provider::RedisSentinel => Arc::new(super::sentinel::Sentinel { persistence }),
        Provider::Postgres => Arc::new(super::postgres::Postgres),
        Provider::Memory => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_provider_with_servers_has_a_cluster_and_only_those() {
        for p in Provider::ALL {
            assert_eq!(
                cluster_of(p, Persistence::None).is_some(),
                p.no_servers_because().is_none(),
                "{p}"
            );
        }
    }
}
