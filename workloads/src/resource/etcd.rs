//! `etcd-guard`: the guarded write of the etcd docs. The write is one txn that succeeds only if
//! the writer's lock key still exists with the writer's create revision (the token of the etcd
//! recipes), so a writer whose lease expired — or whose lock was taken over — cannot write, no
//! matter how long it was paused. etcd decides; this file only builds the txn and reads back
//! what etcd saw.
//!
//! Layout under `fencecheck/resource/<key>/`: `value` (JSON), `fence` (highest accepted token,
//! zero-padded to 20 digits so that etcd's byte comparison is numeric order) and, in mode
//! `strict-idempotent`, `ops/<op_id>` for every applied op. The `fence` key is read inside the
//! same txn (a Get before the Puts sees the state before this txn), so `highest_before` is
//! exactly what etcd held when it decided. `store_order` is the txn's revision.
//!
//! The guard is not the token rule: a write with the newest token is rejected when its lock key
//! is gone (the lease expired and nobody re-acquired). It never accepts a token below the fence
//! while one lock guards a key, because create revisions only grow; the audit for this backend
//! is therefore [`Audit::Guard`](super::rule::Audit::Guard).
//!
//! Both branches also put `last = <attempt>:accepted|rejected`, so that a decision whose reply
//! was lost can be recovered (see [`super::doubt`]); this makes a rejection a write too.

use etcd_client::{Client, Compare, CompareOp, ConnectOptions, Txn, TxnOp, TxnOpResponse};
use futures::future::BoxFuture;
use results::WriteResult;
use std::time::Duration;

use super::rule::{check_token, Decision, Mode};
use super::{Resource, ResourceError, WriteRequest};

const NAME: &str = "etcd-guard";

pub struct EtcdGuard {
    client: Client,
    mode: Mode,
}

impl std::fmt::Debug for EtcdGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EtcdGuard")
            .field("mode", &self.mode)
            .finish()
    }
}

/// The fence value as stored: fixed width, so byte order is numeric order.
pub fn pad(token: u64) -> String {
    format!("{token:020}")
}

fn key_of(key: &str, part: &str) -> String {
    format!("fencecheck/resource/{key}/{part}")
}

impl EtcdGuard {
    /// Connects to the cluster (`host:port` or `http://host:port` endpoints).
    pub async fn connect(endpoints: &[String], mode: Mode) -> Result<Self, ResourceError> {
        let opts = ConnectOptions::new()
            .with_connect_timeout(Duration::from_secs(5))
            .with_timeout(Duration::from_secs(10));
        let client = Client::connect(endpoints, Some(opts))
            .await
            .map_err(|e| ResourceError::backend(NAME, format!("connect {endpoints:?}: {e}")))?;
        Ok(Self { client, mode })
    }

    fn txn(&self, w: &WriteRequest, attempt: u64) -> Result<Txn, ResourceError> {
        let (value, fence, op) = (
            key_of(&w.key, "value"),
            key_of(&w.key, "fence"),
            key_of(&w.key, &format!("ops/{}", w.op_id)),
        );
        let json =
            serde_json::to_string(&w.value).map_err(|e| ResourceError::Invalid(e.to_string()))?;
        let last = key_of(&w.key, "last");
        let mut then = vec![
            TxnOp::get(fence.clone(), None),
            TxnOp::put(value, json, None),
            TxnOp::put(last.clone(), format!("{attempt}:accepted"), None),
        ];
        if let Some(t) = w.token {
            then.push(TxnOp::put(fence.clone(), pad(t), None));
        }
        if self.mode == Mode::None {
            return Ok(Txn::new().and_then(then));
        }
        let (Some(t), Some(lock_key)) = (w.token, w.lock_key.as_ref()) else {
            return Err(ResourceError::Invalid(
                "etcd-guard needs `token` (the lock key's create revision) and `lock_key`".into(),
            ));
        };
        let t = i64::try_from(t)
            .map_err(|_| ResourceError::Invalid(format!("token {t} is not an etcd revision")))?;
        let mut when = vec![Compare::create_revision(
            lock_key.clone(),
            CompareOp::Equal,
            t,
        )];
        let mut otherwise = vec![
            TxnOp::get(fence, None),
            TxnOp::put(last, format!("{attempt}:rejected"), None),
        ];
        if self.mode == Mode::StrictIdempotent {
            when.push(Compare::version(op.clone(), CompareOp::Equal, 0));
            then.push(TxnOp::put(op.clone(), "", None));
            otherwise.insert(1, TxnOp::get(op, None));
        }
        Ok(Txn::new().when(when).and_then(then).or_else(otherwise))
    }
}

/// The value of the `i`th Get of a txn response, if the key existed.
fn got(ops: &[TxnOpResponse], i: usize) -> Option<Vec<u8>> {
    match ops.get(i) {
        Some(TxnOpResponse::Get(g)) => g.kvs().first().map(|kv| kv.value().to_vec()),
        _ => None,
    }
}

fn parse_fence(raw: Option<Vec<u8>>) -> Result<Option<u64>, ResourceError> {
    raw.map(|v| {
        std::str::from_utf8(&v)
            .ok()
            .and_then(|s| s.parse::<u64>().ok())
            .ok_or_else(|| {
                ResourceError::backend(NAME, format!("fence value {v:?} is not a token"))
            })
    })
    .transpose()
}

impl Resource for EtcdGuard {
    fn decide<'a>(
        &'a self,
        w: &'a WriteRequest,
        attempt: u64,
    ) -> BoxFuture<'a, Result<Decision, ResourceError>> {
        Box::pin(async move {
            check_token(self.mode, w.token).map_err(ResourceError::Invalid)?;
            let txn = self.txn(w, attempt)?;
            let mut kv = self.client.kv_client();
            let resp = kv
                .txn(txn)
                .await
                .map_err(|e| ResourceError::backend(NAME, e))?;
            let ops = resp.op_responses();
            let highest_before = parse_fence(got(&ops, 0))?;
            let result = if resp.succeeded() {
                WriteResult::Accepted
            } else if self.mode == Mode::StrictIdempotent && got(&ops, 1).is_some() {
                WriteResult::RejectedDuplicate
            } else {
                WriteResult::RejectedStaleFence
            };
            let store_order = resp.header().map(|h| h.revision() as u64);
            // The fence holds the highest accepted token: an accepted lower token (mode none, or
            // one key guarded by two locks) put its own; put the higher one back. Writes to one
            // key are serialized by the server, so nothing can slip in between.
            if let (true, Some(t), Some(h)) = (result.is_accepted(), w.token, highest_before) {
                if h > t {
                    kv.put(key_of(&w.key, "fence"), pad(h), None)
                        .await
                        .map_err(|e| ResourceError::backend(NAME, e))?;
                }
            }
            Ok(Decision {
                result,
                highest_before,
                store_order,
            })
        })
    }

    /// The txn put `<key>/last = <attempt>:accepted|rejected` in both branches; a rejected
    /// attempt in mode strict-idempotent was a duplicate if its op key exists (it cannot have
    /// been created since: writes to a key are serialized).
    fn resolve<'a>(
        &'a self,
        w: &'a WriteRequest,
        attempt: u64,
    ) -> BoxFuture<'a, Result<Option<WriteResult>, ResourceError>> {
        Box::pin(async move {
            let kv = self.client.kv_client();
            let get = |k: String| {
                let mut kv = kv.clone();
                async move {
                    kv.get(k, None)
                        .await
                        .map(|r| r.kvs().first().map(|kv| kv.value().to_vec()))
                        .map_err(|e| ResourceError::backend(NAME, e))
                }
            };
            let last = get(key_of(&w.key, "last")).await?.unwrap_or_default();
            let last = String::from_utf8_lossy(&last);
            Ok(match last.split_once(':') {
                Some((a, "accepted")) if a == attempt.to_string() => Some(WriteResult::Accepted),
                Some((a, "rejected")) if a == attempt.to_string() => {
                    let op = key_of(&w.key, &format!("ops/{}", w.op_id));
                    if self.mode == Mode::StrictIdempotent && get(op).await?.is_some() {
                        Some(WriteResult::RejectedDuplicate)
                    } else {
                        Some(WriteResult::RejectedStaleFence)
                    }
                }
                _ => None,
            })
        })
    }

    fn name(&self) -> &'static str {
        NAME
    }
}
