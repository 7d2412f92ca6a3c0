//! `held-against-service`: a lock client answered "held" while the lock service's own record
//! shows its key gone. A `check` answered `held: true` for a grant whose key (the one its lease
//! names, [`crate::service_keys::names`]) the record shows deleted or expired, on every server
//! that held it, from before the question was asked until the settling time after the answer.
//! The observer sees a change after the service made it, so a delete it saw before the question
//! was made before it; only a key put back (a library that sets its own value again) could be
//! seen late, hence the settling time after the answer. `held-after-loss` judges the same belief against the history (another client's later
//! grant); this judges it against the service, so it also sees a belief no other grant has
//! exposed yet. Observed by default, like `held-after-loss`: a belief, whose harm is the writes
//! the client then makes.
//!
//! A grant whose key the record never showed (it began later, or the lease is not the
//! service's identity) is left undecided and counted, and so is a question whose span the
//! record was cut off for. Once per grant: a library asked every second repeats one belief.

use crate::checker::{Checker, Context, End, Findings, Interests, Outcome, ServiceLog};
use crate::diagnosis;
use crate::locks::LockId;
use crate::procs::PerProcess;
use crate::service_keys::{holds_lock, names, Kept, LeaseAt};
use results::service_log::{ServiceEntry, ServiceWhat};
use results::{AnomalyKind, EventRef, Evidence, OpType, Process};
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};

/// One `held: true` answer.
#[derive(Debug, Clone)]
struct Belief {
    process: u32,
    lock: LockId,
    lease: LeaseAt,
    /// The grant's index, to report each grant once.
    grant: u64,
    asked: (u64, u64),
    answered: (u64, u64),
}

/// See the module doc.
#[derive(Debug, Default)]
pub struct HeldAgainstService {
    beliefs: Vec<Belief>,
    /// Each process's check in flight: its invoke's index and time.
    asking: PerProcess<(u64, u64)>,
    /// Each grant believed in (by its index): where its lease is kept.
    granted: BTreeMap<u64, LeaseAt>,
    kept: Kept,
    answered: u64,
}

impl Checker for HeldAgainstService {
    fn kind(&self) -> AnomalyKind {
        AnomalyKind::HeldAgainstService
    }

    fn interests(&self) -> Interests {
        Interests::CHECK
    }

    fn needs_service_log(&self) -> bool {
        true
    }

    fn event(&mut self, e: &EventRef<'_>, cx: &Context<'_>, _out: &mut Findings) {
        let Process::Worker(p) = e.process else {
            return;
        };
        if e.kind == OpType::Invoke {
            self.asking.insert(p, (e.index, e.time));
            return;
        }
        let asked = self.asking.remove(p);
        self.answered += 1;
        let (OpType::Ok, Some(true), Some(asked), Some(lock)) = (e.kind, e.held, asked, cx.lock)
        else {
            return;
        };
        // The grant the client believes in: the one its check names, else its latest.
        let Some(grant) = cx.holds.latest().of(p, lock) else {
            return;
        };
        let Some(lease) = e.lease.as_deref().or(grant.lease()) else {
            return;
        };
        self.kept.lock(lock, cx);
        let kept = &mut self.kept;
        let lease = *(self.granted)
            .entry(grant.index)
            .or_insert_with(|| kept.keep(lease));
        self.beliefs.push(Belief {
            process: p,
            lock,
            lease,
            grant: grant.index,
            asked,
            answered: (e.index, e.time),
        });
    }

    fn finish(&mut self, end: &End, out: &mut Findings) -> Outcome {
        let record = match &end.service_log {
            ServiceLog::Present(record) => record,
            ServiceLog::Missing(why) => {
                return Outcome::NotApplicable(format!(
                    "{why}: what the service held when the clients answered held is not known"
                ))
            }
        };
        if self.answered == 0 {
            return Outcome::NotApplicable(
                "no check was answered: the lock client has no check, or its keep-alive asked none"
                    .into(),
            );
        }
        let settle = crate::service_keys::Settle::of(record);
        let mut undecided = 0;
        let mut reported = BTreeSet::new();
        for b in &self.beliefs {
            if reported.contains(&b.grant) {
                continue;
            }
            let name = self.kept.name(b.lock);
            let lease = self.kept.lease(b.lease);
            let from = b.asked.1;
            let to = settle.after(b.answered.1);
            match gone_through(record, name, lease, from, to) {
                Gone::Undecided => undecided += 1,
                Gone::Standing => {}
                Gone::Since(at, key) => {
                    reported.insert(b.grant);
                    self.report(b, name, lease, at, &key, record, out)
                }
            }
        }
        out.stats
            .insert("held_answers".into(), json!(self.beliefs.len()));
        if undecided > 0 {
            out.stats.insert("undecided".into(), json!(undecided));
            out.note = Some(format!(
                "{undecided} held answer(s) were left undecided (their key is not in the record, \
                 or the record was cut off while they were asked)"
            ));
        }
        Outcome::Checked
    }
}

/// What the record says of a lease's key over [from, to].
enum Gone {
    /// The key never shows in the record, or the record was cut off in the span.
    Undecided,
    /// It stood on some server at some moment of the span.
    Standing,
    /// It was gone from every server from `at` (before `from`) through `to`: its key.
    Since(u64, String),
}

fn gone_through(record: &[ServiceEntry], lock: &str, lease: &str, from: u64, to: u64) -> Gone {
    // The lease's key on each server: standing (since) or gone (since).
    let mut state: BTreeMap<Option<&str>, (bool, u64)> = BTreeMap::new();
    let mut key = None;
    let mut standing_in_span = false;
    if crate::service_keys::blind_between(record, from, to) {
        return Gone::Undecided;
    }
    for e in record.iter().take_while(|e| e.time <= to) {
        let Some(k) = e.key.as_deref().filter(|_| holds_lock(e, lock)) else {
            continue;
        };
        let node = e.node.as_deref();
        match e.what {
            ServiceWhat::Put if names(lease, e) => {
                key = Some(k.to_string());
                state.insert(node, (true, e.time));
            }
            ServiceWhat::Delete | ServiceWhat::Expired
                if key.as_deref() == Some(k) && state.get(&node).is_some_and(|s| s.0) =>
            {
                state.insert(node, (false, e.time));
            }
            // Another value put on the same key replaces the lease's (Redis).
            ServiceWhat::Put if key.as_deref() == Some(k) => {
                if state.get(&node).is_some_and(|s| s.0) {
                    state.insert(node, (false, e.time));
                }
            }
            _ => continue,
        }
        if e.time >= from && state.values().any(|s| s.0) {
            standing_in_span = true;
        }
    }
    let Some(key) = key else {
        return Gone::Undecided;
    };
    let at_from_standing = state.values().any(|s| s.0);
    if standing_in_span || at_from_standing {
        return Gone::Standing;
    }
    let since = state.values().map(|s| s.1).max().unwrap_or(0);
    if since > from {
        return Gone::Standing;
    }
    Gone::Since(since, key)
}

impl HeldAgainstService {
    #[allow(clippy::too_many_arguments)]
    fn report(
        &self,
        b: &Belief,
        lock: &str,
        lease: &str,
        gone_at: u64,
        key: &str,
        record: &[ServiceEntry],
        out: &mut Findings,
    ) {
        // Who the service showed holding the lock when the answer came, if anyone.
        let mut holder: BTreeMap<(Option<&str>, &str), &ServiceEntry> = BTreeMap::new();
        for e in record.iter().take_while(|e| e.time <= b.answered.1) {
            let Some(k) = e.key.as_deref().filter(|_| holds_lock(e, lock)) else {
                continue;
            };
            match e.what {
                ServiceWhat::Put => {
                    holder.insert((e.node.as_deref(), k), e);
                }
                ServiceWhat::Delete | ServiceWhat::Expired => {
                    holder.remove(&(e.node.as_deref(), k));
                }
                _ => {}
            }
        }
        let other = (holder.values())
            .min_by_key(|e| (e.created.unwrap_or(i64::MAX), e.time))
            .copied();
        let mut evidence = Evidence {
            lock: Some(lock.to_string()),
            key: Some(key.to_string()),
            owner: Some(format!("process-{}", b.process)),
            lease: Some(lease.to_string()),
            indices: vec![b.grant, b.asked.0, b.answered.0],
            times: vec![gone_at, b.asked.1, b.answered.1],
            ..Evidence::default()
        };
        evidence.other.insert("gone_seen_ns".into(), json!(gone_at));
        let holding = other
            .map(|o| json!({"key": o.key, "value": o.value, "owner": o.owner, "node": o.node}));
        evidence
            .other
            .insert("service_holder".into(), json!(holding));
        let then = match other {
            Some(o) => format!(
                ", and the service showed {} holding the lock",
                o.owner
                    .as_deref()
                    .or(o.value.as_deref())
                    .or(o.key.as_deref())
                    .unwrap_or("another key")
            ),
            None => ", and the service showed nobody holding the lock".to_string(),
        };
        let observation = format!(
            "process {}'s check at index {} answered held for lease {lease} of lock {lock}, but \
             the service's record shows its key {key} gone since t={gone_at}ns{then}",
            b.process, b.asked.0
        );
        out.push(
            b.answered.1,
            observation.clone(),
            evidence,
            diagnosis::held_against_service(observation),
        );
    }
}
