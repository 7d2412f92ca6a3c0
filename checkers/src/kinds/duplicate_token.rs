//! `duplicate-token`: two different acquisitions (different leases) of one lock got the same
//! token, or the resource accepted the same token for one key from two different leases.
//!
//! Memory stays bounded by pending operations, not by history length. In the history, a repeated
//! token is caught when it equals the highest token completed before the second acquisition was
//! invoked (sequential reuse) or the token of an acquisition that completed while it was pending
//! (concurrent reuse). A reused token *older* than the highest completed one is lower than that
//! one and is reported as `token-regression`; so every reuse is reported under one of the two
//! kinds, and this checker sorts both: the comparison of a grant's token with the lock's highest
//! at its invoke, equal here, is token-regression's when lower ([`super::token_regression`], its
//! paired kind). At the resource, per key, only the leases that wrote the highest accepted token
//! are remembered.

use crate::checker::{Checker, Context, End, Findings, Interests, Outcome};
use crate::diagnosis;
use crate::hashing::FastMap;
use crate::holds::{Acquisition, Hold};
use crate::kinds::token_regression::{self, token_outcome};
use crate::locks::PerLock;
use crate::name::{text, Name};
use results::{AnomalyKind, EventRef, Evidence, OpType, Process, ResourceRef, F};
use serde_json::json;
use std::collections::VecDeque;

#[derive(Debug, Default)]
struct LockTokens {
    /// (process, invoke index, highest completed acquisition at that invoke, from the shared
    /// hold book): a list, as [`LockTokens::prune`] reads all of it at every change anyway.
    pending: Vec<(u32, u64, Option<Hold>)>,
    /// Completions since the earliest pending invoke.
    /// In history order, so pruning drops a prefix and a pending acquire's conflicts are the
    /// suffix after its invoke.
    window: VecDeque<Hold>,
    /// Whether `window` is in index order (always, for a history the recorder wrote; a file
    /// edited by hand may say anything, and then the whole window is searched, as before).
    unsorted: bool,
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
    locks: PerLock<LockTokens>,
    keys: FastMap<Name, KeyTokens>,
    /// Acquisitions completed with a token, and without one.
    with_token: u64,
    without_token: u64,
    /// Acquire `ok`s whose lock is unknown: without a token, for token-regression.
    unlocked: u64,
    /// Whether the resource accepted a write with a token (duplicate-token judges those too).
    resource_tokens: bool,
}

impl Checker for DuplicateToken {
    fn kind(&self) -> AnomalyKind {
        AnomalyKind::DuplicateToken
    }

    fn paired_kind(&self) -> Option<AnomalyKind> {
        Some(AnomalyKind::TokenRegression)
    }

    fn interests(&self) -> Interests {
        // An `info` ends a pending acquire only when it is the acquire's own.
        Interests::ACQUIRE | Interests::EXIT
    }

    fn event(&mut self, e: &EventRef<'_>, cx: &Context<'_>, out: &mut Findings) {
        match (e.process, &e.f) {
            (Process::Worker(p), F::Acquire) => self.acquire(p, e, cx, out),
            (Process::Worker(p), F::Exit) => {
                for (_, l) in self.locks.iter_mut() {
                    if l.take_pending(p).is_some() {
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
        self.resource_tokens = true;
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
            out.push(
                r.time,
                summary,
                evidence,
                diagnosis::duplicate_token_resource(obs),
            );
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

    fn finish(&mut self, _end: &End, out: &mut Findings) -> Outcome {
        out.paired().outcome = Some(token_outcome(
            self.with_token,
            self.without_token + self.unlocked,
        ));
        let resource = u64::from(self.resource_tokens);
        token_outcome(self.with_token + resource, self.without_token)
    }
}

impl LockTokens {
    /// Removes the pending acquire of `p`: (invoke index, snapshot).
    fn take_pending(&mut self, p: u32) -> Option<(u64, Option<Hold>)> {
        let i = self.pending.iter().position(|(q, _, _)| *q == p)?;
        let (_, index, snap) = self.pending.swap_remove(i);
        Some((index, snap))
    }

    /// Drops completions no pending acquisition can still conflict with. Inline for an empty
    /// window (most grants of a lock with one waiter leave none).
    #[inline]
    fn prune(&mut self) {
        if self.window.is_empty() {
            // Nothing to drop; only the order flag resets once nothing is pending.
            self.unsorted &= !self.pending.is_empty();
            return;
        }
        self.drop_stale();
    }

    #[inline(never)]
    fn drop_stale(&mut self) {
        match self.pending.iter().map(|(_, i, _)| *i).min() {
            None => {
                self.window.clear();
                self.unsorted = false;
            }
            Some(oldest) if self.unsorted => self.window.retain(|a| a.index > oldest),
            Some(oldest) => {
                while self.window.front().is_some_and(|a| a.index <= oldest) {
                    self.window.pop_front();
                }
            }
        }
    }
}

impl DuplicateToken {
    fn acquire(&mut self, p: u32, e: &EventRef<'_>, cx: &Context<'_>, out: &mut Findings) {
        let Some(lock) = cx.lock else {
            self.unlocked += u64::from(e.kind == OpType::Ok);
            return;
        };
        let l = self.locks.at(lock);
        match e.kind {
            OpType::Invoke => {
                let snap = (p, e.index, cx.holds.highest(lock).cloned());
                match l.pending.iter_mut().find(|(q, _, _)| *q == p) {
                    Some(slot) => *slot = snap,
                    None => l.pending.push(snap),
                }
            }
            OpType::Ok => {
                let (invoked, snap) = l.take_pending(p).unwrap_or((e.index, None));
                let (Some(t), Some(now)) = (e.token, cx.acquired) else {
                    self.without_token += 1;
                    l.prune();
                    return;
                };
                self.with_token += 1;
                if let Some(x) = cx.holds.highest_at_invoke(p).filter(|x| t < x.fence()) {
                    token_regression::report(cx.locks.name(lock), x, now, out.paired());
                }
                let sequential = snap.filter(|x| x.fence() == t && !x.same_as(now));
                let conflicts = |x: &&Hold| x.index > invoked && x.fence() == t && !x.same_as(now);
                // The earliest conflict: in index order the completions after the invoke are a
                // suffix (a few entries), searched from the back.
                let concurrent = || match l.unsorted {
                    false => l
                        .window
                        .iter()
                        .rev()
                        .take_while(|x| x.index > invoked)
                        .filter(conflicts)
                        .last()
                        .cloned(),
                    true => l.window.iter().find(conflicts).cloned(),
                };
                if let Some(x) = sequential.or_else(concurrent) {
                    report(cx.locks.name(lock), &x, now, out);
                }
                if !l.pending.is_empty() {
                    l.unsorted |= l.window.back().is_some_and(|b| b.index > now.index);
                    l.window.push_back(now.clone());
                }
                l.prune();
            }
            _ => {
                l.take_pending(p);
                l.prune();
            }
        }
    }
}

fn report(lock: &str, x: &Acquisition, y: &Acquisition, out: &mut Findings) {
    let summary = format!(
        "lock {lock}: token {} given to process {} (lease {}) at index {} and to process {} \
         (lease {}) at index {}",
        y.fence(),
        x.process,
        x.lease().unwrap_or("-"),
        x.index,
        y.process,
        y.lease().unwrap_or("-"),
        y.index
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
        .insert("other_process".into(), json!(x.process));
    evidence
        .other
        .insert("other_owner".into(), json!(x.owner()));
    evidence
        .other
        .insert("other_lease".into(), json!(x.lease()));
    let obs = format!(
        "two acquisitions of {lock} with different leases both hold token {}",
        y.fence()
    );
    out.push(
        y.time,
        summary,
        evidence,
        diagnosis::duplicate_token_history(obs),
    );
}
