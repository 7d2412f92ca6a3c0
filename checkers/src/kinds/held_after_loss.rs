//! `held-after-loss`: a `check` answered `held: true` for acquisition A after another process had
//! certainly been granted the same lock since A's grant — the client library still believes it
//! holds a lock it lost. Observed, like `concurrent-holders`: a belief is not harm (what the
//! holder then writes is judged by `stale-accepted-write`), so it fails a run only where the
//! test's `fail_on` names it.
//!
//! "Certainly granted since A's grant": acquisition B of the same lock, by another process, whose
//! acquire was invoked after A's acquire `ok` (grant order: B's grant cannot have come first), or
//! whose acquire completed after A's with a higher fence token (a waiter queued before A's grant
//! that took the lock after A lost it: the token orders the two grants); a B whose fence token
//! is lower than A's is older whatever the history's order, and never counts. The evidence's
//! `basis` says which showed it. "After": the check was sent after B's `ok` was recorded. A `check` line carries the
//! worker's own stamps (the keep-alive runs in the worker, beside the process's operations, and
//! its lines reach the history when the worker next speaks: docs/design.md, "history.jsonl"),
//! so the check's invoke *time*, not its place in the file, is compared with B's `ok`: stamped
//! before the question left, it is no later than the question; B's `ok` is stamped after B's
//! reply arrived, so no earlier than the grant.
//!
//! Which acquisition superseded which is the hold book's ([`crate::holds::latest`]), kept from
//! the acquire `ok`s it takes in anyway: this checker is visited for `check` lines alone. Memory:
//! per process its pending check, and per lock the acquisition it last reported.

use crate::checker::{Checker, Context, End, Findings, Interests, Outcome};
use crate::diagnosis;
use crate::holds::latest::Basis;
use crate::holds::Hold;
use crate::kinds::concurrent_holders::fmt_token;
use crate::locks::LockId;
use crate::name::text;
use crate::procs::PerProcess;
use results::{AnomalyKind, EventRef, Evidence, OpType, Process, F};
use serde_json::json;

/// See the module doc.
#[derive(Debug, Default)]
pub struct HeldAfterLoss {
    /// Per process: index and time of its pending check invoke.
    asking: PerProcess<(u64, u64)>,
    /// Per process: for each lock, the history index of the acquisition last reported (once per
    /// acquisition: a library asked every second repeats the same belief).
    reported: PerProcess<Vec<(LockId, u64)>>,
    /// Checks answered (any answer).
    answered: u64,
}

impl Checker for HeldAfterLoss {
    fn kind(&self) -> AnomalyKind {
        AnomalyKind::HeldAfterLoss
    }

    fn interests(&self) -> Interests {
        // Not the acquires: the shared hold book follows which grant superseded which, and the
        // engine's calls for every acquire `ok` were 2% of its instructions on vs_porcupine's
        // histories (and the invokes, each doing nothing, 2% more).
        Interests::CHECK
    }

    fn event(&mut self, e: &EventRef<'_>, cx: &Context<'_>, out: &mut Findings) {
        let Process::Worker(p) = e.process else {
            return;
        };
        match (&e.f, e.kind) {
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
        let Some((a, b, basis)) = cx.holds.latest().superseded(p, lock).filter(|(a, _, _)| {
            e.lease
                .as_deref()
                .is_none_or(|l| a.lease().is_none_or(|h| h == l))
        }) else {
            return;
        };
        if b.time >= asked.1 {
            return;
        }
        let reported = self.reported.at(p);
        match reported.iter_mut().find(|(l, _)| *l == lock) {
            Some((_, index)) if *index == a.index => return,
            Some((_, index)) => *index = a.index,
            None => reported.push((lock, a.index)),
        }
        report(p, (a, b, basis), asked, e, cx.locks.name(lock), out);
    }
}

fn report(
    p: u32,
    (a, b, basis): (&Hold, &Hold, Basis),
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
    evidence.other.insert("basis".into(), json!(basis.as_str()));
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
    let after = match basis {
        Basis::GrantOrder => "by an acquire sent after its own grant".to_string(),
        Basis::Token => format!(
            "with token {} above its own {}, so after its own grant",
            fmt_token(b.token),
            fmt_token(a.token)
        ),
    };
    let obs = format!(
        "the lock client still said it held {lock} under lease {} at t={asked_time}ns, {} ns \
         after lease {} was granted to process {} {after}",
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
