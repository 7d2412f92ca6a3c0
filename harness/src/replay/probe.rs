//! `wait: lease-expired A` asks the provider, from the host through the 127.0.0.1 ports, whether
//! A's acquisition is still alive, and polls until it is not (a blind sleep would hide a provider
//! that keeps a lease longer than its ttl, which is itself a finding):
//! - etcd: the lease's TimeToLive (the `lease` of A's acquire is the lease id in hex); expired when
//!   the server answers ttl -1 (the lease is gone: revoked, its keys deleted). A ttl of 0 is not
//!   enough: the leader revokes expired leases asynchronously, and the lock key stays until it does
//!   (measured: an acquire 0.6 s after ttl 0 still found the key held);
//! - ZooKeeper: A's lock node (the `lease` is its path) no longer exists;
//! - Redis (single, Sentinel master, Redlock masters): the lock key `fencecheck:lock:<lock>`
//!   no longer holds A's owner value (on every master, for Redlock).

use containers::cluster::probe::{redis_connection, within};
use containers::cluster::{ClusterHandle, System};
use containers::docker::Node;
use std::time::{Duration, Instant};

/// Whether one acquisition (`lease`, of `lock`) is over as the provider sees it now.
pub async fn expired(cluster: &ClusterHandle, lock: &str, lease: &str) -> Result<bool, String> {
    match cluster.system {
        System::Etcd => etcd_expired(cluster, lease).await,
        System::Zookeeper => zk_expired(cluster, lease).await,
        System::Redis | System::Redlock => {
            let masters: Vec<_> = cluster.client_nodes().cloned().collect();
            redis_expired(&masters, lock, lease).await
        }
        System::RedisSentinel => {
            let master = cluster
                .leader()
                .await?
                .ok_or("the sentinels name no master right now")?;
            redis_expired(&[master], lock, lease).await
        }
        System::Postgres => Err("postgres is no lock service".into()),
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
                cluster.system
            ));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn etcd_expired(cluster: &ClusterHandle, lease: &str) -> Result<bool, String> {
    let id = i64::from_str_radix(lease, 16)
        .map_err(|e| format!("etcd lease {lease:?} is not a hex lease id: {e}"))?;
    let endpoints = cluster.endpoints();
    within("etcd lease TimeToLive", async {
        let mut c = etcd_client::Client::connect(&endpoints, None)
            .await
            .map_err(|e| format!("etcd {}: {e}", endpoints.join(",")))?;
        let r = c
            .lease_time_to_live(id, None)
            .await
            .map_err(|e| format!("lease TimeToLive {lease}: {e}"))?;
        Ok(r.ttl() < 0)
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
    let key = format!("fencecheck:lock:{lock}");
    for m in masters {
        let mut conn = redis_connection(m).await?;
        let value: Option<String> = within(&format!("GET {key} on {}", m.name), async {
            redis::cmd("GET")
                .arg(&key)
                .query_async(&mut conn)
                .await
                .map_err(|e| format!("{}: {e}", m.name))
        })
        .await?;
        if value.as_deref() == Some(lease) {
            return Ok(false);
        }
    }
    Ok(true)
}
