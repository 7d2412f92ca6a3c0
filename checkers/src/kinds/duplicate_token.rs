//! `duplicate-token`: two different acquisitions (different leases) of one lock got the same
//! token, or the resource accepted the same token for one key from two different leases.
//!
//! Memory stays bounded by pending operations, not by history length. In the history, a repeated
//! token is caught when it equals the highest token completed before the second acquisition was
//! invoked (sequential reuse) or the token of an acquisition that completed while it was pending
//! (concurrent reuse). A reused token *older* than the highest completed one is lower than that
//! one and is reported as `token-regression`; so every reuse is reported under one of the two
//! kinds. At the resource, per key, only the leases that wrote the highest accepted token are
//! remembered.

use crate::checker::{Checker, Context, End, Findings, Interests, Outcome};
use crate::diagnosis;
use crate::hashing::FastMap;
use crate::kinds::token_regression::{token_outcome, Acquired};
use crate::name::{text, Name};
use results::{AnomalyKind, EventRef, Evidence, OpType, Process, ResourceRef, F};
use serde_json::json;
use std::rc::Rc;

#[derive(Debug, Default)]
struct LockTokens {
    max: Option<Rc<Acquired>>,
    /// process -> (invoke index, highest completed acquisition at that invoke)
    pending: FastMap<u32, (u64, Option<Rc<Acquired>>)>,
    /// Completions since the earliest pending invoke.
    window: Vec<Rc<Acquired>>,
}

#[derive(Debug)]
struct KeyTokens {
    token: u64,
    /// (lease, owner, seq, time) of the writes accepted with `token`, at most a few.
    leases: Vec<(Name, Name, u64, u64)>,
}

/// See the module doc.
#[derive(Debug, Default)]
pub struct DuplicateToken {
    locks: FastMap<Name, LockTokens>,
    keys: FastMap<Name, KeyTokens>,
    with_token: u64,
    without_token: u64,
}

impl Checker for DuplicateToken {
    fn kind(&self) -> AnomalyKind {
        AnomalyKind::DuplicateToken
    }

    fn interests(&self) -> Interests {
        Interests::ACQUIRE | Interests::EXIT | Interests::ANY_INFO
    }

    fn event(&mut self, e: &EventRef<'_>, cx: &Context<'_>, out: &mut Findings) {
        match (e.process, &e.f) {
            (Process::Worker(p), F::Acquire) => self.acquire(p, e, cx, out),
            (Process::Worker(p), F::Exit) => {
                for l in self.locks.values_mut() {
                    if l.pending.remove(&p).is_some() {
                        l.prune();
                    }
                }
            }
            _ => {}
        }
    }

    fn resource(&mut self, r: &ResourceRef<'_>, out: &mut Findings) {
        let Some(t) = r.token.filter(|_| r.result.is_accepted()) else {
            return;
        };
        self.with_token += u64::from(self.with_token == 0);
        let Some(k) = self.keys.get_mut(r.key.as_ref()) else {
            let leases = vec![(
                Name::from(r.lease.as_ref()),
                Name::from(r.owner.as_ref()),
                r.seq,
                r.time,
            )];
            self.keys
                .insert(Name::from(r.key.as_ref()), KeyTokens { token: t, leases });
            return;
        };
        if t > k.token {
            // Reuse the first slot's buffers: a new token per hold must not cost allocations.
            k.token = t;
            k.leases.truncate(1);
            let first = &mut k.leases[0];
            first.0 = Name::from(r.lease.as_ref());
            first.1 = Name::from(r.owner.as_ref());
            (first.2, first.3) = (r.seq, r.time);
        } else if t == k.token && !k.leases.iter().any(|l| l.0 == r.lease) {
            let first = &k.leases[0];
            let summary = format!(
                "resource accepted token {t} for key {} from lease {} (seq {}) and from lease {} (seq {})",
                r.key, first.0, first.2, r.lease, r.seq
            );
            let mut evidence = Evidence {
                key: Some(r.key.to_string()),
                owner: Some(r.owner.to_string()),
                lease: Some(r.lease.to_string()),
                token: Some(t),
                highest_before: r.highest_before,
                result: Some(r.result.as_str().into()),
                seqs: vec![first.2, r.seq],
                times: vec![first.3, r.time],
                ..Default::default()
            };
            evidence.other.insert("other_lease".into(), json!(first.0));
            evidence.other.insert("other_owner".into(), json!(first.1));
            let obs = format!(
                "two leases ({} and {}) both wrote key {} with token {t}",
                first.0, r.lease, r.key
            );
            out.push(summary, evidence, diagnosis::duplicate_token_resource(obs));
            if k.leases.len() < 8 {
                k.leases.push((
                    Name::from(r.lease.as_ref()),
                    Name::from(r.owner.as_ref()),
                    r.seq,
                    r.time,
                ));
            }
        }
    }

    fn finish(&mut self, _end: &End, _out: &mut Findings) -> Outcome {
        token_outcome(self.with_token, self.without_token)
    }
}

impl LockTokens {
    /// Drops completions no pending acquisition can still conflict with.
    fn prune(&mut self) {
        match self.pending.values().map(|(i, _)| *i).min() {
            None => self.window.clear(),
            Some(oldest) => self.window.retain(|a| a.index > oldest),
        }
    }
}

impl DuplicateToken {
    fn acquire(&mut self, p: u32, e: &EventRef<'_>, cx: &Context<'_>, out: &mut Findings) {
        let Some(lock) = cx.holds.acquire_lock(e) else {
            return;
        };
        let l = match self.locks.get_mut(lock) {
            Some(l) => l,
            None => self.locks.entry(Name::from(lock)).or_default(),
        };
        match e.kind {
            OpType::Invoke => {
                l.pending.insert(p, (e.index, l.max.clone()));
            }
            OpType::Ok => {
                let (invoked, snap) = l.pending.remove(&p).unwrap_or((e.index, None));
                let Some(t) = e.token else {
                    self.without_token += 1;
                    l.prune();
                    return;
                };
                self.with_token += 1;
                let now = Acquired::from_ok(p, t, e);
                let sequential = snap.filter(|x| x.token == t && !x.same_as(&now));
                let concurrent = || {
                    l.window
                        .iter()
                        .find(|x| x.index > invoked && x.token == t && !x.same_as(&now))
                        .cloned()
                };
                if let Some(x) = sequential.or_else(concurrent) {
                    report(lock, &x, &now, out);
                }
                let newer = l.max.as_ref().is_none_or(|m| t > m.token);
                if l.pending.is_empty() {
                    if newer {
                        match l.max.as_mut().and_then(Rc::get_mut) {
                            // Nobody else holds the old maximum: overwrite, no allocation.
                            Some(slot) => *slot = now,
                            None => l.max = Some(Rc::new(now)),
                        }
                    }
                } else {
                    let now = Rc::new(now);
                    if newer {
                        l.max = Some(now.clone());
                    }
                    l.window.push(now);
                }
                l.prune();
            }
            _ => {
                l.pending.remove(&p);
                l.prune();
            }
        }
    }
}

fn report(lock: &str, x: &Acquired, y: &Acquired, out: &mut Findings) {
    let summary = format!(
        "lock {lock}: token {} given to process {} (lease {}) at index {} and to process {} \
         (lease {}) at index {}",
        y.token,
        x.process,
        x.lease.as_deref().unwrap_or("-"),
        x.index,
        y.process,
        y.lease.as_deref().unwrap_or("-"),
        y.index
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
        .insert("other_process".into(), json!(x.process));
    evidence.other.insert("other_owner".into(), json!(x.owner));
    evidence.other.insert("other_lease".into(), json!(x.lease));
    let obs = format!(
        "two acquisitions of {lock} with different leases both hold token {}",
        y.token
    );
    out.push(summary, evidence, diagnosis::duplicate_token_history(obs));
}
