//! The worker's side of an indeterminate acquire or release: after any `info` the driver retires
//! the process and sends `Abandon`, and the client forgets whatever it may hold as if it had
//! crashed (docs/design.md, "history.jsonl"), even though the worker itself holds nothing.

use super::*;
use crate::client::Grant;
use crate::config::RawRecipeConfig;
use crate::fenced_write::{MemoryMode, MemoryResource};
use crate::kinds::RecipeKind;
use futures::future::BoxFuture;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// A client whose release never answers (the service stalled), counting abandons; its acquire
/// ends `info` when `lost_acquire` is set (a reply lost after the request landed).
#[derive(Default)]
struct Stalled {
    abandoned: AtomicUsize,
    lost_acquire: std::sync::atomic::AtomicBool,
}

impl Client for Stalled {
    fn acquire<'a>(&'a self, lock: &'a str) -> BoxFuture<'a, Completion<Grant>> {
        Box::pin(async move {
            if self.lost_acquire.load(Ordering::SeqCst) {
                return Completion::info("create: connection loss");
            }
            Completion::Ok(Grant {
                lock: lock.to_string(),
                owner: "me".into(),
                lease: "node-1".into(),
                lock_key: None,
                token: Some(1),
                valid_until: Instant::now() + Duration::from_secs(5),
            })
        })
    }
    fn renew<'a>(&'a self, _hold: &'a Grant) -> BoxFuture<'a, Completion<Duration>> {
        Box::pin(async { Completion::Ok(Duration::from_secs(5)) })
    }
    fn release<'a>(&'a self, _hold: &'a Grant) -> BoxFuture<'a, Completion<()>> {
        Box::pin(std::future::pending())
    }
    fn abandon(&self) -> BoxFuture<'_, ()> {
        self.abandoned.fetch_add(1, Ordering::SeqCst);
        Box::pin(async {})
    }
}

fn worker(client: Arc<Stalled>) -> Worker {
    let cfg = RawRecipeConfig {
        ttl: Some(Duration::from_secs(2)),
        ..RawRecipeConfig::default()
    }
    .validate(RecipeKind::Memory)
    .unwrap();
    let resource = MemoryResource::new(MemoryMode::Strict, results::RunClock::start());
    Worker::new(
        "worker-1",
        client,
        Box::new(resource),
        cfg,
        Discipline::default(),
    )
}

fn acquire() -> Op {
    Op::Acquire {
        process: 0,
        lock: "l".into(),
    }
}

#[tokio::test]
async fn after_a_release_that_timed_out_the_client_abandons_what_it_may_hold() {
    let client = Arc::new(Stalled::default());
    let mut w = worker(client.clone());
    assert_eq!(w.execute(acquire()).await.kind, OpType::Ok);
    let released = w.execute(Op::Release { process: 0 }).await;
    assert_eq!(released.kind, OpType::Info, "{released:?}");
    // The hold went with the release; the driver's Abandon still reaches the client.
    w.execute(Op::Abandon).await;
    assert_eq!(client.abandoned.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn after_an_acquire_that_ended_info_the_client_abandons_what_it_may_hold() {
    let client = Arc::new(Stalled::default());
    client.lost_acquire.store(true, Ordering::SeqCst);
    let mut w = worker(client.clone());
    assert_eq!(w.execute(acquire()).await.kind, OpType::Info);
    w.execute(Op::Abandon).await;
    assert_eq!(client.abandoned.load(Ordering::SeqCst), 1);
}
