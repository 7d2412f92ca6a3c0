//! What a run does to the containers it started after they started: kill, pause, stop,
//! restart (same container and data, waiting until it serves again), remove, and the teardown
//! of everything at the end.

use super::{logs, RunEnv};
use crate::docker::container::Node;
use crate::docker::labels::{is_not_found, remove_by_run};
use crate::docker::{guard, DockerError};
use bollard::query_parameters::{
    KillContainerOptions, RemoveContainerOptions, RestartContainerOptions, StopContainerOptions,
};
use std::sync::atomic::Ordering;
use std::time::Duration;

impl RunEnv {
    /// SIGKILLs the container (its server dies at once; data stays for [`Self::restart`]).
    pub async fn kill(&self, node: &Node) -> Result<(), DockerError> {
        let options = KillContainerOptions {
            signal: "SIGKILL".to_string(),
        };
        match self.docker.kill_container(&node.name, Some(options)).await {
            Ok(()) => Ok(()),
            // 409: not running (already dead), which is what was asked.
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 409, ..
            }) => Ok(()),
            Err(e) => Err(DockerError::api(format!("kill container {}", node.name))(e)),
        }
    }

    /// Freezes every process of the container (`docker pause`, the cgroup freezer). For one
    /// process, send SIGSTOP to [`Node::host_pid`] instead.
    pub async fn pause(&self, node: &Node) -> Result<(), DockerError> {
        self.docker
            .pause_container(&node.name)
            .await
            .map_err(DockerError::api(format!("pause container {}", node.name)))
    }

    /// Thaws a container frozen by [`Self::pause`].
    pub async fn unpause(&self, node: &Node) -> Result<(), DockerError> {
        self.docker
            .unpause_container(&node.name)
            .await
            .map_err(DockerError::api(format!("unpause container {}", node.name)))
    }

    /// Stops the container gracefully (SIGTERM, then SIGKILL after `grace`).
    pub async fn stop(&self, node: &Node, grace: Duration) -> Result<(), DockerError> {
        let options = StopContainerOptions {
            t: Some(i32::try_from(grace.as_secs()).unwrap_or(10)),
            ..Default::default()
        };
        self.docker
            .stop_container(&node.name, Some(options))
            .await
            .map_err(DockerError::api(format!("stop container {}", node.name)))
    }

    /// Starts a stopped or killed container again (restarts it if it is running), keeping its
    /// file system (the server's data), and waits until its server listens again (for a
    /// cluster member) or its own readiness condition holds. Returns the node with its new host
    /// PID and new published port.
    pub async fn restart(&self, node: &Node) -> Result<Node, DockerError> {
        let record = self
            .started
            .lock()
            .ok()
            .and_then(|s| s.get(&node.name).cloned())
            .ok_or_else(|| {
                DockerError::Invalid(format!("{} was not started by this run", node.name))
            })?;
        let after = logs::newest_timestamp(&self.docker, &node.container_id).await;
        let result = if self.exit_code(node).await.is_some() {
            self.docker.start_container(&node.name, None).await
        } else {
            let options = RestartContainerOptions {
                t: Some(0),
                ..Default::default()
            };
            self.docker
                .restart_container(&node.name, Some(options))
                .await
        };
        result.map_err(DockerError::api(format!("restart container {}", node.name)))?;
        self.stream_logs(&node.container_id, &node.name, record.cursor.clone());
        let fresh = self.inspect(&node.name, node.role).await?;
        let timeout = record.spec.ready_timeout;
        self.wait_ready(&fresh, &record.restart_ready, after.as_deref(), timeout)
            .await?;
        Ok(fresh)
    }

    /// Removes one container (force), e.g. a finished worker.
    pub async fn remove(&self, node: &Node) -> Result<(), DockerError> {
        let options = RemoveContainerOptions {
            force: true,
            v: true,
            ..Default::default()
        };
        match self
            .docker
            .remove_container(&node.name, Some(options))
            .await
        {
            Ok(()) => Ok(()),
            Err(e) if is_not_found(&e) => Ok(()),
            Err(e) => Err(DockerError::api(format!("remove container {}", node.name))(
                e,
            )),
        }
    }

    /// Removes every container and the network of this run. Idempotent.
    pub async fn teardown(&self) -> Result<(), DockerError> {
        guard::begin_teardown(&self.run_id);
        remove_by_run(&self.docker, Some(&self.run_id)).await?;
        self.remove_pinned();
        self.torn_down.store(true, Ordering::SeqCst);
        guard::unregister(&self.run_id);
        Ok(())
    }
}
