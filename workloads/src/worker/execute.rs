//! What a worker does with one request: acquire / write / release / abandon against its recipe
//! and its resource client, turning every outcome into a history-shaped [`Outcome`]. One request
//! at a time, like a Jepsen process; the hold's [`Tracker`] runs beside it.

use crate::app::Ask;
use crate::client::{within, Client, NotOk, NOT_OWNER};
use crate::config::{Discipline, RecipeConfig};
use crate::counter_guard::Counter;
use crate::fenced_write::{ResourceWriter, WriteRequest};
use crate::ownership::{Keeping, Notice, Notices, Tracker, WriteGate};
use crate::protocol::{Op, Outcome};
use results::{OpResult, OpType};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::mpsc;

/// Everything a worker process is: its name, its recipe client, its resource client, its hold.
pub struct Worker {
    pub name: String,
    client: Arc<dyn Client>,
    resource: Box<dyn ResourceWriter>,
    cfg: RecipeConfig,
    /// What the worker's hello says it runs: its recipe, or the library behind its adapter.
    client_label: String,
    discipline: Discipline,
    /// Whether the application asks its library before each write.
    ask: Ask,
    current: Option<Tracker>,
    counter: Option<Arc<dyn Counter>>,
    /// In process only: the gate a pause closes (a container worker is stopped by the kernel).
    freeze: Option<super::Freeze>,
    notices_tx: Notices,
    pub(crate) notices: mpsc::UnboundedReceiver<Notice>,
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker")
            .field("name", &self.name)
            .field("client", &self.client_label)
            .finish()
    }
}

impl Worker {
    pub fn new(
        name: impl Into<String>,
        client: Arc<dyn Client>,
        resource: Box<dyn ResourceWriter>,
        cfg: RecipeConfig,
        discipline: Discipline,
    ) -> Self {
        let (tx, notices) = mpsc::unbounded_channel();
        let notices_tx = Notices {
            tx,
            clock: results::RunClock::start(),
        };
        Worker {
            name: name.into(),
            client,
            resource,
            client_label: cfg.recipe.to_string(),
            cfg,
            discipline,
            ask: Ask::Never,
            current: None,
            counter: None,
            freeze: None,
            notices_tx,
            notices,
        }
    }

    /// Makes the application ask its library before each write (its profile's `ask`).
    pub fn with_ask(mut self, ask: Ask) -> Self {
        self.ask = ask;
        self
    }

    /// Gives the worker the counter store its `increment` and `read` operations use.
    pub fn with_counter(mut self, counter: Arc<dyn Counter>) -> Self {
        self.counter = Some(counter);
        self
    }

    /// Stamps what the worker records itself (its keep-alive's checks) on the run's clock
    /// (without it, on a clock started with the worker).
    pub fn with_clock(mut self, clock: results::RunClock) -> Self {
        self.notices_tx.clock = clock;
        self
    }

    /// Makes the worker stop at `freeze` while it is frozen (the in-process pause).
    pub fn with_freeze(mut self, freeze: super::Freeze) -> Self {
        self.freeze = Some(freeze);
        self
    }

    /// The gate an in-process pause closes, if the worker has one.
    pub fn freeze(&self) -> Option<super::Freeze> {
        self.freeze.clone()
    }

    /// Names the lock client in the worker's hello (a library behind an adapter, say).
    pub fn with_client_label(mut self, label: impl Into<String>) -> Self {
        self.client_label = label.into();
        self
    }

    /// What the worker runs: its recipe, or the library behind its adapter.
    pub fn client_label(&self) -> &str {
        &self.client_label
    }

    /// Executes one request to completion.
    pub async fn execute(&mut self, op: Op) -> Outcome {
        match op {
            Op::Acquire { process, lock } => self.acquire(process, &lock).await,
            Op::Write {
                process,
                key,
                value,
                op_id,
            } => self.write(process, key, value, op_id).await,
            Op::Increment {
                process: _,
                key,
                work_ms,
            } => {
                let work = std::time::Duration::from_millis(work_ms);
                let (counter, hold) = (self.counter.as_ref(), self.current.as_ref());
                super::increment::increment(counter, hold, self.cfg.op_timeout, &key, work).await
            }
            Op::Read { process: _, key } => {
                super::increment::read(self.counter.as_ref(), self.cfg.op_timeout, &key).await
            }
            Op::Release { process: _ } => self.release().await,
            Op::Abandon => {
                // With or without a hold: an acquire or a release that ended `info` took none
                // with it, but may have left one behind in the client (zk-lock's node of a live
                // session blocked every later acquire until this was so; docs/findings.md).
                if let Some(mut t) = self.current.take() {
                    t.stop();
                }
                self.client.abandon().await;
                Outcome::bare(OpType::Ok)
            }
            Op::Forget => {
                // The application goes on with the same client: only the hold is forgotten.
                if let Some(mut t) = self.current.take() {
                    t.stop();
                }
                self.client.forget().await;
                Outcome::bare(OpType::Ok)
            }
        }
    }

    async fn acquire(&mut self, process: u32, lock: &str) -> Outcome {
        if let Some(t) = &self.current {
            return Outcome::with_error(
                OpType::Fail,
                format!(
                    "not sent: already holding lease {}; release first",
                    t.hold().lease
                ),
            );
        }
        let sent = Instant::now();
        let limit = self.cfg.acquire_timeout + self.cfg.op_timeout;
        match within(limit, "acquire", self.client.acquire(lock))
            .await
            .into_result()
        {
            Ok(hold) => {
                let out = Outcome {
                    owner: Some(hold.owner.clone()),
                    lease: Some(hold.lease.clone()),
                    token: hold.token,
                    read_back: hold.read_back.clone(),
                    ..Outcome::bare(OpType::Ok)
                };
                self.current = Some(Tracker::start(
                    self.client.clone(),
                    hold,
                    process,
                    sent,
                    self.cfg.clone(),
                    Keeping {
                        discipline: self.discipline,
                        ask: self.ask,
                    },
                    self.notices_tx.clone(),
                ));
                out
            }
            Err(not_ok) => not_ok.into(),
        }
    }

    async fn write(
        &mut self,
        process: u32,
        key: String,
        value: serde_json::Value,
        op_id: String,
    ) -> Outcome {
        let Some(t) = &self.current else {
            return Outcome::with_error(OpType::Fail, "not sent: no hold");
        };
        if let WriteGate::Refuse(why) = t.gate_write().await {
            return Outcome::with_error(OpType::Fail, why);
        }
        let hold = t.hold();
        let req = WriteRequest {
            lock: hold.lock.clone(),
            lock_key: hold.lock_key.clone(),
            key,
            value,
            token: hold.token,
            op_id,
            owner: hold.owner.clone(),
            lease: hold.lease.clone(),
            process,
        };
        match within(self.cfg.op_timeout, "write", self.resource.write(req))
            .await
            .into_result()
        {
            Ok(o) => Outcome {
                result: Some(o.result.into()),
                highest_before: o.highest_before,
                ..Outcome::bare(if o.result.is_accepted() {
                    OpType::Ok
                } else {
                    OpType::Fail
                })
            },
            Err(not_ok) => not_ok.into(),
        }
    }

    async fn release(&mut self) -> Outcome {
        let Some(mut t) = self.current.take() else {
            return Outcome::with_error(OpType::Fail, "not sent: no hold");
        };
        t.stop();
        match within(
            self.cfg.op_timeout,
            "release",
            self.client.release(t.hold()),
        )
        .await
        .into_result()
        {
            Ok(()) => Outcome {
                result: Some(OpResult::Released),
                ..Outcome::bare(OpType::Ok)
            },
            Err(NotOk::Fail(e)) if e == NOT_OWNER => Outcome {
                result: Some(OpResult::ReleaseRejectedNotOwner),
                ..Outcome::bare(OpType::Fail)
            },
            Err(not_ok) => not_ok.into(),
        }
    }
}

#[cfg(test)]
mod tests;
