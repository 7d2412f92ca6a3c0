//! Real clusters in containers, one file per provider behind one [`Cluster`] trait: which
//! containers to start (in waves whose members start concurrently), how a real client decides the
//! cluster is ready, and who leads it now. [`crate::docker::RunEnv::start_cluster`] does the
//! starting; a [`ClusterHandle`] is what the rest of the harness holds.

mod etcd;
mod handle;
mod postgres;
pub mod probe;
mod provider;
mod redis;
mod sentinel;
mod start;
mod zookeeper;

pub use handle::ClusterHandle;
pub use postgres::connection_string as postgres_connection_string;
pub use provider::cluster_of;

use crate::docker::{ContainerSpec, Node, Role};
use futures::future::BoxFuture;

/// Name of the master that the sentinels of `redis-sentinel` monitor.
pub const SENTINEL_MASTER_NAME: &str = "mymaster";

/// One kind of cluster. Implementations only describe; `RunEnv::start_cluster` acts.
pub trait Cluster: Send + Sync {
    /// The role of the nodes that clients talk to (sentinels, not the Redis servers behind them).
    fn client_role(&self) -> Role;
    /// Containers to start. Each inner list starts concurrently (quorum members wait for each
    /// other); a list starts when the one before it is up. `name` maps a short name such as
    /// `etcd-1` to the full container name (= host name on the run's network).
    fn waves(&self, name: &dyn Fn(&str) -> String) -> Vec<Vec<ContainerSpec>>;
    /// `Ok` when the cluster, asked by a real client through the published ports, is ready to
    /// serve: quorum formed, leader elected, replicas attached. `Err` says what is missing.
    fn probe<'a>(&'a self, nodes: &'a [Node]) -> BoxFuture<'a, Result<(), String>>;
    /// The container name of the node that leads now (etcd leader, ZooKeeper leader, Redis
    /// master as the sentinels see it), or `None` when the system has no single leader
    /// (Redlock's independent masters).
    fn leader<'a>(&'a self, nodes: &'a [Node]) -> BoxFuture<'a, Result<Option<String>, String>>;
}
