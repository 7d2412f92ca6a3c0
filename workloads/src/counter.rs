//! The counter workload (Jepsen's "lock-set" idea): under the lock, read a counter from a plain
//! store with no token check, add one, write it back; at the end read it once more. The store
//! does nothing to help — exactly what a lock alone is trusted to protect. If two holders ever
//! overlap, one's increment overwrites the other's and the final value falls below the number of
//! acknowledged increments: the `lost-update` checker's evidence.
//!
//! The worker loop records `increment` (and the final `read`) in the history; this file only
//! talks to the store. A failed read means nothing was written (`fail`); a failed write may
//! have landed (`info`) — [`CounterError::may_have_applied`] says which.

use crate::pg::Reconnecting;
use futures::future::BoxFuture;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Why a counter operation failed, and whether the write might have landed anyway.
#[derive(Debug, thiserror::Error)]
pub enum CounterError {
    #[error("counter read from {store}: {message}")]
    Read {
        store: &'static str,
        message: String,
    },
    #[error("counter write to {store}: {message}")]
    Write {
        store: &'static str,
        message: String,
    },
    #[error("counter store {target:?}: {message}")]
    Config { target: String, message: String },
}

impl CounterError {
    /// `false` only when the store certainly did not change (the read failed).
    pub fn may_have_applied(&self) -> bool {
        matches!(self, CounterError::Write { .. })
    }
}

/// A plain key → integer store, with no token check (the counter workload's [`CounterStore`]
/// names which one): `read` of a missing key is 0.
///
/// [`CounterStore`]: crate::kinds::CounterStore
pub trait PlainStore: Send + Sync {
    fn read<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<i64, CounterError>>;
    fn write<'a>(&'a self, key: &'a str, value: i64) -> BoxFuture<'a, Result<(), CounterError>>;
}

/// One unprotected read-modify-write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Increment {
    pub read: i64,
    pub wrote: i64,
}

/// Reads `key`, adds one, writes it back — deliberately two separate operations.
pub async fn increment(store: &dyn PlainStore, key: &str) -> Result<Increment, CounterError> {
    let read = store.read(key).await?;
    store.write(key, read + 1).await?;
    Ok(Increment {
        read,
        wrote: read + 1,
    })
}

/// Opens the store named by `target`: `redis://host:port`, or a PostgreSQL connection string
/// (`postgresql://user@host:port/db` or `host=.. port=.. user=..`).
pub async fn connect(target: &str) -> Result<Box<dyn PlainStore>, CounterError> {
    let config = |message: String| CounterError::Config {
        target: target.to_string(),
        message,
    };
    if target.starts_with("redis://") {
        let client = redis::Client::open(target).map_err(|e| config(e.to_string()))?;
        let conn = client
            .get_connection_manager()
            .await
            .map_err(|e| config(e.to_string()))?;
        Ok(Box::new(RedisCounter { conn }))
    } else {
        let conn = Reconnecting::connect(target, PostgresCounter::TABLE)
            .await
            .map_err(config)?;
        Ok(Box::new(PostgresCounter { conn }))
    }
}

/// Redis `GET` / `SET` of `counter:<key>`. The connection manager reconnects after a partition
/// heals or Redis restarts.
pub struct RedisCounter {
    conn: redis::aio::ConnectionManager,
}

impl PlainStore for RedisCounter {
    fn read<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<i64, CounterError>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let v: Option<i64> = redis::cmd("GET")
                .arg(format!("counter:{key}"))
                .query_async(&mut conn)
                .await
                .map_err(|e| CounterError::Read {
                    store: "redis",
                    message: e.to_string(),
                })?;
            Ok(v.unwrap_or(0))
        })
    }

    fn write<'a>(&'a self, key: &'a str, value: i64) -> BoxFuture<'a, Result<(), CounterError>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            redis::cmd("SET")
                .arg(format!("counter:{key}"))
                .arg(value)
                .query_async::<()>(&mut conn)
                .await
                .map_err(|e| CounterError::Write {
                    store: "redis",
                    message: e.to_string(),
                })
        })
    }
}

/// A row per counter in `fence_counter`, read with `SELECT` and written with an upsert. A closed
/// connection (the server restarted, a partition broke it) is re-opened on the next operation.
pub struct PostgresCounter {
    conn: Reconnecting,
}

impl PostgresCounter {
    const TABLE: &'static str =
        "CREATE TABLE IF NOT EXISTS fence_counter (key text PRIMARY KEY, value bigint NOT NULL)";

    /// The open connection, re-opened if it closed.
    async fn client(&self) -> Result<Arc<tokio_postgres::Client>, String> {
        self.conn.client().await
    }
}

impl PlainStore for PostgresCounter {
    fn read<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<i64, CounterError>> {
        Box::pin(async move {
            let read = |message| CounterError::Read {
                store: "postgres",
                message,
            };
            let client = self.client().await.map_err(read)?;
            let row = client
                .query_opt("SELECT value FROM fence_counter WHERE key = $1", &[&key])
                .await
                .map_err(|e| {
                    self.conn.failed(&client, &e);
                    CounterError::Read {
                        store: "postgres",
                        message: e.to_string(),
                    }
                })?;
            Ok(row.map_or(0, |r| r.get(0)))
        })
    }

    fn write<'a>(&'a self, key: &'a str, value: i64) -> BoxFuture<'a, Result<(), CounterError>> {
        Box::pin(async move {
            // Not connected: nothing was sent, so nothing can have applied (a Read-kind error).
            let client = self.client().await.map_err(|e| CounterError::Read {
                store: "postgres",
                message: format!("connecting before the write: {e}"),
            })?;
            client
                .execute(
                    "INSERT INTO fence_counter (key, value) VALUES ($1, $2) \
                     ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                    &[&key, &value],
                )
                .await
                .map(|_| ())
                .map_err(|e| {
                    self.conn.failed(&client, &e);
                    CounterError::Write {
                        store: "postgres",
                        message: e.to_string(),
                    }
                })
        })
    }
}

/// In-process fake for pipeline tests.
#[derive(Debug, Default)]
pub struct MemoryCounter {
    values: Mutex<HashMap<String, i64>>,
}

impl PlainStore for MemoryCounter {
    fn read<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<i64, CounterError>> {
        let v = self
            .values
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(key)
            .copied()
            .unwrap_or(0);
        Box::pin(async move { Ok(v) })
    }

    fn write<'a>(&'a self, key: &'a str, value: i64) -> BoxFuture<'a, Result<(), CounterError>> {
        self.values
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key.to_string(), value);
        Box::pin(async { Ok(()) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn sequential_increments_count_and_interleaved_ones_lose_an_update() {
        let store = MemoryCounter::default();
        for _ in 0..3 {
            increment(&store, "c").await.unwrap();
        }
        assert_eq!(store.read("c").await.unwrap(), 3);
        // Two holders at once: both read 3, both write 4 — one increment is lost.
        let (a, b) = (
            store.read("c").await.unwrap(),
            store.read("c").await.unwrap(),
        );
        store.write("c", a + 1).await.unwrap();
        store.write("c", b + 1).await.unwrap();
        assert_eq!(
            store.read("c").await.unwrap(),
            4,
            "5 increments, final 4: a lost update"
        );
    }
}
