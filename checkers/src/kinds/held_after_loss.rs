//! `held-after-loss`: a `check` answered `held: true` for acquisition A after another process had
//! certainly been granted the same lock since A's grant — the client library still believes it
//! holds a lock it lost. Observed, like `concurrent-holders`: a belief is not harm (what the
//! holder then writes is judged by `stale-accepted-write`), so it fails a run only where the
//! test's `fail_on` names it.
//!
//! "Certainly granted since A's grant": acquisition B of the same lock, by another process, whose
//! acquire was invoked after A's acquire `ok` (grant order: B's grant cannot have come first);
//! a B whose fence token is lower than A's is older whatever the history's order, and never
//! counts. "After": the check was sent after B's `ok` was recorded. A `check` line carries the
//! worker's own stamps (the keep-alive runs in the worker, beside the process's operations, and
//! its lines reach the history when the worker next speaks: docs/design.md, "history.jsonl"),
//! so the check's invoke *time*, not its place in the file, is compared with B's `ok`: stamped
//! before the question left, it is no later than the question; B's `ok` is stamped after B's
//! reply arrived, so no earlier than the grant.
//!
//! Memory: per lock, each process's latest acquisition of it, and for one another grant has
//! superseded, that grant (kept until the process next acquires the lock: a check may ask about
//! an acquisition superseded long before). A grant looks only at the lock's acquisitions not
//! superseded yet (a handful); the shared records are counted references, never copies.

use crate::checker::{Checker, Context, End, Findings, Interests, Outcome};
use crate::diagnosis;
use crate::holds::Hold;
use crate::kinds::concurrent_holders::fmt_token;
use crate::locks::{LockId, PerLock};
use crate::name::text;
use crate::procs::PerProcess;
use results::{AnomalyKind, EventRef, Evidence, OpType, Process, F};
use serde_json::json;

/// A process's latest acquisition of a lock, after another process's grant superseded it.
#[derive(Debug)]
struct Superseded {
    hold: Hold,
    by: Hold,
    /// Reported once per acquisition: a library asked every second repeats the same belief.
    reported: bool,
}

/// One lock's latest acquisitions, one per process that acquired it: each either current or
/// superseded, never both.
#[derive(Debug, Default)]
struct LockState {
    /// Not superseded yet, in no particular order (a grant looks at each).
    current: Vec<Hold>,
    /// Superseded, by process.
    superseded: PerProcess<Superseded>,
}

/// See the module doc.
#[derive(Debug, Default)]
pub struct HeldAfterLoss {
    locks: PerLock<LockState>,
    /// Per process: index and time of its pending check invoke.
    asking: PerProcess<(u64, u64)>,
    /// Checks answered (any answer).
    answered: u64,
}

impl Checker for HeldAfterLoss {
    fn kind(&self) -> AnomalyKind {
        AnomalyKind::HeldAfterLoss
    }

    fn interests(&self) -> Interests {
        // Not the acquire invokes: a grant's invoke comes from the shared hold book, and the
        // engine's calls for them, each doing nothing, were 2% of the engine's instructions on
        // vs_porcupine's histories.
        Interests::ACQUIRE.only(OpType::Ok) | Interests::CHECK
    }

    fn event(&mut self, e: &EventRef<'_>, cx: &Context<'_>, out: &mut Findings) {
        let Process::Worker(p) = e.process else {
            return;
        };
        match (&e.f, e.kind) {
            (F::Acquire, OpType::Ok) => {
                if let Some(b) = cx.acquired {
                    self.granted(p, b, cx.holds.pending_since(p).map(|(i, _)| i));
                }
            }
            (F::Check, OpType::Invoke) => drop(self.asking.insert(p, (e.index, e.time))),
            (F::Check, kind) => {
                let asked = self.asking.remove(p);
                self.answered += 1;
                if let (OpType::Ok, Some(true), Some(asked), Some(lock)) =
                    (kind, e.held, asked, cx.lock)
                {
                    self.held(p, lock, asked, e, cx, out);
                }
            }
            _ => {}
        }
    }

    fn finish(&mut self, _end: &End, _out: &mut Findings) -> Outcome {
        if self.answered == 0 {
            Outcome::NotApplicable(
                "no check was answered: the lock client has no check, or its keep-alive asked none"
                    .into(),
            )
        } else {
            Outcome::Checked
        }
    }
}

impl HeldAfterLoss {
    /// Acquisition `b` of process `q` completed; its acquire was invoked at index `invoked`.
    fn granted(&mut self, q: u32, b: &Hold, invoked: Option<u64>) {
        let LockState {
            current,
            superseded,
        } = self.locks.at(b.lock);
        let mut k = 0;
        while let Some(a) = current.get(k) {
            if a.process == q {
                current.swap_remove(k); // q's own earlier acquisition: replaced below
                continue;
            }
            let after = invoked.is_some_and(|i| i > a.index);
            let older = a.token.zip(b.token).is_some_and(|(a, b)| b < a);
            if !after || older {
                k += 1;
                continue;
            }
            let hold = current.swap_remove(k);
            let by = b.clone();
            superseded.insert(
                hold.process,
                Superseded {
                    hold,
                    by,
                    reported: false,
                },
            );
        }
        superseded.remove(q);
        current.push(b.clone());
    }

    /// Process `p`'s check of `lock`, asked at `asked` (index, time), answered held.
    fn held(
        &mut self,
        p: u32,
        lock: LockId,
        asked: (u64, u64),
        e: &EventRef<'_>,
        cx: &Context<'_>,
        out: &mut Findings,
    ) {
        // p's latest acquisition of the lock, if another's grant superseded it (a current one
        // is still p's to believe in).
        let Some(m) = self
            .locks
            .get_mut(lock)
            .and_then(|l| l.superseded.get_mut(p))
            .filter(|m| {
                e.lease
                    .as_deref()
                    .is_none_or(|l| m.hold.lease().is_none_or(|h| h == l))
            })
        else {
            return;
        };
        if m.by.time >= asked.1 || std::mem::replace(&mut m.reported, true) {
            return;
        }
        report(p, &m.hold, &m.by, asked, e, cx.locks.name(lock), out);
    }
}

fn report(
    p: u32,
    a: &Hold,
    b: &Hold,
    (asked_index, asked_time): (u64, u64),
    e: &EventRef<'_>,
    lock: &str,
    out: &mut Findings,
) {
    let mut evidence = Evidence {
        lock: Some(lock.to_string()),
        owner: text(a.owner()),
        lease: text(a.lease()),
        token: a.token,
        indices: vec![a.index, b.index, asked_index, e.index],
        times: vec![a.time, b.time, asked_time, e.time],
        ..Default::default()
    };
    evidence.other.insert("process".into(), json!(p));
    evidence.other.insert("held".into(), json!(true));
    evidence
        .other
        .insert("holder_process".into(), json!(b.process));
    evidence
        .other
        .insert("holder_owner".into(), json!(b.owner()));
    evidence
        .other
        .insert("holder_lease".into(), json!(b.lease()));
    evidence.other.insert("holder_token".into(), json!(b.token));
    let summary = format!(
        "process {p}'s check at index {asked_index} answered held for lease {} of lock {lock} \
         (acquired at index {}), after process {} had been granted it (lease {}, token {}, at \
         index {})",
        a.lease().unwrap_or("-"),
        a.index,
        b.process,
        b.lease().unwrap_or("-"),
        fmt_token(b.token),
        b.index
    );
    let obs = format!(
        "the lock client still said it held {lock} under lease {} at t={asked_time}ns, {} ns \
         after lease {} was granted to process {} by an acquire sent after its own grant",
        a.lease().unwrap_or("-"),
        asked_time - b.time,
        b.lease().unwrap_or("-"),
        b.process
    );
    out.push(
        asked_time,
        summary,
        evidence,
        diagnosis::held_after_loss(obs),
    );
}
