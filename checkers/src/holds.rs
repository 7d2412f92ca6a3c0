//! Hold intervals: who certainly held which lock when. Shared (as a helper each checker owns,
//! not shared state) by concurrent-holders, double-release and stuck-lock.
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

use results::{EventRef, OpType, Process, F};
use std::collections::HashMap;

/// One certain hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hold {
    pub process: u32,
    pub lock: String,
    pub owner: Option<String>,
    pub lease: Option<String>,
    pub token: Option<u64>,
    /// History index and time of the acquire `ok`.
    pub index: u64,
    pub time: u64,
}

/// The open holds of every lock, and the lock each process is trying to acquire.
#[derive(Debug, Default)]
pub struct HoldBook {
    by_lock: HashMap<String, Vec<Hold>>,
    pending_acquire: HashMap<u32, String>,
}

impl HoldBook {
    /// The lock an acquire event is about: its own `lock`, else its invoke's.
    pub fn acquire_lock<'e>(&'e self, e: &'e EventRef<'_>) -> Option<&'e str> {
        match (&e.lock, e.process) {
            (Some(l), _) => Some(l),
            (None, Process::Worker(p)) => self.pending_acquire.get(&p).map(|s| s.as_str()),
            (None, Process::Nemesis) => None,
        }
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
        self.pending_acquire.get(&process).map(|s| s.as_str())
    }

    /// Applies one event. `opened(others, new)` is called for a new hold, with the holds of the
    /// same lock that were already open.
    pub fn apply(&mut self, e: &EventRef<'_>, mut opened: impl FnMut(&[Hold], &Hold)) {
        let Process::Worker(p) = e.process else {
            return;
        };
        match (&e.f, e.kind) {
            (F::Acquire, OpType::Invoke) => {
                if let Some(lock) = &e.lock {
                    self.pending_acquire.insert(p, lock.to_string());
                }
            }
            (F::Acquire, OpType::Ok) => {
                let lock = match (&e.lock, self.pending_acquire.remove(&p)) {
                    (Some(l), _) => l.to_string(),
                    (None, Some(l)) => l,
                    (None, None) => return,
                };
                let hold = Hold {
                    process: p,
                    owner: e.owner.as_deref().map(str::to_string),
                    lease: e.lease.as_deref().map(str::to_string),
                    token: e.token,
                    index: e.index,
                    time: e.time,
                    lock,
                };
                let list = self.by_lock.entry(hold.lock.clone()).or_default();
                opened(list, &hold);
                list.push(hold);
            }
            (F::Acquire, _) => {
                self.pending_acquire.remove(&p);
                if e.kind == OpType::Info {
                    self.close_all(p);
                }
            }
            (F::Release, OpType::Invoke) | (F::LeaseLost, _) => match &e.lock {
                Some(lock) => self.close(p, lock),
                None => self.close_all(p),
            },
            (F::Exit, _) => {
                self.pending_acquire.remove(&p);
                self.close_all(p);
            }
            (_, OpType::Info) => self.close_all(p),
            _ => {}
        }
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
