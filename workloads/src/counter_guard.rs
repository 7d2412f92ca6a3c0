//! The counter as a worker increments it: read, work, write back — where the write either goes
//! to a plain store with no check at all ([`Plain`]: Redis, PostgreSQL, memory — what a lock
//! alone protects) or is guarded by the lock itself ([`EtcdGuardCounter`]: one etcd txn that
//! writes only if the writer's lock key still exists with its create revision — the guarded
//! write of the etcd docs, and the remedy of Jepsen's etcd 3.4.3 analysis). A rejected guard is
//! a certain non-write; a failed read changes nothing; only a failed write may have landed.

use crate::counter::{CounterError, PlainStore};
use etcd_client::{Client, Compare, CompareOp, ConnectOptions, Txn, TxnOp};
use futures::future::BoxFuture;
use std::sync::Arc;
use std::time::Duration;

/// What guards a write: the writer's lock key and its create revision (the hold's token).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Guard {
    pub lock_key: Option<String>,
    pub token: Option<u64>,
}

/// What the store did with a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    Applied,
    /// The guard failed: the store certainly did not change.
    Rejected,
}

/// A counter store as the worker's increment uses it.
pub trait Counter: Send + Sync {
    fn name(&self) -> &'static str;
    /// The counter's value (0 when it was never written).
    fn read<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<i64, CounterError>>;
    /// Writes `value`; a guarded store checks `guard` in the same atomic step.
    fn write<'a>(
        &'a self,
        key: &'a str,
        value: i64,
        guard: &'a Guard,
    ) -> BoxFuture<'a, Result<Written, CounterError>>;
}

/// A plain store: the guard is ignored, every write applies.
pub struct Plain {
    name: &'static str,
    store: Arc<dyn PlainStore>,
}

impl Plain {
    pub fn new(name: &'static str, store: Arc<dyn PlainStore>) -> Self {
        Plain { name, store }
    }
}

impl Counter for Plain {
    fn name(&self) -> &'static str {
        self.name
    }

    fn read<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<i64, CounterError>> {
        self.store.read(key)
    }

    fn write<'a>(
        &'a self,
        key: &'a str,
        value: i64,
        _guard: &'a Guard,
    ) -> BoxFuture<'a, Result<Written, CounterError>> {
        Box::pin(async move {
            self.store.write(key, value).await?;
            Ok(Written::Applied)
        })
    }
}

const ETCD_GUARD: &str = "etcd-guard";

/// The counter in etcd at `fencecheck/counter/<key>`, written only by the current lock holder.
pub struct EtcdGuardCounter {
    client: Client,
}

fn counter_key(key: &str) -> String {
    format!("fencecheck/counter/{key}")
}

impl EtcdGuardCounter {
    /// Connects to the etcd cluster (`host:port` endpoints).
    pub async fn connect(endpoints: &[String]) -> Result<Self, CounterError> {
        let opts = ConnectOptions::new()
            .with_connect_timeout(Duration::from_secs(5))
            .with_timeout(Duration::from_secs(10));
        let client =
            Client::connect(endpoints, Some(opts))
                .await
                .map_err(|e| CounterError::Config {
                    target: endpoints.join(","),
                    message: format!("connecting to etcd: {e}"),
                })?;
        Ok(Self { client })
    }
}

impl Counter for EtcdGuardCounter {
    fn name(&self) -> &'static str {
        ETCD_GUARD
    }

    fn read<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<i64, CounterError>> {
        Box::pin(async move {
            let read = |message: String| CounterError::Read {
                store: ETCD_GUARD,
                message,
            };
            let resp = self
                .client
                .kv_client()
                .get(counter_key(key), None)
                .await
                .map_err(|e| read(e.to_string()))?;
            match resp.kvs().first() {
                None => Ok(0),
                Some(kv) => std::str::from_utf8(kv.value())
                    .ok()
                    .and_then(|s| s.parse::<i64>().ok())
                    .ok_or_else(|| read(format!("value {:?} is not an integer", kv.value()))),
            }
        })
    }

    fn write<'a>(
        &'a self,
        key: &'a str,
        value: i64,
        guard: &'a Guard,
    ) -> BoxFuture<'a, Result<Written, CounterError>> {
        Box::pin(async move {
            // Nothing is sent without a guard: a certain non-write, like a failed read.
            let (Some(lock_key), Some(token)) = (&guard.lock_key, guard.token) else {
                return Err(CounterError::Read {
                    store: ETCD_GUARD,
                    message: "not sent: the hold has no lock key and token to guard with".into(),
                });
            };
            let revision = i64::try_from(token).map_err(|_| CounterError::Read {
                store: ETCD_GUARD,
                message: format!("not sent: token {token} is not an etcd revision"),
            })?;
            let txn = Txn::new()
                .when(vec![Compare::create_revision(
                    lock_key.clone(),
                    CompareOp::Equal,
                    revision,
                )])
                .and_then(vec![TxnOp::put(counter_key(key), value.to_string(), None)]);
            let resp = self
                .client
                .kv_client()
                .txn(txn)
                .await
                .map_err(|e| CounterError::Write {
                    store: ETCD_GUARD,
                    message: e.to_string(),
                })?;
            Ok(if resp.succeeded() {
                Written::Applied
            } else {
                Written::Rejected
            })
        })
    }
}

/// Opens the store a worker's `--counter-store` names: `etcd-guard` (on `etcd_endpoints`), or a
/// plain store target of [`crate::counter::connect`] (`redis://...`, a PostgreSQL string).
pub async fn open(
    target: &str,
    etcd_endpoints: &[String],
) -> Result<Arc<dyn Counter>, CounterError> {
    if target == ETCD_GUARD {
        return Ok(Arc::new(EtcdGuardCounter::connect(etcd_endpoints).await?));
    }
    let name = if target.starts_with("redis://") {
        "redis"
    } else {
        "postgres"
    };
    let store = crate::counter::connect(target).await?;
    Ok(Arc::new(Plain::new(name, Arc::from(store))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counter::MemoryCounter;

    #[tokio::test]
    async fn a_plain_store_ignores_the_guard() {
        let c = Plain::new("memory", Arc::new(MemoryCounter::default()));
        let no_guard = Guard::default();
        assert_eq!(c.write("k", 7, &no_guard).await.unwrap(), Written::Applied);
        assert_eq!(c.read("k").await.unwrap(), 7);
    }
}
