//! The seam between a worker and the protected resource: one write carrying the writer's fence
//! token, answered with the resource's decision. The resource server and its network client live
//! in [`crate::resource`]; the worker only needs the [`ResourceWriter`] trait, which that client
//! implements here. [`MemoryResource`] is the in-process fake for pipeline tests, with the two
//! modes that matter: strict and none.

use crate::client::Completion;
use futures::future::BoxFuture;
use results::jsonl::JsonlWriter;
use results::{ResourceEntry, WriteResult};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

pub use crate::resource::WriteRequest;

/// The resource's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriteOutcome {
    pub result: WriteResult,
    pub highest_before: Option<u64>,
}

/// A client of the protected resource. `Ok` carries the decision (accepted or rejected: both are
/// definite); `Info` when no decision came back (the write may still have been applied).
pub trait ResourceWriter: Send {
    fn write(&mut self, req: WriteRequest) -> BoxFuture<'_, Completion<WriteOutcome>>;
}

impl ResourceWriter for crate::resource::ResourceClient {
    fn write(&mut self, req: WriteRequest) -> BoxFuture<'_, Completion<WriteOutcome>> {
        Box::pin(async move {
            match crate::resource::ResourceClient::write(self, &req).await {
                Ok(r) => Completion::Ok(WriteOutcome {
                    result: r.result,
                    highest_before: r.highest_before,
                }),
                // A refusal certainly did nothing; anything else may have applied the write.
                Err(e @ crate::resource::ClientError::Refused { .. }) => Completion::fail(e),
                Err(e) => Completion::info(e),
            }
        })
    }
}

/// Whether the in-memory resource compares tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryMode {
    /// Reject a token lower than the highest accepted for the key.
    Strict,
    /// Accept everything (the unsafe contrast).
    None,
}

#[derive(Debug, Default)]
struct Store {
    highest: HashMap<String, u64>,
    log: Vec<ResourceEntry>,
}

/// An in-process resource shared by many workers; keeps its own log like `resource.jsonl`.
#[derive(Debug, Clone)]
pub struct MemoryResource {
    mode: MemoryMode,
    clock: results::RunClock,
    store: Arc<Mutex<Store>>,
    /// Where each decision is appended as it is made, before it is applied and answered (the
    /// run's `resource.jsonl`); none for a resource that only a test reads.
    log: Option<Arc<JsonlWriter>>,
}

impl MemoryResource {
    pub fn new(mode: MemoryMode, clock: results::RunClock) -> Self {
        Self {
            mode,
            clock,
            store: Arc::default(),
            log: None,
        }
    }

    /// The same resource, appending each decision to `log` before applying and answering it,
    /// as the resource server does: a decision the log could not take was not made.
    pub fn logging_to(self, log: JsonlWriter) -> Self {
        Self {
            log: Some(Arc::new(log)),
            ..self
        }
    }

    /// Every decision so far, in decision order.
    pub fn log(&self) -> Vec<ResourceEntry> {
        self.store
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .log
            .clone()
    }

    /// Decides `req`: recorded (in the log when there is one), then applied. A decision the log
    /// could not take is neither applied nor answered: the error says why.
    fn decide(&self, req: WriteRequest) -> Result<WriteOutcome, String> {
        let mut store = self.store.lock().unwrap_or_else(|p| p.into_inner());
        let highest_before = store.highest.get(&req.key).copied();
        let stale = matches!((req.token, highest_before), (Some(t), Some(h)) if t < h);
        let result = if stale && self.mode == MemoryMode::Strict {
            WriteResult::RejectedStaleFence
        } else {
            WriteResult::Accepted
        };
        let entry = ResourceEntry {
            seq: store.log.len() as u64,
            time: self.clock.now(),
            key: req.key,
            process: req.process,
            owner: req.owner,
            lease: req.lease,
            token: req.token,
            op_id: req.op_id,
            value: req.value,
            highest_before,
            result,
        };
        if let Some(log) = &self.log {
            log.append(&entry)
                .map_err(|e| format!("the resource could not record its decision: {e}"))?;
        }
        if result.is_accepted() {
            if let Some(t) = entry.token {
                let h = store.highest.entry(entry.key.clone()).or_insert(t);
                *h = (*h).max(t);
            }
        }
        store.log.push(entry);
        Ok(WriteOutcome {
            result,
            highest_before,
        })
    }
}

impl ResourceWriter for MemoryResource {
    fn write(&mut self, req: WriteRequest) -> BoxFuture<'_, Completion<WriteOutcome>> {
        let done = match self.decide(req) {
            Ok(outcome) => Completion::Ok(outcome),
            Err(why) => Completion::Fail(why),
        };
        Box::pin(async move { done })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(token: u64) -> WriteRequest {
        WriteRequest {
            lock: "l".into(),
            lock_key: None,
            key: "k".into(),
            value: serde_json::json!(format!("v{token}")),
            token: Some(token),
            op_id: format!("1-{token}"),
            owner: "o".into(),
            lease: "x".into(),
            process: 1,
        }
    }

    #[tokio::test]
    async fn strict_rejects_a_lower_token_and_none_accepts_it() {
        let clock = results::RunClock::start();
        let mut strict = MemoryResource::new(MemoryMode::Strict, clock);
        assert_eq!(
            strict.write(req(2)).await,
            Completion::Ok(WriteOutcome {
                result: WriteResult::Accepted,
                highest_before: None
            })
        );
        assert_eq!(
            strict.write(req(1)).await,
            Completion::Ok(WriteOutcome {
                result: WriteResult::RejectedStaleFence,
                highest_before: Some(2)
            })
        );
        let mut none = MemoryResource::new(MemoryMode::None, clock);
        none.write(req(2)).await;
        let c = none.write(req(1)).await;
        assert!(matches!(c, Completion::Ok(o) if o.result == WriteResult::Accepted));
        assert_eq!(none.log().len(), 2);
    }

    #[tokio::test]
    async fn each_decision_is_in_the_log_file_before_it_is_answered() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("resource.jsonl");
        let clock = results::RunClock::start();
        let mut r = MemoryResource::new(MemoryMode::Strict, clock)
            .logging_to(JsonlWriter::create(&path).unwrap());
        r.write(req(2)).await;
        let lines = std::fs::read_to_string(&path).unwrap();
        assert_eq!(lines.lines().count(), 1, "{lines}");
        r.write(req(1)).await;
        assert!(std::fs::read_to_string(&path)
            .unwrap()
            .contains("rejected-stale-fence"));
    }

    /// A full disk (`/dev/full` answers every write with ENOSPC): the decision is not made, not
    /// applied and not answered as made.
    #[tokio::test]
    async fn a_decision_the_log_cannot_take_is_not_made() {
        let clock = results::RunClock::start();
        let mut r = MemoryResource::new(MemoryMode::Strict, clock)
            .logging_to(JsonlWriter::append_to(std::path::Path::new("/dev/full")).unwrap());
        match r.write(req(5)).await {
            Completion::Fail(why) => assert!(why.contains("could not record"), "{why}"),
            other => panic!("{other:?}"),
        }
        assert!(r.log().is_empty());
        assert!(r.store.lock().unwrap().highest.is_empty());
    }
}
