//! Building a backend from the command line's words, and starting a whole server, in one place:
//! `fencecheck resource`, `fencecheck bench resource` and the tests all start resources the same
//! way, so what the tests prove is what the harness runs.

use results::RunClock;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::doubt::{settle, Intents};
use super::log::DecisionLog;
use super::rule::Mode;
use super::server::{Server, ServerHandle};
use super::{etcd, postgres, redis, register, BackendKind, Resource, ResourceError};

/// Where the real backends are. Only the one the backend needs must be set.
#[derive(Debug, Clone, Default)]
pub struct Endpoints {
    /// etcd client endpoints (`host:2379`).
    pub etcd: Vec<String>,
    /// `redis://host:6379`.
    pub redis: Option<String>,
    /// libpq-style connection string or `postgresql://` URL.
    pub postgres: Option<String>,
    /// PostgreSQL connections to open (writes to different keys run in parallel over them).
    pub postgres_connections: usize,
}

/// Opens `kind`. A register is rebuilt from `recovered` (its previous life's log); the real
/// stores keep their own state. Retries the connection until `patience` runs out, because the
/// harness may start the resource while its store is still starting.
pub async fn open_backend(
    kind: BackendKind,
    mode: Mode,
    at: &Endpoints,
    recovered: &[results::ResourceEntry],
    patience: Duration,
) -> Result<Arc<dyn Resource>, ResourceError> {
    let missing =
        |flag: &str| ResourceError::Invalid(format!("backend {} needs {flag}", kind.as_str()));
    let deadline = Instant::now() + patience;
    loop {
        let attempt: Result<Arc<dyn Resource>, ResourceError> = match kind {
            BackendKind::Register => {
                return Ok(Arc::new(register::Register::recovered(mode, recovered)))
            }
            BackendKind::EtcdGuard if at.etcd.is_empty() => {
                return Err(missing("--etcd <host:port,...>"))
            }
            BackendKind::EtcdGuard => etcd::EtcdGuard::connect(&at.etcd, mode)
                .await
                .map(|r| Arc::new(r) as _),
            BackendKind::RedisFenced => match &at.redis {
                None => return Err(missing("--redis redis://<host:port>")),
                Some(url) => redis::RedisFenced::connect(url, mode)
                    .await
                    .map(|r| Arc::new(r) as _),
            },
            BackendKind::Postgres => match &at.postgres {
                None => return Err(missing("--postgres <connection string>")),
                Some(cfg) => postgres::Postgres::connect(cfg, at.postgres_connections.max(1), mode)
                    .await
                    .map(|r| Arc::new(r) as _),
            },
        };
        match attempt {
            Err(ResourceError::Backend { .. }) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
            other => return other,
        }
    }
}

/// Opens the log at `log_path` (recovering a previous life's entries), the backend, settles the
/// writes a previous life left in doubt (`<log>.intents.jsonl`), and binds `listen`. The server
/// runs until the returned handle is dropped.
pub async fn start_server(
    kind: BackendKind,
    mode: Mode,
    at: &Endpoints,
    log_path: &Path,
    clock: RunClock,
    listen: &str,
    patience: Duration,
) -> Result<(Arc<Server>, ServerHandle), ResourceError> {
    let recovered = DecisionLog::open(log_path, clock).map_err(invalid)?.1;
    let resource = open_backend(kind, mode, at, &recovered, patience).await?;
    start_with(resource, log_path, clock, listen).await
}

/// [`start_server`] with a backend the caller built (a fake in tests).
pub async fn start_with(
    resource: Arc<dyn Resource>,
    log_path: &Path,
    clock: RunClock,
    listen: &str,
) -> Result<(Arc<Server>, ServerHandle), ResourceError> {
    let (log, _) = DecisionLog::open(log_path, clock).map_err(invalid)?;
    let (intents, candidates) = Intents::open(&Intents::path_for(log_path)).map_err(invalid)?;
    // A previous life may have died with writes the store decided but the log lacks.
    for intent in &candidates {
        settle(resource.as_ref(), &log, intent).await?;
    }
    let server = Server::new(resource, log, intents);
    let handle = server
        .bind(listen)
        .await
        .map_err(|e| ResourceError::Invalid(format!("cannot listen on {listen}: {e}")))?;
    Ok((server, handle))
}

fn invalid(e: results::jsonl::JsonlError) -> ResourceError {
    ResourceError::Invalid(e.to_string())
}
