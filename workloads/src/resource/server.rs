//! The resource server: reads request lines, has the backend decide, logs, replies.
//!
//! Why the log is in decision order. For the real backends the decision is made by the store
//! (an etcd txn compare, a PostgreSQL conditional UPDATE, a Redis Lua compare-and-set), and two
//! concurrent requests for one key may commit in one order and have their replies come back to
//! the proxy in the other. A log written in reply order could then show `highest_before` values
//! and decisions that contradict each other. Two ways out were weighed:
//! 1. read the store's own order back (etcd revision, a per-key counter bumped in the same
//!    transaction or script) and reorder the log by it — which means holding replies in a
//!    reorder buffer and stalling a key forever when one reply is lost (a store that committed
//!    and then dropped the connection leaves a gap no later decision can fill);
//! 2. serialize per key in the proxy: while one write to key K is with the store, the next write
//!    to K waits. The store still makes the decision (atomically, as it would for any other
//!    client), but the proxy makes sure there is only ever one in flight per key, so reply order
//!    is commit order and the line is written before the next write to K is sent.
//!
//! We take (2): it is simple, needs no store-specific recovery, and its cost is honest and
//! bounded (per-key throughput = 1 / store round trip; different keys still run in parallel).
//! The concurrency the store's atomicity is tested against is therefore across keys and against
//! the lock clients that change the etcd lock keys, not between writes to one key. Backends
//! still report their own order ([`Decision::store_order`]) and the tests check that, per key,
//! log order agrees with it.
//!
//! One write per key in flight also bounds what can be in doubt (decided by the store, not yet
//! logged) to the last write of each key; [`super::doubt`] settles those.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

use super::doubt::{settle, Intent, Intents};
use super::log::DecisionLog;
use super::protocol::{Reply, Request, WriteReply, MAX_LINE};
use super::rule::Decision;
use super::{Resource, ResourceError};

pub struct Server {
    resource: Arc<dyn Resource>,
    log: DecisionLog,
    intents: Intents,
    keys: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("resource", &self.resource.name())
            .field("log", &self.log)
            .finish()
    }
}

impl Server {
    /// A server over `resource` logging to `log`. Writes left in doubt by a previous life must
    /// be settled first ([`super::doubt::settle`]; [`super::start_server`] does it).
    pub fn new(resource: Arc<dyn Resource>, log: DecisionLog, intents: Intents) -> Arc<Self> {
        Arc::new(Self {
            resource,
            log,
            intents,
            keys: Mutex::new(HashMap::new()),
        })
    }

    /// Decides and logs one request (the whole server minus the socket).
    pub async fn handle(&self, req: Request) -> Reply {
        let write = match req {
            Request::Ping => return Reply::Pong,
            Request::Write(w) => w,
        };
        let key_lock = {
            let mut keys = self.keys.lock().unwrap_or_else(|p| p.into_inner());
            keys.entry(write.key.clone()).or_default().clone()
        };
        let _one_in_flight = key_lock.lock().await;
        let error = |message: String| Reply::Error { message };
        let refused = |message: String| Reply::Refused { message };
        // An earlier write to this key whose reply was lost: the store may have decided it, and
        // this write's highest_before depends on that. Ask before deciding anything else.
        if let Some(intent) = self.intents.take_doubt(&write.key) {
            if let Err(e) = settle(self.resource.as_ref(), &self.log, &intent).await {
                self.intents.doubt(intent);
                // This write was not sent: the doubt is the earlier one's.
                return refused(format!(
                    "not sent: an earlier write to {:?} is in doubt: {e}",
                    write.key
                ));
            }
        }
        let attempt = self.log.decisions_on(&write.key) + 1;
        if let Err(e) = self.intents.intend(attempt, &write) {
            return refused(format!("not sent: {e}"));
        }
        let Decision {
            result,
            highest_before,
            store_order,
        } = match self.resource.decide(&write, attempt).await {
            Ok(d) => d,
            Err(e @ ResourceError::Invalid(_)) => return refused(e.to_string()),
            Err(e) => {
                self.intents.doubt(Intent { attempt, write });
                return error(e.to_string());
            }
        };
        match self.log.record(&write, result, highest_before) {
            Ok(seq) => Reply::Decided(WriteReply {
                result,
                highest_before,
                seq,
                store_order,
            }),
            Err(e) => {
                self.intents.doubt(Intent { attempt, write });
                error(format!(
                    "decided {} but could not log it: {e}",
                    result.as_str()
                ))
            }
        }
    }

    /// Parses one request line and handles it; anything unparsable is an error reply.
    pub async fn handle_line(&self, line: &[u8]) -> Reply {
        match serde_json::from_slice::<Request>(line) {
            Ok(req) => self.handle(req).await,
            Err(e) => Reply::Refused {
                message: format!("malformed request: {e}"),
            },
        }
    }

    /// Decisions logged so far (this life and previous ones).
    pub fn logged(&self) -> u64 {
        self.log.len()
    }

    /// Binds `addr` and serves connections in a background task until the handle is dropped.
    pub async fn bind(self: &Arc<Self>, addr: &str) -> std::io::Result<ServerHandle> {
        let listener = TcpListener::bind(addr).await?;
        let local_addr = listener.local_addr()?;
        let server = self.clone();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let server = server.clone();
                tokio::spawn(async move {
                    let _ = server.serve_connection(stream).await;
                });
            }
        });
        Ok(ServerHandle { local_addr, task })
    }

    async fn serve_connection(&self, stream: TcpStream) -> std::io::Result<()> {
        let _ = stream.set_nodelay(true);
        let (read, mut write) = stream.into_split();
        let mut read = BufReader::new(read);
        let mut line = Vec::new();
        loop {
            line.clear();
            let n = (&mut read)
                .take(MAX_LINE as u64 + 1)
                .read_until(b'\n', &mut line)
                .await?;
            if n == 0 {
                return Ok(());
            }
            let reply = if line.len() > MAX_LINE && line.last() != Some(&b'\n') {
                // Skip the rest of the oversized line, then say why it was not handled.
                let mut rest = Vec::new();
                read.read_until(b'\n', &mut rest).await?;
                Reply::Refused {
                    message: format!("request line longer than {MAX_LINE} bytes"),
                }
            } else if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            } else {
                self.handle_line(&line).await
            };
            let mut out = serde_json::to_vec(&reply).unwrap_or_else(|_| {
                b"{\"status\":\"error\",\"message\":\"unserializable reply\"}".to_vec()
            });
            out.push(b'\n');
            write.write_all(&out).await?;
        }
    }
}

/// A running server; dropping it stops accepting (open connections finish their current line).
#[derive(Debug)]
pub struct ServerHandle {
    pub local_addr: SocketAddr,
    task: JoinHandle<()>,
}

impl ServerHandle {
    /// Waits until the accept loop ends (it ends only on a listener error).
    pub async fn wait(mut self) {
        let _ = (&mut self.task).await;
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        self.task.abort();
    }
}
