//! One connection to a worker. A reader task takes every line the worker sends: `lease-lost`
//! notices and keep-alive checks go straight into the history (so they land before the reply
//! that follows them),
//! replies go to the caller. The end of the stream means the worker died.

use super::Recorder;
use crate::protocol::{read_line, write_line, Message, Op, Outcome, ProtocolError, Request};
use results::{OpType, F};
use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use tokio::sync::{mpsc, watch};

/// The worker is gone (connection closed or broken); the text says how.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("worker gone: {0}")]
pub struct Gone(pub String);

/// The driver's end of one worker connection.
pub struct WorkerConn {
    pub name: String,
    pub recipe: String,
    writer: Box<dyn AsyncWrite + Unpin + Send>,
    replies: mpsc::UnboundedReceiver<Result<(u64, Outcome), Gone>>,
    /// Set by the reader when the stream ends: how the worker went away.
    gone: watch::Receiver<Option<Gone>>,
    next_id: u64,
}

impl std::fmt::Debug for WorkerConn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkerConn")
            .field("name", &self.name)
            .finish()
    }
}

impl WorkerConn {
    /// Connects to a worker's port (a 127.0.0.1 port published by its container), retrying
    /// until `within` runs out while the worker starts.
    pub async fn connect(
        addr: std::net::SocketAddr,
        within: std::time::Duration,
        recorder: Recorder,
    ) -> Result<Self, Gone> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            match tokio::net::TcpStream::connect(addr).await {
                Ok(s) => {
                    let _ = s.set_nodelay(true);
                    match Self::over(s, recorder.clone()).await {
                        Ok(c) => return Ok(c),
                        // docker-proxy accepts before the worker listens, then hangs up.
                        Err(e) if tokio::time::Instant::now() < deadline => {
                            tracing::debug!("{addr}: {e}; retrying")
                        }
                        Err(e) => return Err(e),
                    }
                }
                Err(e) if tokio::time::Instant::now() >= deadline => {
                    return Err(Gone(format!("cannot connect to worker at {addr}: {e}")))
                }
                Err(_) => {}
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }

    /// Speaks the protocol over any stream (a TCP socket, or an in-process duplex pipe).
    pub async fn over<S>(stream: S, recorder: Recorder) -> Result<Self, Gone>
    where
        S: AsyncRead + AsyncWrite + Send + 'static,
    {
        let (rd, wr) = tokio::io::split(stream);
        let mut rd = BufReader::new(rd);
        let (name, recipe) = match read_line::<Message>(&mut rd).await {
            Ok(Some(Message::Hello { name, recipe })) => (name, recipe),
            Ok(Some(other)) => return Err(Gone(format!("expected hello, got {other:?}"))),
            Ok(None) => return Err(Gone("closed before hello".into())),
            Err(e) => return Err(Gone(e.to_string())),
        };
        let (tx, replies) = mpsc::unbounded_channel();
        let (gone_tx, gone) = watch::channel(None);
        tokio::spawn(read_loop(rd, tx, gone_tx, recorder));
        Ok(WorkerConn {
            name,
            recipe,
            writer: Box::new(wr),
            replies,
            gone,
            next_id: 0,
        })
    }

    /// How the worker went away, if it has (the connection ended).
    pub fn gone(&self) -> Option<Gone> {
        self.gone.borrow().clone()
    }

    /// Resolves when the worker goes away (at once if it already has).
    pub async fn closed(&mut self) -> Gone {
        match self.gone.wait_for(Option::is_some).await {
            Ok(g) => g
                .clone()
                .unwrap_or_else(|| Gone("connection closed".into())),
            Err(_) => Gone("connection closed".into()),
        }
    }

    /// Sends one request and waits for its reply, however long that takes (a paused worker's
    /// operation simply stays open).
    pub async fn call(&mut self, op: Op) -> Result<Outcome, Gone> {
        self.next_id += 1;
        let id = self.next_id;
        write_line(&mut self.writer, &Request { id, op })
            .await
            .map_err(|e| Gone(e.to_string()))?;
        loop {
            match self.replies.recv().await {
                None => return Err(Gone("connection closed".into())),
                Some(Err(g)) => return Err(g),
                Some(Ok((rid, outcome))) if rid == id => return Ok(outcome),
                Some(Ok(_)) => continue, // a reply to an abandoned call
            }
        }
    }
}

async fn read_loop<R: tokio::io::AsyncBufRead + Unpin>(
    mut rd: R,
    tx: mpsc::UnboundedSender<Result<(u64, Outcome), Gone>>,
    gone_tx: watch::Sender<Option<Gone>>,
    recorder: Recorder,
) {
    loop {
        let gone = match read_line::<Message>(&mut rd).await {
            Ok(Some(Message::Reply { id, outcome })) => {
                let _ = tx.send(Ok((id, outcome)));
                continue;
            }
            Ok(Some(Message::LeaseLost {
                process,
                lock,
                owner,
                lease,
                token,
                why,
            })) => {
                let mut e = recorder.event(process, OpType::Info, F::LeaseLost);
                e.lock = Some(lock);
                e.owner = Some(owner);
                e.lease = Some(lease);
                e.token = token;
                e.error = Some(why);
                if let Err(err) = recorder.record(e) {
                    tracing::error!("cannot record lease-lost: {err}");
                }
                continue;
            }
            Ok(Some(Message::Check {
                process,
                lock,
                owner,
                lease,
                token,
                asked,
                answered,
                outcome,
            })) => {
                let mut e = recorder.event(process, OpType::Invoke, F::Check);
                (e.lock, e.owner, e.lease, e.token) = (Some(lock), Some(owner), Some(lease), token);
                e.time = asked;
                let mut done = e.clone();
                (done.time, done.kind, done.held) = (answered, outcome.kind, outcome.held);
                (done.error, done.exception) = (outcome.error, outcome.exception);
                if let Some(server_held) = outcome.server_held {
                    // The adapter's own read of the service, beside the library's belief.
                    done.value = Some(serde_json::json!({ "server_held": server_held }));
                }
                for e in [e, done] {
                    if let Err(err) = recorder.record_stamped(e) {
                        tracing::error!("cannot record a check: {err}");
                    }
                }
                continue;
            }
            Ok(Some(Message::Hello { .. })) => continue,
            Ok(None) => Gone("connection closed".into()),
            Err(ProtocolError::Io(e)) => Gone(format!("connection broken: {e}")),
            Err(e) => Gone(e.to_string()),
        };
        gone_tx.send_replace(Some(gone.clone()));
        let _ = tx.send(Err(gone));
        return;
    }
}
