//! When the workload stops starting new cycles. It is fixed at the start (time limit + recovery)
//! and may only come earlier: the run ends its fault-free tail as soon as the checks have what
//! they need (docs/design.md, "Recovery"), and every worker reads the one shared value before
//! each cycle. A hold already started runs to its release either way.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Run time (ns since the run's clock started) after which no worker starts a new cycle.
#[derive(Debug, Clone)]
pub struct Deadline(Arc<AtomicU64>);

impl Deadline {
    pub fn at(ns: u64) -> Self {
        Deadline(Arc::new(AtomicU64::new(ns)))
    }

    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }

    /// Moves the deadline to `ns` when that is earlier; never later.
    pub fn bring_forward(&self, ns: u64) {
        self.0.fetch_min(ns, Ordering::AcqRel);
    }

    /// True once `now` has reached it.
    pub fn passed(&self, now: u64) -> bool {
        now >= self.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_only_comes_earlier_and_every_clone_sees_it() {
        let d = Deadline::at(100);
        let seen_by_worker = d.clone();
        d.bring_forward(200);
        assert_eq!(seen_by_worker.get(), 100);
        d.bring_forward(40);
        assert_eq!(seen_by_worker.get(), 40);
        assert!(seen_by_worker.passed(40));
        assert!(!seen_by_worker.passed(39));
    }
}
