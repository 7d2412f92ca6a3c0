//! Hold intervals: who certainly held which lock when. The engine keeps one [`HoldBook`], fed
//! every event, and hands it (as it was before the event) to every checker in its
//! [`crate::Context`]: concurrent-holders, double-release and stuck-lock read the holds, the token
//! checkers the pending acquires.
//!
//! A hold is `[acquire ok, first of: release invoke / lease-lost / exit / info of that process /
//! end of history]`. Only *certain* holds are tracked, which keeps the checkers built on them
//! sound (no false alarms):
//! - an `info` acquire may or may not have happened, and its process is retired at once, so it
//!   opens no hold here (stuck-lock treats it separately as a lock possibly left held);
//! - after an `info` outcome of any operation the process is retired and nobody knows what its
//!   client still does, so its certain hold ends there.
//!
//! Memory is the open holds plus one pending acquire per process.

use crate::hashing::FastMap;
use crate::name::{opt_name, Name};
use results::{EventRef, OpType, Process, F};

/// One certain hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hold {
    pub process: u32,
    pub lock: Name,
    pub owner: Option<Name>,
    pub lease: Option<Name>,
    pub token: Option<u64>,
    /// History index and time of the acquire `ok`.
    pub index: u64,
    pub time: u64,
}

/// The lock each process is trying to acquire (its pending acquire invoke). Buffers are reused,
/// so following millions of acquires allocates only once per process.
#[derive(Debug, Default)]
pub struct PendingAcquires {
    map: FastMap<u32, (bool, Name)>,
}

impl PendingAcquires {
    /// The lock a pending acquire of `process` is about.
    pub fn get(&self, process: u32) -> Option<&str> {
        match self.map.get(&process) {
            Some((true, lock)) => Some(lock),
            _ => None,
        }
    }

    /// The lock an acquire event is about: its own `lock`, else its invoke's.
    pub fn lock_of<'e>(&'e self, e: &'e EventRef<'_>) -> Option<&'e str> {
        match (&e.lock, e.process) {
            (Some(l), _) => Some(l),
            (None, Process::Worker(p)) => self.get(p),
            (None, Process::Nemesis) => None,
        }
    }

    /// Follows one event: an acquire invoke opens, its completion or the process's exit or
    /// retirement (`info`) closes.
    pub fn observe(&mut self, e: &EventRef<'_>) {
        let Process::Worker(p) = e.process else {
            return;
        };
        match (&e.f, e.kind) {
            (F::Acquire, OpType::Invoke) => {
                if let Some(lock) = &e.lock {
                    let slot = self.map.entry(p).or_default();
                    slot.0 = true;
                    if slot.1 != *lock {
                        slot.1 = Name::from(lock.as_ref());
                    }
                }
            }
            (F::Acquire, _) => {
                if let Some(slot) = self.map.get_mut(&p) {
                    slot.0 = false;
                }
            }
            (F::Exit, _) | (_, OpType::Info) => drop(self.map.remove(&p)),
            _ => {}
        }
    }
}

/// The open holds of every lock, and the lock each process is trying to acquire.
#[derive(Debug, Default)]
pub struct HoldBook {
    by_lock: FastMap<Name, Vec<Hold>>,
    pending: PendingAcquires,
}

impl HoldBook {
    /// The lock an acquire event is about: its own `lock`, else its invoke's.
    pub fn acquire_lock<'e>(&'e self, e: &'e EventRef<'_>) -> Option<&'e str> {
        self.pending.lock_of(e)
    }

    /// The certain holds of `lock` open now.
    pub fn open(&self, lock: &str) -> &[Hold] {
        self.by_lock.get(lock).map_or(&[], |v| v.as_slice())
    }

    /// Every open hold of a process.
    pub fn held_by(&self, process: u32) -> impl Iterator<Item = &Hold> {
        self.by_lock
            .values()
            .flatten()
            .filter(move |h| h.process == process)
    }

    /// The lock a process has a pending acquire on.
    pub fn pending_acquire(&self, process: u32) -> Option<&str> {
        self.pending.get(process)
    }

    /// For an acquire `ok` that opens a certain hold: its lock and the holds of that lock
    /// already open.
    pub fn opening<'e>(&'e self, e: &'e EventRef<'_>) -> Option<(&'e str, &'e [Hold])> {
        match (e.process, &e.f, e.kind) {
            (Process::Worker(_), F::Acquire, OpType::Ok) => {
                let lock = self.pending.lock_of(e)?;
                Some((lock, self.open(lock)))
            }
            _ => None,
        }
    }

    /// Applies one event.
    pub fn apply(&mut self, e: &EventRef<'_>) {
        let Process::Worker(p) = e.process else {
            return;
        };
        match (&e.f, e.kind) {
            (F::Acquire, OpType::Ok) => {
                if let Some(lock) = self.pending.lock_of(e) {
                    let list = match self.by_lock.get_mut(lock) {
                        Some(list) => list,
                        None => self.by_lock.entry(Name::from(lock)).or_default(),
                    };
                    let hold = Hold {
                        process: p,
                        lock: Name::from(lock),
                        owner: opt_name(e.owner.as_deref()),
                        lease: opt_name(e.lease.as_deref()),
                        token: e.token,
                        index: e.index,
                        time: e.time,
                    };
                    list.push(hold);
                }
            }
            (F::Acquire, OpType::Info) => self.close_all(p),
            (F::Release, OpType::Invoke) | (F::LeaseLost, _) => match &e.lock {
                Some(lock) => self.close(p, lock),
                None => self.close_all(p),
            },
            (F::Exit, _) | (_, OpType::Info) => self.close_all(p),
            _ => {}
        }
        self.pending.observe(e);
    }

    fn close(&mut self, process: u32, lock: &str) {
        if let Some(list) = self.by_lock.get_mut(lock) {
            list.retain(|h| h.process != process);
        }
    }

    fn close_all(&mut self, process: u32) {
        for list in self.by_lock.values_mut() {
            list.retain(|h| h.process != process);
        }
    }
}
