//! When the fault-free tail of a run may end (docs/design.md, "Recovery"). The tail exists for
//! the liveness checks: `stuck-lock` needs a grant after the final heal, `locked-out-client` needs
//! every worker to have taken the lock again, and every hold open at the heal must have ended.
//! All of that is shown once each worker has completed one whole cycle that began after the
//! heal: an acquire invoked then and granted, and the release (or the retirement) that ended
//! it. Until then, and whenever that does not happen, the tail lasts its configured length.

use results::{Event, OpType, Process, F};
use std::collections::BTreeMap;

/// Each worker's progress through its first cycle after the heal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cycle {
    /// Process `p` invoked an acquire after the heal.
    Asked(u32),
    /// Process `p`'s acquire after the heal was granted.
    Holding(u32),
    /// That hold ended: the worker took the lock again and let it go.
    Done,
}

/// Follows the workers' cycles after the final heal.
#[derive(Debug, Default)]
pub struct Settling {
    workers: usize,
    /// Run time (ns) of the final heal; no cycle counts before it is known.
    healed: Option<u64>,
    cycles: BTreeMap<usize, Cycle>,
}

impl Settling {
    pub fn new(workers: usize) -> Self {
        Settling {
            workers,
            ..Settling::default()
        }
    }

    /// Every fault is healed and the time limit has passed, at run time `ns`.
    pub fn healed_at(&mut self, ns: u64) {
        self.healed.get_or_insert(ns);
    }

    /// Feeds one recorded event (process `p` is worker `p % workers`).
    pub fn observe(&mut self, e: &Event) {
        let (Some(healed), Process::Worker(p)) = (self.healed, &e.process) else {
            return;
        };
        let (p, n) = (*p, self.workers.max(1));
        let w = p as usize % n;
        let now = self.cycles.get(&w).copied();
        let next = match (now, e.kind, &e.f) {
            (Some(Cycle::Done), ..) => return,
            (_, OpType::Invoke, F::Acquire) if e.time >= healed => Some(Cycle::Asked(p)),
            (Some(Cycle::Asked(q)), OpType::Ok, F::Acquire) if q == p => Some(Cycle::Holding(p)),
            (Some(Cycle::Asked(q)), _, F::Acquire) if q == p => None,
            // A hold ends with its release's completion, whatever the answer, or when an
            // `info` retires its process (docs/design.md, "Holds").
            (Some(Cycle::Holding(q)), kind, F::Release) if q == p && kind != OpType::Invoke => {
                Some(Cycle::Done)
            }
            // A worker that dies in the tail starts its cycle again under its next process.
            (Some(Cycle::Asked(q) | Cycle::Holding(q)), _, F::Exit) if q == p => None,
            (Some(Cycle::Holding(q)), OpType::Info, f) if q == p && *f != F::Check => {
                Some(Cycle::Done)
            }
            _ => return,
        };
        match next {
            Some(c) => self.cycles.insert(w, c),
            None => self.cycles.remove(&w),
        };
    }

    /// True once every worker has completed a cycle after the heal.
    pub fn settled(&self) -> bool {
        self.healed.is_some()
            && self.workers > 0
            && (0..self.workers).all(|w| self.cycles.get(&w) == Some(&Cycle::Done))
    }
}

#[cfg(test)]
mod tests;
