//! The client of the resource server, used by workers (inside their containers), by the bench and
//! by tests. One TCP connection, one request at a time; a broken connection is re-opened on the
//! next call. Time-outs are the caller's (`tokio::time::timeout`), because only the caller knows
//! how it records an indeterminate write.

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;

use super::protocol::{Reply, Request, WriteReply, WriteRequest};

/// Why a write got no decision. Every variant is indeterminate for a write (the resource may
/// have decided and logged it before the connection broke) except `Refused`: the server said
/// it decided and applied nothing (a malformed request, a write its mode cannot decide).
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("resource at {addr}: {source}")]
    Io {
        addr: String,
        #[source]
        source: std::io::Error,
    },
    /// The server refused the request: nothing was decided or applied. Definite.
    #[error("resource at {addr} refused: {message}")]
    Refused { addr: String, message: String },
    /// The server's backend failed mid-way: the write may have been applied.
    #[error("resource at {addr} failed: {message}")]
    Failed { addr: String, message: String },
    #[error("resource at {addr} sent an unexpected reply: {reply}")]
    Protocol { addr: String, reply: String },
}

pub struct ResourceClient {
    addr: String,
    conn: Option<(BufReader<OwnedReadHalf>, OwnedWriteHalf)>,
}

impl std::fmt::Debug for ResourceClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceClient")
            .field("addr", &self.addr)
            .field("connected", &self.conn.is_some())
            .finish()
    }
}

impl ResourceClient {
    /// Connects to `addr` (`host:port`).
    pub async fn connect(addr: &str) -> Result<Self, ClientError> {
        let mut c = Self {
            addr: addr.to_string(),
            conn: None,
        };
        c.ensure_connected().await?;
        Ok(c)
    }

    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// Sends one fenced write and returns the resource's decision.
    pub async fn write(&mut self, write: &WriteRequest) -> Result<WriteReply, ClientError> {
        let line = serde_json::to_vec(&Request::Write(write.clone()))
            .map_err(|e| self.protocol(e.to_string()))?;
        match self.send_raw(&line).await? {
            Reply::Decided(r) => Ok(r),
            Reply::Refused { message } => Err(ClientError::Refused {
                addr: self.addr.clone(),
                message,
            }),
            Reply::Error { message } => Err(ClientError::Failed {
                addr: self.addr.clone(),
                message,
            }),
            other => Err(self.protocol(format!("{other:?}"))),
        }
    }

    /// Readiness probe.
    pub async fn ping(&mut self) -> Result<(), ClientError> {
        match self.send_raw(br#"{"op":"ping"}"#).await? {
            Reply::Pong => Ok(()),
            other => Err(self.protocol(format!("{other:?}"))),
        }
    }

    /// Sends `line` as is (a newline is added) and reads one reply: for tests of bad input.
    pub async fn send_raw(&mut self, line: &[u8]) -> Result<Reply, ClientError> {
        let result = self.exchange(line).await;
        if result.is_err() {
            self.conn = None;
        }
        let text = result.map_err(|source| ClientError::Io {
            addr: self.addr.clone(),
            source,
        })?;
        serde_json::from_str(&text).map_err(|_| self.protocol(text.trim_end().to_string()))
    }

    async fn exchange(&mut self, line: &[u8]) -> std::io::Result<String> {
        self.ensure_connected().await.map_err(|e| match e {
            ClientError::Io { source, .. } => source,
            other => std::io::Error::other(other.to_string()),
        })?;
        let Some((read, write)) = self.conn.as_mut() else {
            return Err(std::io::ErrorKind::NotConnected.into());
        };
        let mut out = Vec::with_capacity(line.len() + 1);
        out.extend_from_slice(line);
        out.push(b'\n');
        write.write_all(&out).await?;
        let mut reply = String::new();
        if read.read_line(&mut reply).await? == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "connection closed before the reply",
            ));
        }
        Ok(reply)
    }

    async fn ensure_connected(&mut self) -> Result<(), ClientError> {
        if self.conn.is_none() {
            let stream =
                TcpStream::connect(&self.addr)
                    .await
                    .map_err(|source| ClientError::Io {
                        addr: self.addr.clone(),
                        source,
                    })?;
            let _ = stream.set_nodelay(true);
            let (r, w) = stream.into_split();
            self.conn = Some((BufReader::new(r), w));
        }
        Ok(())
    }

    fn protocol(&self, reply: String) -> ClientError {
        ClientError::Protocol {
            addr: self.addr.clone(),
            reply,
        }
    }
}
