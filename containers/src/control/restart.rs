//! How a killed target comes back. The run knows best (a node restarts with its data and the
//! cluster handle learns its new port; a killed worker is replaced by a fresh worker under a new
//! process id), so it plugs in its own [`Restart`]; [`DockerRestart`] is the plain default that
//! starts the same container again.

use bollard::query_parameters::RestartContainerOptions;
use bollard::Docker;
use futures::future::BoxFuture;

/// Brings a killed target back.
pub trait Restart: Send + Sync {
    /// `target` is the nemesis's name, `container` the Docker name it maps to.
    fn restart<'a>(
        &'a self,
        target: &'a str,
        container: &'a str,
    ) -> BoxFuture<'a, Result<(), String>>;
}

/// Starts the same container again (or restarts it if it still runs), keeping its file system.
#[derive(Debug, Clone)]
pub struct DockerRestart {
    pub docker: Docker,
}

impl Restart for DockerRestart {
    fn restart<'a>(
        &'a self,
        _target: &'a str,
        container: &'a str,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let running = self
                .docker
                .inspect_container(container, None)
                .await
                .map_err(|e| e.to_string())?
                .state
                .and_then(|s| s.running)
                .unwrap_or(false);
            if running {
                let options = RestartContainerOptions {
                    t: Some(0),
                    ..Default::default()
                };
                self.docker
                    .restart_container(container, Some(options))
                    .await
            } else {
                self.docker.start_container(container, None).await
            }
            .map_err(|e| e.to_string())
        })
    }
}
