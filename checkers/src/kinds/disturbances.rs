//! Which faults could explain that a holder lost its lock: those of the lock service (every
//! holder) and those on workers that target the holder's own worker (its owner name), by the
//! scope each fault declares (`FaultKind::scope` in results/src/fault.rs: a fault added there
//! fits here without an edit; a name this build does not know counts as one of the service).
//! Read by double-release (a stale release's victim whose loss a fault explains shows no harm
//! from the release) and concurrent-holders (why the older holder lost its lock: a fault that
//! can outlast its lease, or none, so its renewal failed, perhaps under a fault a lease
//! survives: [`survival`]). Memory: per worker ever targeted a few numbers, and the faults on now.

use super::release_suspects::Suspect;
use crate::checker::Context;
use crate::hashing::FastMap;
use crate::holds::Hold;
use results::fault::Scope;
use results::{EventRef, F};
use survival::{survival, Survival};

mod survival;

/// One scope's faults (the service's, or one worker's): how many are active, when the last
/// ended, and the latest to start (its name and time); and, to tell how long each lasted, those
/// on now and the last to end of each kind a lease fares differently under.
#[derive(Debug, Default)]
struct Faults {
    active: u32,
    last_end: u64,
    latest: Option<(String, u64)>,
    /// On now: name and start, in start order.
    open: Vec<(String, u64)>,
    /// The last to end that could outlast a lease, and the last a lease survives: name, start,
    /// end.
    ended_cause: Option<(String, u64, u64)>,
    ended_survived: Option<(String, u64, u64)>,
}

impl Faults {
    fn start(&mut self, fault: &str, at: u64) {
        self.active += 1;
        self.latest = Some((fault.to_string(), at));
        self.open.push((fault.to_string(), at));
    }

    fn stop(&mut self, fault: &str, at: u64, ttl: Option<u64>) {
        self.active = self.active.saturating_sub(1);
        self.last_end = at;
        let Some(k) = self.open.iter().position(|(f, _)| f == fault) else {
            return;
        };
        let (name, start) = self.open.remove(k);
        let ended = Some((name, start, at));
        if outlasts(fault, at.saturating_sub(start), ttl) {
            self.ended_cause = ended;
        } else if survival(fault) == Survival::WhileShorter {
            self.ended_survived = ended;
        }
    }

    /// Whether one was active at any moment since `since`.
    fn since(&self, since: u64) -> bool {
        self.active > 0 || (self.latest.is_some() && self.last_end >= since)
    }

    /// The latest to start, of those on at any moment in `[since, now]`, that could outlast a
    /// lease, and of those a lease survives.
    fn within(&self, since: u64, now: u64, ttl: Option<u64>, on_holder: bool) -> Reading {
        let mut r = Reading::default();
        for (fault, at) in &self.open {
            let o = Occurrence {
                fault: fault.clone(),
                on_holder,
                at: *at,
                length: now.saturating_sub(*at),
                ongoing: true,
            };
            if outlasts(fault, o.length, ttl) {
                r.cause = later(r.cause, Some(o));
            } else if survival(fault) == Survival::WhileShorter {
                r.survived = later(r.survived, Some(o));
            }
        }
        let ended = |e: &Option<(String, u64, u64)>| {
            e.as_ref()
                .filter(|(_, _, end)| *end >= since)
                .map(|(fault, at, end)| Occurrence {
                    fault: fault.clone(),
                    on_holder,
                    at: *at,
                    length: end - at,
                    ongoing: false,
                })
        };
        r.cause = later(r.cause, ended(&self.ended_cause));
        r.survived = later(r.survived, ended(&self.ended_survived));
        r
    }
}

/// Whether a fault this long could outlast a lease of `ttl` (without one, any fault that
/// reaches the lease could).
fn outlasts(fault: &str, length: u64, ttl: Option<u64>) -> bool {
    match survival(fault) {
        Survival::Never => true,
        Survival::WhileShorter => ttl.is_none_or(|ttl| length >= ttl),
        Survival::Untouched => false,
    }
}

/// Whether a lease survives `fault` while it is shorter than the lease.
pub(crate) fn survived_while_shorter(fault: &str) -> bool {
    survival(fault) == Survival::WhileShorter
}

/// The one of two that started later.
fn later(a: Option<Occurrence>, b: Option<Occurrence>) -> Option<Occurrence> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if b.at > a.at { b } else { a }),
        (a, b) => a.or(b),
    }
}

/// The faults of the lock service and of each worker.
#[derive(Debug, Default)]
pub(crate) struct Disturbances {
    /// The lease's length (ns), when the test gives one: what a fault's length is measured
    /// against.
    ttl: Option<u64>,
    service: Faults,
    /// owner (worker name) -> its faults.
    workers: FastMap<String, Faults>,
}

/// One fault on a holder's worker or the service, as it bears on a lease: its name, what it
/// hit, when it started, and how long it lasted (to its stop, or to the moment asked about).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Occurrence {
    pub fault: String,
    pub on_holder: bool,
    pub at: u64,
    pub length: u64,
    /// Still on at the moment asked about.
    pub ongoing: bool,
}

/// The faults on a holder's worker or the service within a window: the latest that could
/// outlast its lease (a cause of its loss), and the latest it was meant to survive.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Reading {
    pub cause: Option<Occurrence>,
    pub survived: Option<Occurrence>,
}

impl Disturbances {
    /// Faults measured against a lease of `ttl` (ns).
    pub fn with_ttl(ttl: Option<u64>) -> Disturbances {
        Disturbances {
            ttl,
            ..Disturbances::default()
        }
    }

    /// Takes a nemesis event in; marks the stale releases' victims it disturbs.
    pub fn nemesis(&mut self, e: &EventRef<'_>, cx: &Context<'_>, suspects: &mut [Suspect]) {
        let (fault, start) = match &e.f {
            // A start that carries an error was skipped: nothing was applied.
            F::Start(_) if e.error().is_some() => return,
            F::Start(f) => (&**f, true),
            F::Stop(f) => (&**f, false),
            _ => return,
        };
        match cx.fault_scope(fault, e) {
            Scope::Resource => {}
            Scope::LockService => {
                if start {
                    self.service.start(fault, e.time);
                    for v in suspects.iter_mut().flat_map(|s| &mut s.victims) {
                        v.disturbed = true;
                    }
                } else {
                    self.service.stop(fault, e.time, self.ttl);
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
                        w.stop(fault, e.time, self.ttl);
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

    /// The faults on `owner`'s worker or on the service at any moment in `[since, now]`: the
    /// latest to start that could outlast the lease, and the latest the lease survives.
    pub fn within(&self, owner: Option<&str>, since: u64, now: u64) -> Reading {
        let service = self.service.within(since, now, self.ttl, false);
        let Some(worker) = owner.and_then(|o| self.workers.get(o)) else {
            return service;
        };
        let worker = worker.within(since, now, self.ttl, true);
        Reading {
            cause: later(worker.cause, service.cause),
            survived: later(worker.survived, service.survived),
        }
    }
}
