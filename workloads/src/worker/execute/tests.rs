//! The worker's side of an indeterminate release: the client is told to abandon the hold it
//! could not release, as after any `info` (docs/design.md, "Client adapters": after an `info`
//! the process is retired and its client forgets the hold as if it had crashed).

use super::*;
use crate::client::Grant;
use crate::config::RawRecipeConfig;
use crate::fenced_write::{MemoryMode, MemoryResource};
use crate::kinds::RecipeKind;
use futures::future::BoxFuture;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// A client whose release never answers (the service stalled), counting abandons.
#[derive(Default)]
struct Stalled {
    abandoned: AtomicUsize,
}

impl Client for Stalled {
    fn acquire<'a>(&'a self, lock: &'a str) -> BoxFuture<'a, Completion<Grant>> {
        Box::pin(async move {
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
    fn abandon<'a>(&'a self, _hold: &'a Grant) -> BoxFuture<'a, ()> {
        self.abandoned.fetch_add(1, Ordering::SeqCst);
        Box::pin(async {})
    }
}

#[tokio::test]
async fn a_release_that_timed_out_abandons_the_hold_in_the_client() {
    let client = Arc::new(Stalled::default());
    let cfg = RawRecipeConfig {
        ttl: Some(Duration::from_secs(2)),
        ..RawRecipeConfig::default()
    }
    .validate(RecipeKind::Memory)
    .unwrap();
    let resource = MemoryResource::new(MemoryMode::Strict, results::RunClock::start());
    let mut w = Worker::new(
        "worker-1",
        client.clone(),
        Box::new(resource),
        cfg,
        Discipline::default(),
    );
    let got = w
        .execute(Op::Acquire {
            process: 0,
            lock: "l".into(),
        })
        .await;
    assert_eq!(got.kind, OpType::Ok);
    let released = w.execute(Op::Release { process: 0 }).await;
    assert_eq!(released.kind, OpType::Info, "{released:?}");
    assert_eq!(client.abandoned.load(Ordering::SeqCst), 1);
    // The driver's Abandon after the info finds nothing more to forget.
    w.execute(Op::Abandon).await;
    assert_eq!(client.abandoned.load(Ordering::SeqCst), 1);
}
