//! [`ClusterHandle`]: a started cluster as plain data (its nodes) plus the questions only the
//! live cluster can answer (who leads now, is it ready).

use super::Cluster;
use crate::docker::Node;
use results::Provider;
use std::sync::Arc;
use std::time::Duration;

/// A started cluster. Its nodes are data: after [`crate::docker::RunEnv::restart`], put the
/// returned node back with [`ClusterHandle::replace`].
#[derive(Clone)]
pub struct ClusterHandle {
    pub provider: Provider,
    pub nodes: Vec<Node>,
    /// Time from `start_cluster` to ready.
    pub startup: Duration,
    pub(crate) cluster: Arc<dyn Cluster>,
}

impl std::fmt::Debug for ClusterHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterHandle")
            .field("provider", &self.provider)
            .field("nodes", &self.nodes)
            .field("startup", &self.startup)
            .finish()
    }
}

impl ClusterHandle {
    /// The nodes clients talk to: etcd / ZooKeeper members, the Redis master(s), the sentinels
    /// (for `redis-sentinel`), the PostgreSQL server.
    pub fn client_nodes(&self) -> impl Iterator<Item = &Node> {
        let role = self.cluster.client_role();
        self.nodes.iter().filter(move |n| n.role == role)
    }

    /// `127.0.0.1:<port>` of every client node, for clients on the host.
    pub fn endpoints(&self) -> Vec<String> {
        self.client_nodes()
            .filter_map(Node::host_endpoint)
            .collect()
    }

    /// `<container name>:<port>` of every client node, for clients in containers on the run's
    /// network (workers). Sentinel clients must be there: sentinels hand out container names.
    pub fn network_endpoints(&self) -> Vec<String> {
        self.client_nodes().map(|n| n.address.clone()).collect()
    }

    /// The node with this container name or short name (`etcd-2`).
    pub fn node(&self, name: &str) -> Option<&Node> {
        self.nodes
            .iter()
            .find(|n| n.name == name || n.name.ends_with(&format!("-{name}")))
    }

    /// Puts a refreshed node (after a restart) in place of the one with the same name.
    pub fn replace(&mut self, node: Node) {
        if let Some(slot) = self.nodes.iter_mut().find(|n| n.name == node.name) {
            *slot = node;
        }
    }

    /// The node that leads now: etcd's raft leader, ZooKeeper's leader, the Redis master (for
    /// `redis-sentinel`, as the sentinels report it; for `redis`, the one master; for
    /// `postgres`, the server). `None` for `redlock` (no leader) or when no leader is known,
    /// e.g. during an election. Asked from the host through the published ports.
    pub async fn leader(&self) -> Result<Option<Node>, String> {
        let name = self.cluster.leader(&self.nodes).await?;
        Ok(name.and_then(|name| self.nodes.iter().find(|n| n.name == name).cloned()))
    }

    /// Asks the cluster once whether it is ready (quorum, leader, replicas); `Err` says what is
    /// missing. Useful after a heal.
    pub async fn check_ready(&self) -> Result<(), String> {
        self.cluster.probe(&self.nodes).await
    }
}
