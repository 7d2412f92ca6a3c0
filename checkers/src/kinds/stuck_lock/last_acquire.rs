//! A lock nobody holds that nobody can take: when the last certain hold of a lock ends (its
//! release invoke, a lease-lost, its process retired or dead) and acquires keep failing for
//! longer than `ttl + recovery_slack`, the lock is stuck even though no holder died or froze —
//! an acquire answered `fail` whose request had in fact landed leaves such a key. The report
//! names the acquires that tell the story: the first one to complete after the last hold ended
//! (the likeliest to have taken the lock unseen) and the last one before the deadline, each
//! with its outcome.
//!
//! The end of a last hold comes with nearly every release, and the next acquire nearly always
//! succeeds: so the end is only noted ([`Free`], no allocation), and the obligation (its clock
//! started at that end) is made when an acquire of the still free lock fails. Memory: per lock
//! two acquire completions and the last hold's end.

use super::{LockState, Obligation, StuckLock};
use crate::checker::Context;
use crate::holds::Hold;
use crate::locks::LockId;
use crate::name::{opt_name, Name};
use results::{EventRef, OpType, F};
use std::fmt;

/// Why an obligation started. The end of a last hold comes with every release of a free-running
/// lock, so its words are put together only if a report needs them.
#[derive(Debug, Clone)]
pub(super) enum Reason {
    Text(String),
    /// Process `process`'s hold (lease `lease`) ended at history index `index`, by `f`/`kind`.
    LastHoldEnded {
        process: u32,
        lease: Option<Name>,
        index: u64,
        f: F,
        kind: OpType,
    },
}

impl From<String> for Reason {
    fn from(s: String) -> Reason {
        Reason::Text(s)
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Text(s) => f.write_str(s),
            Reason::LastHoldEnded {
                process,
                lease,
                index,
                f: op,
                kind,
            } => write!(
                f,
                "the last hold of it (process {process}, lease {}) ended at index {index} ({op} \
                 {}) and nobody held it since",
                lease.as_deref().unwrap_or("-"),
                kind_word(*kind)
            ),
        }
    }
}

/// One acquire completion of a lock: who, where, and what it answered.
#[derive(Debug, Clone, Default)]
pub(super) struct Seen {
    pub process: u32,
    pub index: u64,
    pub kind: Option<OpType>,
    /// Its `error` (a `fail` or `info` says why); kept in place to spare an allocation each.
    pub error: String,
}

impl Seen {
    fn set(&mut self, p: u32, e: &EventRef<'_>) {
        self.process = p;
        self.index = e.index;
        self.kind = Some(e.kind);
        self.error.clear();
        if let Some(why) = e.error() {
            self.error.push_str(why);
        }
    }

    /// "process 3's acquire at index 40 answered fail (timed out)".
    pub fn describe(&self) -> String {
        let kind = match self.kind {
            Some(OpType::Ok) => "ok",
            Some(OpType::Fail) => "fail",
            Some(OpType::Info) => "info",
            Some(OpType::Invoke) | None => "nothing yet",
        };
        let why = if self.error.is_empty() {
            String::new()
        } else {
            format!(" ({})", self.error)
        };
        format!(
            "process {}'s acquire at index {} answered {kind}{why}",
            self.process, self.index
        )
    }
}

/// The end of a lock's last certain hold, until an acquire shows whether the lock came back.
#[derive(Debug, Clone)]
pub(super) struct Free {
    hold: Hold,
    index: u64,
    time: u64,
    f: F,
    kind: OpType,
    /// When the clock starts: the end itself, or the end of the suspending faults since
    /// (`None` while one is on).
    pub start: Option<u64>,
    /// Whether someone was trying at the end (an acquire pending, or one within the slack).
    tried_early: bool,
}

/// What a lock's acquires answered: the last, and the first after its last hold ended.
#[derive(Debug, Clone, Default)]
pub(super) struct Acquires {
    pub last: Seen,
    /// The first completion after the last hold ended, when `has_after_hold` (its buffer kept).
    pub after_hold: Seen,
    pub has_after_hold: bool,
    /// Whether the lock's last hold ended and no acquire completed since.
    pub awaiting: bool,
}

impl Acquires {
    /// An acquire of this lock completed.
    pub fn completed(&mut self, p: u32, e: &EventRef<'_>) {
        self.last.set(p, e);
        if self.awaiting {
            self.awaiting = false;
            self.after_hold.set(p, e);
            self.has_after_hold = true;
        }
    }

    /// The first completion after the last hold ended, if one came.
    pub fn first_after_hold(&self) -> Option<&Seen> {
        self.has_after_hold.then_some(&self.after_hold)
    }
}

impl StuckLock {
    /// Process `q`'s holds end with `e`: each lock left with no certain holder must become
    /// acquirable within the window (unless another obligation already runs for it).
    pub(super) fn last_holds_ended(&mut self, q: u32, e: &EventRef<'_>, cx: &Context<'_>) {
        let (suspended, slack) = (self.outages.suspended(), self.slack);
        // Read from the context, not from self: no copy of the holds is needed.
        for h in cx.holds.held_by(q) {
            let lock = h.lock;
            let only_q = cx.holds.open(lock).iter().all(|o| o.process == q);
            if cx.lock.is_some_and(|l| l != lock) || !only_q {
                continue;
            }
            let l = super::state(&mut self.locks, lock, cx.locks.name(lock));
            l.acquires.awaiting = true;
            l.acquires.has_after_hold = false;
            if l.obligation.is_some() {
                continue; // one with a cause of its own (a holder that exited) runs already
            }
            l.free = Some(Free {
                hold: h.clone(),
                index: e.index,
                time: e.time,
                f: e.f.clone(),
                kind: e.kind,
                start: (!suspended).then_some(e.time),
                tried_early: super::trying(slack, l, e.time),
            });
        }
    }

    /// An acquire of `lock` failed: if nobody has held it since its last hold ended, it must
    /// become acquirable within the window counted from that end.
    pub(super) fn free_lock_failed(&mut self, lock: LockId, cx: &Context<'_>) {
        if !cx.holds.open(lock).is_empty() {
            return;
        }
        let Some(l) = self.locks.get_mut(lock).and_then(Option::as_mut) else {
            return;
        };
        if l.obligation.is_some() {
            return;
        }
        let Some(free) = l.free.take() else {
            return;
        };
        l.obligation = Some(Obligation {
            reason: Reason::LastHoldEnded {
                process: free.hold.process,
                lease: opt_name(free.hold.lease()),
                index: free.index,
                f: free.f,
                kind: free.kind,
            },
            index: free.index,
            time: free.time,
            holder: None,
            start: free.start,
            tried_early: free.tried_early,
            ends_with: None,
            waits_for_holds: false,
        });
        self.recompute_deadline();
    }
}

fn kind_word(k: OpType) -> &'static str {
    match k {
        OpType::Invoke => "invoke",
        OpType::Ok => "ok",
        OpType::Fail => "fail",
        OpType::Info => "info",
    }
}

/// The acquires the report names for a stuck lock.
pub(super) fn story(l: &LockState) -> Option<String> {
    let a = &l.acquires;
    a.last.kind?;
    let mut s = format!("the last acquire of it: {}", a.last.describe());
    if let Some(first) = a.first_after_hold().filter(|f| f.index != a.last.index) {
        s = format!(
            "the first acquire after its last hold ended: {}; {s}",
            first.describe()
        );
    }
    Some(s)
}
