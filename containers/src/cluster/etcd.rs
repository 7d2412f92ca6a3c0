//! etcd 3.4, three members named after their containers. Ready when every member reports the
//! same raft leader and the member list has three entries.

use super::probe::{host_endpoint, within};
use super::Cluster;
use crate::docker::{ContainerSpec, Node, Readiness, Role};
use etcd_client::{Client, ConnectOptions};
use futures::future::BoxFuture;

pub(crate) struct Etcd;

pub(crate) const MEMBERS: usize = 3;
pub(crate) const CLIENT_PORT: u16 = 2379;

fn member_spec(me: &str, short: &str, initial_cluster: &str) -> ContainerSpec {
    let flags = [
        "etcd".to_string(),
        format!("--name={me}"),
        "--data-dir=/var/lib/fc-etcd".to_string(),
        "--listen-client-urls=http://0.0.0.0:2379".to_string(),
        format!("--advertise-client-urls=http://{me}:2379"),
        "--listen-peer-urls=http://0.0.0.0:2380".to_string(),
        format!("--initial-advertise-peer-urls=http://{me}:2380"),
        format!("--initial-cluster={initial_cluster}"),
        "--initial-cluster-state=new".to_string(),
        "--logger=zap".to_string(),
    ];
    ContainerSpec::new(short, flags)
        .port(CLIENT_PORT)
        .role(Role::Member)
        .ready(Readiness::Listening(CLIENT_PORT))
}

/// Asks one member for its own id and the leader it follows.
async fn status(node: &Node) -> Result<(u64, u64), String> {
    let endpoint = host_endpoint(node)?;
    within(&format!("etcd status of {}", node.name), async {
        let options = ConnectOptions::new()
            .with_connect_timeout(super::probe::PROBE_TIMEOUT)
            .with_timeout(super::probe::PROBE_TIMEOUT);
        let mut client = Client::connect([endpoint], Some(options))
            .await
            .map_err(|e| format!("{}: {e}", node.name))?;
        let status = client
            .status()
            .await
            .map_err(|e| format!("{}: {e}", node.name))?;
        let me = status.header().map(|h| h.member_id()).unwrap_or(0);
        Ok((me, status.leader()))
    })
    .await
}

/// The member names by id, from one member's member list.
async fn member_names(node: &Node) -> Result<Vec<(u64, String)>, String> {
    let endpoint = host_endpoint(node)?;
    within(&format!("etcd member list of {}", node.name), async {
        let options = ConnectOptions::new()
            .with_connect_timeout(super::probe::PROBE_TIMEOUT)
            .with_timeout(super::probe::PROBE_TIMEOUT);
        let mut client = Client::connect([endpoint], Some(options))
            .await
            .map_err(|e| format!("{}: {e}", node.name))?;
        let list = client
            .member_list()
            .await
            .map_err(|e| format!("{}: {e}", node.name))?;
        Ok(list
            .members()
            .iter()
            .map(|m| (m.id(), m.name().to_string()))
            .collect())
    })
    .await
}

impl Cluster for Etcd {
    fn client_role(&self) -> Role {
        Role::Member
    }

    fn waves(&self, name: &dyn Fn(&str) -> String) -> Vec<Vec<ContainerSpec>> {
        let shorts: Vec<String> = (1..=MEMBERS).map(|i| format!("etcd-{i}")).collect();
        let initial_cluster = shorts
            .iter()
            .map(|s| format!("{0}=http://{0}:2380", name(s)))
            .collect::<Vec<_>>()
            .join(",");
        vec![shorts
            .iter()
            .map(|s| member_spec(&name(s), s, &initial_cluster))
            .collect()]
    }

    fn probe<'a>(&'a self, nodes: &'a [Node]) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let statuses = futures::future::join_all(nodes.iter().map(status)).await;
            let mut leaders = Vec::new();
            for s in statuses {
                leaders.push(s?.1);
            }
            if leaders.contains(&0) || leaders.windows(2).any(|w| w[0] != w[1]) {
                return Err(format!("members do not agree on a leader yet: {leaders:?}"));
            }
            let first = nodes.first().ok_or("no etcd member")?;
            let members = member_names(first).await?;
            if members.len() != MEMBERS || members.iter().any(|(_, n)| n.is_empty()) {
                return Err(format!("member list not complete yet: {members:?}"));
            }
            Ok(())
        })
    }

    fn leader<'a>(&'a self, nodes: &'a [Node]) -> BoxFuture<'a, Result<Option<String>, String>> {
        Box::pin(async move {
            let mut last_error = String::from("no member answered");
            for node in nodes {
                match status(node).await {
                    Ok((_, 0)) => return Ok(None),
                    Ok((_, leader)) => {
                        let names = member_names(node).await?;
                        return Ok(names.into_iter().find(|(id, _)| *id == leader).map(|m| m.1));
                    }
                    Err(e) => last_error = e,
                }
            }
            Err(last_error)
        })
    }
}
