//! Hold intervals: who certainly held which lock when. The engine keeps one [`HoldBook`], fed
//! every event, and hands it (as it was before the event) to every checker in its
//! [`crate::Context`]: concurrent-holders, double-release and stuck-lock read the holds, the token
//! checkers the pending acquires and each lock's highest token when one was invoked.
//!
//! A hold is `[acquire ok, first of: release invoke / lease-lost / exit / info of that process /
//! end of history]`. Only *certain* holds are tracked, which keeps the checkers built on them
//! sound (no false alarms):
//! - an `info` acquire may or may not have happened, and its process is retired at once, so it
//!   opens no hold here (stuck-lock treats it separately as a lock possibly left held);
//! - after an `info` outcome of any operation the process is retired and nobody knows what its
//!   client still does, so its certain hold ends there.
//!
//! Memory is the open holds, one pending acquire per process (see [`crate::procs`] for what a
//! process slot costs), each process's latest acquisition of each lock ([`latest`]) and the last
//! few acquisition records kept for reuse. Locks are [`LockId`]s: the
//! engine resolves each event's lock once ([`derive`]) and passes it in.
//!
//! This is the one definition of a hold (docs/design.md, "Holds"): the checkers read it through the engine, and
//! the report and the live holder tracking through [`crate::fold::HoldFold`], which feeds the
//! same book.

use crate::locks::{LockId, LockNames, PerLock};
use crate::procs::PerProcess;
use results::{EventRef, OpType, Process, F};
use std::ops::Deref;
use std::rc::Rc;
use std::sync::Arc;

pub mod latest;

/// One completed acquisition: a worker's acquire `ok` whose lock is known. The engine makes it
/// once, and the hold book and every checker that remembers the acquisition share it (each
/// used to copy owner and lease into its own record: eight name copies per acquisition).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Acquisition {
    pub process: u32,
    pub lock: LockId,
    pub token: Option<u64>,
    /// The adapter's read-back after the grant found the node or key gone: the client was told
    /// it holds the lock, and the service may hold nothing for it.
    pub read_back: bool,
    /// History index and time of the acquire `ok`.
    pub index: u64,
    pub time: u64,
    /// The owner, then the lease, back to back in one buffer that a reused record keeps (see
    /// [`Recycler`]): filling it is two copies into memory already there.
    names: String,
    /// The owner's length in `names`, if the event had one.
    owner_len: Option<usize>,
    has_lease: bool,
}

/// One certain hold: the acquisition that opened it.
pub type Hold = Rc<Acquisition>;

/// How an acquisition record is shared: `Rc` in the engine (no atomic counts on the hot path),
/// `Arc` where the book lives behind a lock shared across threads (the live tracker).
pub trait Shared: Clone + Deref<Target = Acquisition> {
    fn share(a: Acquisition) -> Self;
    /// The record, if nobody else holds it (to refill it in place).
    fn alone(this: &mut Self) -> Option<&mut Acquisition>;
}

impl Shared for Rc<Acquisition> {
    #[inline]
    fn share(a: Acquisition) -> Self {
        Rc::new(a)
    }
    #[inline]
    fn alone(this: &mut Self) -> Option<&mut Acquisition> {
        Rc::get_mut(this)
    }
}

impl Shared for Arc<Acquisition> {
    fn share(a: Acquisition) -> Self {
        Arc::new(a)
    }
    fn alone(this: &mut Self) -> Option<&mut Acquisition> {
        Arc::get_mut(this)
    }
}

/// Makes the shared [`Acquisition`] records, reusing the allocation of one nobody holds any
/// more: most acquisitions are forgotten by every checker within a few more, and an allocation
/// and a free for each was a tenth of the check. It keeps the last [`Recycler::KEPT`] records
/// and reuses the oldest when it is the only one left holding it.
#[derive(Debug)]
pub struct Recycler<S = Hold> {
    /// The last records made, oldest at `next` once there are [`Recycler::KEPT`] of them.
    recent: Vec<S>,
    next: usize,
}

impl<S> Default for Recycler<S> {
    fn default() -> Self {
        Recycler {
            recent: Vec::new(),
            next: 0,
        }
    }
}

impl<S: Shared> Recycler<S> {
    const KEPT: usize = 32;

    /// The acquisition an event completes, if it is a worker's acquire `ok` about `lock`.
    pub fn acquisition(&mut self, e: &EventRef<'_>, lock: Option<LockId>) -> Option<S> {
        let (Process::Worker(process), F::Acquire, OpType::Ok, Some(lock)) =
            (e.process, &e.f, e.kind, lock)
        else {
            return None;
        };
        if self.recent.len() < Self::KEPT {
            let hold = S::share(Acquisition::new(process, lock, e));
            self.recent.push(hold.clone());
            return Some(hold);
        }
        let oldest = &mut self.recent[self.next];
        self.next = (self.next + 1) % Self::KEPT;
        match S::alone(oldest) {
            Some(a) => a.fill(process, lock, e),
            None => *oldest = S::share(Acquisition::new(process, lock, e)),
        }
        Some(oldest.clone())
    }
}

impl Acquisition {
    fn new(process: u32, lock: LockId, e: &EventRef<'_>) -> Acquisition {
        let mut a = Acquisition {
            process,
            lock,
            token: None,
            read_back: false,
            index: 0,
            time: 0,
            names: String::new(),
            owner_len: None,
            has_lease: false,
        };
        a.fill(process, lock, e);
        a
    }

    /// Makes this record the acquisition `e` completes, in place. Always inlined into the
    /// reuse of a record, its one hot caller.
    #[inline(always)]
    fn fill(&mut self, process: u32, lock: LockId, e: &EventRef<'_>) {
        self.process = process;
        self.lock = lock;
        self.token = e.token;
        self.read_back = e.read_back;
        self.index = e.index;
        self.time = e.time;
        self.names.clear();
        self.owner_len = e.owner.as_deref().map(|o| {
            self.names.push_str(o);
            o.len()
        });
        self.has_lease = match e.lease.as_deref() {
            Some(l) => {
                self.names.push_str(l);
                true
            }
            None => false,
        };
    }

    /// The owner the acquire `ok` named.
    pub fn owner(&self) -> Option<&str> {
        self.owner_len.map(|n| &self.names[..n])
    }

    /// The lease the acquire `ok` named.
    pub fn lease(&self) -> Option<&str> {
        let start = self.owner_len.unwrap_or(0);
        self.has_lease.then(|| &self.names[start..])
    }

    /// Whether two completions are the same acquisition (same lease; without leases, same
    /// process and owner).
    pub fn same_as(&self, other: &Acquisition) -> bool {
        match (self.lease(), other.lease()) {
            (Some(a), Some(b)) => a == b,
            _ => self.process == other.process && self.owner() == other.owner(),
        }
    }

    /// The fence token (the token checkers keep only acquisitions that have one).
    pub fn fence(&self) -> u64 {
        self.token.unwrap_or(0)
    }
}

/// What ended a hold (docs/design.md, "Holds").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HoldEnd {
    /// A release was invoked for it.
    Release,
    /// The worker noticed it no longer owned the lock.
    LeaseLost,
    /// An `info` outcome retired its process: nobody knows what its client still does.
    Retired,
    /// Its process died.
    Exit,
    /// The history ended with it open.
    HistoryEnd,
}

/// The lock an event is about and the acquisition it completes, derived once from the shared
/// state as it stood before the event (then [`HoldBook::apply`] takes the event in).
#[inline]
pub fn derive<S: Shared>(
    e: &EventRef<'_>,
    locks: &mut LockNames,
    holds: &HoldBook<S>,
    acquisitions: &mut Recycler<S>,
) -> (Option<LockId>, Option<S>) {
    // Only lock operations name a lock the checkers follow: interning the lock of every
    // write too would size the per-lock state by locks nobody acquired.
    let lock_op = matches!(e.f, F::Acquire | F::Release | F::LeaseLost | F::Check);
    let named = e
        .lock
        .as_deref()
        .filter(|_| lock_op)
        .map(|l| locks.intern(l));
    let lock = holds.lock_of(e, named);
    // Checked here first: most events complete no acquisition, and the call alone cost more
    // than the check.
    let completes = e.kind == OpType::Ok && matches!(e.f, F::Acquire);
    (
        lock,
        completes
            .then(|| acquisitions.acquisition(e, lock))
            .flatten(),
    )
}

/// A process's pending acquire.
#[derive(Debug)]
struct Pending<S> {
    /// The lock its invoke named, and the invoke's history index and time.
    lock: LockId,
    index: u64,
    time: u64,
    /// The lock's highest-token acquisition completed before the invoke (token-regression
    /// compares the grant with it); none once a later invoke of the process named no lock.
    highest: Option<S>,
}

/// The open holds of every lock, and the lock each process is trying to acquire.
#[derive(Debug)]
pub struct HoldBook<S = Hold> {
    by_lock: PerLock<Vec<S>>,
    pending: PerProcess<Pending<S>>,
    /// Per lock, the first completed acquisition with its highest fence token so far.
    highest: PerLock<Option<S>>,
    latest: latest::Latest<S>,
}

impl<S> Default for HoldBook<S> {
    fn default() -> Self {
        HoldBook {
            by_lock: PerLock::default(),
            pending: PerProcess::default(),
            highest: PerLock::default(),
            latest: latest::Latest::default(),
        }
    }
}

impl<S: Shared> HoldBook<S> {
    /// The lock an event is about: its own `lock` (`named`, already resolved), else, for an
    /// acquire completion that does not repeat it, the lock its invoke named.
    #[inline]
    pub fn lock_of(&self, e: &EventRef<'_>, named: Option<LockId>) -> Option<LockId> {
        match (named, e.process, &e.f) {
            (Some(lock), _, _) => Some(lock),
            (None, Process::Worker(p), F::Acquire) => self.pending_acquire(p),
            _ => None,
        }
    }

    /// The certain holds of `lock` open now.
    #[inline]
    pub fn open(&self, lock: LockId) -> &[S] {
        self.by_lock.get(lock).map_or(&[], |v| v.as_slice())
    }

    /// Every open hold, of every lock.
    pub fn iter(&self) -> impl Iterator<Item = &S> {
        self.by_lock.iter().flat_map(|(_, v)| v)
    }

    /// Every open hold of a process.
    pub fn held_by(&self, process: u32) -> impl Iterator<Item = &S> {
        self.by_lock
            .iter()
            .flat_map(|(_, v)| v)
            .filter(move |h| h.process == process)
    }

    /// The lock a process has a pending acquire on.
    #[inline]
    pub fn pending_acquire(&self, process: u32) -> Option<LockId> {
        self.pending.get(process).map(|w| w.lock)
    }

    /// The history index and time of a process's pending acquire invoke (grant order: an
    /// acquisition whose acquire was invoked after another's `ok` was granted after it).
    #[inline]
    pub fn pending_since(&self, process: u32) -> Option<(u64, u64)> {
        self.pending.get(process).map(|w| (w.index, w.time))
    }

    /// The completed acquisition of `lock` with the highest fence token (the first to reach it).
    #[inline]
    pub fn highest(&self, lock: LockId) -> Option<&S> {
        self.highest.get(lock)?.as_ref()
    }

    /// The highest-token acquisition of the lock completed before a process's pending acquire
    /// was invoked (token-regression: a grant with a lower token went backwards).
    #[inline]
    pub fn highest_at_invoke(&self, process: u32) -> Option<&S> {
        self.pending.get(process)?.highest.as_ref()
    }

    /// Each process's latest acquisition of each lock, and what superseded it.
    pub fn latest(&self) -> &latest::Latest<S> {
        &self.latest
    }

    /// Applies one event, about `lock` (see [`derive`]); `acquired` is the acquisition it
    /// completes ([`Recycler::acquisition`]), which opens a hold.
    #[inline]
    pub fn apply(&mut self, e: &EventRef<'_>, lock: Option<LockId>, acquired: Option<&S>) {
        self.apply_noting(e, lock, acquired, &mut |_, _| {});
    }

    /// [`HoldBook::apply`], telling `ended` of every hold the event ends and why.
    #[inline]
    pub fn apply_noting(
        &mut self,
        e: &EventRef<'_>,
        lock: Option<LockId>,
        acquired: Option<&S>,
        ended: &mut impl FnMut(&S, HoldEnd),
    ) {
        let Process::Worker(p) = e.process else {
            return;
        };
        match (&e.f, e.kind) {
            (F::Acquire, OpType::Ok) => {
                if let Some(a) = acquired {
                    self.by_lock.at(a.lock).push(a.clone());
                    let invoked = self.pending.get(p).map(|w| w.index);
                    self.latest.granted(a, invoked);
                    if let Some(t) = a.token {
                        let highest = self.highest.at(a.lock);
                        if highest.as_ref().is_none_or(|m| t > m.fence()) {
                            *highest = Some(a.clone());
                        }
                    }
                }
            }
            (F::Acquire, OpType::Info) => self.close_all(p, HoldEnd::Retired, ended),
            (F::Release, OpType::Invoke) | (F::LeaseLost, _) => {
                let why = if matches!(e.f, F::Release) {
                    HoldEnd::Release
                } else {
                    HoldEnd::LeaseLost
                };
                // "For A's lease": a late notice about an earlier lease of the same process
                // must not end the hold it has now.
                let lease = e.lease.as_deref();
                match lock {
                    Some(lock) => self.close(p, lock, lease, why, ended),
                    None => self.close_all(p, why, ended),
                }
            }
            (F::Exit, _) => self.close_all(p, HoldEnd::Exit, ended),
            // The keep-alive's question, beside the process's own operations: whatever it was
            // answered (even nothing, `info`), it ends no hold (docs/design.md, "Holds").
            (F::Check, _) => {}
            (_, OpType::Info) => self.close_all(p, HoldEnd::Retired, ended),
            _ => {}
        }
        // The pending acquire: an invoke opens it, its completion, an exit or a retirement
        // (`info`) closes it. An invoke without a lock keeps the pending lock (its completion may
        // name none) but leaves its grant nothing to compare a token with.
        match (&e.f, e.kind) {
            (F::Acquire, OpType::Invoke) => match (lock, &e.lock) {
                (Some(lock), Some(_)) => {
                    let highest = self.highest.get(lock).cloned().flatten();
                    let w = Pending {
                        lock,
                        index: e.index,
                        time: e.time,
                        highest,
                    };
                    self.pending.insert(p, w);
                }
                _ => {
                    if let Some(w) = self.pending.get_mut(p) {
                        w.highest = None;
                    }
                }
            },
            (F::Check, _) => {}
            (F::Acquire, _) | (F::Exit, _) | (_, OpType::Info) => drop(self.pending.remove(p)),
            _ => {}
        }
    }

    fn close(
        &mut self,
        process: u32,
        lock: LockId,
        lease: Option<&str>,
        why: HoldEnd,
        ended: &mut impl FnMut(&S, HoldEnd),
    ) {
        let Some(list) = self.by_lock.get_mut(lock) else {
            return;
        };
        match lease {
            Some(lease) => list.retain(|h| {
                let ends = h.process == process && h.lease().is_none_or(|l| same_lease(l, lease));
                if ends {
                    ended(h, why);
                }
                !ends
            }),
            None => retain_others(list, process, why, ended),
        }
    }

    fn close_all(&mut self, process: u32, why: HoldEnd, ended: &mut impl FnMut(&S, HoldEnd)) {
        for (_, list) in self.by_lock.iter_mut() {
            retain_others(list, process, why, ended);
        }
    }
}

/// `a == b` for a release's lease and a hold's: lengths 8 to 16 bytes (a generated lease
/// name, an etcd lease id in hex) as two overlapping eight-byte words, the rest by `==`. A
/// libc memcmp call for each was 1% of the engine's instructions on vs_porcupine's histories,
/// and a byte loop more.
#[inline]
fn same_lease(a: &str, b: &str) -> bool {
    let (a, b, n) = (a.as_bytes(), b.as_bytes(), a.len());
    if n != b.len() {
        return false;
    }
    let word = |s: &[u8], i: usize| s[i..].first_chunk::<8>().map(|w| u64::from_le_bytes(*w));
    if (8..=16).contains(&n) {
        return word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8);
    }
    a == b
}

/// Keeps the holds of other processes; tells `ended` of each of `process`'s it drops.
#[inline]
fn retain_others<S: Shared>(
    list: &mut Vec<S>,
    process: u32,
    why: HoldEnd,
    ended: &mut impl FnMut(&S, HoldEnd),
) {
    list.retain(|h| {
        let other = h.process != process;
        if !other {
            ended(h, why);
        }
        other
    });
}

#[cfg(test)]
mod tests;
