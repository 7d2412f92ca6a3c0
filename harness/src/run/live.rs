//! The run's live view of its own history, fed by the history recorder's observer: who holds
//! the lock right now (the nemesis's `pause-holder` / `kill-holder` target), how many operations
//! were recorded, and which faults are in force (for the progress line). Who holds the lock is
//! the checkers' own hold fold (docs/design.md, "Holds"): a process retired by an `info` holds
//! nothing, so a holder fault never freezes a worker that certainly holds nothing.

use checkers::fold::HoldFold;
use checkers::holds::Acquisition;
use results::{Event, Process, F};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

#[derive(Debug, Default)]
struct Tracked {
    holds: HoldFold<Arc<Acquisition>>,
    /// Active faults by name, counted (two of one name may overlap).
    faults: BTreeMap<String, u32>,
}

/// Shared live state; cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct LiveView {
    tracked: Arc<Mutex<Tracked>>,
    /// The holder's worker name, in the shape the nemesis topology reads.
    pub holder: Arc<Mutex<Option<String>>>,
    ops: Arc<AtomicU64>,
    /// Each lock client the workers said hello with (an adapter's: its library and version as
    /// the library reports itself), for the run's summary.
    clients: Arc<Mutex<BTreeSet<String>>>,
}

impl LiveView {
    pub fn new(holder: Arc<Mutex<Option<String>>>) -> Self {
        LiveView {
            holder,
            ..LiveView::default()
        }
    }

    /// Feeds one recorded event.
    pub fn observe(&self, e: &Event) {
        self.ops.fetch_add(1, Ordering::Relaxed);
        let mut t = self.tracked.lock().unwrap_or_else(|p| p.into_inner());
        match (&e.process, &e.f) {
            (Process::Nemesis, F::Start(fault)) if e.error.is_none() => {
                *t.faults.entry(fault.clone()).or_default() += 1;
            }
            (Process::Nemesis, F::Stop(fault)) => {
                if let Some(n) = t.faults.get_mut(fault) {
                    *n -= 1;
                    if *n == 0 {
                        t.faults.remove(fault);
                    }
                }
            }
            _ => drop(t.holds.event(&e.as_ref(), |_| {})),
        }
        // The newest certain holder: the one whose lease is the current one.
        let holder = t.holds.open().last().map(|h| {
            h.owner()
                .map_or_else(|| format!("process-{}", h.process), str::to_string)
        });
        *self.holder.lock().unwrap_or_else(|p| p.into_inner()) = holder;
    }

    /// A worker's hello named its client.
    pub fn saw_client(&self, label: &str) {
        let mut c = self.clients.lock().unwrap_or_else(|p| p.into_inner());
        c.insert(label.to_string());
    }

    /// The clients the workers named, sorted.
    pub fn clients(&self) -> Vec<String> {
        let c = self.clients.lock().unwrap_or_else(|p| p.into_inner());
        c.iter().cloned().collect()
    }

    pub fn ops(&self) -> u64 {
        self.ops.load(Ordering::Relaxed)
    }

    pub fn faults(&self) -> Vec<String> {
        self.tracked
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .faults
            .keys()
            .cloned()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use checkers::testkit::*;

    fn holder(live: &LiveView) -> Option<String> {
        live.holder.lock().unwrap().clone()
    }

    #[test]
    fn tracks_the_holder_through_acquire_release_and_death() {
        let live = LiveView::default();
        let grant = |p: u32, owner: &str| ok(p, Acquire).lock("l").owner(owner).lease(owner);
        live.observe(&grant(1, "worker-1"));
        assert_eq!(holder(&live).as_deref(), Some("worker-1"));
        // Another process's release does not clear it.
        live.observe(&invoke(2, Release).lock("l"));
        assert_eq!(holder(&live).as_deref(), Some("worker-1"));
        live.observe(&info(1, LeaseLost).lock("l"));
        assert_eq!(holder(&live), None);
        live.observe(&grant(3, "worker-3"));
        live.observe(&info(3, Exit));
        assert_eq!(holder(&live), None);
        live.observe(&start("pause-holder"));
        assert_eq!(live.faults(), vec!["pause-holder"]);
        live.observe(&stop("pause-holder"));
        assert!(live.faults().is_empty());
        // A skipped start (no target) applied nothing.
        live.observe(&start("pause-leader").error("skipped: no leader"));
        assert!(live.faults().is_empty());
        assert_eq!(live.ops(), 8);
    }

    /// Issue 16, point 6: after an indeterminate write its process is retired and certainly
    /// holds nothing; `pause-holder` must not freeze it as the holder.
    #[test]
    fn a_holder_retired_by_an_info_outcome_is_no_holder() {
        let live = LiveView::default();
        live.observe(&ok(1, Acquire).lock("l").owner("worker-1").lease("L1"));
        live.observe(&invoke(1, Write).key("k"));
        assert_eq!(holder(&live).as_deref(), Some("worker-1"));
        live.observe(&info(1, Write).key("k"));
        assert_eq!(holder(&live), None);
    }
}
