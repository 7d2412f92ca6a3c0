//! A replay's `wait: lease-expired A` asks the provider, from the host through the 127.0.0.1 ports, whether
//! A's acquisition is still alive, and polls until it is not (a blind sleep would hide a provider
//! that keeps a lease longer than its ttl, which is itself a finding):
//! - etcd: the lease's TimeToLive (the `lease` of A's acquire is the lease id in hex, or ends in
//!   `lease <hex>`); expired when the server answers ttl -1 (the lease is gone: revoked, its keys
//!   deleted). A ttl of 0 is not enough: the leader revokes expired leases asynchronously, and the
//!   lock key stays until it does (measured: an acquire 0.6 s after ttl 0 still found the key
//!   held). A lease `<key>@<create revision>` (etcd's concurrency.Mutex) is expired when that key
//!   is gone or was created again;
//! - ZooKeeper: A's lock node (the `lease` is its path) no longer exists;
//! - Redis (single, Sentinel master, Redlock masters): the lock key `fencecheck:lock:<lock>`
//!   no longer holds A's owner value (on every master, for Redlock); a lease `<key>:<value>`
//!   (redis-py's Lock) names its own key.
//!
//! Client adapters report their leases in these forms (docs/adapters.md).

use containers::cluster::probe::{redis_connection, within};
use containers::cluster::ClusterHandle;
use containers::docker::Node;
use results::Provider;
use std::time::{Duration, Instant};

/// Whether one acquisition (`lease`, of `lock`) is over as the provider sees it now.
pub async fn expired(cluster: &ClusterHandle, lock: &str, lease: &str) -> Result<bool, String> {
    match cluster.provider {
        Provider::Etcd => etcd_expired(cluster, lease).await,
        Provider::Zookeeper => zk_expired(cluster, lease).await,
        Provider::Redis | Provider::Redlock => {
            let masters: Vec<_> = cluster.client_nodes().cloned().collect();
            redis_expired(&masters, lock, lease).await
        }
        Provider::RedisSentinel => {
            let master = cluster
                .leader()
                .await?
                .ok_or("the sentinels name no master right now")?;
            redis_expired(&[master], lock, lease).await
        }
        Provider::Postgres => Err(
            "postgres's advisory locks have no lease to wait for: one lasts \
                                   as long as its holder's session"
                .to_string(),
        ),
        Provider::Memory => Err(format!("{} holds no leases to probe", cluster.provider)),
    }
}

/// Polls [`expired`] every 50 ms until it says yes or `limit` runs out. Returns how long it took.
pub async fn wait_expired(
    cluster: &ClusterHandle,
    lock: &str,
    lease: &str,
    limit: Duration,
) -> Result<Duration, String> {
    let start = Instant::now();
    loop {
        let last = match expired(cluster, lock, lease).await {
            Ok(true) => return Ok(start.elapsed()),
            Ok(false) => "still alive".to_string(),
            Err(e) => e,
        };
        if start.elapsed() >= limit {
            return Err(format!(
                "lease {lease} was not expired after {limit:?} (last answer from {}: {last})",
                cluster.provider
            ));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// What an etcd lease string names: a lease id, or a key at its create revision.
#[derive(Debug, PartialEq, Eq)]
enum EtcdLease<'a> {
    Id(i64),
    Key { key: &'a str, revision: i64 },
}

fn etcd_lease(lease: &str) -> Result<EtcdLease<'_>, String> {
    let hex = lease.rsplit_once("lease ").map_or(lease, |(_, h)| h);
    if let Ok(id) = i64::from_str_radix(hex.trim(), 16) {
        return Ok(EtcdLease::Id(id));
    }
    if let Some((key, rev)) = lease.rsplit_once('@') {
        if let Ok(revision) = rev.parse() {
            return Ok(EtcdLease::Key { key, revision });
        }
    }
    Err(format!(
        "etcd lease {lease:?} is neither a hex lease id (`... lease <hex>`) nor `<key>@<revision>`"
    ))
}

async fn etcd_expired(cluster: &ClusterHandle, lease: &str) -> Result<bool, String> {
    let named = etcd_lease(lease)?;
    let endpoints = cluster.endpoints();
    within("etcd lease TimeToLive", async {
        let mut c = etcd_client::Client::connect(&endpoints, None)
            .await
            .map_err(|e| format!("etcd {}: {e}", endpoints.join(",")))?;
        match named {
            EtcdLease::Id(id) => {
                let r = c
                    .lease_time_to_live(id, None)
                    .await
                    .map_err(|e| format!("lease TimeToLive {lease}: {e}"))?;
                Ok(r.ttl() < 0)
            }
            EtcdLease::Key { key, revision } => {
                let r = c
                    .get(key, None)
                    .await
                    .map_err(|e| format!("get {key}: {e}"))?;
                Ok(r.kvs()
                    .first()
                    .is_none_or(|kv| kv.create_revision() != revision))
            }
        }
    })
    .await
}

async fn zk_expired(cluster: &ClusterHandle, path: &str) -> Result<bool, String> {
    let endpoints = cluster.endpoints().join(",");
    within("ZooKeeper exists", async {
        let c = zookeeper_client::Client::connect(&endpoints)
            .await
            .map_err(|e| format!("zookeeper {endpoints}: {e}"))?;
        let stat = c
            .check_stat(path)
            .await
            .map_err(|e| format!("exists {path}: {e}"))?;
        Ok(stat.is_none())
    })
    .await
}

async fn redis_expired(masters: &[Node], lock: &str, lease: &str) -> Result<bool, String> {
    // `<lock>:<value>`: a library's own key (redis-py names its key after the lock).
    let (key, value) = match lease.strip_prefix(&format!("{lock}:")) {
        Some(value) => (lock.to_string(), value),
        None => (format!("fencecheck:lock:{lock}"), lease),
    };
    for m in masters {
        let mut conn = redis_connection(m).await?;
        let held: Option<String> = within(&format!("GET {key} on {}", m.name), async {
            redis::cmd("GET")
                .arg(&key)
                .query_async(&mut conn)
                .await
                .map_err(|e| format!("{}: {e}", m.name))
        })
        .await?;
        if held.as_deref() == Some(value) {
            return Ok(false);
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn etcd_leases_name_a_lease_id_or_a_key_at_its_revision() {
        assert_eq!(
            etcd_lease("7429a2315583eb04"),
            Ok(EtcdLease::Id(0x7429a2315583eb04))
        );
        assert_eq!(
            etcd_lease("/locks/l=3df5 lease 11f5a231696d6a5c"),
            Ok(EtcdLease::Id(0x11f5a231696d6a5c))
        );
        assert_eq!(
            etcd_lease("/fencecheck-lock/2665a2316809e404@10"),
            Ok(EtcdLease::Key {
                key: "/fencecheck-lock/2665a2316809e404",
                revision: 10
            })
        );
        assert!(etcd_lease("zk-node-1").is_err());
    }
}
