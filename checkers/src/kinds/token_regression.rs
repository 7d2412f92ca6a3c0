//! `token-regression`: acquisition X completed before acquisition Y was invoked (same lock) and
//! Y got a *lower* token. An *equal* token from a different lease is reported once, as
//! `duplicate-token`, not twice. Not applicable when the recipe issues no tokens (Redlock).
//! Memory: per lock the highest completed token, per process its pending acquire.

use crate::checker::{Checker, Context, End, Findings, Interests, Outcome};
use crate::diagnosis;
use crate::hashing::FastMap;
use crate::name::{opt_name, text, Name};
use results::{AnomalyKind, EventRef, Evidence, OpType, Process, F};
use serde_json::json;
use std::rc::Rc;

/// A completed acquisition, as much as the token checkers report about it.
#[derive(Debug, Clone)]
pub(crate) struct Acquired {
    pub process: u32,
    pub owner: Option<Name>,
    pub lease: Option<Name>,
    pub token: u64,
    pub index: u64,
    pub time: u64,
}

impl Acquired {
    pub(crate) fn from_ok(p: u32, token: u64, e: &EventRef<'_>) -> Acquired {
        Acquired {
            process: p,
            owner: opt_name(e.owner.as_deref()),
            lease: opt_name(e.lease.as_deref()),
            token,
            index: e.index,
            time: e.time,
        }
    }

    /// Whether two completions are the same acquisition (same lease; without leases, same
    /// process and owner).
    pub(crate) fn same_as(&self, other: &Acquired) -> bool {
        match (&self.lease, &other.lease) {
            (Some(a), Some(b)) => a == b,
            _ => self.process == other.process && self.owner == other.owner,
        }
    }
}

/// See the module doc.
#[derive(Debug, Default)]
pub struct TokenRegression {
    max: FastMap<Name, Rc<Acquired>>,
    /// Per process: the lock and the highest completed token when its acquire was invoked.
    pending: FastMap<u32, Option<Rc<Acquired>>>,
    with_token: u64,
    without_token: u64,
}

impl Checker for TokenRegression {
    fn kind(&self) -> AnomalyKind {
        AnomalyKind::TokenRegression
    }

    fn interests(&self) -> Interests {
        Interests::ACQUIRE | Interests::EXIT | Interests::ANY_INFO
    }

    fn event(&mut self, e: &EventRef<'_>, cx: &Context<'_>, out: &mut Findings) {
        if let (Process::Worker(p), F::Acquire) = (e.process, &e.f) {
            match e.kind {
                OpType::Invoke => {
                    let snap = e.lock.as_deref().and_then(|l| self.max.get(l)).cloned();
                    self.pending.insert(p, snap);
                }
                OpType::Ok => {
                    let snap = self.pending.remove(&p).flatten();
                    match (e.token, cx.holds.acquire_lock(e)) {
                        (Some(t), Some(lock)) => {
                            self.with_token += 1;
                            let now = Acquired::from_ok(p, t, e);
                            if let Some(x) = snap.filter(|x| t < x.token) {
                                report(lock, &x, &now, out);
                            }
                            match self.max.get_mut(lock) {
                                Some(m) if t > m.token => match Rc::get_mut(m) {
                                    // No pending snapshot shares it: overwrite, no allocation.
                                    Some(slot) => *slot = now,
                                    None => *m = Rc::new(now),
                                },
                                Some(_) => {}
                                None => drop(self.max.insert(Name::from(lock), Rc::new(now))),
                            }
                        }
                        _ => self.without_token += 1,
                    }
                }
                _ => drop(self.pending.remove(&p)),
            }
        } else if let (Process::Worker(p), F::Exit) = (e.process, &e.f) {
            self.pending.remove(&p);
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

fn report(lock: &str, x: &Acquired, y: &Acquired, out: &mut Findings) {
    let summary = format!(
        "lock {lock}: process {} got token {} at index {} after process {} had completed with \
         token {} at index {}",
        y.process, y.token, y.index, x.process, x.token, x.index
    );
    let mut evidence = Evidence {
        lock: Some(lock.to_string()),
        owner: text(&y.owner),
        lease: text(&y.lease),
        token: Some(y.token),
        indices: vec![x.index, y.index],
        times: vec![x.time, y.time],
        ..Default::default()
    };
    evidence
        .other
        .insert("earlier_process".into(), json!(x.process));
    evidence
        .other
        .insert("earlier_lease".into(), json!(x.lease));
    evidence
        .other
        .insert("earlier_token".into(), json!(x.token));
    let obs = format!(
        "token {} was issued after token {} had been issued and returned: tokens went backwards",
        y.token, x.token
    );
    out.push(summary, evidence, diagnosis::token_regression(obs));
}
