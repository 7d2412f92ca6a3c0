//! The releases double-release must wait on: a release acknowledged for an acquisition that
//! had lost its lock, while other acquisitions (the possible victims) held it. The history
//! decides each one later:
//!
//! - **harm shown** (`double-release`): another acquisition completes while a victim's hold is
//!   still open, or the victim's own release of that lock is rejected as not-owner — and
//!   nothing else could have ended the victim's lease: no fault hit the victim's worker or the
//!   lock service since the victim's grant (a pause, a partition, a failover would explain it);
//! - **no harm shown** (`release-of-lost-lock`): every victim's process ended its part otherwise
//!   (its release succeeded, it exited or was retired), or the history ended.
//!
//! Faults are tracked by scope ([`super::disturbances`]): a fault of the lock service disturbs
//! every victim, a fault on workers only the victims whose worker (owner) it targets.

pub(crate) use super::disturbances::Disturbances;
use crate::checker::Context;
use crate::holds::Hold;
use crate::locks::LockId;
use results::{EventRef, OpResult, OpType, F};
use std::rc::Rc;

/// One possible victim of a stale release.
#[derive(Debug, Clone)]
pub(crate) struct Victim {
    pub hold: Hold,
    /// A fault could have ended its lease since its grant: harm to it cannot be shown.
    pub disturbed: bool,
}

/// A release acknowledged for a lost lock, awaiting the history's word.
#[derive(Debug, Clone)]
pub(crate) struct Suspect {
    pub lock: LockId,
    /// The lock's name (a suspect may be judged at the end, without a context).
    pub lock_name: String,
    pub releaser: Hold,
    pub process: u32,
    /// History index and time of the release invoke and of its `ok`.
    pub invoked: (u64, u64),
    pub acknowledged: (u64, u64),
    /// The newest holder when the release was acknowledged (named in the evidence).
    pub holder: Hold,
    /// The holders the history has not yet settled.
    pub victims: Vec<Victim>,
}

/// How an event settles a suspect.
pub(crate) enum Settled {
    /// The lock was freed under this victim (what the history shows).
    Harm { victim: Hold, shown: String },
    /// Nothing shows harm: why.
    NoHarm(&'static str),
}

impl Suspect {
    /// What this event says about the suspect, if anything; settled victims leave the list.
    pub fn settle(&mut self, p: u32, e: &EventRef<'_>, cx: &Context<'_>) -> Option<Settled> {
        let open = |v: &Victim| {
            cx.holds
                .open(self.lock)
                .iter()
                .any(|h| Rc::ptr_eq(h, &v.hold))
        };
        if let (F::Acquire, OpType::Ok, Some(c)) = (&e.f, e.kind, cx.acquired) {
            if c.lock != self.lock {
                return None;
            }
            // Another acquisition got the lock while an undisturbed victim still held it.
            let harmed = self
                .victims
                .iter()
                .find(|v| !v.disturbed && v.hold.process != c.process && open(v))?;
            return Some(Settled::Harm {
                victim: harmed.hold.clone(),
                shown: format!(
                    "process {} acquired it at index {} while process {} still held it",
                    c.process, c.index, harmed.hold.process
                ),
            });
        }
        let at = self.victims.iter().position(|v| v.hold.process == p)?;
        let this_lock = cx.lock == Some(self.lock);
        let victim = &self.victims[at];
        let ended = match (&e.f, e.kind) {
            (F::Release, OpType::Fail)
                if this_lock && e.result == Some(OpResult::ReleaseRejectedNotOwner) =>
            {
                if !victim.disturbed {
                    return Some(Settled::Harm {
                        victim: victim.hold.clone(),
                        shown: format!(
                            "process {p}'s own release at index {} was rejected as not-owner: its \
                             lock was gone",
                            e.index
                        ),
                    });
                }
                true
            }
            (F::Release, OpType::Ok | OpType::Info) => this_lock,
            // A lease-lost is an `info` but retires nobody: the process may still release.
            (F::LeaseLost, _) => false,
            (F::Exit, _) | (_, OpType::Info) => true,
            _ => false,
        };
        if ended {
            self.victims.swap_remove(at);
        }
        self.victims.is_empty().then_some(Settled::NoHarm(
            "every holder's process ended its part without showing harm",
        ))
    }
}

/// The victims of a release of `lock` by process `p` acknowledged now: every other process's
/// hold of it granted after the releaser's.
/// Whether `h`'s lease is older than `than`'s by their fence tokens, although its grant was
/// recorded later: a client frozen between the server's grant and its own receipt hears of a
/// lease that the releaser's newer one had already superseded. Its lock was not the
/// releaser's to free, and no release of the releaser's harmed it.
fn older_lease(h: &Hold, than: &Hold) -> bool {
    h.token.zip(than.token).is_some_and(|(h, than)| h < than)
}

/// Whether a later grant `h` holds nothing a release by the holder of `than` could free: its
/// token is older, or its own read-back found its node or key gone at the grant (the library
/// granted what the service no longer held).
pub(crate) fn holds_nothing_newer(h: &Hold, than: &Hold) -> bool {
    older_lease(h, than) || h.read_back
}

pub(crate) fn victims(
    cx: &Context<'_>,
    lock: LockId,
    p: u32,
    releaser: &Hold,
    disturbances: &Disturbances,
) -> Vec<Victim> {
    cx.holds
        .open(lock)
        .iter()
        .filter(|h| h.process != p && h.index > releaser.index && !holds_nothing_newer(h, releaser))
        .map(|h| Victim {
            hold: h.clone(),
            disturbed: disturbances.disturbed_since_grant(h),
        })
        .collect()
}
