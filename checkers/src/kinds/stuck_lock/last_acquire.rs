//! A lock nobody holds that nobody can take: when the last certain hold of a lock ends (its
//! release invoke, a lease-lost, its process retired or dead) and acquires keep failing for
//! longer than `ttl + recovery_slack`, the lock is stuck even though no holder died or froze —
//! an acquire answered `fail` whose request had in fact landed leaves such a key. The report
//! names the acquires that tell the story: the first one to complete after the last hold ended
//! (the likeliest to have taken the lock unseen) and the last one before the deadline, each
//! with its outcome. Memory: per lock two acquire completions.

use super::{LockState, StuckLock};
use crate::checker::Context;
use crate::locks::LockId;
use results::{EventRef, OpType};

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
        if let Some(why) = e.error.as_deref() {
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

/// What a lock's acquires answered: the last, and the first after its last hold ended.
#[derive(Debug, Clone, Default)]
pub(super) struct Acquires {
    pub last: Seen,
    /// Set by the first completion after the last hold ended (`None` until then).
    pub after_hold: Option<Seen>,
    /// Whether the lock's last hold ended and no acquire completed since.
    pub awaiting: bool,
}

impl Acquires {
    /// An acquire of this lock completed.
    pub fn completed(&mut self, p: u32, e: &EventRef<'_>) {
        self.last.set(p, e);
        if self.awaiting {
            self.awaiting = false;
            let mut first = Seen::default();
            first.set(p, e);
            self.after_hold = Some(first);
        }
    }
}

impl StuckLock {
    /// Process `q`'s holds end with `e`: each lock left with no certain holder must become
    /// acquirable within the window (unless another obligation already runs for it).
    pub(super) fn last_holds_ended(&mut self, q: u32, e: &EventRef<'_>, cx: &Context<'_>) {
        let mut ended: Vec<(LockId, Option<String>)> = cx
            .holds
            .held_by(q)
            .filter(|h| cx.lock.is_none_or(|l| l == h.lock))
            .filter(|h| cx.holds.open(h.lock).iter().all(|o| o.process == q))
            .map(|h| (h.lock, h.lease().map(str::to_string)))
            .collect();
        ended.dedup_by_key(|(l, _)| *l);
        for (lock, lease) in ended {
            let name = cx.locks.name(lock).to_string();
            let l = super::state(&mut self.locks, lock, &name);
            l.acquires.awaiting = true;
            l.acquires.after_hold = None;
            if l.obligation.is_some() {
                continue;
            }
            let reason = format!(
                "the last hold of it (process {q}, lease {}) ended at index {} ({} {}) and \
                 nobody held it since",
                lease.as_deref().unwrap_or("-"),
                e.index,
                e.f,
                kind_word(e.kind)
            );
            self.oblige((lock, &name), reason, e, None, false);
        }
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
    if let Some(first) = a.after_hold.as_ref().filter(|f| f.index != a.last.index) {
        s = format!(
            "the first acquire after its last hold ended: {}; {s}",
            first.describe()
        );
    }
    Some(s)
}
