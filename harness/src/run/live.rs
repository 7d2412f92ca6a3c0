//! The run's live view of its own history, fed by the history recorder's observer: who holds
//! the lock right now (the nemesis's `pause-holder` / `kill-holder` target), whose acquire or
//! release is in flight and how long each worker's acquires took lately (the targets of
//! `pause-acquiring`, `pause-releasing`, `pause-waiter` ...), how many operations were recorded,
//! and which faults are in force (for the progress line). Who holds the lock is the checkers'
//! own hold fold (docs/design.md, "Holds"): a process retired by an `info` holds nothing, so a
//! holder fault never freezes a worker that certainly holds nothing. The operations in flight
//! are read off the same events in the same pass: one fold, every reader.

use checkers::fold::HoldFold;
use checkers::holds::Acquisition;
use nemesis::{InFlight, Moments};
use results::{Event, OpType, Process, F};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How many of a worker's latest acquires its recent acquire latency is the median of.
const LATENCIES_KEPT: usize = 5;

/// An operation invoked and not completed yet.
#[derive(Debug, Clone)]
struct Pending {
    f: F,
    index: u64,
    time: u64,
}

#[derive(Debug, Default)]
struct Tracked {
    holds: HoldFold<Arc<Acquisition>>,
    /// Active faults by name, counted (two of one name may overlap).
    faults: BTreeMap<String, u32>,
    /// The operation in flight of each process.
    pending: BTreeMap<u32, Pending>,
    /// Each worker's latest acquire latencies (ns), oldest first.
    latencies: BTreeMap<String, VecDeque<u64>>,
    /// Worker names by worker index: process `p` is worker `p % n` (the Jepsen numbering of
    /// `workloads::driver::ProcessIds`).
    workers: Vec<Option<String>>,
}

impl Tracked {
    fn worker(&self, process: u32) -> Option<&str> {
        let n = self.workers.len();
        if n == 0 {
            return None;
        }
        self.workers[process as usize % n].as_deref()
    }

    /// Follows each process's operation in flight and each worker's acquire latency.
    fn operation(&mut self, e: &Event) {
        let Process::Worker(p) = e.process else {
            return;
        };
        match (e.kind, &e.f) {
            (_, F::Exit) => {
                self.pending.remove(&p);
            }
            (_, F::LeaseLost | F::Start(_) | F::Stop(_)) => {}
            (OpType::Invoke, f) => {
                let pending = Pending {
                    f: f.clone(),
                    index: e.index,
                    time: e.time,
                };
                self.pending.insert(p, pending);
            }
            (_, f) => {
                if self.pending.get(&p).is_some_and(|o| o.f == *f) {
                    let done = self.pending.remove(&p);
                    if let (Some(done), F::Acquire) = (done, f) {
                        let Some(worker) = self.worker(p).map(str::to_string) else {
                            return;
                        };
                        let kept = self.latencies.entry(worker).or_default();
                        kept.push_back(e.time.saturating_sub(done.time));
                        if kept.len() > LATENCIES_KEPT {
                            kept.pop_front();
                        }
                    }
                }
            }
        }
    }

    /// The workers with an operation `f` in flight.
    fn in_flight(&self, f: &F) -> Vec<InFlight> {
        self.pending
            .iter()
            .filter(|(_, o)| o.f == *f)
            .filter_map(|(p, o)| {
                let worker = self.worker(*p)?.to_string();
                let acquire_latency = self.latencies.get(&worker).and_then(median);
                Some(InFlight {
                    worker,
                    index: o.index,
                    invoked_ns: o.time,
                    acquire_latency,
                })
            })
            .collect()
    }
}

/// The median of some latencies (ns), as a duration.
fn median(kept: &VecDeque<u64>) -> Option<Duration> {
    let mut sorted: Vec<u64> = kept.iter().copied().collect();
    sorted.sort_unstable();
    sorted
        .get(sorted.len() / 2)
        .map(|ns| Duration::from_nanos(*ns))
}

/// Shared live state; cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct LiveView {
    tracked: Arc<Mutex<Tracked>>,
    /// The holder and the workers in flight, in the shape the nemesis topology reads.
    pub moments: Arc<Mutex<Moments>>,
    ops: Arc<AtomicU64>,
    /// Each lock client the workers said hello with (an adapter's: its library and version as
    /// the library reports itself), for the run's summary.
    clients: Arc<Mutex<BTreeSet<String>>>,
}

impl LiveView {
    pub fn new(moments: Arc<Mutex<Moments>>) -> Self {
        LiveView {
            moments,
            ..LiveView::default()
        }
    }

    /// Worker `i` of `n` connected under `name`: its processes' operations are its own.
    pub fn saw_worker(&self, i: usize, n: usize, name: &str) {
        let mut t = self.tracked.lock().unwrap_or_else(|p| p.into_inner());
        if t.workers.len() != n {
            t.workers = vec![None; n];
        }
        if let Some(slot) = t.workers.get_mut(i) {
            *slot = Some(name.to_string());
        }
    }

    /// Feeds one recorded event.
    pub fn observe(&self, e: &Event) {
        self.ops.fetch_add(1, Ordering::Relaxed);
        let mut t = self.tracked.lock().unwrap_or_else(|p| p.into_inner());
        match (&e.process, &e.f) {
            (Process::Nemesis, F::Start(fault)) if e.error.is_none() => {
                *t.faults.entry(fault.to_string()).or_default() += 1;
            }
            (Process::Nemesis, F::Stop(fault)) => {
                if let Some(n) = t.faults.get_mut(&**fault) {
                    *n -= 1;
                    if *n == 0 {
                        t.faults.remove(&**fault);
                    }
                }
            }
            _ => {
                drop(t.holds.event(&e.as_ref(), |_| {}));
                t.operation(e);
            }
        }
        // The newest certain holder: the one whose lease is the current one.
        let name = |h: &Arc<Acquisition>| {
            h.owner()
                .map_or_else(|| format!("process-{}", h.process), str::to_string)
        };
        let holding: Vec<String> = t.holds.open().into_iter().map(name).collect();
        let moments = Moments {
            holder: holding.last().cloned(),
            holding,
            acquiring: t.in_flight(&F::Acquire),
            releasing: t.in_flight(&F::Release),
        };
        *self.moments.lock().unwrap_or_else(|p| p.into_inner()) = moments;
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
        live.moments.lock().unwrap().holder.clone()
    }

    fn moments(live: &LiveView) -> Moments {
        live.moments.lock().unwrap().clone()
    }

    /// The targets of the in-flight faults: whose acquire or release is in flight now, and how
    /// long that worker's acquires took lately.
    #[test]
    fn follows_the_acquires_and_releases_in_flight_and_each_worker_s_acquire_latency() {
        let live = LiveView::default();
        live.saw_worker(0, 2, "worker-1");
        live.saw_worker(1, 2, "worker-2");
        let at = |e: Event, ms: u64| e.at_ms(ms);
        live.observe(&at(invoke(0, Acquire).lock("l"), 0));
        let m = moments(&live);
        assert_eq!(m.acquiring.len(), 1);
        assert_eq!(m.acquiring[0].worker, "worker-1");
        assert_eq!(m.acquiring[0].acquire_latency, None, "none completed yet");
        assert!(m.waiting().is_empty(), "nobody holds: not a waiter");
        let grant = at(ok(0, Acquire).lock("l").owner("worker-1").lease("L1"), 30);
        live.observe(&grant);
        // Worker 2 (process 1, then 3 after a retirement) waits for the held lock.
        live.observe(&at(invoke(3, Acquire).lock("l"), 40));
        let m = moments(&live);
        assert_eq!(m.holder.as_deref(), Some("worker-1"));
        let waiting = m.waiting();
        assert_eq!(waiting.len(), 1);
        assert_eq!(waiting[0].worker, "worker-2", "process 3 is worker 2 of 2");
        live.observe(&at(invoke(0, Release).lock("l"), 50));
        let m = moments(&live);
        assert_eq!(m.releasing.len(), 1);
        assert_eq!(m.releasing[0].invoked_ns, 50_000_000);
        live.observe(&at(ok(0, Release).lock("l"), 52));
        live.observe(&at(invoke(0, Acquire).lock("l"), 60));
        let m = moments(&live);
        assert!(m.releasing.is_empty());
        let mine = m.acquiring.iter().find(|a| a.worker == "worker-1").unwrap();
        assert_eq!(mine.acquire_latency, Some(Duration::from_millis(30)));
        // A lease-lost notice does not end an acquire in flight; an exit does.
        live.observe(&at(info(3, LeaseLost).lock("l"), 61));
        assert_eq!(moments(&live).acquiring.len(), 2);
        live.observe(&at(info(3, Exit), 62));
        assert_eq!(moments(&live).acquiring.len(), 1);
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

    /// After an indeterminate write its process is retired and certainly
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
