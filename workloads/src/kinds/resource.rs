//! The protected resources a test can write through: each name, the backend and mode the
//! resource server runs it with, the store it needs, and whether it decides writes by their
//! fence token (every resource but `none`: a tokenless recipe's writes would all be refused).

use super::{find, Provider, UnknownName};
use crate::resource::{BackendKind, Mode};
use std::fmt;
use std::str::FromStr;

/// The protected resource every write goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResourceKind {
    /// The built-in register, rejecting a token lower than the highest accepted.
    Strict,
    /// `strict`, and a repeated op_id is rejected too.
    StrictIdempotent,
    /// Accepts everything: the unfenced contrast.
    None,
    /// An etcd key written only while the lock key still has the writer's create revision.
    EtcdGuard,
    /// A PostgreSQL row, the token compared in the same transaction.
    Postgres,
    /// A Redis key, the token compared in one Lua script.
    RedisFenced,
}

impl ResourceKind {
    pub const ALL: [ResourceKind; 6] = [
        ResourceKind::Strict,
        ResourceKind::StrictIdempotent,
        ResourceKind::None,
        ResourceKind::EtcdGuard,
        ResourceKind::Postgres,
        ResourceKind::RedisFenced,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ResourceKind::Strict => "strict",
            ResourceKind::StrictIdempotent => "strict-idempotent",
            ResourceKind::None => "none",
            ResourceKind::EtcdGuard => "etcd-guard",
            ResourceKind::Postgres => "postgres",
            ResourceKind::RedisFenced => "redis-fenced",
        }
    }

    /// The resource server's backend and mode.
    pub fn server(self) -> (BackendKind, Mode) {
        match self {
            ResourceKind::Strict => (BackendKind::Register, Mode::Strict),
            ResourceKind::StrictIdempotent => (BackendKind::Register, Mode::StrictIdempotent),
            ResourceKind::None => (BackendKind::Register, Mode::None),
            ResourceKind::EtcdGuard => (BackendKind::EtcdGuard, Mode::Strict),
            ResourceKind::Postgres => (BackendKind::Postgres, Mode::Strict),
            ResourceKind::RedisFenced => (BackendKind::RedisFenced, Mode::Strict),
        }
    }

    /// Whether it decides writes by their fence token.
    pub fn needs_token(self) -> bool {
        self != ResourceKind::None
    }

    /// Whether the in-process register can play it (the memory provider has no stores).
    pub fn in_process(self) -> bool {
        self.server().0 == BackendKind::Register
    }

    /// The provider it is bound to, if any (etcd-guard reads the etcd lock key).
    pub fn bound_to(self) -> Option<Provider> {
        (self == ResourceKind::EtcdGuard).then_some(Provider::Etcd)
    }
}

impl fmt::Display for ResourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ResourceKind {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        find("resource", s, &ResourceKind::ALL, ResourceKind::as_str)
    }
}
