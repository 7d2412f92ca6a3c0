//! The seam between a worker and the protected resource: one write carrying the writer's fence
//! token, answered with the resource's decision. The resource server and its network client live
//! in [`crate::resource`]; the worker only needs the [`ResourceWriter`] trait, which that client
//! implements here. [`MemoryResource`] is the in-process fake for pipeline tests, with the two
//! modes that matter: strict and none.

use crate::client::Completion;
use futures::future::BoxFuture;
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
}

impl MemoryResource {
    pub fn new(mode: MemoryMode, clock: results::RunClock) -> Self {
        Self {
            mode,
            clock,
            store: Arc::default(),
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

    fn decide(&self, req: WriteRequest) -> WriteOutcome {
        let mut store = self.store.lock().unwrap_or_else(|p| p.into_inner());
        let highest_before = store.highest.get(&req.key).copied();
        let stale = matches!((req.token, highest_before), (Some(t), Some(h)) if t < h);
        let result = if stale && self.mode == MemoryMode::Strict {
            WriteResult::RejectedStaleFence
        } else {
            WriteResult::Accepted
        };
        if result.is_accepted() {
            if let Some(t) = req.token {
                let h = store.highest.entry(req.key.clone()).or_insert(t);
                *h = (*h).max(t);
            }
        }
        let seq = store.log.len() as u64;
        store.log.push(ResourceEntry {
            seq,
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
        });
        WriteOutcome {
            result,
            highest_before,
        }
    }
}

impl ResourceWriter for MemoryResource {
    fn write(&mut self, req: WriteRequest) -> BoxFuture<'_, Completion<WriteOutcome>> {
        let outcome = self.decide(req);
        Box::pin(async move { Completion::Ok(outcome) })
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
}
