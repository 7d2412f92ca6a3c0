//! The seam every checker implements: a pure, streaming consumer of history events and resource
//! decisions that reports anomalies of one kind. No I/O, no clock, no randomness: the same input
//! always gives the same findings. Streaming (one event at a time) keeps memory bounded by what a
//! checker must remember (open holds, pending operations), not by the history's length.

use crate::holds::{Hold, HoldBook};
use crate::locks::{LockId, LockNames};
use results::{Anomaly, AnomalyKind, Diagnosis, EventRef, Evidence, OpType, ResourceRef, F};

/// How many anomalies of one kind keep their full evidence; the rest are only counted, so a
/// thoroughly broken run cannot exhaust memory with millions of evidence packets.
pub const MAX_REPORTED_PER_KIND: usize = 100;

/// Whether the resource log was there to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceLog {
    Present,
    /// Missing or unreadable, with the reason (naming the file).
    Missing(String),
}

/// Whether the lock service's own record (`service.jsonl`) was there to read, and what it says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServiceLog {
    Present(std::sync::Arc<Vec<results::service_log::ServiceEntry>>),
    /// Absent or unreadable, with the reason (naming the file).
    Missing(String),
}

/// What a checker learns when the streams end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct End {
    pub resource_log: ResourceLog,
    pub service_log: ServiceLog,
    /// Time of the last history event (ns since start), if any.
    pub last_time: Option<u64>,
}

/// How a checker's judgement ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// It looked at everything it needed; its anomalies (possibly none) are the answer.
    Checked,
    /// The run has nothing this checker can judge (e.g. no fence tokens): not the same as valid.
    NotApplicable(String),
    /// It could not decide (e.g. the resource log is missing): makes the verdict unknown.
    Unknown(String),
}

/// The anomalies one checker found: the first [`MAX_REPORTED_PER_KIND`] in full, and a count.
#[derive(Debug, Clone)]
pub struct Findings {
    pub kind: AnomalyKind,
    pub reported: Vec<Anomaly>,
    pub total: u64,
    /// The findings of the checker's paired kind ([`Checker::paired_kind`]), if it has one.
    pub paired: Option<Box<Findings>>,
    /// What a checker that judged tells beside its anomalies (what it left undecided, say):
    /// the kind's stats `note`, and more of its stats by name.
    pub note: Option<String>,
    pub stats: serde_json::Map<String, serde_json::Value>,
    /// A paired kind's own outcome, set by its checker's `finish` where the two differ (each
    /// token kind is not applicable without tokens of its own); else the checker's applies.
    pub outcome: Option<Outcome>,
}

impl Findings {
    pub fn new(kind: AnomalyKind) -> Self {
        Findings {
            kind,
            reported: Vec::new(),
            total: 0,
            paired: None,
            note: None,
            stats: serde_json::Map::new(),
            outcome: None,
        }
    }

    /// Findings of `kind` that also sort suspects into `paired`.
    pub fn with_paired(kind: AnomalyKind, paired: Option<AnomalyKind>) -> Self {
        Findings {
            paired: paired.map(|k| Box::new(Findings::new(k))),
            ..Findings::new(kind)
        }
    }

    /// The paired kind's findings. Panics for a checker without one (a bug in the checker,
    /// which the engine turns into an unknown verdict).
    pub fn paired(&mut self) -> &mut Findings {
        self.paired
            .as_deref_mut()
            .expect("a checker pushed to a paired kind it did not declare")
    }

    /// Records one anomaly that became true at `at` (ns since the run's start). `fails` is
    /// decided later by the test's `fail_on`.
    pub fn push(&mut self, at: u64, summary: String, evidence: Evidence, diagnosis: Diagnosis) {
        self.total += 1;
        if self.reported.len() < MAX_REPORTED_PER_KIND {
            self.reported.push(Anomaly {
                kind: self.kind,
                fails: false,
                summary,
                at: Some(at),
                evidence,
                diagnosis,
            });
        }
    }
}

/// What a checker may read besides the event: state the engine derives once for all checkers
/// (following the holds was done by three checkers, and pending acquires by five, each on its
/// own copy), as it stood just *before* the event.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// Certain holds and pending acquires of every process, fed every event.
    pub holds: &'a HoldBook,
    /// The lock an acquire, release or lease-lost event is about: its own `lock`, else, for an
    /// acquire completion that does not repeat it, the lock its invoke named. None for other
    /// operations (a write's lock is not followed).
    pub lock: Option<LockId>,
    /// The names behind lock ids (for evidence).
    pub locks: &'a LockNames,
    /// The acquisition the event completes (a worker's acquire `ok` whose lock is known), the
    /// same record the hold book keeps: a checker that remembers it clones the `Rc`.
    pub acquired: Option<&'a Hold>,
}

impl Context<'_> {
    /// What the fault of nemesis event `e` hits: by its name, and for a name this build does not
    /// know by its targets, a target being a worker when the history shows it acquiring under
    /// that name.
    pub fn fault_scope(&self, fault: &str, e: &EventRef<'_>) -> results::fault::Scope {
        results::fault::scope_of(fault, e.targets(), |t| self.holds.latest().has_owner(t))
    }

    /// The event's lock with its name.
    #[inline]
    pub fn lock_named(&self) -> Option<(LockId, &str)> {
        self.lock.map(|l| (l, self.locks.name(l)))
    }
}

/// Which history events a checker needs: one bit per operation (`f`) and type pair, so a
/// checker can ask for "acquire, any type", "every `info` that retires a process" (a retired
/// process ends its holds whatever the operation) or just "acquire `ok`". The engine skips the
/// checker for other events, so a checker must not depend on seeing them (time alone included:
/// a deadline is judged at the next event it sees, or at the end).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interests(pub u64);

/// Bit `4 * operation + type`: nine operations, four types each.
const fn operation(op: u32) -> Interests {
    Interests(0xf << (4 * op))
}

/// The position of a type within its operation's four bits.
const fn type_bit(kind: OpType) -> u32 {
    match kind {
        OpType::Invoke => 0,
        OpType::Ok => 1,
        OpType::Fail => 2,
        OpType::Info => 3,
    }
}

/// How many operations the bits distinguish (the width of [`Interests`] in use: 4 bits each).
pub const OPERATIONS: usize = 9;

impl Interests {
    pub const ACQUIRE: Interests = operation(0);
    pub const WRITE: Interests = operation(1);
    pub const RELEASE: Interests = operation(2);
    pub const READ: Interests = operation(3);
    pub const INCREMENT: Interests = operation(4);
    pub const LEASE_LOST: Interests = operation(5);
    pub const EXIT: Interests = operation(6);
    pub const NEMESIS: Interests = operation(7);
    /// The keep-alive's `check` lines: not the process's own operations (they end no hold).
    pub const CHECK: Interests = operation(8);
    /// The `info` of every operation that retires its process: all but `check`, whose `info`
    /// (a keep-alive's question left unanswered) retires nobody.
    pub const ANY_INFO: Interests = Interests(0x8888_8888);
    pub const ALL: Interests = Interests((1 << (4 * OPERATIONS)) - 1);
    pub const NONE: Interests = Interests(0);

    /// The bit an event carries.
    #[inline]
    pub fn of(e: &EventRef<'_>) -> Interests {
        let op = match e.f {
            F::Acquire => 0,
            F::Write => 1,
            F::Release => 2,
            F::Read => 3,
            F::Increment => 4,
            F::LeaseLost => 5,
            F::Exit => 6,
            F::Start(_) | F::Stop(_) => 7,
            F::Check => 8,
        };
        Interests(1 << (4 * op + type_bit(e.kind)))
    }

    /// These operations, of one type only (`Interests::ACQUIRE.only(OpType::Ok)`).
    pub const fn only(self, kind: OpType) -> Interests {
        Interests(self.0 & (0x1_1111_1111 << type_bit(kind)))
    }

    pub fn meets(self, other: Interests) -> bool {
        self.0 & other.0 != 0
    }
}

impl std::ops::BitOr for Interests {
    type Output = Interests;
    fn bitor(self, o: Interests) -> Interests {
        Interests(self.0 | o.0)
    }
}

/// One anomaly kind's checker.
pub trait Checker {
    /// The kind it reports (every anomaly it pushes has this kind).
    fn kind(&self) -> AnomalyKind;

    /// A second kind it sorts the same suspects into, when one state machine tells the two
    /// apart (double-release and its harmless counterpart release-of-lost-lock): pushed to
    /// [`Findings::paired`], judged and counted as a kind of its own.
    fn paired_kind(&self) -> Option<AnomalyKind> {
        None
    }

    /// The history events it needs (default: all).
    fn interests(&self) -> Interests {
        Interests::ALL
    }

    /// Whether it reads the shared state of [`Context`] (holds, the event's lock, the
    /// acquisition). If that state ever broke (a panic), the checkers that read it would stop
    /// as unknown and the others would go on.
    fn uses_shared(&self) -> bool {
        true
    }

    /// Whether it judges nothing without the lock service's own record (`service.jsonl`): when
    /// the engine is told before the first event that the run has none
    /// ([`crate::Engine::service_log_missing`]), it gets no event, and its `finish` sees the
    /// record missing. A check of a run without the record pays nothing for it.
    fn needs_service_log(&self) -> bool {
        false
    }

    /// One history event, in file order, with the shared state as it was before it.
    fn event(&mut self, e: &EventRef<'_>, cx: &Context<'_>, out: &mut Findings);

    /// One resource-log entry, in file order (after the whole history).
    fn resource(&mut self, _r: &ResourceRef<'_>, _out: &mut Findings) {}

    /// Both streams ended: report what is still pending and say how the judgement ended.
    fn finish(&mut self, end: &End, out: &mut Findings) -> Outcome;
}
