//! `hang-work` acts here, in the driver, not on a process: while a worker is hung the driver
//! sends it no operation (its next write, release or acquire waits), and its process, its lock
//! client and that client's renewals run on. It is the zombie owner of a lock: a job blocked on
//! a call with no timeout while a keep-alive thread keeps its lease. A lock that renews from
//! the loop that does the work lets the lease lapse instead. An operation already sent when the
//! hang starts completes; the gate is asked before each invoke is recorded, so a hang never
//! shows as a slow operation.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::watch;

/// Which workers' work is hung, shared by the fault that hangs them and the sessions that drive
/// them. Every worker starts running; a worker is named as the nemesis targets it.
#[derive(Debug, Clone, Default)]
pub struct Hangs {
    gates: Arc<Mutex<BTreeMap<String, watch::Sender<bool>>>>,
}

impl Hangs {
    fn gates(&self) -> MutexGuard<'_, BTreeMap<String, watch::Sender<bool>>> {
        self.gates.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Hangs (`true`) or resumes (`false`) `worker`'s work.
    pub fn set(&self, worker: &str, hung: bool) {
        self.gates()
            .entry(worker.to_string())
            .or_insert_with(|| watch::Sender::new(false))
            .send_replace(hung);
    }

    /// Resumes every worker (the heal on every exit of a run).
    pub fn resume_all(&self) {
        for gate in self.gates().values() {
            gate.send_replace(false);
        }
    }

    /// Whether `worker`'s work is hung now.
    pub fn is_hung(&self, worker: &str) -> bool {
        self.gates().get(worker).is_some_and(|g| *g.borrow())
    }

    /// `worker`'s gate, to wait at while it is hung.
    pub(crate) fn gate(&self, worker: &str) -> watch::Receiver<bool> {
        self.gates()
            .entry(worker.to_string())
            .or_insert_with(|| watch::Sender::new(false))
            .subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn a_hung_worker_waits_until_it_is_resumed_and_others_never_wait() {
        let hangs = Hangs::default();
        hangs.set("worker-1", true);
        let mut hung = hangs.gate("worker-1");
        let mut free = hangs.gate("worker-2");
        assert!(free.wait_for(|h| !*h).await.is_ok());
        let waited = tokio::time::timeout(Duration::from_millis(50), hung.wait_for(|h| !*h));
        assert!(waited.await.is_err(), "still hung");
        let resumer = hangs.clone();
        tokio::spawn(async move { resumer.resume_all() });
        assert!(hung.wait_for(|h| !*h).await.is_ok());
        assert!(!hangs.is_hung("worker-1"));
    }
}
