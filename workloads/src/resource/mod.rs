//! The fenced resource: the one place where a lock's safety is decided. Every write arrives with
//! its fence token; the resource compares it atomically with the write and records its decision
//! in `resource.jsonl`, the run's ground truth of what was accepted.
//!
//! - [`protocol`]: the wire format (one JSON request line, one JSON reply line).
//! - [`rule`]: the fencing rule as a pure function, and the audit that re-decides a log.
//! - [`register`]: the built-in backend, an in-memory map that rebuilds itself from the log.
//! - [`etcd`], [`postgres`], [`redis`]: real stores that make the decision themselves.
//! - [`open`]: building a backend or a whole server from the command line's words.
//! - [`doubt`]: writes the store may have decided but the log does not show, and settling them.
//! - [`log`]: the decision log (seq assignment, crash-safe append, recovery after a kill).
//! - [`server`]: the TCP server that routes requests to a backend and logs each decision.
//! - [`client`]: what workers (and tests, and the bench) use to send writes.

pub mod client;
pub mod doubt;
pub mod etcd;
pub mod log;
pub mod open;
pub mod postgres;
pub mod protocol;
pub mod redis;
pub mod register;
pub mod rule;
pub mod server;

pub use client::{ClientError, ResourceClient};
pub use open::{open_backend, start_server, start_with, Endpoints};
pub use postgres::Postgres;
pub use protocol::MAX_LINE;
pub use protocol::{Reply, Request, WriteReply, WriteRequest};
pub use register::Register;
pub use rule::{audit, Audit, Decision, Mode};
pub use server::{Server, ServerHandle};

use futures::future::BoxFuture;
use results::WriteResult;

/// A store that decides fenced writes. The server calls `decide` for one key at a time (see
/// [`server`]), so an implementation must be atomic against the store's other clients (lock
/// clients changing etcd lock keys, another resource) — it never sees two writes to one key.
pub trait Resource: Send + Sync {
    /// Decides one write: applies it if the rule of `mode` allows, and reports the decision with
    /// the highest token accepted for the key before it, as the store saw them. The store also
    /// records `attempt` (this decision's number among the key's decisions) for [`resolve`].
    ///
    /// [`resolve`]: Resource::resolve
    fn decide<'a>(
        &'a self,
        write: &'a WriteRequest,
        attempt: u64,
    ) -> BoxFuture<'a, Result<Decision, ResourceError>>;

    /// For a write whose reply was lost: did the store decide `attempt` of its key, and how?
    /// `None` when it did not (or cannot have: the register's state died with it).
    fn resolve<'a>(
        &'a self,
        write: &'a WriteRequest,
        attempt: u64,
    ) -> BoxFuture<'a, Result<Option<WriteResult>, ResourceError>>;

    /// The backend's name as the CLI spells it (`register`, `etcd-guard`, ...).
    fn name(&self) -> &'static str;
}

/// Why a write could not be decided. The request is then not logged (nothing was decided) and
/// the client gets an error reply.
#[derive(Debug, thiserror::Error)]
pub enum ResourceError {
    /// The request is well-formed JSON but cannot be decided by this backend/mode.
    #[error("invalid write: {0}")]
    Invalid(String),
    /// The backing store failed or could not be reached; the write may or may not have applied.
    #[error("{backend}: {message}")]
    Backend {
        backend: &'static str,
        message: String,
    },
}

impl ResourceError {
    pub(crate) fn backend(backend: &'static str, e: impl std::fmt::Display) -> Self {
        ResourceError::Backend {
            backend,
            message: e.to_string(),
        }
    }
}

/// Which backend `fencecheck resource --backend` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendKind {
    Register,
    EtcdGuard,
    Postgres,
    RedisFenced,
}

impl BackendKind {
    pub const ALL: [BackendKind; 4] = [
        BackendKind::Register,
        BackendKind::EtcdGuard,
        BackendKind::Postgres,
        BackendKind::RedisFenced,
    ];

    pub fn as_str(&self) -> &'static str {
        match self {
            BackendKind::Register => "register",
            BackendKind::EtcdGuard => "etcd-guard",
            BackendKind::Postgres => "postgres",
            BackendKind::RedisFenced => "redis-fenced",
        }
    }
}

impl std::str::FromStr for BackendKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        BackendKind::ALL
            .into_iter()
            .find(|b| b.as_str() == s)
            .ok_or_else(|| {
                format!("unknown resource backend {s:?}: expected register, etcd-guard, postgres or redis-fenced")
            })
    }
}
