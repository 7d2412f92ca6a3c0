//! Where a Redis recipe's connection comes from: one fixed server, or whichever master the
//! sentinels name right now. A broken connection is dropped and the next call reconnects — for
//! the sentinel source that means asking the sentinels again, which is how a client follows a
//! failover.

use redis::aio::MultiplexedConnection;
use redis::sentinel::{SentinelClient, SentinelServerType};
use redis::AsyncConnectionConfig;
use std::time::Duration;
use tokio::sync::Mutex;

enum Source {
    Direct(redis::Client),
    Sentinel(Mutex<SentinelClient>),
}

/// A lazily (re)connected multiplexed connection.
pub struct RedisConn {
    source: Source,
    describe: String,
    config: AsyncConnectionConfig,
    conn: Mutex<Option<MultiplexedConnection>>,
}

impl RedisConn {
    /// A fixed server at `host:port`.
    pub fn direct(endpoint: &str, op_timeout: Duration) -> Result<Self, String> {
        let client = redis::Client::open(format!("redis://{endpoint}/"))
            .map_err(|e| format!("redis endpoint {endpoint:?}: {e}"))?;
        Ok(Self::new(
            Source::Direct(client),
            endpoint.to_string(),
            op_timeout,
        ))
    }

    /// The master that the sentinels at `sentinels` name `master`.
    pub fn sentinel(
        sentinels: &[String],
        master: &str,
        op_timeout: Duration,
    ) -> Result<Self, String> {
        let urls: Vec<String> = sentinels.iter().map(|s| format!("redis://{s}/")).collect();
        let client =
            SentinelClient::build(urls, master.to_string(), None, SentinelServerType::Master)
                .map_err(|e| format!("sentinels {}: {e}", sentinels.join(",")))?;
        Ok(Self::new(
            Source::Sentinel(Mutex::new(client)),
            format!("master {master:?} of sentinels {}", sentinels.join(",")),
            op_timeout,
        ))
    }

    fn new(source: Source, describe: String, op_timeout: Duration) -> Self {
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(op_timeout))
            .set_response_timeout(Some(op_timeout));
        Self {
            source,
            describe,
            config,
            conn: Mutex::new(None),
        }
    }

    pub fn describe(&self) -> &str {
        &self.describe
    }

    /// The current connection, connecting (or rediscovering the master) if there is none.
    pub async fn get(&self) -> Result<MultiplexedConnection, String> {
        let mut guard = self.conn.lock().await;
        if let Some(c) = guard.as_ref() {
            return Ok(c.clone());
        }
        let conn = match &self.source {
            Source::Direct(client) => {
                client
                    .get_multiplexed_async_connection_with_config(&self.config)
                    .await
            }
            Source::Sentinel(s) => {
                s.lock()
                    .await
                    .get_async_connection_with_config(&self.config)
                    .await
            }
        }
        .map_err(|e| format!("{}: {e}", self.describe))?;
        *guard = Some(conn.clone());
        Ok(conn)
    }

    /// Forgets the connection after an error (the next `get` reconnects).
    pub async fn reset(&self) {
        *self.conn.lock().await = None;
    }

    /// Runs a script; any error resets the connection and is returned as text.
    pub async fn run<T: redis::FromRedisValue>(
        &self,
        inv: redis::ScriptInvocation<'_>,
    ) -> Result<T, String> {
        let mut c = self.get().await?;
        match inv.invoke_async(&mut c).await {
            Ok(v) => Ok(v),
            Err(e) => {
                self.reset().await;
                Err(format!("{}: {e}", self.describe))
            }
        }
    }
}
