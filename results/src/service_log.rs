//! One line of `service.jsonl`: the lock service's own record of its lock keys, as an observer
//! beside the nodes saw them change (docs/design.md, "service.jsonl"). The history says what each
//! client was told and the resource log what the resource decided; this says what the service
//! held, so a grant can be set against the key, node or session it names.

use serde::{Deserialize, Serialize};

/// What one line records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ServiceWhat {
    /// The observer's record starts (or starts again after a gap) at `revision`: every change
    /// from there on follows.
    Watching,
    /// A key was written (created when `created` equals `revision`).
    Put,
    /// A key was deleted (by a client, or with its expired lease or session); `created`,
    /// `owner` and `value` are the deleted key's, where the service says them.
    Delete,
    /// The service deleted a key itself because its time to live ran out, where the service
    /// tells that apart from a client's delete (Redis).
    Expired,
    /// A key's expiry was moved without a new value (a Redis `PEXPIRE`: a renewal); `ttl_ms` is
    /// its new time to live. Without a `key`, an owner's: an etcd lease whose remaining time to
    /// live rose (a keep-alive reached the service), every key it ties renewed with it.
    Renewed,
    /// The service holds a lease (etcd) the record had not seen: `owner` is its ID, `ttl_ms`
    /// the time to live it was granted. Seen within one poll of its grant, or when the record
    /// began.
    Granted,
    /// A lease (etcd) the service no longer has: revoked, or run out. `ttl_ms` is its remaining
    /// time to live at the last read before (whole seconds), so one gone well before that was
    /// revoked; the service does not say which.
    Ended,
    /// A sentinel (`node`) announced that it now calls `value` the master (Redis Sentinel's
    /// `+switch-master`): clients it answers from here on are sent there.
    Master,
    /// The observer lost the service and could not take the record up where it broke off:
    /// changes between this line and the next `watching` are unknown.
    Gap,
    /// A round trip through the service's change stream: `lag_ns` bounds how late a change
    /// committed before it reached the observer.
    Progress,
}

/// One change of a lock key as the service reported it, on the run's clock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServiceEntry {
    /// Nanoseconds since the run's start, when the observer received it.
    pub time: u64,
    pub what: ServiceWhat,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// The node whose view this is, where the service has no one order of its own (each Redis
    /// server); absent for a service that answers as one (etcd, ZooKeeper, PostgreSQL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Who the service says owns the key: etcd's lease ID (hex), ZooKeeper's ephemeral owner
    /// session (hex), the PostgreSQL backend's pid. Redis has no owner apart from the value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// The key's creation in the service's own order: etcd's create revision, ZooKeeper's czxid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<i64>,
    /// The change's place in the service's own order: etcd's revision of the put or delete,
    /// or where a `watching` line starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<i64>,
    /// The key's time to live in milliseconds as the observer read it right after the change
    /// (Redis).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_ns: Option<u64>,
    /// Why a `gap` began.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl ServiceEntry {
    /// A line of `what` at `time`, every other field empty.
    pub fn new(time: u64, what: ServiceWhat) -> Self {
        ServiceEntry {
            time,
            what,
            node: None,
            key: None,
            value: None,
            owner: None,
            created: None,
            revision: None,
            ttl_ms: None,
            lag_ns: None,
            error: None,
        }
    }
}
