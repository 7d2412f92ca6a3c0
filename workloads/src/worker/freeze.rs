//! SIGSTOP for a worker that lives in the harness's own process (the in-process site): a
//! [`Freeze`] gate that the worker's connection loop and its lock client wait at. While it is
//! frozen the worker executes no request and sends no reply, and its client sends nothing —
//! background renewals included, so the lease runs out as under a real pause; what was in flight
//! completes only after the thaw, as a stopped process's would. A container worker is frozen
//! by the kernel instead and never has one.

use crate::client::{Client, Completion, Grant};
use futures::future::BoxFuture;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// A gate shared by one worker's loop and client: frozen or running.
#[derive(Debug, Clone)]
pub struct Freeze {
    frozen: Arc<watch::Sender<bool>>,
}

impl Default for Freeze {
    fn default() -> Self {
        Freeze {
            frozen: Arc::new(watch::Sender::new(false)),
        }
    }
}

impl Freeze {
    /// Stops the worker at its next wait at the gate.
    pub fn freeze(&self) {
        self.frozen.send_replace(true);
    }

    /// Lets it go on.
    pub fn thaw(&self) {
        self.frozen.send_replace(false);
    }

    pub fn is_frozen(&self) -> bool {
        *self.frozen.borrow()
    }

    /// Resolves at once when running, else at the thaw.
    pub async fn thawed(&self) {
        let mut rx = self.frozen.subscribe();
        // The sender lives as long as `self`: this only ends when the value is false.
        let _ = rx.wait_for(|frozen| !frozen).await;
    }

    /// `client`, waiting at this gate before and after every call.
    pub fn client(&self, client: Arc<dyn Client>) -> Arc<dyn Client> {
        Arc::new(FrozenClient {
            inner: client,
            freeze: self.clone(),
        })
    }
}

/// A lock client that stops while its worker is frozen.
struct FrozenClient {
    inner: Arc<dyn Client>,
    freeze: Freeze,
}

impl FrozenClient {
    async fn gated<T>(&self, call: BoxFuture<'_, T>) -> T {
        self.freeze.thawed().await;
        let out = call.await;
        self.freeze.thawed().await;
        out
    }
}

impl Client for FrozenClient {
    fn acquire<'a>(&'a self, lock: &'a str) -> BoxFuture<'a, Completion<Grant>> {
        Box::pin(self.gated(self.inner.acquire(lock)))
    }

    fn renew<'a>(&'a self, hold: &'a Grant) -> BoxFuture<'a, Completion<Duration>> {
        Box::pin(self.gated(self.inner.renew(hold)))
    }

    fn release<'a>(&'a self, hold: &'a Grant) -> BoxFuture<'a, Completion<()>> {
        Box::pin(self.gated(self.inner.release(hold)))
    }

    fn abandon(&self) -> BoxFuture<'_, ()> {
        Box::pin(self.gated(self.inner.abandon()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recipes::{MemoryKnobs, MemoryLockService};

    #[tokio::test]
    async fn a_frozen_holder_stops_renewing_and_its_lease_lapses() {
        let service = MemoryLockService::new(MemoryKnobs::default());
        let ttl = Duration::from_millis(300);
        let freeze = Freeze::default();
        let a = freeze.client(Arc::new(service.client("a", ttl, ttl)));
        let b = service.client("b", ttl, Duration::from_secs(2));
        let Completion::Ok(hold) = a.acquire("l").await else {
            panic!("a is granted the free lock")
        };
        freeze.freeze();
        let renew = tokio::spawn({
            let (a, hold) = (a.clone(), hold.clone());
            async move { a.renew(&hold).await }
        });
        // While frozen, the renewal has not been sent: b is granted once the lease lapses.
        assert!(matches!(b.acquire("l").await, Completion::Ok(_)));
        assert!(!renew.is_finished());
        freeze.thaw();
        assert!(matches!(renew.await.unwrap(), Completion::Fail(_)));
    }
}
