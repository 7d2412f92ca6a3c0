//! One scenario worker on the host side: a task that owns the worker's [`Session`] — the same
//! Jepsen process the run's workload loop drives — and performs the scenario's operations on it
//! one at a time (writing the scenario's own value, `write v1`). The executor sends an operation
//! and holds a receiver for its completion instead of awaiting it, so an operation sent to a
//! paused worker stays open while the scenario goes on, and completes after the worker is
//! resumed. A worker whose connection ends (killed) gets its `exit` event at once.

use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use workloads::driver::{Session, Step};
use workloads::protocol::Outcome;

/// What the scenario asks a worker to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cmd {
    Acquire,
    Write(String),
    Release,
}

/// The end of one operation.
#[derive(Debug, Clone)]
pub struct Done {
    /// The worker's answer; `None` when it died first.
    pub outcome: Option<Outcome>,
    /// The token the operation carried (a write's or release's hold) or got (an acquire).
    pub token: Option<u64>,
    /// The history index of the completion.
    pub index: Option<u64>,
}

/// The executor's handle on one worker's task.
#[derive(Debug)]
pub struct Actor {
    tx: mpsc::UnboundedSender<(Cmd, oneshot::Sender<Done>)>,
}

impl Actor {
    /// Starts the task for a worker's session; its writes go to `key`, its acquires to `lock`.
    pub fn spawn(session: Session, lock: String, key: String) -> Actor {
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(serve(session, lock, key, rx));
        Actor { tx }
    }

    /// Sends one operation; the receiver yields its completion whenever the worker answers.
    pub fn send(&self, cmd: Cmd) -> oneshot::Receiver<Done> {
        let (done_tx, done_rx) = oneshot::channel();
        // A closed task drops the sender: the receiver then reports the worker gone.
        let _ = self.tx.send((cmd, done_tx));
        done_rx
    }
}

/// How long an idle worker waits between looks at its connection (it notices a death at once).
const IDLE: Duration = Duration::from_secs(3600);

async fn serve(
    mut session: Session,
    lock: String,
    key: String,
    mut rx: mpsc::UnboundedReceiver<(Cmd, oneshot::Sender<Done>)>,
) {
    let mut seq = 0;
    loop {
        let alive = !session.is_dead();
        tokio::select! {
            next = rx.recv() => match next {
                Some((cmd, reply)) => {
                    let done = op(&mut session, &lock, &key, &mut seq, cmd).await;
                    let _ = reply.send(done);
                }
                None => return,
            },
            // Between operations: a worker that dies gets its `exit` recorded when it dies.
            idled = session.idle(IDLE), if alive => {
                if let Err(e) = idled {
                    eprintln!("fencecheck replay: cannot record to history: {e}");
                }
            }
        }
    }
}

async fn op(session: &mut Session, lock: &str, key: &str, seq: &mut u64, cmd: Cmd) -> Done {
    let step = match cmd {
        Cmd::Acquire => session.acquire(lock).await,
        Cmd::Write(value) => {
            *seq += 1;
            session
                .write_value(key, *seq, Some(serde_json::json!(value)))
                .await
        }
        Cmd::Release => session.release().await,
    };
    let last = session.last();
    let (token, index) = (last.and_then(|c| c.token), last.map(|c| c.index));
    match step {
        Ok(Step::Done(outcome)) => Done {
            outcome: Some(outcome),
            token,
            index,
        },
        Ok(Step::Died) => Done {
            outcome: None,
            token,
            index,
        },
        Err(e) => {
            eprintln!("fencecheck replay: cannot record to history: {e}");
            Done {
                outcome: None,
                token: None,
                index: None,
            }
        }
    }
}
