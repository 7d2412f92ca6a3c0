//! Small real-client calls the readiness probes and leader queries share: a ZooKeeper
//! four-letter word, a Redis connection, a deadline. All go to 127.0.0.1 published ports.

use crate::docker::Node;
use std::future::Future;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Per-call deadline of a probe: a hung server must not hang start-up.
pub(crate) const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

pub async fn within<T>(
    what: &str,
    f: impl Future<Output = Result<T, String>>,
) -> Result<T, String> {
    tokio::time::timeout(PROBE_TIMEOUT, f)
        .await
        .unwrap_or_else(|_| Err(format!("{what}: no answer within {PROBE_TIMEOUT:?}")))
}

pub fn host_endpoint(node: &Node) -> Result<String, String> {
    node.host_endpoint()
        .ok_or_else(|| format!("{} publishes no client port", node.name))
}

/// Sends a ZooKeeper four-letter word (`srvr`, `mntr`, `ruok`) and returns the whole answer.
pub async fn four_letter(node: &Node, word: &str) -> Result<String, String> {
    let endpoint = host_endpoint(node)?;
    within(&format!("{word} to {}", node.name), async {
        let mut stream = tokio::net::TcpStream::connect(&endpoint)
            .await
            .map_err(|e| format!("{}: {e}", node.name))?;
        stream
            .write_all(word.as_bytes())
            .await
            .map_err(|e| format!("{}: {e}", node.name))?;
        let mut answer = String::new();
        stream
            .read_to_string(&mut answer)
            .await
            .map_err(|e| format!("{}: {e}", node.name))?;
        Ok(answer)
    })
    .await
}

/// A Redis connection to the node's published port.
pub async fn redis_connection(node: &Node) -> Result<redis::aio::MultiplexedConnection, String> {
    let endpoint = host_endpoint(node)?;
    let client = redis::Client::open(format!("redis://{endpoint}/")).map_err(|e| e.to_string())?;
    within(&format!("connect to {}", node.name), async {
        client
            .get_multiplexed_async_connection()
            .await
            .map_err(|e| format!("{}: {e}", node.name))
    })
    .await
}

/// PING answered with PONG.
pub async fn redis_ping(node: &Node) -> Result<(), String> {
    let mut conn = redis_connection(node).await?;
    within(&format!("PING {}", node.name), async {
        let pong: String = redis::cmd("PING")
            .query_async(&mut conn)
            .await
            .map_err(|e| format!("{}: {e}", node.name))?;
        if pong == "PONG" {
            Ok(())
        } else {
            Err(format!("{} answered PING with {pong:?}", node.name))
        }
    })
    .await
}
