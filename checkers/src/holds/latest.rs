//! Each process's latest acquisition of each lock, and the grant that superseded it: what
//! held-after-loss (docs/design.md, "Anomaly kinds") asks when a keep-alive's `check` answers
//! held. The hold book keeps it beside the holds, from the acquire `ok`s it takes in anyway, so
//! that held-after-loss is visited for `check` lines alone: a history without any costs it
//! nothing. It must be kept whether or not a `check` line ever comes, since a check may ask about
//! an acquisition superseded long before.
//!
//! "Superseded": acquisition B of the same lock, by another process, granted after A: either its
//! acquire was invoked after A's acquire `ok` (grant order: B's grant cannot have come first), or
//! its acquire completed after A's with a higher fence token (the token orders the grants: a
//! waiter queued before A's grant, as ZooKeeper's lock recipe queues them, that takes the lock
//! after A lost it). A B whose fence token is lower than A's is older whatever the history's
//! order, and never supersedes A; without both tokens only grant order decides. The first such B
//! is kept, with what showed it ([`Basis`]).
//!
//! Double-release reads it too: which acquisition a release acknowledged is for (the releaser's
//! latest of that lock) and the lock's latest grant, so that it is visited for an acquire `ok`
//! only while a suspect awaits judgement.
//!
//! Memory: per lock, one record per process that acquired it (two shared references for a
//! superseded one). A grant looks only at the lock's acquisitions not superseded yet (a
//! handful).

use super::Shared;
use crate::locks::{LockId, PerLock};
use crate::procs::PerProcess;

/// What shows that a grant came after the acquisition it superseded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    /// Its acquire was invoked after the other's acquire `ok`.
    GrantOrder,
    /// Its acquire was invoked before the other's grant, completed after it, and carries a
    /// higher fence token.
    Token,
}

impl Basis {
    /// Its name in the evidence (`basis`).
    pub fn as_str(self) -> &'static str {
        match self {
            Basis::GrantOrder => "grant-order",
            Basis::Token => "token",
        }
    }
}

/// One lock's latest acquisitions, one per process that acquired it: each either current or
/// superseded, never both.
#[derive(Debug)]
struct OfLock<S> {
    /// Not superseded yet, in no particular order (a grant looks at each).
    current: Vec<S>,
    /// Superseded, by process: the acquisition, the grant that superseded it, and what showed it.
    superseded: PerProcess<(S, S, Basis)>,
    /// The history index of the lock's latest acquire `ok`.
    last_grant: Option<u64>,
}

impl<S> Default for OfLock<S> {
    fn default() -> Self {
        OfLock {
            current: Vec::new(),
            superseded: PerProcess::default(),
            last_grant: None,
        }
    }
}

/// See the module doc.
#[derive(Debug)]
pub struct Latest<S> {
    by_lock: PerLock<OfLock<S>>,
}

impl<S> Default for Latest<S> {
    fn default() -> Self {
        Latest {
            by_lock: PerLock::default(),
        }
    }
}

impl<S: Shared> Latest<S> {
    /// Acquisition `b` completed; its acquire was invoked at history index `invoked`.
    #[inline]
    pub(super) fn granted(&mut self, b: &S, invoked: Option<u64>) {
        let OfLock {
            current,
            superseded,
            last_grant,
        } = self.by_lock.at(b.lock);
        *last_grant = Some(b.index);
        let q = b.process;
        let mut k = 0;
        while let Some(a) = current.get(k) {
            if a.process == q {
                current.swap_remove(k); // q's own earlier acquisition: replaced below
                continue;
            }
            // `a` is current, so its `ok` came before this one: a higher token completed after
            // it was granted after it, whenever its acquire was invoked.
            let basis = match (invoked.is_some_and(|i| i > a.index), a.token.zip(b.token)) {
                (_, Some((a, b))) if b < a => None,
                (true, _) => Some(Basis::GrantOrder),
                (false, Some((a, b))) if b > a => Some(Basis::Token),
                (false, _) => None,
            };
            let Some(basis) = basis else {
                k += 1;
                continue;
            };
            let a = current.swap_remove(k);
            superseded.insert(a.process, (a, b.clone(), basis));
        }
        superseded.remove(q);
        current.push(b.clone());
    }

    /// `process`'s latest acquisition of `lock`, superseded or not.
    #[inline]
    pub fn of(&self, process: u32, lock: LockId) -> Option<&S> {
        let l = self.by_lock.get(lock)?;
        match l.current.iter().find(|a| a.process == process) {
            Some(a) => Some(a),
            None => l.superseded.get(process).map(|(a, _, _)| a),
        }
    }

    /// Whether any process acquired any lock under this owner name: what tells a worker from
    /// a node among the targets of a fault this build does not know. It walks every record, so
    /// it is for rare questions only.
    pub fn has_owner(&self, owner: &str) -> bool {
        self.by_lock.iter().any(|(_, l)| {
            l.current.iter().any(|a| a.owner() == Some(owner))
                || l.superseded
                    .values()
                    .any(|(a, _, _)| a.owner() == Some(owner))
        })
    }

    /// The history index of `lock`'s latest acquire `ok`.
    #[inline]
    pub fn last_grant(&self, lock: LockId) -> Option<u64> {
        self.by_lock.get(lock)?.last_grant
    }

    /// `process`'s latest acquisition of `lock`, the grant that superseded it, if one did, and
    /// what showed it.
    pub fn superseded(&self, process: u32, lock: LockId) -> Option<(&S, &S, Basis)> {
        let (a, b, basis) = self.by_lock.get(lock)?.superseded.get(process)?;
        Some((a, b, *basis))
    }
}
