//! Runs every checker over one pair of streams and composes their findings into one
//! [`Verdict`]: Invalid (an anomaly whose kind is in `fail_on`) > Unknown (a checker could not
//! decide, panicked, the history is empty, or the run exercised nothing: acquires attempted
//! and none granted, writes attempted and none decided) > Valid. A checker that panics is caught, stopped,
//! and named in the verdict; the run is then unknown rather than crashed.

use crate::checker::{
    Checker, Context, End, Findings, Interests, Outcome, ResourceLog, ServiceLog,
};
use crate::dispatch::{self, Dispatch};
use crate::holds::{self, Hold, HoldBook, Recycler};
use crate::locks::{LockId, LockNames};
use results::store::CheckConfig;
use results::{AnomalyKind, EventRef, ResourceRef, Validity, Verdict};
use serde_json::json;

mod streams;
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
mod exercised;
mod landed;
mod unplanned;
pub use streams::{check, check_stream};

struct Slot {
    /// Whether the checker reads the shared state ([`Checker::uses_shared`]).
    shared: bool,
    checker: Dispatch,
    findings: Findings,
    panicked: Option<String>,
}

/// The composition of all checkers, fed one event at a time.
pub struct Engine {
    slots: Vec<Slot>,
    /// For each shape of event ([`route`]), the slots whose interests it meets, in order: the
    /// engine visits only those (an acquire/release event interests two or three of the nine checkers
    /// on average).
    /// A stopped checker (it panicked) is taken out of every route.
    routes: [Vec<usize>; ROUTES],
    /// The slots whose checker reads the resource log, in slot order.
    reading_resource: Vec<usize>,
    /// Shared derived state, updated after every checker saw the event.
    holds: HoldBook,
    locks: LockNames,
    acquisitions: Recycler,
    /// The shared state panicked: it is no longer derived, and the checkers that read it are
    /// stopped; the others go on.
    shared_broken: bool,
    /// Tests: the shared derivation panics at this history index.
    #[cfg(test)]
    break_shared_at: Option<u64>,
    fail_on: Vec<AnomalyKind>,
    events: u64,
    /// Events per route (operation × type): what the run exercised.
    seen: [u64; ROUTES],
    /// What happened to the nodes outside the fault plan.
    unplanned: unplanned::Unplanned,
    /// How many of the planned faults landed.
    landed: landed::Landed,
    /// Outcomes where the client library raised what it does not document: how many, and the
    /// first one's index and message.
    exceptions: (u64, Option<(u64, String)>),
    resource_entries: u64,
    /// The time of the first event, and the latest time of any.
    /// Plain numbers, not options kept up to date for every event: `events` says whether there
    /// was one.
    first_time: u64,
    last_time: u64,
    resource_log: ResourceLog,
    service_log: ServiceLog,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("checkers", &self.slots.len())
            .field("events", &self.events)
            .finish()
    }
}

/// Event shapes: one per bit of [`Interests`] (operation × type).
const ROUTES: usize = 4 * crate::checker::OPERATIONS;

/// The route of an event's interest bit.
fn route(bit: Interests) -> usize {
    bit.0.trailing_zeros() as usize % ROUTES
}

/// The interest bit of a route (the inverse of [`route`]).
fn route_bits(r: usize) -> Interests {
    Interests(1 << r)
}

/// Stops one checker for good: it is unknown with `why`, and no route visits it again.
fn stop(slots: &mut [Slot], routes: &mut [Vec<usize>; ROUTES], slot: usize, why: String) {
    slots[slot].panicked = Some(why);
    for r in routes {
        r.retain(|&i| i != slot);
    }
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string panic".into())
}

impl Engine {
    /// The fourteen checkers (sixteen kinds) of docs/design.md ("Anomaly kinds") under this
    /// configuration.
    pub fn new(cfg: &CheckConfig) -> Engine {
        Engine::with_dispatch(cfg, dispatch::standard(cfg))
    }

    /// A chosen set of checkers (tests use this to plant a panicking one).
    pub fn with_checkers(cfg: &CheckConfig, checkers: Vec<Box<dyn Checker>>) -> Engine {
        Engine::with_dispatch(cfg, checkers.into_iter().map(Dispatch::Other).collect())
    }

    fn with_dispatch(cfg: &CheckConfig, checkers: Vec<Dispatch>) -> Engine {
        let interests: Vec<Interests> = checkers.iter().map(|c| c.as_dyn().interests()).collect();
        let routes = std::array::from_fn(|r| {
            let bits = route_bits(r);
            (0..interests.len())
                .filter(|&i| interests[i].meets(bits))
                .collect()
        });
        let reading_resource = (0..checkers.len())
            .filter(|&i| checkers[i].reads_resource_log())
            .collect();
        Engine {
            routes,
            reading_resource,
            slots: checkers
                .into_iter()
                .map(|checker| Slot {
                    shared: checker.as_dyn().uses_shared(),
                    findings: Findings::with_paired(
                        checker.as_dyn().kind(),
                        checker.as_dyn().paired_kind(),
                    ),
                    checker,
                    panicked: None,
                })
                .collect(),
            holds: HoldBook::default(),
            locks: LockNames::default(),
            acquisitions: Recycler::default(),
            shared_broken: false,
            #[cfg(test)]
            break_shared_at: None,
            fail_on: cfg.fail_on.clone(),
            events: 0,
            seen: [0; ROUTES],
            unplanned: unplanned::Unplanned::default(),
            landed: landed::Landed::default(),
            exceptions: (0, None),
            resource_entries: 0,
            first_time: 0,
            last_time: 0,
            resource_log: ResourceLog::Present,
            service_log: ServiceLog::Missing(
                "the run has no service.jsonl (recorded without an observer, or converted)".into(),
            ),
        }
    }

    /// Feeds one history event (in file order) to every checker still running.
    pub fn event(&mut self, e: &EventRef<'_>) {
        if self.events == 0 {
            self.first_time = e.time;
        }
        self.events += 1;
        self.last_time = self.last_time.max(e.time);
        let bit = Interests::of(e);
        let route = route(bit);
        self.seen[route] += 1;
        if e.exception {
            self.exceptions.0 += 1;
            let why = e.error().unwrap_or("no message").to_string();
            self.exceptions.1.get_or_insert((e.index, why));
        }
        // Only a nemesis event can tell of a node's unplanned outage: the call for every event
        // (never inlined) was 1.4% of the check's instructions on a lock history.
        if bit.meets(Interests::NEMESIS) {
            self.unplanned.event(e);
            self.landed.event(e);
        }
        let (lock, acquired) = self.derive(e);
        let cx = Context {
            holds: &self.holds,
            lock,
            locks: &self.locks,
            acquired: acquired.as_ref(),
        };
        // One unwind guard for the whole route, not one per checker: `at` says which checker
        // was running when a panic came, and the route resumes after it.
        let mut at = 0;
        while at < self.routes[route].len() {
            let (slots, list) = (&mut self.slots, &self.routes[route]);
            let ran = catch_unwind(AssertUnwindSafe(|| {
                while let Some(&i) = list.get(at) {
                    let slot = &mut slots[i];
                    slot.checker.event(e, &cx, &mut slot.findings);
                    at += 1;
                }
            }));
            let Err(p) = ran else {
                break;
            };
            let i = self.routes[route][at];
            let why = format!(
                "{} checker panicked at history index {}: {}",
                self.slots[i].findings.kind,
                e.index,
                panic_message(&*p)
            );
            stop(&mut self.slots, &mut self.routes, i, why);
        }
        if self.shared_broken {
            return;
        }
        let holds = &mut self.holds;
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| holds.apply(e, lock, acquired.as_ref()))) {
            self.break_shared(e.index, &*p);
        }
    }

    /// The event's lock and the acquisition it completes, from the shared state (as it stood
    /// before the event); nothing once that state broke.
    fn derive(&mut self, e: &EventRef<'_>) -> (Option<LockId>, Option<Hold>) {
        if self.shared_broken {
            return (None, None);
        }
        #[cfg(test)]
        let fail = self.break_shared_at == Some(e.index);
        #[cfg(not(test))]
        let fail = false;
        let (locks, holds, acquisitions) = (&mut self.locks, &self.holds, &mut self.acquisitions);
        let derived = catch_unwind(AssertUnwindSafe(|| {
            assert!(!fail, "planted failure");
            holds::derive(e, locks, holds, acquisitions)
        }));
        derived.unwrap_or_else(|p| {
            self.break_shared(e.index, &*p);
            (None, None)
        })
    }

    /// The shared state panicked: every checker that reads it stops, unknown; the rest go on.
    fn break_shared(&mut self, index: u64, p: &(dyn std::any::Any + Send)) {
        self.shared_broken = true;
        let why = panic_message(p);
        for i in 0..self.slots.len() {
            if self.slots[i].shared && self.slots[i].panicked.is_none() {
                let why = format!("the shared hold book panicked at history index {index}: {why}");
                stop(&mut self.slots, &mut self.routes, i, why);
            }
        }
    }

    /// Feeds one resource-log entry (after the whole history).
    pub fn resource(&mut self, r: &ResourceRef<'_>) {
        self.resource_entries += 1;
        for &i in &self.reading_resource {
            let slot = &mut self.slots[i];
            if slot.panicked.is_some() {
                continue;
            }
            let (c, out) = (slot.checker.get(), &mut slot.findings);
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| c.resource(r, out))) {
                let why = format!(
                    "{} checker panicked at resource seq {}: {}",
                    slot.findings.kind,
                    r.seq,
                    panic_message(&*p)
                );
                stop(&mut self.slots, &mut self.routes, i, why);
            }
        }
    }

    /// The first event's time and the latest of any, if there was an event.
    fn times(&self) -> Option<(u64, u64)> {
        (self.events > 0).then_some((self.first_time, self.last_time))
    }

    /// Says the resource log could not be read; checkers that need it become unknown.
    pub fn resource_log_missing(&mut self, why: String) {
        self.resource_log = ResourceLog::Missing(why);
    }

    /// The lock service's record, whole (it holds only the lock keys' changes).
    pub fn service_log(&mut self, record: Vec<results::service_log::ServiceEntry>) {
        self.service_log = ServiceLog::Present(std::sync::Arc::new(record));
    }

    /// Says the run has no service record (or it could not be read). Said before the first
    /// event, the checkers that judge nothing without it get no event at all
    /// ([`Checker::needs_service_log`]); either way their `finish` sees it missing.
    pub fn service_log_missing(&mut self, why: String) {
        if self.events == 0 {
            for i in 0..self.slots.len() {
                if self.slots[i].checker.as_dyn().needs_service_log() {
                    for r in &mut self.routes {
                        r.retain(|&s| s != i);
                    }
                }
            }
        }
        self.service_log = ServiceLog::Missing(why);
    }

    /// Ends the streams and composes the verdict.
    pub fn finish(mut self) -> Verdict {
        let end = End {
            resource_log: self.resource_log.clone(),
            service_log: self.service_log.clone(),
            last_time: self.times().map(|(_, last)| last),
        };
        let mut verdict = Verdict {
            valid: Validity::Valid,
            anomalies: Vec::new(),
            unknown_reasons: Vec::new(),
            stats: BTreeMap::new(),
        };
        verdict.stats.insert("events".into(), json!(self.events));
        verdict
            .stats
            .insert("resource_entries".into(), json!(self.resource_entries));
        verdict.stats.insert("operations".into(), self.operations());
        if self.events == 0 {
            verdict
                .unknown_reasons
                .push("the history is empty: nothing was recorded".into());
        }
        verdict.unknown_reasons.extend(self.exercised_nothing());
        if let (n, Some((index, why))) = &self.exceptions {
            // A library bug is shown, never folded into a valid verdict.
            verdict.unknown_reasons.push(format!(
                "the client library raised an error it does not document {n} time{} (first at \
                 history index {index}: {why})",
                if *n == 1 { "" } else { "s" }
            ));
            verdict.stats.insert("client_exceptions".into(), json!(n));
        }
        self.landed.finish(&mut verdict);
        self.unplanned.finish(
            &mut verdict,
            self.times().map(|t| t.0),
            self.times().map(|t| t.1),
        );
        for slot in &mut self.slots {
            let kind = slot.findings.kind;
            let outcome = match &slot.panicked {
                Some(msg) => Outcome::Unknown(msg.clone()),
                None => {
                    let (c, out) = (slot.checker.get(), &mut slot.findings);
                    match catch_unwind(AssertUnwindSafe(|| c.finish(&end, out))) {
                        Ok(o) => o,
                        Err(p) => Outcome::Unknown(format!(
                            "{kind} checker panicked at the end: {}",
                            panic_message(&*p)
                        )),
                    }
                }
            };
            if let Outcome::Unknown(why) = &outcome {
                verdict.unknown_reasons.push(why.clone());
            }
            let paired = slot.findings.paired.take();
            record(&mut verdict, &mut slot.findings, &outcome, &self.fail_on);
            if let Some(mut paired) = paired {
                // An unknown checker leaves its paired kind unknown too, whatever it had set.
                let own = paired
                    .outcome
                    .take()
                    .filter(|_| !matches!(outcome, Outcome::Unknown(_)));
                if let Some(Outcome::Unknown(why)) = &own {
                    verdict.unknown_reasons.push(why.clone());
                }
                let outcome = own.unwrap_or_else(|| outcome.clone());
                record(&mut verdict, &mut paired, &outcome, &self.fail_on);
            }
        }
        verdict.valid = if verdict.anomalies.iter().any(|a| a.fails) {
            Validity::Invalid
        } else if !verdict.unknown_reasons.is_empty() {
            Validity::Unknown
        } else {
            Validity::Valid
        };
        verdict
    }
}

/// One kind's stats entry and its anomalies, into the verdict.
fn record(verdict: &mut Verdict, f: &mut Findings, outcome: &Outcome, fail_on: &[AnomalyKind]) {
    let fails = fail_on.contains(&f.kind);
    let (status, note) = match outcome {
        Outcome::Checked => ("checked", None),
        Outcome::NotApplicable(why) => ("not applicable", Some(why)),
        Outcome::Unknown(why) => ("unknown", Some(why)),
    };
    let mut s = json!({
        "status": status,
        "count": f.total,
        "fails_run": fails,
    });
    if let Some(n) = note.or(f.note.as_ref()) {
        s["note"] = json!(n);
    }
    for (k, v) in std::mem::take(&mut f.stats) {
        s[k] = v;
    }
    if f.total > f.reported.len() as u64 {
        s["reported"] = json!(f.reported.len());
    }
    verdict.stats.insert(f.kind.as_str().into(), s);
    for mut a in f.reported.drain(..) {
        a.fails = fails;
        verdict.anomalies.push(a);
    }
}

#[cfg(test)]
mod tests;
