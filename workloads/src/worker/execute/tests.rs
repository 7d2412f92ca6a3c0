//! The worker's side of an indeterminate acquire or release: after any `info` the driver retires
//! the process and sends `Abandon`, and the client forgets whatever it may hold as if it had
//! crashed (docs/design.md, "history.jsonl"), even though the worker itself holds nothing.

use super::*;
use crate::client::{Belief, Completion, Grant};
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
                read_back: None,
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
    worker_of(client, Discipline::default())
}

/// A worker over `client` (ttl 2 s) writing to a strict in-process register.
fn worker_of(client: Arc<dyn Client>, discipline: Discipline) -> Worker {
    let cfg = RawRecipeConfig {
        ttl: Some(Duration::from_secs(2)),
        ..RawRecipeConfig::default()
    }
    .validate(RecipeKind::Memory)
    .unwrap();
    let resource = MemoryResource::new(MemoryMode::Strict, results::RunClock::start());
    Worker::new("worker-1", client, Box::new(resource), cfg, discipline)
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

/// A library behind its adapter, as the worker sees it: it judges its own hold, and when asked
/// it says it still holds the lock; its grants are stale on the worker's clock from the start
/// (as after a pause longer than the lease).
#[derive(Default)]
struct Believer {
    asked: AtomicUsize,
    forgotten: AtomicUsize,
}

impl Client for Believer {
    fn acquire<'a>(&'a self, lock: &'a str) -> BoxFuture<'a, Completion<Grant>> {
        Box::pin(async move {
            Completion::Ok(Grant {
                lock: lock.to_string(),
                owner: "me".into(),
                lease: "node-1".into(),
                lock_key: None,
                read_back: None,
                token: Some(1),
                valid_until: Instant::now(),
            })
        })
    }
    fn renew<'a>(&'a self, _hold: &'a Grant) -> BoxFuture<'a, Completion<Duration>> {
        Box::pin(async { Completion::Ok(Duration::from_secs(2)) })
    }
    fn release<'a>(&'a self, _hold: &'a Grant) -> BoxFuture<'a, Completion<()>> {
        Box::pin(async { Completion::Ok(()) })
    }
    fn ask<'a>(&'a self, _hold: &'a Grant) -> Option<BoxFuture<'a, Completion<Belief>>> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        Some(Box::pin(async { Completion::Ok(Belief::held(true)) }))
    }
    fn judges_its_own_hold(&self) -> bool {
        true
    }
    fn forget(&self) -> BoxFuture<'_, ()> {
        self.forgotten.fetch_add(1, Ordering::SeqCst);
        Box::pin(async {})
    }
}

fn believer_worker(client: Arc<Believer>, ask: Ask) -> Worker {
    worker_of(client, "stop".parse().unwrap()).with_ask(ask)
}

fn write() -> Op {
    Op::Write {
        process: 0,
        key: "k".into(),
        value: serde_json::json!("v"),
        op_id: "0-1".into(),
    }
}

#[tokio::test]
async fn an_application_that_asks_its_library_writes_on_its_word_and_the_answer_is_recorded() {
    // The worker's own clock says the hold lapsed: it refuses the write and asks nobody.
    let silent = Arc::new(Believer::default());
    let mut w = believer_worker(silent.clone(), Ask::Never);
    assert_eq!(w.execute(acquire()).await.kind, OpType::Ok);
    let refused = w.execute(write()).await;
    assert_eq!(refused.kind, OpType::Fail, "{refused:?}");
    assert_eq!(silent.asked.load(Ordering::SeqCst), 0);
    // The application asks before it writes: the library's answer decides, and is recorded.
    let asking = Arc::new(Believer::default());
    let mut w = believer_worker(asking.clone(), Ask::BeforeWrite);
    assert_eq!(w.execute(acquire()).await.kind, OpType::Ok);
    let written = w.execute(write()).await;
    assert_eq!(written.kind, OpType::Ok, "{written:?}");
    assert_eq!(asking.asked.load(Ordering::SeqCst), 1);
    let told = std::iter::from_fn(|| w.notices.try_recv().ok())
        .filter(
            |n| matches!(n, Notice::Checked(c) if c.answer == Completion::Ok(Belief::held(true))),
        )
        .count();
    assert_eq!(told, 1, "the question and its answer go to the history");
}

#[tokio::test]
async fn after_an_info_a_kept_client_forgets_the_hold_and_is_not_abandoned() {
    let client = Arc::new(Believer::default());
    let mut w = believer_worker(client.clone(), Ask::Never);
    assert_eq!(w.execute(acquire()).await.kind, OpType::Ok);
    w.execute(Op::Forget).await;
    assert_eq!(client.forgotten.load(Ordering::SeqCst), 1);
    // The hold is gone; the same client serves the next acquire.
    assert_eq!(w.execute(acquire()).await.kind, OpType::Ok);
}

/// A library that says, when asked, that it no longer holds the lock.
struct Doubter;

impl Client for Doubter {
    fn acquire<'a>(&'a self, lock: &'a str) -> BoxFuture<'a, Completion<Grant>> {
        Believer::default().acquire_owned(lock)
    }
    fn renew<'a>(&'a self, _hold: &'a Grant) -> BoxFuture<'a, Completion<Duration>> {
        Box::pin(async { Completion::Ok(Duration::from_secs(2)) })
    }
    fn release<'a>(&'a self, _hold: &'a Grant) -> BoxFuture<'a, Completion<()>> {
        Box::pin(async { Completion::Ok(()) })
    }
    fn ask<'a>(&'a self, _hold: &'a Grant) -> Option<BoxFuture<'a, Completion<Belief>>> {
        Some(Box::pin(async { Completion::Ok(Belief::held(false)) }))
    }
    fn judges_its_own_hold(&self) -> bool {
        true
    }
}

impl Believer {
    fn acquire_owned(self, lock: &str) -> BoxFuture<'static, Completion<Grant>> {
        let lock = lock.to_string();
        Box::pin(async move {
            Completion::Ok(Grant {
                lock,
                owner: "me".into(),
                lease: "node-1".into(),
                lock_key: None,
                read_back: None,
                token: Some(1),
                valid_until: Instant::now() + Duration::from_secs(2),
            })
        })
    }
}

#[tokio::test]
async fn an_application_told_not_held_does_not_write_even_under_the_naive_discipline() {
    let mut w =
        worker_of(Arc::new(Doubter), "continue".parse().unwrap()).with_ask(Ask::BeforeWrite);
    assert_eq!(w.execute(acquire()).await.kind, OpType::Ok);
    let refused = w.execute(write()).await;
    assert_eq!(refused.kind, OpType::Fail, "{refused:?}");
    assert!(
        refused
            .error
            .as_deref()
            .unwrap_or_default()
            .contains("no longer holds"),
        "{refused:?}"
    );
}
