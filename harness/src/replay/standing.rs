//! The faults a scenario's steps struck and no step lifted yet, each with what it stands on, in
//! the order struck: where the step that lifts one finds it (`A: resume`, `A: heal`, `nemesis:
//! unstarve leader`), and what the final heal lifts, newest first. The executor tracks what
//! each fault did; this only says which step lifts which.

use nemesis::Struck;
use std::mem::discriminant;

/// What a struck fault stands on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum On {
    /// Worker `i` frozen (`pause`, a pause in flight), until its `resume`.
    Frozen(usize),
    /// Worker `i` cut from the lock service, until its `heal`.
    Isolated(usize),
    /// Worker `i`'s links shaped (`slow-reply`, a `cut-*-reply`), until its `heal`.
    Shaped(usize),
    /// Worker `i`'s CPU limited (`starve`), until its `heal`.
    Starved(usize),
    /// A wall clock moved (a node's, a worker's lock client's), by the control's target, until
    /// `nemesis: clock-real`.
    Clock(String),
    /// A lock-service node frozen, until `nemesis: resume <node>`.
    FrozenNode(String),
    /// A lock-service node's CPU limited, until `nemesis: unstarve <node>`.
    StarvedNode(String),
    /// A lock-service node killed with its data emptied, until `nemesis: restart <node>`.
    EmptiedNode(String),
    /// A master cut from its replicas, until the final heal.
    CutMaster(String),
}

impl On {
    /// The node it stands on, for the node kinds.
    pub fn node(&self) -> Option<&str> {
        match self {
            On::FrozenNode(n) | On::StarvedNode(n) | On::EmptiedNode(n) | On::CutMaster(n) => {
                Some(n)
            }
            _ => None,
        }
    }
}

/// Every fault standing, oldest first.
#[derive(Debug, Default)]
pub struct Standing(Vec<(On, Struck)>);

impl Standing {
    pub fn push(&mut self, on: On, struck: Struck) {
        self.0.push((on, struck));
    }

    /// Whether a fault stands on `on`.
    pub fn holds(&self, on: &On) -> bool {
        self.0.iter().any(|(o, _)| o == on)
    }

    /// The fault standing on `on`, taken out for its lift.
    pub fn take(&mut self, on: &On) -> Option<Struck> {
        let at = self.0.iter().position(|(o, _)| o == on)?;
        Some(self.0.remove(at).1)
    }

    /// The newest fault of `on`'s kind standing on a node (whatever node `on` names): the one
    /// `master` / `leader` means in a step that lifts one.
    pub fn latest(&self, on: &On) -> Option<(&str, Struck)> {
        self.0
            .iter()
            .rev()
            .find(|(o, _)| discriminant(o) == discriminant(on))
            .and_then(|(o, s)| Some((o.node()?, *s)))
    }

    /// Every fault standing that `which` picks, taken out, oldest first.
    pub fn take_all(&mut self, which: impl Fn(&On) -> bool) -> Vec<Struck> {
        let (taken, kept) = std::mem::take(&mut self.0)
            .into_iter()
            .partition(|(o, _)| which(o));
        self.0 = kept;
        taken.into_iter().map(|(_, s)| s).collect()
    }
}
