//! The cluster each provider runs as: the one map from the data model's [`Provider`] to the
//! description of its containers. Memory has none: it lives in the harness's process.

use super::Cluster;
use results::Provider;
use std::sync::Arc;

/// The description of this provider's containers, readiness and leader; `None` for memory.
pub fn cluster_of(provider: Provider) -> Option<Arc<dyn Cluster>> {
    Some(match provider {
        Provider::Etcd => Arc::new(super::etcd::Etcd),
        Provider::Zookeeper => Arc::new(super::zookeeper::Zookeeper),
        Provider::Redis => Arc::new(super::redis::Redis::single()),
        Provider::Redlock => Arc::new(super::redis::Redis::redlock()),
        Provider::RedisSentinel => Arc::new(super::sentinel::Sentinel),
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
                cluster_of(p).is_some(),
                p.no_servers_because().is_none(),
                "{p}"
            );
        }
    }
}
