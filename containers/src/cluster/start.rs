//! `RunEnv::start_cluster`: start every wave of a cluster's members concurrently, then poll the
//! cluster with a real client until it is ready, failing fast when a member exits.

use super::{cluster_of, ClusterHandle};
use crate::docker::{DockerError, Node, RunEnv};
use results::persistence::Persistence;
use results::Provider;
use std::time::{Duration, Instant};

/// How long a cluster may take to become ready before start-up fails.
pub const CLUSTER_READY_TIMEOUT: Duration = Duration::from_secs(60);

impl RunEnv {
    /// Starts `provider`'s servers on the run's network (members of each wave concurrently) and
    /// returns once a real client says it is ready (etcd: 3 members and one leader; ZooKeeper: one
    /// leader and two followers; Redis: PING; sentinel: the master with 2 replicas and 3
    /// sentinels; PostgreSQL: `SELECT 1`). Memory has no servers and is refused.
    pub async fn start_cluster(&self, provider: Provider) -> Result<ClusterHandle, DockerError> {
        self.start_cluster_from(provider, None).await
    }

    /// As [`Self::start_cluster`], from another image than the run's node image (e.g. a node
    /// image built from another package list). The members' commands assume Debian's layout
    /// (`/usr/bin/etcd`, `/usr/share/java/zookeeper.jar`, `/usr/lib/postgresql/15`), so an
    /// upstream image with another layout will not start.
    pub async fn start_cluster_from(
        &self,
        provider: Provider,
        image: Option<&str>,
    ) -> Result<ClusterHandle, DockerError> {
        self.start_members(provider, image, None, Persistence::None, None)
            .await
    }

    /// As [`Self::start_cluster`], every server under a fake clock kept in `<clocks>/<node>/`
    /// (see [`crate::control::clock`]), for clock faults. A provider libfaketime cannot reach
    /// (etcd) is refused with the reason its capabilities give.
    pub async fn start_cluster_with_fake_clocks(
        &self,
        provider: Provider,
        clocks: &std::path::Path,
    ) -> Result<ClusterHandle, DockerError> {
        self.start_members(provider, None, Some(clocks), Persistence::None, None)
            .await
    }

    /// A run's lock service: [`Self::start_cluster`] with its Redis servers' `persistence`,
    /// under fake clocks when `clocks` is given ([`Self::start_cluster_with_fake_clocks`]), and
    /// each server's data directory bound under `data` when given ([`crate::control::data`]).
    pub async fn start_lock_service(
        &self,
        provider: Provider,
        persistence: Persistence,
        clocks: Option<&std::path::Path>,
        data: Option<&std::path::Path>,
    ) -> Result<ClusterHandle, DockerError> {
        self.start_members(provider, None, clocks, persistence, data)
            .await
    }

    async fn start_members(
        &self,
        provider: Provider,
        image: Option<&str>,
        clocks: Option<&std::path::Path>,
        persistence: Persistence,
        data: Option<&std::path::Path>,
    ) -> Result<ClusterHandle, DockerError> {
        let started = Instant::now();
        let cluster = cluster_of(provider, persistence).ok_or_else(|| {
            let why = provider.no_servers_because().unwrap_or("has no cluster");
            DockerError::Invalid(format!("{provider} {why}"))
        })?;
        let mut nodes: Vec<Node> = Vec::new();
        let name = |short: &str| self.container_name(short);
        if let (Some(_), Some(why)) = (clocks, provider.capabilities().no_fake_clock) {
            return Err(DockerError::Invalid(format!(
                "clock faults cannot act on {provider}: {why}"
            )));
        }
        for wave in cluster.waves(&name) {
            let mut specs = Vec::new();
            for mut spec in wave {
                if let Some(root) = clocks {
                    let dir = root.join(&spec.name);
                    crate::control::clock::fake(&mut spec, &dir)
                        .map_err(DockerError::io(format!("create {}", dir.display())))?;
                }
                if let Some(root) = data {
                    crate::control::data::bind(&mut spec, root)
                        .map_err(DockerError::io(format!("create the data of {}", spec.name)))?;
                }
                specs.push(spec);
            }
            let starts = specs.into_iter().map(|mut spec| {
                if let Some(image) = image {
                    spec.image = Some(image.to_string());
                }
                let again = match spec.port {
                    Some(p) => crate::docker::Readiness::Listening(p),
                    None => spec.ready.clone(),
                };
                self.start_with_restart_readiness(spec, again)
            });
            for node in futures::future::join_all(starts).await {
                nodes.push(node?);
            }
        }
        let mut last_check = Instant::now();
        loop {
            let problem = match cluster.probe(&nodes).await {
                Ok(()) => break,
                Err(problem) => problem,
            };
            if last_check.elapsed() > Duration::from_millis(500) {
                last_check = Instant::now();
                for node in &nodes {
                    if self.exit_code(node).await.is_some() {
                        let ready = crate::docker::Readiness::Started;
                        return Err(self.not_ready_error(node, &ready, started.elapsed()).await);
                    }
                }
            }
            if started.elapsed() > CLUSTER_READY_TIMEOUT {
                return Err(DockerError::NotReady {
                    container: format!("{provider} cluster of run {}", self.run_id()),
                    waited: started.elapsed(),
                    condition: problem,
                    log: self.tails(&nodes).await,
                });
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(ClusterHandle {
            provider,
            nodes,
            startup: started.elapsed(),
            cluster,
        })
    }

    /// The last log lines of every node, for a start-up that timed out.
    async fn tails(&self, nodes: &[Node]) -> String {
        let mut text = String::new();
        for node in nodes {
            let tail = crate::docker::log_tail(self.docker(), &node.container_id, 5).await;
            text.push_str(&format!("{}:\n{tail}", node.name));
        }
        text
    }

    /// Removes the cluster's containers (the run's network stays for the next cluster).
    pub async fn remove_cluster(&self, handle: &ClusterHandle) -> Result<(), DockerError> {
        let removals = handle.nodes.iter().map(|n| self.remove(n));
        for result in futures::future::join_all(removals).await {
            result?;
        }
        Ok(())
    }
}
