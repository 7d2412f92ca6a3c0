//! `token-regression`: acquisition X completed before acquisition Y was invoked (same lock) and
//! Y got a *lower* token. An *equal* token from a different lease is reported once, as
//! `duplicate-token`, not twice. Not applicable when the recipe issues no tokens (Redlock).
//! Memory: per lock the highest completed token, per process its pending acquire.

use crate::checker::{Checker, Context, End, Findings, Interests, Outcome};
use crate::diagnosis;
use crate::holds::{Acquisition, Hold};
use crate::locks::PerLock;
use crate::name::text;
use crate::procs::PerProcess;
use results::{AnomalyKind, EventRef, Evidence, OpType, Process, F};
use serde_json::json;

/// See the module doc.
#[derive(Debug, Default)]
pub struct TokenRegression {
    max: PerLock<Option<Hold>>,
    /// Per process: the highest completed token of the lock when its acquire was invoked.
    pending: PerProcess<Option<Hold>>,
    with_token: u64,
    without_token: u64,
}

impl Checker for TokenRegression {
    fn kind(&self) -> AnomalyKind {
        AnomalyKind::TokenRegression
    }

    fn interests(&self) -> Interests {
        // An `info` ends a pending acquire only when it is the acquire's own.
        Interests::ACQUIRE | Interests::EXIT
    }

    fn event(&mut self, e: &EventRef<'_>, cx: &Context<'_>, out: &mut Findings) {
        if let (Process::Worker(p), F::Acquire) = (e.process, &e.f) {
            match e.kind {
                OpType::Invoke => {
                    let snap = match (&e.lock, cx.lock) {
                        (Some(_), Some(lock)) => self.max.get(lock).cloned().flatten(),
                        _ => None,
                    };
                    self.pending.insert(p, snap);
                }
                OpType::Ok => {
                    let snap = self.pending.remove(p).flatten();
                    match (e.token, cx.acquired) {
                        (Some(t), Some(now)) => {
                            self.with_token += 1;
                            if let Some(x) = snap.filter(|x| t < x.fence()) {
                                report(cx.locks.name(now.lock), &x, now, out);
                            }
                            match self.max.at(now.lock) {
                                Some(m) if t <= m.fence() => {}
                                slot => *slot = Some(now.clone()),
                            }
                        }
                        _ => self.without_token += 1,
                    }
                }
                _ => drop(self.pending.remove(p)),
            }
        } else if let (Process::Worker(p), F::Exit) = (e.process, &e.f) {
            self.pending.remove(p);
        }
    }

    fn finish(&mut self, _end: &End, _out: &mut Findings) -> Outcome {
        token_outcome(self.with_token, self.without_token)
    }
}

pub(crate) fn token_outcome(with_token: u64, without_token: u64) -> Outcome {
    match (with_token, without_token) {
        (0, 0) => Outcome::NotApplicable("no acquisition succeeded".into()),
        (0, _) => Outcome::NotApplicable(
            "the recipe issues no fence token (acquisitions have no token)".into(),
        ),
        _ => Outcome::Checked,
    }
}

fn report(lock: &str, x: &Acquisition, y: &Acquisition, out: &mut Findings) {
    let summary = format!(
        "lock {lock}: process {} got token {} at index {} after process {} had completed with \
         token {} at index {}",
        y.process,
        y.fence(),
        y.index,
        x.process,
        x.fence(),
        x.index
    );
    let mut evidence = Evidence {
        lock: Some(lock.to_string()),
        owner: text(y.owner()),
        lease: text(y.lease()),
        token: y.token,
        indices: vec![x.index, y.index],
        times: vec![x.time, y.time],
        ..Default::default()
    };
    evidence
        .other
        .insert("earlier_process".into(), json!(x.process));
    evidence
        .other
        .insert("earlier_lease".into(), json!(x.lease()));
    evidence
        .other
        .insert("earlier_token".into(), json!(x.fence()));
    let obs = format!(
        "token {} was issued after token {} had been issued and returned: tokens went backwards",
        y.fence(),
        x.fence()
    );
    out.push(y.time, summary, evidence, diagnosis::token_regression(obs));
}
