//! Redis 7: one master (`redis`) or five independent masters (`redlock`). Ready when every master
//! answers PING. Persistence is off (`--save ""`, no AOF): a killed and restarted master comes
//! back empty, which is the deployment Redlock's critics point at.

use super::probe::redis_ping;
use super::Cluster;
use crate::docker::{ContainerSpec, Node, Readiness, Role};
use futures::future::BoxFuture;

pub(crate) const PORT: u16 = 6379;

pub(crate) struct Redis {
    masters: usize,
}

impl Redis {
    pub(crate) fn single() -> Self {
        Redis { masters: 1 }
    }
    pub(crate) fn redlock() -> Self {
        Redis { masters: 5 }
    }
}

/// A Redis server on [`PORT`], reachable from the run's network, without persistence.
pub(crate) fn server_spec(short: &str, extra: &[String]) -> ContainerSpec {
    let mut cmd: Vec<String> = [
        "redis-server",
        "--port",
        "6379",
        "--bind",
        "0.0.0.0",
        "--protected-mode",
        "no",
        "--save",
        "",
        "--appendonly",
        "no",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    cmd.extend(extra.iter().cloned());
    ContainerSpec::new(short, cmd)
        .port(PORT)
        .ready(Readiness::Listening(PORT))
}

impl Cluster for Redis {
    fn client_role(&self) -> Role {
        Role::Master
    }

    fn waves(&self, _name: &dyn Fn(&str) -> String) -> Vec<Vec<ContainerSpec>> {
        vec![(1..=self.masters)
            .map(|i| server_spec(&format!("redis-{i}"), &[]).role(Role::Master))
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
