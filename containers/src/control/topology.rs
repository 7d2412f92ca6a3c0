//! The nemesis's view of a run built from the harness's own pieces: a [`RunTopology`] over a
//! started cluster (who leads is asked of the cluster itself; who holds the lock is set by the
//! driver, which sees the history), and a [`ClusterRestart`] that restarts a killed container
//! through [`RunEnv::restart`] and puts its new PID and port back into the cluster handle.
//! The nemesis addresses everything by short name (`etcd-1`, `worker-3`).

use super::Restart;
use crate::cluster::ClusterHandle;
use crate::docker::{Node, RunEnv};
use futures::future::BoxFuture;
use nemesis::{Moments, Topology};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, RwLock};

/// The short name of a container of run `env` (`fc-<run>-etcd-1` -> `etcd-1`).
pub fn short_name(env: &RunEnv, container: &str) -> String {
    let prefix = env.container_name("");
    container
        .strip_prefix(&prefix)
        .unwrap_or(container)
        .to_string()
}

/// Short name -> container name for every node given (the targets of a `DockerControl`).
pub fn targets<'a>(
    env: &RunEnv,
    nodes: impl IntoIterator<Item = &'a Node>,
) -> BTreeMap<String, String> {
    targets_of(env.run_id(), nodes)
}

/// [`targets`] for containers named after `run_id` (a cluster the run shares carries its own).
pub fn targets_of<'a>(
    run_id: &str,
    nodes: impl IntoIterator<Item = &'a Node>,
) -> BTreeMap<String, String> {
    let prefix = crate::docker::container_name(run_id, "");
    nodes
        .into_iter()
        .map(|n| {
            let short = n.name.strip_prefix(&prefix).unwrap_or(&n.name);
            (short.to_string(), n.name.clone())
        })
        .collect()
}

/// Who is who in a run, for the nemesis.
#[derive(Debug)]
pub struct RunTopology {
    /// What the nodes' container names start with.
    prefix: String,
    pub cluster: Arc<RwLock<ClusterHandle>>,
    pub workers: Vec<String>,
    pub resource: Option<String>,
    /// The worker holding the lock and the workers in flight now, kept up to date by the
    /// driver's live view of the history.
    pub moments: Arc<Mutex<Moments>>,
}

impl RunTopology {
    pub fn new(
        env: &RunEnv,
        cluster: Arc<RwLock<ClusterHandle>>,
        workers: Vec<String>,
        resource: Option<String>,
    ) -> Self {
        Self {
            prefix: env.container_name(""),
            cluster,
            workers,
            resource,
            moments: Arc::new(Mutex::new(Moments::default())),
        }
    }

    /// The nodes are those of a cluster started under `run_id` (one the run shares), named
    /// after it rather than after the run.
    pub fn with_nodes_of(mut self, run_id: &str) -> Self {
        self.prefix = crate::docker::container_name(run_id, "");
        self
    }

    /// A node's short name (`etcd-1`).
    fn short(&self, name: &str) -> String {
        name.strip_prefix(&self.prefix).unwrap_or(name).to_string()
    }

    fn handle(&self) -> ClusterHandle {
        self.cluster
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

impl Topology for RunTopology {
    fn workers(&self) -> Vec<String> {
        self.workers.clone()
    }
    fn nodes(&self) -> Vec<String> {
        self.handle()
            .nodes
            .iter()
            .map(|n| self.short(&n.name))
            .collect()
    }
    fn resource(&self) -> Option<String> {
        self.resource.clone()
    }
    async fn moments(&self) -> Moments {
        self.moments
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
    async fn leader(&self) -> Option<String> {
        let handle = self.handle();
        handle
            .leader()
            .await
            .ok()
            .flatten()
            .map(|n| self.short(&n.name))
    }
}

/// Restarts killed containers through the run environment (same container, same data; waits
/// until its server listens again), updates the cluster handle with the new PID and port, and
/// tells whoever [`ClusterRestart::subscribe`]d (a worker's supervisor waits for its worker).
#[derive(Debug)]
pub struct ClusterRestart {
    pub env: Arc<RunEnv>,
    pub cluster: Arc<RwLock<ClusterHandle>>,
    /// Containers outside the cluster (workers, resource) that may be restarted too.
    others: Mutex<Vec<Node>>,
    /// How many restarts happened so far.
    restarts: tokio::sync::watch::Sender<u64>,
}

impl ClusterRestart {
    pub fn new(env: Arc<RunEnv>, cluster: Arc<RwLock<ClusterHandle>>, others: Vec<Node>) -> Self {
        ClusterRestart {
            env,
            cluster,
            others: Mutex::new(others),
            restarts: tokio::sync::watch::channel(0).0,
        }
    }

    /// A container outside the cluster by name, as it is now (its port after a restart).
    pub fn node(&self, name: &str) -> Option<Node> {
        self.others
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .find(|n| n.name == name)
            .cloned()
    }

    /// Changes with every restart this makes.
    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.restarts.subscribe()
    }
}

impl Restart for ClusterRestart {
    fn restart<'a>(
        &'a self,
        _target: &'a str,
        container: &'a str,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let in_cluster = self
                .cluster
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .nodes
                .iter()
                .find(|n| n.name == container)
                .cloned();
            let node = match in_cluster {
                Some(n) => n,
                None => self
                    .others
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .iter()
                    .find(|n| n.name == container)
                    .cloned()
                    .ok_or_else(|| format!("{container} is not a container of this run"))?,
            };
            let fresh = self.env.restart(&node).await.map_err(|e| e.to_string())?;
            self.cluster
                .write()
                .unwrap_or_else(|p| p.into_inner())
                .replace(fresh.clone());
            let mut others = self.others.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(slot) = others.iter_mut().find(|n| n.name == fresh.name) {
                *slot = fresh;
            }
            drop(others);
            self.restarts.send_modify(|n| *n += 1);
            Ok(())
        })
    }
}
