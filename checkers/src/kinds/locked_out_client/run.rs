//! What locked-out-client gathers while a worker fails: a run of failed acquires (its attempts
//! and the grants to others it saw), each lock's latest grants, and whether a fault was on.

use crate::name::Name;
use results::{EventRef, OpType};

use super::{MIN_ATTEMPTS, MIN_FREE_FAILURES, MIN_GRANTS};

/// How many attempts and grants a run keeps as evidence (all are counted).
pub(super) const LISTED: usize = 20;
/// How many of a lock's latest grants are remembered, to find those during a run's first
/// attempt (a run opens at its first failure, when the grants since its invoke have passed).
const RECENT: usize = 32;

/// A run of failed acquires (see the module doc).
#[derive(Debug)]
pub(super) struct Run {
    pub(super) lock: Name,
    /// Index and time of its first invoke and of its last completion.
    pub(super) first: (u64, u64),
    pub(super) last: (u64, u64),
    pub(super) attempts: Vec<Attempt>,
    pub(super) attempts_total: u32,
    pub(super) processes: Vec<u32>,
    /// Grants to others since its first invoke; the lock's grant count at its last completion
    /// (the grants since are the count's growth); the history index of the last grant looked at.
    pub(super) granted: u64,
    pub(super) count_seen: u64,
    pub(super) seen: u64,
    pub(super) grants: Vec<Grant>,
    /// Failures answered while no other worker certainly held the lock.
    pub(super) while_free: u32,
    /// When it became true.
    pub(super) claimed_at: Option<u64>,
}

/// One failed acquire: its invoke's index, its completion's, the process, the outcome and why.
#[derive(Debug, Clone)]
pub(super) struct Attempt {
    pub(super) invoke: u64,
    pub(super) index: u64,
    pub(super) process: u32,
    pub(super) outcome: OpType,
    pub(super) error: Option<String>,
}

/// One grant of a lock: history index, time, process, token.
#[derive(Debug, Clone, Copy)]
pub(super) struct Grant {
    pub(super) index: u64,
    pub(super) time: u64,
    pub(super) process: u32,
    pub(super) token: Option<u64>,
}

/// A lock's grants: how many, the time of the latest, and the latest [`RECENT`].
#[derive(Debug, Default)]
pub(super) struct Grants {
    pub(super) count: u64,
    pub(super) last_time: u64,
    recent: Vec<Grant>,
    next: usize,
}

impl Grants {
    pub(super) fn push(&mut self, g: Grant) {
        self.count += 1;
        self.last_time = g.time;
        if self.recent.len() < RECENT {
            self.recent.push(g);
        } else {
            self.recent[self.next] = g;
            self.next = (self.next + 1) % RECENT;
        }
    }

    /// The remembered grants after history index `after`, in history order.
    pub(super) fn since(&self, after: u64) -> Vec<Grant> {
        let mut g: Vec<Grant> = self
            .recent
            .iter()
            .filter(|g| g.index > after)
            .copied()
            .collect();
        g.sort_by_key(|g| g.index);
        g
    }
}

/// The faults on one scope: how many are on, and the history index of the last to start or
/// stop.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Calm {
    pub(super) active: u32,
    pub(super) last: Option<u64>,
}

impl Calm {
    /// Whether a fault was on at any moment since history index `since`.
    pub(super) fn broken_since(&self, since: u64) -> bool {
        self.active > 0 || self.last.is_some_and(|l| l > since)
    }
}

impl Run {
    /// A run whose first failure was invoked at `invoked` (index, time); `grants` are the
    /// lock's, as they stand at that failure.
    pub(super) fn open(lock: &str, invoked: (u64, u64), grants: &Grants) -> Run {
        // The grants since its invoke, as far as the lock remembers them: the first failure
        // counts them as the growth of the count.
        let during = grants.recent.iter().filter(|g| g.index > invoked.0).count();
        Run {
            lock: Name::from(lock),
            first: invoked,
            last: invoked,
            attempts: Vec::new(),
            attempts_total: 0,
            processes: Vec::new(),
            granted: 0,
            count_seen: grants.count - during as u64,
            seen: invoked.0,
            grants: Vec::new(),
            while_free: 0,
            claimed_at: None,
        }
    }

    /// One more failure, `e`, of process `p`'s acquire invoked at history index `invoke`;
    /// `free`: no other worker certainly held the lock when it was answered.
    pub(super) fn attempt(
        &mut self,
        p: u32,
        invoke: u64,
        e: &EventRef<'_>,
        grants: &Grants,
        free: bool,
    ) {
        self.granted += grants.count - self.count_seen;
        self.count_seen = grants.count;
        if self.grants.len() < LISTED {
            let new = grants.since(self.seen);
            self.grants
                .extend(new.into_iter().take(LISTED - self.grants.len()));
        }
        self.seen = e.index;
        self.last = (e.index, e.time);
        self.attempts_total += 1;
        if self.attempts.len() < LISTED {
            self.attempts.push(Attempt {
                invoke,
                index: e.index,
                process: p,
                outcome: e.kind,
                error: e.error().map(str::to_string),
            });
        }
        if !self.processes.contains(&p) {
            self.processes.push(p);
        }
        self.while_free += u32::from(free);
    }

    /// Whether it is long enough (`window`: ttl + slack), tried enough, failed at least once
    /// while nobody else held the lock, and saw the lock taken by others enough, the last time
    /// (`last_grant`) after it had failed for a window.
    pub(super) fn holds(&self, window: u64, last_grant: u64) -> bool {
        let deadline = self.first.1.saturating_add(window);
        self.last.1 > deadline
            && self.attempts_total >= MIN_ATTEMPTS
            && self.while_free >= MIN_FREE_FAILURES
            && self.granted >= MIN_GRANTS
            && last_grant > deadline
    }
}
