//! The run's live view of its own history, fed by the history recorder's observer: who holds
//! the lock right now (the nemesis's `pause-holder` / `kill-holder` target), how many operations
//! were recorded, and which faults are in force (for the progress line).

use results::{Event, OpType, Process, F};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

#[derive(Debug, Default)]
struct Holds {
    /// (process, owner name) of the current holder as the history shows it.
    holder: Option<(u32, String)>,
    faults: BTreeSet<String>,
}

/// Shared live state; cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct Live {
    holds: Arc<Mutex<Holds>>,
    /// The holder's worker name, in the shape the nemesis topology reads.
    pub holder: Arc<Mutex<Option<String>>>,
    ops: Arc<AtomicU64>,
}

impl Live {
    pub fn new(holder: Arc<Mutex<Option<String>>>) -> Self {
        Live {
            holder,
            ..Live::default()
        }
    }

    /// Feeds one recorded event.
    pub fn observe(&self, e: &Event) {
        self.ops.fetch_add(1, Ordering::Relaxed);
        let mut h = self.holds.lock().unwrap_or_else(|p| p.into_inner());
        match (&e.process, e.kind, &e.f) {
            (Process::Worker(p), OpType::Ok, F::Acquire) => {
                let owner = e.owner.clone().unwrap_or_else(|| format!("process-{p}"));
                h.holder = Some((*p, owner));
            }
            (Process::Worker(p), OpType::Invoke, F::Release)
            | (Process::Worker(p), _, F::LeaseLost)
            | (Process::Worker(p), _, F::Exit)
                if h.holder.as_ref().is_some_and(|(hp, _)| hp == p) =>
            {
                h.holder = None;
            }
            (Process::Nemesis, _, F::Start(fault)) => {
                h.faults.insert(fault.clone());
            }
            (Process::Nemesis, _, F::Stop(fault)) => {
                h.faults.remove(fault);
            }
            _ => {}
        }
        *self.holder.lock().unwrap_or_else(|p| p.into_inner()) =
            h.holder.as_ref().map(|(_, o)| o.clone());
    }

    pub fn ops(&self) -> u64 {
        self.ops.load(Ordering::Relaxed)
    }

    pub fn faults(&self) -> Vec<String> {
        self.holds
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .faults
            .iter()
            .cloned()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(p: Process, kind: OpType, f: F, owner: Option<&str>) -> Event {
        let mut e = Event::new(0, p, kind, f);
        e.owner = owner.map(String::from);
        e
    }

    #[test]
    fn tracks_the_holder_through_acquire_release_and_death() {
        let live = Live::default();
        live.observe(&ev(
            Process::Worker(1),
            OpType::Ok,
            F::Acquire,
            Some("worker-1"),
        ));
        assert_eq!(live.holder.lock().unwrap().as_deref(), Some("worker-1"));
        // Another process's release does not clear it.
        live.observe(&ev(Process::Worker(2), OpType::Invoke, F::Release, None));
        assert_eq!(live.holder.lock().unwrap().as_deref(), Some("worker-1"));
        live.observe(&ev(Process::Worker(1), OpType::Info, F::LeaseLost, None));
        assert_eq!(*live.holder.lock().unwrap(), None);
        live.observe(&ev(
            Process::Worker(3),
            OpType::Ok,
            F::Acquire,
            Some("worker-3"),
        ));
        live.observe(&ev(Process::Worker(3), OpType::Info, F::Exit, None));
        assert_eq!(*live.holder.lock().unwrap(), None);
        live.observe(&ev(
            Process::Nemesis,
            OpType::Info,
            F::Start("pause-holder".into()),
            None,
        ));
        assert_eq!(live.faults(), vec!["pause-holder"]);
        live.observe(&ev(
            Process::Nemesis,
            OpType::Info,
            F::Stop("pause-holder".into()),
            None,
        ));
        assert!(live.faults().is_empty());
        assert_eq!(live.ops(), 7);
    }
}
