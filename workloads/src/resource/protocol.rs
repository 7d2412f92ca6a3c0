//! The resource's wire protocol: newline-delimited JSON over TCP, one request line answered by one
//! reply line, in order, on a connection a client may keep open for many writes. Text, so that a
//! human can talk to a running resource with `nc` while reproducing an incident.
//!
//! ```text
//! > {"op":"write","lock":"l","lock_key":"locks/l","key":"k","value":"v","token":7,"op_id":"3-12","owner":"worker-3","lease":"694d7f","process":3}
//! < {"status":"decided","result":"accepted","highest_before":5,"seq":41}
//! > {"op":"ping"}
//! < {"status":"pong"}
//! > not json
//! < {"status":"refused","message":"malformed request: expected ident at line 1 column 2"}
//! ```
//!
//! `refused` is definite (nothing was decided or applied: the writer records `fail`); `error`
//! is not (the backend failed mid-way and the write may have been applied: `info`).

use results::{ResourceEntry, WriteResult};
use serde::{Deserialize, Serialize};

/// Longest request line the server reads; a longer line is answered with an error and skipped.
pub const MAX_LINE: usize = 1 << 20;

/// One request line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum Request {
    Write(WriteRequest),
    /// Readiness probe; answered with `pong` without touching the backend.
    Ping,
}

/// A fenced write as a worker sends it (the fields of a history `write` plus who sent it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WriteRequest {
    /// The lock the writer believes it holds (its logical name, as in the history).
    pub lock: String,
    /// The provider's key that holds the lock (e.g. etcd's `name/<lease>` of the Lock RPC). The
    /// `etcd-guard` backend requires it: its guard is "this key still has create revision = token".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock_key: Option<String>,
    pub key: String,
    pub value: serde_json::Value,
    /// The fence token; absent for tokenless recipes (Redlock), which only mode `none` accepts.
    #[serde(default)]
    pub token: Option<u64>,
    /// Idempotency key: a retry of one logical write carries the same `op_id`.
    pub op_id: String,
    pub owner: String,
    pub lease: String,
    pub process: u32,
}

impl WriteRequest {
    /// The log line for this request once decided.
    pub fn entry(
        &self,
        seq: u64,
        time: u64,
        result: WriteResult,
        highest_before: Option<u64>,
    ) -> ResourceEntry {
        ResourceEntry {
            seq,
            time,
            key: self.key.clone(),
            process: self.process,
            owner: self.owner.clone(),
            lease: self.lease.clone(),
            token: self.token,
            op_id: self.op_id.clone(),
            value: self.value.clone(),
            highest_before,
            result,
        }
    }
}

/// One reply line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum Reply {
    /// The write was decided and its decision is in the log (as line `seq`).
    Decided(WriteReply),
    /// Nothing was decided and nothing applied: the request was malformed, or this backend and
    /// mode cannot decide it (a strict mode and a write without a token). Definite.
    Refused {
        message: String,
    },
    /// Nothing was decided, but the backend failed mid-way: the write may or may not have been
    /// applied — the caller must treat it as indeterminate.
    Error {
        message: String,
    },
    Pong,
}

/// The decision on one write, as the writer sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriteReply {
    pub result: WriteResult,
    #[serde(default)]
    pub highest_before: Option<u64>,
    /// The decision's `seq` in `resource.jsonl`.
    pub seq: u64,
    /// The store's own order of this decision (see `Decision::store_order`); for diagnosis and
    /// for the tests that check log order against the store's order. Not part of the log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store_order: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_line_round_trips_and_a_tokenless_write_parses() {
        let line = r#"{"op":"write","lock":"l","key":"k","value":1,"op_id":"1-1","owner":"w1","lease":"x","process":1}"#;
        let Request::Write(w) = serde_json::from_str(line).unwrap() else {
            panic!("not a write")
        };
        assert_eq!(w.token, None);
        assert_eq!(w.lock_key, None);
        let back: Request =
            serde_json::from_str(&serde_json::to_string(&Request::Write(w.clone())).unwrap())
                .unwrap();
        assert_eq!(back, Request::Write(w));
    }

    #[test]
    fn replies_have_the_documented_shape() {
        let r = Reply::Decided(WriteReply {
            result: WriteResult::RejectedStaleFence,
            highest_before: Some(5),
            seq: 41,
            store_order: None,
        });
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"status":"decided","result":"rejected-stale-fence","highest_before":5,"seq":41}"#
        );
        assert_eq!(
            serde_json::to_string(&Reply::Pong).unwrap(),
            r#"{"status":"pong"}"#
        );
    }
}
