//! One worker as a Jepsen process: [`Session`] records each operation's invoke, sends it, and
//! records its completion. `info` retires the process id (the worker continues under the next
//! of its own [`ProcessIds`] and forgets any hold); a dead worker gets its open operation closed
//! with `info` and an `exit` event. Used by the workload loop, by replay's scripted actors and,
//! one operation at a time, by tests that script an incident.

use super::{Gone, Hangs, Recorder, WorkerConn};
use crate::app::OnError;
use crate::protocol::{Op, Outcome};
use results::jsonl::JsonlError;
use results::{Event, OpType, F};

/// The process ids of one worker, as Jepsen gives them: worker `i` of `n` is process `i`, and
/// each time a process is retired (an `info`, a death) it comes back as itself plus `n`. Which
/// worker gets which id (and so which random stream) depends on the run, never on timing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessIds {
    next: u32,
    stride: u32,
}

impl ProcessIds {
    /// Worker `worker` (0-based) of `workers`.
    pub fn of_worker(worker: u32, workers: u32) -> Self {
        ProcessIds {
            next: worker,
            stride: workers.max(1),
        }
    }

    /// The next id, used from now on.
    pub fn take(&mut self) -> u32 {
        let p = self.next;
        self.next = self.next.saturating_add(self.stride);
        p
    }
}

/// What the history says about an operation.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Completed (`ok`, `fail` or `info`); the outcome as the worker reported it.
    Done(Outcome),
    /// The worker died before answering (`info` + `exit` were recorded).
    Died,
}

impl Step {
    pub fn kind(&self) -> Option<OpType> {
        match self {
            Step::Done(o) => Some(o.kind),
            Step::Died => None,
        }
    }
}

/// The current hold as the history recorded its acquisition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedGrant {
    pub lock: String,
    pub owner: Option<String>,
    pub lease: Option<String>,
    pub token: Option<u64>,
}

/// A worker driven as a Jepsen process.
#[derive(Debug)]
pub struct Session {
    conn: WorkerConn,
    process: u32,
    ids: ProcessIds,
    rec: Recorder,
    held: Option<RecordedGrant>,
    dead: bool,
    last: Option<Completed>,
    /// What the application does with its client after an `info`.
    on_error: OnError,
    /// Whether the `hang-work` fault holds this worker's next operation back.
    hangs: Hangs,
}

/// Where the last operation's completion landed in the history, and the token it carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completed {
    pub index: u64,
    pub token: Option<u64>,
}

impl Session {
    /// A session recorded under the next of `ids`.
    pub fn new(conn: WorkerConn, mut ids: ProcessIds, rec: Recorder) -> Self {
        Self {
            conn,
            process: ids.take(),
            ids,
            rec,
            held: None,
            dead: false,
            last: None,
            on_error: OnError::Crash,
            hangs: Hangs::default(),
        }
    }

    /// Waits at `hangs`' gate for this worker before each operation (`hang-work`).
    pub fn hung_by(mut self, hangs: &Hangs) -> Self {
        self.hangs = hangs.clone();
        self
    }

    /// Keeps the worker's lock client after an `info` (the profile's `on_error: keep`) instead
    /// of ending it: the process id is still retired, as Jepsen's history requires, and the
    /// next operation goes through the same client.
    pub fn on_error(mut self, on_error: OnError) -> Self {
        self.on_error = on_error;
        self
    }

    /// The ids this worker has left (a new session after its death continues from them).
    pub fn ids(&self) -> ProcessIds {
        self.ids
    }

    /// The last operation's completion (or, after a death, the `info` that closed it).
    pub fn last(&self) -> Option<Completed> {
        self.last
    }

    /// The process id operations are recorded under now.
    pub fn process(&self) -> u32 {
        self.process
    }

    pub fn held(&self) -> Option<&RecordedGrant> {
        self.held.as_ref()
    }

    pub fn is_dead(&self) -> bool {
        self.dead
    }

    pub fn name(&self) -> &str {
        &self.conn.name
    }

    pub fn recorder(&self) -> &Recorder {
        &self.rec
    }

    pub async fn acquire(&mut self, lock: &str) -> Result<Step, JsonlError> {
        let mut inv = self.rec.event(self.process, OpType::Invoke, F::Acquire);
        inv.lock = Some(lock.to_string());
        let op = Op::Acquire {
            process: self.process,
            lock: lock.to_string(),
        };
        let step = self.op(inv, op).await?;
        if let Step::Done(o) = &step {
            if o.kind == OpType::Ok {
                self.held = Some(RecordedGrant {
                    lock: lock.to_string(),
                    owner: o.owner.clone(),
                    lease: o.lease.clone(),
                    token: o.token,
                });
            }
        }
        Ok(step)
    }

    /// Writes to `key` with the current hold's token; the value is the `op_id`,
    /// `<process>-<seq>`.
    pub async fn write(&mut self, key: &str, seq: u64) -> Result<Step, JsonlError> {
        self.write_value(key, seq, None).await
    }

    /// [`Session::write`] with a value of the caller's (a scenario's `write v1`).
    pub async fn write_value(
        &mut self,
        key: &str,
        seq: u64,
        value: Option<serde_json::Value>,
    ) -> Result<Step, JsonlError> {
        let op_id = format!("{}-{seq}", self.process);
        let value = value.unwrap_or_else(|| serde_json::json!(op_id));
        let mut inv = self.rec.event(self.process, OpType::Invoke, F::Write);
        if let Some(h) = &self.held {
            inv.lock = Some(h.lock.clone());
            inv.token = h.token;
            inv.owner = h.owner.clone();
            inv.lease = h.lease.clone();
        }
        inv.key = Some(key.to_string());
        inv.value = Some(value.clone());
        inv.op_id = Some(op_id.clone());
        let op = Op::Write {
            process: self.process,
            key: key.to_string(),
            value,
            op_id,
        };
        self.op(inv, op).await
    }

    /// Increments counter `key` (read, `work`, write back) under the current hold; the `ok`
    /// completion carries the value written.
    pub async fn increment(
        &mut self,
        key: &str,
        work: std::time::Duration,
    ) -> Result<Step, JsonlError> {
        let mut inv = self.rec.event(self.process, OpType::Invoke, F::Increment);
        if let Some(h) = &self.held {
            inv.lock = Some(h.lock.clone());
            inv.token = h.token;
            inv.owner = h.owner.clone();
            inv.lease = h.lease.clone();
        }
        inv.key = Some(key.to_string());
        let op = Op::Increment {
            process: self.process,
            key: key.to_string(),
            work_ms: work.as_millis() as u64,
        };
        self.op(inv, op).await
    }

    /// Reads counter `key` (no hold needed); the `ok` completion carries the value read.
    pub async fn read(&mut self, key: &str) -> Result<Step, JsonlError> {
        let mut inv = self.rec.event(self.process, OpType::Invoke, F::Read);
        inv.key = Some(key.to_string());
        let op = Op::Read {
            process: self.process,
            key: key.to_string(),
        };
        self.op(inv, op).await
    }

    pub async fn release(&mut self) -> Result<Step, JsonlError> {
        let mut inv = self.rec.event(self.process, OpType::Invoke, F::Release);
        if let Some(h) = self.held.take() {
            inv.lock = Some(h.lock);
            inv.owner = h.owner;
            inv.lease = h.lease;
            inv.token = h.token;
        }
        let op = Op::Release {
            process: self.process,
        };
        self.op(inv, op).await
    }

    /// Waits up to `d` (a holder's work, a pause between cycles); a worker that dies meanwhile
    /// gets its `exit` event when it dies, not at the next operation. Returns `Died` then.
    pub async fn idle(&mut self, d: std::time::Duration) -> Result<Option<Step>, JsonlError> {
        if self.dead {
            return Ok(Some(Step::Died));
        }
        tokio::select! {
            _ = tokio::time::sleep(d) => Ok(None),
            gone = self.conn.closed() => {
                self.exit(gone.0)?;
                Ok(Some(Step::Died))
            }
        }
    }

    /// Waits while the worker's work is hung; how it went away, if it did meanwhile.
    async fn unhung(&mut self) -> Option<Gone> {
        if let Some(gone) = self.conn.gone() {
            return Some(gone);
        }
        let mut gate = self.hangs.gate(&self.conn.name);
        tokio::select! {
            _ = gate.wait_for(|hung| !*hung) => None,
            gone = self.conn.closed() => Some(gone),
        }
    }

    fn exit(&mut self, why: String) -> Result<(), JsonlError> {
        let mut exit = self.rec.event(self.process, OpType::Info, F::Exit);
        exit.error = Some(why);
        self.rec.record(exit)?;
        self.dead = true;
        self.held = None;
        Ok(())
    }

    /// Records the invoke, calls, records the completion (or the death).
    async fn op(&mut self, invoke: Event, op: Op) -> Result<Step, JsonlError> {
        self.last = None;
        if self.dead {
            return Ok(Step::Died);
        }
        if let Some(Gone(why)) = self.unhung().await {
            // Died while idle or hung: nothing is invoked on a dead worker.
            self.exit(why)?;
            return Ok(Step::Died);
        }
        let template = invoke.clone();
        self.rec.record(invoke)?;
        match self.conn.call(op).await {
            Ok(outcome) => {
                let done = outcome.complete(template);
                let token = done.token;
                let index = self.rec.record(done)?;
                self.last = Some(Completed { index, token });
                if outcome.kind == OpType::Info {
                    self.retire().await;
                }
                Ok(Step::Done(outcome))
            }
            Err(Gone(why)) => {
                let mut open = template;
                open.kind = OpType::Info;
                open.error = Some(format!("worker died: {why}"));
                let token = open.token;
                let index = self.rec.record(open)?;
                self.last = Some(Completed { index, token });
                self.exit(why)?;
                Ok(Step::Died)
            }
        }
    }

    /// After `info`: the process id is retired and the worker forgets any hold it may have;
    /// its client ends with it or lives on, as the application does.
    async fn retire(&mut self) {
        self.process = self.ids.take();
        self.held = None;
        let op = match self.on_error {
            OnError::Crash => Op::Abandon,
            OnError::Keep => Op::Forget,
        };
        let _ = self.conn.call(op).await;
    }
}
