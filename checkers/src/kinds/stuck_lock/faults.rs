//! How stuck-lock reads the nemesis: which faults suspend its clock, which oblige a lock to
//! come back without its frozen holder, and what their end restarts (see the parent's doc).

use super::{trying, Holder, Obligation, StuckLock};
use crate::checker::Context;
use crate::kinds::outages::Ended;
use crate::locks::LockId;
use crate::name::opt_name;
use results::fault::{Mechanism, Scope};
use results::EventRef;

impl StuckLock {
    /// A nemesis fault starts. A fault of the service suspends every clock; one on workers
    /// obliges the locks its targets hold to become acquirable without them (a pause or an
    /// isolation; a killed holder's obligation starts at its exit), and suspends the clocks
    /// when it cuts off a target that holds nothing (a trying client).
    pub(super) fn fault_started(&mut self, fault: &str, e: &EventRef<'_>, cx: &Context<'_>) {
        let held: Vec<(LockId, u32, Holder)> = cx
            .holds
            .iter()
            .filter(|h| {
                h.owner()
                    .is_some_and(|o| e.targets().iter().any(|t| t == o))
            })
            .map(|h| {
                (
                    h.lock,
                    h.process,
                    (opt_name(h.owner()), opt_name(h.lease()), h.token),
                )
            })
            .collect();
        let holds_nothing = |t: &str| !cx.holds.iter().any(|h| h.owner() == Some(t));
        let scope = cx.fault_scope(fault, e);
        let suspends = match scope {
            Scope::LockService => Some(true),
            Scope::Workers if e.targets().iter().any(|t| holds_nothing(t)) => Some(false),
            Scope::Workers | Scope::Resource => None,
        };
        if let Some(service) = suspends {
            self.outages.start(fault, service);
            for l in self.locks.iter_mut().filter_map(|(_, l)| l.as_mut()) {
                if let Some(o) = &mut l.obligation {
                    o.start = None;
                    o.tried_early = false;
                }
                if let Some(free) = &mut l.free {
                    free.start = None;
                }
            }
            self.next_deadline = None;
        }
        let stops_holder = match Mechanism::of(fault) {
            // Frozen, cut off or doing nothing: its lease must run out.
            Some(Mechanism::Freeze | Mechanism::Cut | Mechanism::Deafen | Mechanism::Mute)
            | Some(Mechanism::Hang) => true,
            // A killed holder's obligation starts at its exit. A starved holder, one whose
            // links are shaped (slow, lossy, replies held or cut: its requests still reach the
            // service) or whose own clock moved runs on and may keep its lease as it should.
            Some(
                Mechanism::Kill
                | Mechanism::KillEmpty
                | Mechanism::Starve
                | Mechanism::Link(_)
                | Mechanism::ClientClock(_)
                | Mechanism::ServerClock(_),
            ) => false,
            // A fault this build does not know, on the holder: taken as one that stops it.
            None => true,
        };
        if scope == Scope::Workers && stops_holder {
            for (lock, p, holder) in held {
                let did = match Mechanism::of(fault) {
                    Some(Mechanism::Hang) => "hung the work of",
                    _ => "froze or cut off",
                };
                let why = format!("{fault} {did} holder process {p} at index {}", e.index);
                let fresh = self
                    .locks
                    .get(lock)
                    .and_then(Option::as_ref)
                    .is_none_or(|l| l.obligation.is_none());
                self.oblige((lock, cx.locks.name(lock)), why, e, Some(holder), false);
                if let Some(o) = self.obligation_mut(lock).filter(|_| fresh) {
                    o.ends_with = Some(fault.to_string());
                }
            }
        }
    }

    /// A nemesis fault stops: the end of a holder's pause or isolation ends the obligation it
    /// started (the holder is back); the end of the last suspending fault restarts the clocks,
    /// and the final heal of the lock service obliges every lock to come back.
    pub(super) fn fault_stopped(&mut self, fault: &str, e: &EventRef<'_>) {
        for l in self.locks.iter_mut().filter_map(|(_, l)| l.as_mut()) {
            if l.obligation.as_ref().and_then(|o| o.ends_with.as_deref()) == Some(fault) {
                l.obligation = None;
            }
        }
        let healed = match self.outages.stop(fault) {
            Ended::Nothing => {
                self.recompute_deadline();
                return;
            }
            Ended::Suspension => false,
            Ended::ServiceHealed => true,
        };
        let slack = self.slack;
        for l in self.locks.iter_mut().filter_map(|(_, l)| l.as_mut()) {
            let tried = trying(slack, l, e.time);
            if healed && l.obligation.is_none() {
                l.obligation = Some(Obligation {
                    reason: format!(
                        "the nemesis healed every fault of the lock service ({}) at index {}",
                        e.f, e.index
                    )
                    .into(),
                    index: e.index,
                    time: e.time,
                    holder: None,
                    start: None,
                    tried_early: false,
                    ends_with: None,
                    waits_for_holds: false,
                });
            }
            if let Some(o) = &mut l.obligation {
                o.start = Some(e.time);
                o.tried_early = tried;
            }
            if let Some(free) = &mut l.free {
                free.start = Some(e.time);
            }
        }
        self.recompute_deadline();
    }
}
