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
//! Memory: per process its latest acquisition of each lock and its pending check;
//! per lock the acquisitions no later grant has superseded yet (a handful).

use crate::checker::{Checker, Context, End, Findings, Interests, Outcome};
use crate::diagnosis;
use crate::holds::Hold;
use crate::kinds::concurrent_holders::fmt_token;
use crate::locks::{LockId, PerLock};
use crate::name::text;
use crate::procs::PerProcess;
use results::{AnomalyKind, EventRef, Evidence, OpType, Process, F};
use serde_json::json;
use std::rc::Rc;

/// One process's latest acquisition of a lock, and the grant that superseded it.
#[derive(Debug)]
struct Mine {
    hold: Hold,
    superseded_by: Option<Hold>,
    /// Reported once per acquisition: a library asked every second repeats the same belief.
    reported: bool,
}

/// See the module doc.
#[derive(Debug, Default)]
pub struct HeldAfterLoss {
    /// Per process: its latest acquisition of each lock.
    mine: PerProcess<Vec<Mine>>,
    /// Per lock: the acquisitions not superseded yet.
    current: PerLock<Vec<Hold>>,
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
        let current = self.current.at(b.lock);
        let mine = &mut self.mine;
        current.retain(|a| {
            if a.process == q {
                return false; // q's own earlier acquisition: replaced below
            }
            let after = invoked.is_some_and(|i| i > a.index);
            let older = a.token.zip(b.token).is_some_and(|(a, b)| b < a);
            if !after || older {
                return true;
            }
            if let Some(m) = mine
                .get_mut(a.process)
                .and_then(|l| l.iter_mut().find(|m| Rc::ptr_eq(&m.hold, a)))
            {
                m.superseded_by = Some(b.clone());
            }
            false
        });
        current.push(b.clone());
        let list = self.mine.at(q);
        let fresh = Mine {
            hold: b.clone(),
            superseded_by: None,
            reported: false,
        };
        match list.iter_mut().find(|m| m.hold.lock == b.lock) {
            Some(m) => *m = fresh,
            None => list.push(fresh),
        }
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
        let Some(m) = self.mine.get_mut(p).and_then(|l| {
            l.iter_mut().find(|m| {
                m.hold.lock == lock
                    && e.lease
                        .as_deref()
                        .is_none_or(|l| m.hold.lease().is_none_or(|h| h == l))
            })
        }) else {
            return;
        };
        let Some(b) = m.superseded_by.as_ref().filter(|b| b.time < asked.1) else {
            return;
        };
        if std::mem::replace(&mut m.reported, true) {
            return;
        }
        report(p, &m.hold, b, asked, e, cx.locks.name(lock), out);
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
