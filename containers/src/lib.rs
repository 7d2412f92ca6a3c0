//! Real systems in containers: everything of a run that touches the Docker engine, host PIDs
//! and network namespaces, and nothing of what a test is (no configuration, no pipeline).
//!
//! - [`image`]: the node image (tag from the package list; Dockerfile or debootstrap build).
//! - [`docker`]: the per-run Docker environment (network, containers, logs, teardown on every
//!   path, the sweep of what a killed harness left).
//! - [`cluster`]: real etcd / ZooKeeper / Redis / PostgreSQL clusters, checked ready with a
//!   real client.
//! - [`control`]: the nemesis's `NodeControl` over containers (signals, restarts, iptables),
//!   the run topology it asks, and the watch for nodes that die outside the plan.

pub mod cluster;
pub mod control;
pub mod docker;
pub mod image;
