//! Redis 7: one master (`redis`) or five independent masters (`redlock`). Ready when every master
//! answers PING. Persistence is the test's (`persistence:`): off by default (`--save ""`, no
//! AOF), so a killed and restarted master comes back empty, which is the deployment Redlock's
//! critics point at; with the append-only file it comes back with what it wrote. Every server
//! announces its key changes (keyspace notifications) for the run's observer.

use super::probe::redis_ping;
use super::Cluster;
use crate::docker::{ContainerSpec, Node, Readiness, Role};
use futures::future::BoxFuture;
use results::persistence::Persistence;

pub(crate) const PORT: u16 = 6379;

pub(crate) struct Redis {
    masters: usize,
    persistence: Persistence,
}

impl Redis {
    pub(crate) fn single(persistence: Persistence) -> Self {
        Redis {
            masters: 1,
            persistence,
        }
    }
    pub(crate) fn redlock(persistence: Persistence) -> Self {
        Redis {
            masters: 5,
            persistence,
        }
    }
}

/// Where a Redis server keeps its append-only file.
pub(crate) const DATA_DIR: &str = "/var/lib/redis";

/// A Redis server on [`PORT`], reachable from the run's network, with `persistence`.
pub(crate) fn server_spec(
    short: &str,
    extra: &[String],
    persistence: Persistence,
) -> ContainerSpec {
    let mut cmd: Vec<String> = [
        "redis-server",
        "--port",
        "6379",
        "--bind",
        "0.0.0.0",
        "--protected-mode",
        "no",
        "--dir",
        DATA_DIR,
        // What the lock service's observer follows: keyspace notifications (K) of generic
        // commands (g: del, expire), string commands ($: set), expiries (x) and evictions (e).
        "--notify-keyspace-events",
        "Kg$xe",
    ]
    .iter()
    .chain(persistence.redis_args())
    .map(|s| s.to_string())
    .collect();
    cmd.extend(extra.iter().cloned());
    let mut spec = ContainerSpec::new(short, cmd);
    spec.data_dir = Some(DATA_DIR);
    spec.port(PORT).ready(Readiness::Listening(PORT))
}

impl Cluster for Redis {
    fn client_role(&self) -> Role {
        Role::Master
    }

    fn waves(&self, _name: &dyn Fn(&str) -> String) -> Vec<Vec<ContainerSpec>> {
        vec![(1..=self.masters)
            .map(|i| server_spec(&format!("redis-{i}"), &[], self.persistence).role(Role::Master))
            .collect()]
    }

    fn probe<'a>(&'a self, nodes: &'a [Node]) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            for result in futures::future::join_all(nodes.iter().map(redis_ping)).await {
                result?;
            }
            Ok(())
        })
    }

    fn leader<'a>(&'a self, nodes: &'a [Node]) -> BoxFuture<'a, Result<Option<String>, String>> {
        Box::pin(async move {
            Ok(match nodes {
                [only] if self.masters == 1 => Some(only.name.clone()),
                _ => None,
            })
        })
    }
}
