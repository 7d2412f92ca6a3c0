//! Connecting to the Docker engine and the one error type of this module.
//!
//! The engine here speaks API 1.41 (Docker 20.10) while bollard defaults to a newer version, so
//! every connection negotiates. An engine that does not answer becomes an error that says how to
//! start one, never a panic or a hang.

use bollard::Docker;
use std::time::Duration;

/// What can go wrong between fencecheck and the Docker engine.
#[derive(Debug, thiserror::Error)]
pub enum DockerError {
    #[error(
        "cannot reach the Docker engine at {host}: {reason}. Start it (`systemctl start docker`, \
         or `dockerd &` as root) or point DOCKER_HOST at a running engine"
    )]
    Unreachable { host: String, reason: String },
    #[error("image {image} is not present locally: build it with `fencecheck image build`")]
    ImageMissing { image: String },
    #[error("docker {what}: {source}")]
    Api {
        what: String,
        #[source]
        source: bollard::errors::Error,
    },
    #[error(
        "container {container} exited (code {code}) before it was ready; last log lines:\n{log}"
    )]
    Exited {
        container: String,
        code: i64,
        log: String,
    },
    #[error(
        "container {container} not ready after {waited:?} ({condition}); last log lines:\n{log}"
    )]
    NotReady {
        container: String,
        waited: Duration,
        condition: String,
        log: String,
    },
    #[error("{0}")]
    Invalid(String),
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
}

impl DockerError {
    pub(crate) fn api(what: impl Into<String>) -> impl FnOnce(bollard::errors::Error) -> Self {
        let what = what.into();
        move |source| DockerError::Api { what, source }
    }
    pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> Self {
        let what = what.into();
        move |source| DockerError::Io { what, source }
    }
}

/// The engine address bollard will use (DOCKER_HOST or the local socket), for messages.
pub fn docker_host() -> String {
    std::env::var("DOCKER_HOST").unwrap_or_else(|_| "unix:///var/run/docker.sock".to_string())
}

/// Connects to the engine named by DOCKER_HOST (default: the local socket), negotiates the API
/// version and checks that it answers within 10 s.
pub async fn connect() -> Result<Docker, DockerError> {
    let host = docker_host();
    let unreachable = |reason: String| DockerError::Unreachable {
        host: host.clone(),
        reason,
    };
    let docker = Docker::connect_with_defaults().map_err(|e| unreachable(e.to_string()))?;
    let docker = tokio::time::timeout(Duration::from_secs(10), docker.negotiate_version())
        .await
        .map_err(|_| unreachable("no answer within 10 s".to_string()))?
        .map_err(|e| unreachable(e.to_string()))?;
    tokio::time::timeout(Duration::from_secs(10), docker.ping())
        .await
        .map_err(|_| unreachable("no answer to ping within 10 s".to_string()))?
        .map_err(|e| unreachable(e.to_string()))?;
    Ok(docker)
}
