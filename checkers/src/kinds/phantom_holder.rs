//! `phantom-holder`: the lock service held a lock for a client that was told it did not get it.
//! An acquire answered `fail` or `info` (a timeout, a lost reply, a library's retry that gave
//! up) whose request had landed leaves a key at the service that no grant of the history names;
//! once every acquire in flight when that key appeared has been answered, nobody in the
//! application believes it holds the lock, yet the service's record shows the key at the head
//! of the lock's queue, and every other acquire waits until its lease, session or time to live
//! runs out. Observed by default, like `locked-out-client`: a lock unavailable for a while, not a
//! write let through; `stuck-lock` judges it when it outlasts ttl + slack.
//!
//! What it reads: the service's record (`service.jsonl`) through [`crate::service_keys`]: the
//! keys that hold a lock, and the grant each names. It judges only a run whose grants it can
//! tell apart at the service: if no grant names a key of the record, the kind does not apply
//! (the client's lease is not the service's identity); if some grants name one and others do
//! not, the record missed changes, and a key it found that no grant names may be one of theirs:
//! the kind is then unknown. A run without a record (an older run, a converted history, the
//! in-process service) leaves it not applicable, its reason in the stats, and is judged as
//! before. A key is "at the head" when, on a
//! majority of the servers the record follows (one, except Redlock's and Sentinel's), it is the
//! earliest-created key of the lock standing there. "Answered" allows for the observer's lag:
//! the record must still show the key at the head through the settling time after the last
//! answer ([`crate::service_keys::Settle`]), so a library that deletes what it created before
//! it answers is not charged with what the observer saw late.

use crate::checker::{Checker, Context, End, Findings, Interests, Outcome, ServiceLog};
use crate::diagnosis;
use crate::locks::LockId;
use crate::procs::PerProcess;
use crate::service_keys::{holds_lock, names, Kept, LeaseAt, Settle};
use results::service_log::{ServiceEntry, ServiceWhat};
use results::{AnomalyKind, EventRef, Evidence, OpType, Process, F};
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};

/// One acquire: its invoke and its answer.
#[derive(Debug, Clone)]
struct Attempt {
    process: u32,
    lock: LockId,
    invoked: (u64, u64),
    /// Index, time and type of its completion; `None` while unanswered.
    answered: Option<(u64, u64, OpType)>,
}

impl Attempt {
    fn refused(&self) -> bool {
        matches!(self.answered, Some((_, _, OpType::Fail | OpType::Info)))
    }
}

/// See the module doc. What it keeps of every acquire is small and allocates nothing per
/// event: the grants' leases are [`Kept`] back to back.
#[derive(Debug, Default)]
pub struct PhantomHolder {
    attempts: Vec<Attempt>,
    /// Each process's acquire in flight (an index into `attempts`).
    open: PerProcess<usize>,
    kept: Kept,
    /// Every grant's lease and time.
    grants: Vec<(LeaseAt, u64)>,
}

/// What the record says of one key that no grant names.
enum Judged {
    /// The record cannot tell (why).
    Undecided(&'static str),
    /// Nobody refused was in flight when it appeared, or it never headed the queue after.
    Cleared,
    Phantom(Phantom),
}

/// A key the service held for nobody who knew it.
struct Phantom {
    /// The refused acquires in flight when it appeared.
    candidates: Vec<usize>,
    head_from: u64,
    head_until: Option<u64>,
    /// Acquires of others answered `fail` or `info` while it headed the queue.
    refused_meanwhile: usize,
    /// Acquires of others in flight while it headed the queue (they waited for it).
    waiting_meanwhile: usize,
}

impl Checker for PhantomHolder {
    fn kind(&self) -> AnomalyKind {
        AnomalyKind::PhantomHolder
    }

    fn interests(&self) -> Interests {
        Interests::ACQUIRE
    }

    fn needs_service_log(&self) -> bool {
        true
    }

    fn event(&mut self, e: &EventRef<'_>, cx: &Context<'_>, _out: &mut Findings) {
        let (Process::Worker(process), F::Acquire, Some(lock)) = (e.process, &e.f, cx.lock) else {
            return;
        };
        if e.kind == OpType::Invoke {
            self.kept.lock(lock, cx);
            self.open.insert(process, self.attempts.len());
            self.attempts.push(Attempt {
                process,
                lock,
                invoked: (e.index, e.time),
                answered: None,
            });
            return;
        }
        if let Some(i) = self.open.remove(process) {
            self.attempts[i].answered = Some((e.index, e.time, e.kind));
        }
        if let (OpType::Ok, Some(lease)) = (e.kind, e.lease.as_deref()) {
            let lease = self.kept.keep(lease);
            self.grants.push((lease, e.time));
        }
    }

    fn finish(&mut self, end: &End, out: &mut Findings) -> Outcome {
        let record = match &end.service_log {
            ServiceLog::Present(record) => record,
            ServiceLog::Missing(why) => {
                return Outcome::NotApplicable(format!(
                    "{why}: what the service held for acquires answered fail or info is not known"
                ))
            }
        };
        let refused = self.attempts.iter().filter(|a| a.refused()).count();
        if refused == 0 {
            return Outcome::NotApplicable(
                "no acquire was answered fail or info: no client was told it did not get a lock \
                 the service may have granted"
                    .into(),
            );
        }
        let Some(began) = record
            .iter()
            .find(|s| s.what == ServiceWhat::Watching)
            .map(|s| s.time)
        else {
            return Outcome::Unknown("service.jsonl never says when it began".into());
        };
        let lock_of = |e: &ServiceEntry| self.kept.lock_of(e);
        let puts: Vec<&ServiceEntry> = record
            .iter()
            .filter(|e| e.what == ServiceWhat::Put && lock_of(e).is_some())
            .collect();
        if puts.is_empty() {
            return Outcome::NotApplicable(
                "no key of the service's record holds the lock (PostgreSQL's advisory keys are \
                 hashes): its holders cannot be set against the answers"
                    .into(),
            );
        }
        let lease = |&(at, _): &(LeaseAt, u64)| self.kept.lease(at);
        let seen: Vec<&str> = (self.grants.iter())
            .filter(|(_, t)| *t >= began)
            .map(lease)
            .collect();
        let unmatched = (seen.iter())
            .filter(|l| !puts.iter().any(|p| names(l, p)))
            .count();
        if unmatched == seen.len() {
            return Outcome::NotApplicable(if seen.is_empty() {
                "no grant came after the service's record began: the clients' keys cannot be told \
                 apart at the service"
                    .into()
            } else {
                "no grant's lease names a key, value or owner of the service's record: this \
                 client's grants cannot be told apart at the service"
                    .into()
            });
        }
        let settle = Settle::of(record);
        let (mut undecided, mut blind) = (0, 0);
        // Each key once, at its first put (Redlock's masters each record the same one).
        let mut judged = BTreeSet::new();
        for p in puts {
            if self.grants.iter().any(|g| names(lease(g), p))
                || !judged.insert((&p.key, &p.value, &p.owner, p.created))
            {
                continue;
            }
            let Some((lock, name)) = lock_of(p) else {
                continue;
            };
            match self.judge(record, lock, name, p, &settle) {
                Judged::Undecided(why) => {
                    undecided += 1;
                    if why == GAP {
                        blind += 1;
                    }
                }
                Judged::Cleared => {}
                Judged::Phantom(ph) => self.report(name, p, &ph, out),
            }
        }
        out.stats.insert("refused_acquires".into(), json!(refused));
        out.stats.insert(
            "widest_settle_ms".into(),
            json!(settle.widest().map(|ns| ns / 1_000_000)),
        );
        if undecided > 0 {
            out.stats.insert("undecided".into(), json!(undecided));
            out.note = Some(format!(
                "{undecided} key(s) no grant names were left undecided (an acquire in flight when \
                 they appeared was never answered, or the record has a gap there)"
            ));
        }
        if unmatched > 0 {
            out.stats
                .insert("grants_not_in_record".into(), json!(unmatched));
            if out.total > 0 {
                return Outcome::Unknown(format!(
                    "{unmatched} of {} grants have no put in the service's record: it missed \
                     changes, so a key no grant names may be one of theirs",
                    seen.len()
                ));
            }
        }
        if blind > 0 && out.total == 0 {
            return Outcome::Unknown(format!(
                "{blind} key(s) no grant names stood where service.jsonl has a gap"
            ));
        }
        Outcome::Checked
    }
}

/// Why a key was left undecided: the record was cut off.
const GAP: &str = "gap";

impl PhantomHolder {
    fn judge(
        &self,
        record: &[ServiceEntry],
        lock: LockId,
        name: &str,
        p: &ServiceEntry,
        settle: &Settle<'_>,
    ) -> Judged {
        let in_flight: Vec<usize> = (0..self.attempts.len())
            .filter(|&i| {
                let a = &self.attempts[i];
                a.lock == lock
                    && a.invoked.1 <= p.time
                    && a.answered.is_none_or(|(_, t, _)| settle.after(t) >= p.time)
            })
            .collect();
        if in_flight
            .iter()
            .any(|&i| self.attempts[i].answered.is_none())
        {
            return Judged::Undecided("unanswered");
        }
        let candidates: Vec<usize> = (in_flight.iter().copied())
            .filter(|&i| self.attempts[i].refused())
            .collect();
        if candidates.is_empty() {
            return Judged::Cleared;
        }
        let settled = (in_flight.iter())
            .filter_map(|&i| self.attempts[i].answered.map(|(_, t, _)| t))
            .max()
            .unwrap_or(p.time);
        let settled = settle.after(settled);
        let Some((head_from, head_until)) = head_span(record, name, p, settled) else {
            return Judged::Cleared;
        };
        if crate::service_keys::blind_between(record, p.time, head_from) {
            return Judged::Undecided(GAP);
        }
        let refused_meanwhile = (self.attempts.iter())
            .filter(|a| a.lock == lock && a.refused())
            .filter(|a| {
                let t = a.answered.map_or(0, |(_, t, _)| t);
                t >= head_from && head_until.is_none_or(|u| t <= u)
            })
            .count();
        let waiting_meanwhile = (0..self.attempts.len())
            .filter(|i| !candidates.contains(i))
            .map(|i| &self.attempts[i])
            .filter(|a| a.lock == lock && head_until.is_none_or(|u| a.invoked.1 <= u))
            .filter(|a| a.answered.is_none_or(|(_, t, _)| t >= head_from))
            .count();
        Judged::Phantom(Phantom {
            candidates,
            head_from,
            head_until,
            refused_meanwhile,
            waiting_meanwhile,
        })
    }

    fn report(&self, lock: &str, p: &ServiceEntry, ph: &Phantom, out: &mut Findings) {
        let attempts: Vec<&Attempt> = ph.candidates.iter().map(|&i| &self.attempts[i]).collect();
        let mut indices: Vec<u64> = (attempts.iter())
            .flat_map(|a| [Some(a.invoked.0), a.answered.map(|(i, _, _)| i)])
            .flatten()
            .collect();
        indices.sort_unstable();
        let mut evidence = Evidence {
            lock: Some(lock.to_string()),
            key: p.key.clone(),
            owner: match attempts.as_slice() {
                [one] => Some(format!("process-{}", one.process)),
                _ => None,
            },
            indices,
            times: vec![p.time, ph.head_from],
            ..Evidence::default()
        };
        let other = &mut evidence.other;
        for (name, field) in [
            ("service_value", &p.value),
            ("service_owner", &p.owner),
            ("node", &p.node),
        ] {
            if let Some(v) = field {
                other.insert(name.into(), json!(v));
            }
        }
        let answered = |a: &Attempt| match a.answered {
            Some((_, _, OpType::Info)) => "info",
            _ => "fail",
        };
        other.insert(
            "refused_acquires".into(),
            json!(attempts
                .iter()
                .map(|a| json!({
                    "process": a.process,
                    "invoke_index": a.invoked.0,
                    "answer_index": a.answered.map(|(i, _, _)| i),
                    "answered": answered(a),
                }))
                .collect::<Vec<_>>()),
        );
        other.insert("put_seen_ns".into(), json!(p.time));
        other.insert("head_from_ns".into(), json!(ph.head_from));
        other.insert("head_until_ns".into(), json!(ph.head_until));
        other.insert("refused_meanwhile".into(), json!(ph.refused_meanwhile));
        other.insert("waiting_meanwhile".into(), json!(ph.waiting_meanwhile));
        let who = match attempts.as_slice() {
            [one] => format!(
                "process {}'s acquire (index {}), answered {}",
                one.process,
                one.answered.map_or(0, |(i, _, _)| i),
                answered(one)
            ),
            many => format!(
                "one of {} acquires in flight, every one answered fail or info",
                many.len()
            ),
        };
        let until = ph
            .head_until
            .map_or("through the end of the record".to_string(), |u| {
                format!("until t={u}ns")
            });
        let observation = format!(
            "the service held {} for {who}: no grant names it, yet it stood at the head of \
             the lock's queue from t={}ns {until}, while {} acquire(s) waited and {} were \
             refused",
            p.key.as_deref().unwrap_or("a key of the lock"),
            ph.head_from,
            ph.waiting_meanwhile,
            ph.refused_meanwhile
        );
        out.push(
            ph.head_from,
            observation.clone(),
            evidence,
            diagnosis::phantom_holder(observation),
        );
    }
}

/// When `p`'s key stood at the head of `lock`'s queue on a majority of the servers the record
/// follows, first at or after `settled`, and until when (`None`: through the record's end).
fn head_span(
    record: &[ServiceEntry],
    lock: &str,
    p: &ServiceEntry,
    settled: u64,
) -> Option<(u64, Option<u64>)> {
    let ours = |e: &ServiceEntry| holds_lock(e, lock);
    let nodes: BTreeSet<Option<&str>> = record
        .iter()
        .filter(|e| ours(e))
        .map(|e| e.node.as_deref())
        .collect();
    let need = nodes.len() / 2 + 1;
    let same = |e: &ServiceEntry| {
        e.key == p.key && e.value == p.value && e.owner == p.owner && e.created == p.created
    };
    // Keys standing, by (node, key): the line that put them, and since when.
    let mut standing: BTreeMap<(Option<&str>, &str), (&ServiceEntry, u64)> = BTreeMap::new();
    let heads = |standing: &BTreeMap<(Option<&str>, &str), (&ServiceEntry, u64)>| {
        nodes
            .iter()
            .filter(|node| {
                standing
                    .iter()
                    .filter(|((n, _), _)| n == *node)
                    .min_by_key(|(_, (e, since))| (e.created.unwrap_or(i64::MAX), *since))
                    .is_some_and(|(_, (e, _))| same(e))
            })
            .count()
            >= need
    };
    let mut from: Option<u64> = None;
    let mut looked = false;
    for e in record.iter().filter(|e| ours(e)) {
        if e.time > settled && !looked {
            looked = true;
            if heads(&standing) {
                from = Some(settled);
            } else if from.is_none() && !standing.values().any(|(s, _)| same(s)) {
                // Gone before the answers settled: never a phantom.
                return None;
            }
        }
        let (Some(key), node) = (e.key.as_deref(), e.node.as_deref()) else {
            continue;
        };
        match e.what {
            ServiceWhat::Put => {
                let kept = standing
                    .get(&(node, key))
                    .is_some_and(|(s, _)| s.created == e.created && s.value == e.value);
                if !kept {
                    standing.insert((node, key), (e, e.time));
                }
            }
            ServiceWhat::Delete | ServiceWhat::Expired => {
                standing.remove(&(node, key));
            }
            _ => continue,
        }
        if looked {
            match (from, heads(&standing)) {
                (None, true) => from = Some(e.time),
                (Some(f), false) => return Some((f, Some(e.time))),
                _ => {}
            }
        }
    }
    if !looked && heads(&standing) {
        from = Some(settled);
    }
    from.map(|f| (f, None))
}
