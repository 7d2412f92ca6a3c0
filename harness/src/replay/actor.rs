//! One scenario worker on the host side: a task that owns the worker's connection and performs
//! its operations one at a time, recording each invoke and completion in the history with
//! Jepsen's semantics (as `workloads::driver::Session` does, but writing the scenario's own
//! value, `write v1`). The executor sends an operation and holds a receiver for its completion
//! instead of awaiting it, so an operation sent to a paused worker stays open while the scenario
//! goes on, and completes after the worker is resumed. A worker whose connection ends (killed)
//! gets an `exit` event at once, open operation first closed with `info`.

use results::{Event, OpType, Process, F};
use tokio::sync::{mpsc, oneshot};
use workloads::driver::{Gone, ProcessAllocator, Recorder, WorkerConn};
use workloads::protocol::{Op, Outcome};

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

/// The hold as the history recorded its acquisition.
#[derive(Debug, Clone, Default)]
struct Held {
    owner: Option<String>,
    lease: Option<String>,
    token: Option<u64>,
}

/// The executor's handle on one worker's task.
#[derive(Debug)]
pub struct Actor {
    tx: mpsc::UnboundedSender<(Cmd, oneshot::Sender<Done>)>,
}

impl Actor {
    /// Starts the task for a connected worker recorded as `process`.
    pub fn spawn(
        conn: WorkerConn,
        process: u32,
        lock: String,
        key: String,
        alloc: ProcessAllocator,
        rec: Recorder,
    ) -> Actor {
        let (tx, rx) = mpsc::unbounded_channel();
        let task = Task {
            conn,
            process,
            lock,
            key,
            alloc,
            rec,
            held: None,
            dead: false,
            seq: 0,
        };
        tokio::spawn(task.serve(rx));
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

struct Task {
    conn: WorkerConn,
    process: u32,
    lock: String,
    key: String,
    alloc: ProcessAllocator,
    rec: Recorder,
    held: Option<Held>,
    dead: bool,
    seq: u64,
}

impl Task {
    async fn serve(mut self, mut rx: mpsc::UnboundedReceiver<(Cmd, oneshot::Sender<Done>)>) {
        loop {
            if self.dead {
                // Every later operation of a dead worker: nothing is invoked.
                while let Some((_, reply)) = rx.recv().await {
                    let _ = reply.send(Done {
                        outcome: None,
                        token: None,
                        index: None,
                    });
                }
                return;
            }
            tokio::select! {
                next = rx.recv() => match next {
                    Some((cmd, reply)) => {
                        let done = self.op(cmd).await;
                        let _ = reply.send(done);
                    }
                    None => return,
                },
                gone = self.conn.closed() => self.exit(gone.0),
            }
        }
    }

    fn record(&self, e: Event) -> Option<u64> {
        match self.rec.record(e) {
            Ok(i) => Some(i),
            Err(err) => {
                eprintln!("fencecheck replay: cannot record to history: {err}");
                None
            }
        }
    }

    fn exit(&mut self, why: String) {
        let mut exit = self.rec.event(self.process, OpType::Info, F::Exit);
        exit.error = Some(why);
        self.record(exit);
        self.dead = true;
        self.held = None;
    }

    fn invoke(&mut self, cmd: &Cmd) -> (Event, Op) {
        let p = self.process;
        let hold = self.held.clone().unwrap_or_default();
        match cmd {
            Cmd::Acquire => {
                let mut e = self.rec.event(p, OpType::Invoke, F::Acquire);
                e.lock = Some(self.lock.clone());
                let op = Op::Acquire {
                    process: p,
                    lock: self.lock.clone(),
                };
                (e, op)
            }
            Cmd::Write(value) => {
                self.seq += 1;
                let op_id = format!("{p}-{}", self.seq);
                let mut e = self.rec.event(p, OpType::Invoke, F::Write);
                e.lock = Some(self.lock.clone());
                e.owner = hold.owner;
                e.lease = hold.lease;
                e.token = hold.token;
                e.key = Some(self.key.clone());
                e.value = Some(serde_json::json!(value));
                e.op_id = Some(op_id.clone());
                let op = Op::Write {
                    process: p,
                    key: self.key.clone(),
                    value: serde_json::json!(value),
                    op_id,
                };
                (e, op)
            }
            Cmd::Release => {
                let mut e = self.rec.event(p, OpType::Invoke, F::Release);
                e.lock = Some(self.lock.clone());
                if let Some(h) = self.held.take() {
                    e.owner = h.owner;
                    e.lease = h.lease;
                    e.token = h.token;
                }
                (e, Op::Release { process: p })
            }
        }
    }

    async fn op(&mut self, cmd: Cmd) -> Done {
        if let Some(Gone(why)) = self.conn.gone() {
            self.exit(why);
        }
        if self.dead {
            return Done {
                outcome: None,
                token: None,
                index: None,
            };
        }
        let (invoke, op) = self.invoke(&cmd);
        let template = invoke.clone();
        self.record(invoke);
        match self.conn.call(op).await {
            Ok(outcome) => {
                let mut done = template;
                done.kind = outcome.kind;
                done.owner = outcome.owner.clone().or(done.owner);
                done.lease = outcome.lease.clone().or(done.lease);
                done.token = outcome.token.or(done.token);
                done.result = outcome.result;
                done.highest_before = outcome.highest_before;
                done.error = outcome.error.clone();
                let token = done.token;
                let index = self.record(done);
                if cmd == Cmd::Acquire && outcome.kind == OpType::Ok {
                    self.held = Some(Held {
                        owner: outcome.owner.clone(),
                        lease: outcome.lease.clone(),
                        token: outcome.token,
                    });
                }
                if outcome.kind == OpType::Info {
                    // Indeterminate: the process is retired, the worker forgets any hold.
                    self.process = self.alloc.next();
                    self.held = None;
                    let _ = self.conn.call(Op::Abandon).await;
                }
                Done {
                    outcome: Some(outcome),
                    token,
                    index,
                }
            }
            Err(Gone(why)) => {
                let mut open = template;
                open.kind = OpType::Info;
                open.error = Some(format!("worker died: {why}"));
                let token = open.token;
                let index = self.record(open);
                self.exit(why);
                Done {
                    outcome: None,
                    token,
                    index,
                }
            }
        }
    }
}

/// A nemesis event (`start-<fault>` / `stop-<fault>`) describing what the scenario did.
pub fn nemesis_event(rec: &Recorder, start: bool, fault: &str, targets: &[String]) -> Event {
    let f = if start {
        F::Start(fault.to_string())
    } else {
        F::Stop(fault.to_string())
    };
    let mut e = Event::new(rec.clock.now(), Process::Nemesis, OpType::Info, f);
    e.value = Some(serde_json::json!({ "fault": fault, "targets": targets }));
    e
}
