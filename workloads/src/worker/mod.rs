//! The `fencecheck worker` process: one lock client, serving the control protocol on a port.
//! It executes one request at a time against its recipe, pushes `lease-lost` notices as its
//! ownership tracker raises them (always before the reply they precede) and its keep-alive's
//! checks with their answers (stamped in the worker), and writes through the
//! resource client. The same connection loop serves a TCP socket or, in tests, an in-process
//! duplex pipe, so the pipeline test runs exactly the code the containers run. A worker is
//! made from its [`WorkerLaunch`] (one value, built once from the plan) wherever it runs.

mod execute;
mod freeze;
mod increment;
mod launch;
mod network_place;

pub use execute::Worker;
pub use freeze::Freeze;
pub use launch::{AdapterLaunch, ClientLaunch, LaunchError, Place, WorkerLaunch};
pub use network_place::NetworkPlace;

use crate::ownership::Notice;
use crate::protocol::{read_line, write_line, Message, Outcome, ProtocolError, Request};
use results::OpType;
use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

/// Listens on `listen` and serves one driver connection at a time (a reconnect finds the same
/// worker and its hold). Returns only on a listener error.
pub async fn serve(listen: std::net::SocketAddr, mut worker: Worker) -> std::io::Result<()> {
    let listener = TcpListener::bind(listen).await?;
    tracing::info!(name = %worker.name, %listen, "worker listening");
    loop {
        let (stream, peer) = listener.accept().await?;
        let _ = stream.set_nodelay(true);
        tracing::info!(%peer, "driver connected");
        if let Err(e) = serve_conn(&mut worker, stream).await {
            tracing::warn!(%peer, "connection ended: {e}");
        }
    }
}

/// Serves one connection until the driver hangs up.
pub async fn serve_conn<S>(worker: &mut Worker, stream: S) -> Result<(), ProtocolError>
where
    S: AsyncRead + AsyncWrite + Send + 'static,
{
    let (rd, mut wr) = tokio::io::split(stream);
    // Reading in its own task keeps line reads whole while the loop below waits on two sources.
    let (req_tx, mut requests) = mpsc::unbounded_channel::<Result<Request, ProtocolError>>();
    let reader = AbortOnDrop(tokio::spawn(async move {
        let mut rd = BufReader::new(rd);
        loop {
            let next = read_line::<Request>(&mut rd).await.transpose();
            let end = !matches!(next, Some(Ok(_)));
            if let Some(r) = next {
                if req_tx.send(r).is_err() {
                    return;
                }
            }
            if end {
                return;
            }
        }
    }));
    let hello = Message::Hello {
        name: worker.name.clone(),
        recipe: worker.client_label().to_string(),
    };
    write_line(&mut wr, &hello).await?;
    let freeze = worker.freeze();
    let thawed = || async {
        if let Some(f) = &freeze {
            f.thawed().await;
        }
    };
    let result = loop {
        tokio::select! {
            biased;
            Some(n) = worker.notices.recv() => {
                thawed().await;
                write_line(&mut wr, &notice(n)).await?
            }
            req = requests.recv() => match req {
                None => break Ok(()),
                Some(Err(e)) => break Err(e),
                Some(Ok(req)) => {
                    // A frozen worker neither starts a request nor answers one.
                    thawed().await;
                    let outcome = worker.execute(req.op).await;
                    thawed().await;
                    while let Ok(n) = worker.notices.try_recv() {
                        write_line(&mut wr, &notice(n)).await?;
                    }
                    write_line(&mut wr, &Message::Reply { id: req.id, outcome }).await?;
                }
            },
        }
    };
    drop(reader);
    result
}

/// Ends the reader task with the connection loop, however that loop ends (even aborted), so the
/// stream closes and the driver sees the worker gone.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Runs a worker in-process and returns the driver's end of its connection.
pub fn spawn_local(worker: Worker) -> tokio::io::DuplexStream {
    spawn_killable(worker).0
}

/// [`spawn_local`], also returning the worker's task: aborting it is the in-process SIGKILL
/// (the worker, its client and its renewals are dropped; the driver sees the connection end).
pub fn spawn_killable(mut worker: Worker) -> (tokio::io::DuplexStream, tokio::task::AbortHandle) {
    let (driver_end, worker_end) = tokio::io::duplex(64 * 1024);
    let task = tokio::spawn(async move {
        if let Err(e) = serve_conn(&mut worker, worker_end).await {
            tracing::warn!(name = %worker.name, "local worker ended: {e}");
        }
    });
    (driver_end, task.abort_handle())
}

fn notice(n: Notice) -> Message {
    match n {
        Notice::Lost(n) => Message::LeaseLost {
            process: n.process,
            lock: n.hold.lock,
            owner: n.hold.owner,
            lease: n.hold.lease,
            token: n.hold.token,
            why: n.why,
        },
        Notice::Checked(c) => Message::Check {
            process: c.process,
            lock: c.hold.lock,
            owner: c.hold.owner,
            lease: c.hold.lease,
            token: c.hold.token,
            asked: c.asked,
            answered: c.answered,
            outcome: match c.answer.into_result() {
                Ok(belief) => Outcome {
                    held: Some(belief.held),
                    server_held: belief.server_held,
                    ..Outcome::bare(OpType::Ok)
                },
                Err(not_ok) => not_ok.into(),
            },
        },
    }
}
