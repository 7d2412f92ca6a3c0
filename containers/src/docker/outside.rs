//! Acting on a run's container from outside the run, by name, as a person at a terminal would
//! with `docker kill` or `docker pause`: what `fencecheck bench soak` does to check that a run
//! notices faults nobody planned. The run's own faults never come this way.

use super::{connect, DockerError};

/// `docker kill <name>`.
pub async fn kill(name: &str) -> Result<(), DockerError> {
    connect()
        .await?
        .kill_container(
            name,
            None::<bollard::query_parameters::KillContainerOptions>,
        )
        .await
        .map_err(DockerError::api(format!("kill container {name}")))
}

/// `docker pause <name>` (the cgroup freezer).
pub async fn pause(name: &str) -> Result<(), DockerError> {
    connect()
        .await?
        .pause_container(name)
        .await
        .map_err(DockerError::api(format!("pause container {name}")))
}

/// `docker unpause <name>`.
pub async fn unpause(name: &str) -> Result<(), DockerError> {
    connect()
        .await?
        .unpause_container(name)
        .await
        .map_err(DockerError::api(format!("unpause container {name}")))
}
