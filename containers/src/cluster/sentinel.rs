//! Redis 7 with Sentinel: a master, two replicas, three sentinels monitoring the master as
//! [`super::SENTINEL_MASTER_NAME`] (quorum 2, down after 2 s). Everything is announced by container
//! name, so sentinel clients must run on the run's network. Ready when every sentinel names the
//! master and knows 2 replicas and 2 other sentinels.
//!
//! Started in two waves: the data nodes first (replicas ready once their first sync finished, so
//! the sentinels see them at once rather than after their 10 s INFO period), then the sentinels.
//! A sentinel writes its config only on first start: after a restart it keeps what it learned
//! (the current master, the epoch), as a real deployment does.

use super::probe::{redis_connection, redis_ping, within};
use super::redis::{server_spec, PORT};
use super::{Cluster, SENTINEL_MASTER_NAME};
use crate::docker::{ContainerSpec, Node, Readiness, Role};
use futures::future::BoxFuture;
use results::persistence::Persistence;
use std::collections::HashMap;

pub(crate) struct Sentinel {
    /// The data nodes' persistence.
    pub(crate) persistence: Persistence,
}

pub(crate) const SENTINEL_PORT: u16 = 26379;
const REPLICAS: usize = 2;
const SENTINELS: usize = 3;

fn sentinel_script(me: &str, master: &str) -> String {
    let config = [
        format!("port {SENTINEL_PORT}"),
        "sentinel resolve-hostnames yes".to_string(),
        "sentinel announce-hostnames yes".to_string(),
        format!("sentinel announce-ip {me}"),
        format!("sentinel monitor {SENTINEL_MASTER_NAME} {master} {PORT} 2"),
        format!("sentinel down-after-milliseconds {SENTINEL_MASTER_NAME} 2000"),
        format!("sentinel failover-timeout {SENTINEL_MASTER_NAME} 10000"),
        format!("sentinel parallel-syncs {SENTINEL_MASTER_NAME} 1"),
    ]
    .iter()
    .map(|line| format!("'{line}'"))
    .collect::<Vec<_>>()
    .join(" ");
    format!(
        "test -f /tmp/sentinel.conf || printf '%s\\n' {config} > /tmp/sentinel.conf; \
         exec redis-sentinel /tmp/sentinel.conf"
    )
}

/// `SENTINEL master <name>` as a field map.
async fn master_info(sentinel: &Node) -> Result<HashMap<String, String>, String> {
    let mut conn = redis_connection(sentinel).await?;
    within(&format!("SENTINEL master on {}", sentinel.name), async {
        redis::cmd("SENTINEL")
            .arg("master")
            .arg(SENTINEL_MASTER_NAME)
            .query_async(&mut conn)
            .await
            .map_err(|e| format!("{}: {e}", sentinel.name))
    })
    .await
}

/// The host name of the master as one sentinel reports it.
async fn master_name(sentinel: &Node) -> Result<String, String> {
    let mut conn = redis_connection(sentinel).await?;
    within(
        &format!("get-master-addr-by-name on {}", sentinel.name),
        async {
            let addr: Vec<String> = redis::cmd("SENTINEL")
                .arg("get-master-addr-by-name")
                .arg(SENTINEL_MASTER_NAME)
                .query_async(&mut conn)
                .await
                .map_err(|e| format!("{}: {e}", sentinel.name))?;
            addr.into_iter()
                .next()
                .ok_or_else(|| format!("{} knows no master yet", sentinel.name))
        },
    )
    .await
}

impl Cluster for Sentinel {
    fn client_role(&self) -> Role {
        Role::Sentinel
    }

    fn waves(&self, name: &dyn Fn(&str) -> String) -> Vec<Vec<ContainerSpec>> {
        let master = name("redis-1");
        // Redis 7 waits 5 s for more replicas before a diskless full sync; here they all connect
        // at once, and after a failover the new master should feed them at once too.
        let announce = |short: &str| {
            vec![
                "--replica-announce-ip".to_string(),
                name(short),
                "--repl-diskless-sync-delay".to_string(),
                "0".to_string(),
            ]
        };
        let persistence = self.persistence;
        let mut data =
            vec![server_spec("redis-1", &announce("redis-1"), persistence).role(Role::Master)];
        for i in 2..=REPLICAS + 1 {
            let short = format!("redis-{i}");
            let mut extra = vec!["--replicaof".to_string(), master.clone(), PORT.to_string()];
            extra.extend(announce(&short));
            let synced = "MASTER <-> REPLICA sync: Finished with success";
            data.push(
                server_spec(&short, &extra, persistence)
                    .role(Role::Replica)
                    .ready(Readiness::LogLine(synced.to_string())),
            );
        }
        let sentinels = (1..=SENTINELS)
            .map(|i| {
                let short = format!("sentinel-{i}");
                ContainerSpec::new(
                    &short,
                    ["sh", "-c", &sentinel_script(&name(&short), &master)],
                )
                .port(SENTINEL_PORT)
                .role(Role::Sentinel)
                .ready(Readiness::Listening(SENTINEL_PORT))
            })
            .collect();
        vec![data, sentinels]
    }

    fn probe<'a>(&'a self, nodes: &'a [Node]) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            for node in nodes.iter().filter(|n| n.role != Role::Sentinel) {
                redis_ping(node).await?;
            }
            let master = nodes.iter().find(|n| n.role == Role::Master);
            for sentinel in nodes.iter().filter(|n| n.role == Role::Sentinel) {
                let info = master_info(sentinel).await?;
                let field = |k: &str| info.get(k).map(String::as_str).unwrap_or("?");
                let name_ok = master.is_some_and(|m| m.name == field("ip"));
                let replicas = field("num-slaves");
                let others = field("num-other-sentinels");
                if !name_ok || replicas != REPLICAS.to_string() || others != "2" {
                    return Err(format!(
                        "{} sees master {}, {replicas} replicas, {others} other sentinels",
                        sentinel.name,
                        field("ip")
                    ));
                }
            }
            Ok(())
        })
    }

    fn leader<'a>(&'a self, nodes: &'a [Node]) -> BoxFuture<'a, Result<Option<String>, String>> {
        Box::pin(async move {
            let mut last_error = "no sentinel answered".to_string();
            for sentinel in nodes.iter().filter(|n| n.role == Role::Sentinel) {
                match master_name(sentinel).await {
                    Ok(host) => {
                        return Ok(nodes
                            .iter()
                            .find(|n| n.name == host)
                            .map(|n| n.name.clone()))
                    }
                    Err(e) => last_error = e,
                }
            }
            Err(last_error)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentinels_resolve_and_announce_host_names() {
        let s = sentinel_script("fc-r-sentinel-1", "fc-r-redis-1");
        assert!(s.contains("'sentinel resolve-hostnames yes'"));
        assert!(s.contains("'sentinel monitor mymaster fc-r-redis-1 6379 2'"));
        assert!(s.starts_with("test -f /tmp/sentinel.conf ||"), "{s}");
    }
}
