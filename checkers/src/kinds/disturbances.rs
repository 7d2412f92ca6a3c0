//! Which faults could explain that a holder lost its lock: those of the lock service (every
//! holder) and those on workers that target the holder's own worker (its owner name), by the
//! scope each fault declares (`FaultKind::scope` in results/src/fault.rs: a fault added there
//! fits here without an edit; a name this build does not know counts as one of the service).
//! Read by double-release (a stale release's victim whose loss a fault explains shows no harm
//! from the release) and concurrent-holders (a lock taken from a holder nothing disturbed for a
//! whole lease: its renewal failed). Memory: per worker ever targeted a few numbers.

use super::release_suspects::Suspect;
use crate::hashing::FastMap;
use crate::holds::Hold;
use results::fault::{scope_of, Scope};
use results::{EventRef, F};

/// One scope's faults (the service's, or one worker's): how many are active, when the last
/// ended, and the latest to start (its name and time).
#[derive(Debug, Default)]
struct Faults {
    active: u32,
    last_end: u64,
    latest: Option<(String, u64)>,
}

impl Faults {
    fn start(&mut self, fault: &str, at: u64) {
        self.active += 1;
        self.latest = Some((fault.to_string(), at));
    }

    fn stop(&mut self, at: u64) {
        self.active = self.active.saturating_sub(1);
        self.last_end = at;
    }

    /// Whether one was active at any moment since `since`.
    fn since(&self, since: u64) -> bool {
        self.active > 0 || (self.latest.is_some() && self.last_end >= since)
    }
}

/// The faults of the lock service and of each worker.
#[derive(Debug, Default)]
pub(crate) struct Disturbances {
    service: Faults,
    /// owner (worker name) -> its faults.
    workers: FastMap<String, Faults>,
}

/// What last disturbed a holder: the fault's name, what it hit, and when it started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cause {
    pub fault: String,
    pub on_holder: bool,
    pub at: u64,
}

impl Disturbances {
    /// Takes a nemesis event in; marks the stale releases' victims it disturbs.
    pub fn nemesis(&mut self, e: &EventRef<'_>, suspects: &mut [Suspect]) {
        let (fault, start) = match &e.f {
            // A start that carries an error was skipped: nothing was applied.
            F::Start(_) if e.error().is_some() => return,
            F::Start(f) => (&**f, true),
            F::Stop(f) => (&**f, false),
            _ => return,
        };
        match scope_of(fault) {
            Scope::Resource => {}
            Scope::LockService => {
                if start {
                    self.service.start(fault, e.time);
                    for v in suspects.iter_mut().flat_map(|s| &mut s.victims) {
                        v.disturbed = true;
                    }
                } else {
                    self.service.stop(e.time);
                }
            }
            Scope::Workers => {
                for target in e.targets() {
                    let w = self.workers.entry(target.to_string()).or_default();
                    if start {
                        w.start(fault, e.time);
                        for v in suspects.iter_mut().flat_map(|s| &mut s.victims) {
                            v.disturbed |= v.hold.owner() == Some(target.as_ref());
                        }
                    } else {
                        w.stop(e.time);
                    }
                }
            }
        }
    }

    /// Whether a fault could have ended `hold`'s lease since it was granted.
    pub fn disturbed_since_grant(&self, hold: &Hold) -> bool {
        self.disturbed_since(hold.owner(), hold.time)
    }

    /// Whether a fault of the service, or one on `owner`'s worker, was active at any moment
    /// since `since`.
    pub fn disturbed_since(&self, owner: Option<&str>, since: u64) -> bool {
        let worker = owner.and_then(|o| self.workers.get(o));
        self.service.since(since) || worker.is_some_and(|w| w.since(since))
    }

    /// The latest fault to start on `owner`'s worker or on the service, if any did.
    pub fn latest(&self, owner: Option<&str>) -> Option<Cause> {
        let worker = owner
            .and_then(|o| self.workers.get(o))
            .and_then(|w| w.latest.as_ref())
            .map(|(f, at)| Cause {
                fault: f.clone(),
                on_holder: true,
                at: *at,
            });
        let service = self.service.latest.as_ref().map(|(f, at)| Cause {
            fault: f.clone(),
            on_holder: false,
            at: *at,
        });
        match (worker, service) {
            (Some(w), Some(s)) => Some(if s.at > w.at { s } else { w }),
            (w, s) => w.or(s),
        }
    }
}
