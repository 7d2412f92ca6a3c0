//! `deleted-anothers-key`: a client's release removed another holder's key, by the lock
//! service's own record. The record shows a key of the lock, which a grant to process B names,
//! deleted by a client (not expired by the service) while B's hold was open and B had sent no
//! release, during a release by another process A: A's release, sent with A's own lease, freed
//! B's lock (a release that deletes the lock's key whatever it holds, as a plain `DEL` does).
//! Observed by default: the harm, the lock free while B believes it holds it, is what
//! `double-release` fails a run for when the history shows it (a later grant, or B's release
//! refused); this is the service's own witness of the moment, and on etcd and ZooKeeper (below)
//! a lease that expired at that moment looks alike.
//!
//! What the record can tell: Redis tells a client's `DEL` apart from an expiry, so there a
//! delete during A's release is A's or another client's command. etcd and ZooKeeper delete a
//! lease's keys or a session's nodes the same way a client does, so a lease that expired during
//! A's release would look alike: B's hold open means B was still granted, and the kind charges
//! such a delete only while a release of another process was in flight (the evidence names every
//! one), and never one at or before the revision at which B's library concluded it held the
//! lock (B was granted a key already gone: `granted-gone`'s). A release answered `fail` deleted
//! nothing. Where a lock's keys live on several servers (Redlock's masters, Sentinel's
//! replicas) a delete on one frees nothing by itself, and the kind does not apply. A delete line names its key; which grant it was is read from the put the record showed
//! standing there ([`crate::service_keys::names`]). "In flight" allows for the observer's lag as
//! `phantom-holder` does.

use crate::checker::{Checker, Context, End, Findings, Interests, Outcome, ServiceLog};
use crate::diagnosis;
use crate::locks::LockId;
use crate::procs::PerProcess;
use crate::service_keys::{names, Kept, LeaseAt};
use results::service_log::{ServiceEntry, ServiceWhat};
use results::{AnomalyKind, EventRef, Evidence, OpType, Process, F};
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};

/// One grant and its hold, as far as this kind follows it.
#[derive(Debug, Clone)]
struct Grant {
    process: u32,
    index: u64,
    time: u64,
    lease: LeaseAt,
    lock: LockId,
    /// When its hold ended: its process sent a release, lost its lease, ended an operation
    /// `info` or exited.
    ended: Option<u64>,
}

/// One release: who sent it, when, and when it was answered.
#[derive(Debug, Clone)]
struct Release {
    process: u32,
    lease: Option<LeaseAt>,
    invoked: (u64, u64),
    answered: Option<u64>,
    /// Answered `fail`: it certainly deleted nothing.
    refused: bool,
}

/// See the module doc.
#[derive(Debug, Default)]
pub struct DeletedAnothersKey {
    grants: Vec<Grant>,
    releases: Vec<Release>,
    /// Each process's latest grant (an index into `grants`) and its release in flight.
    holding: PerProcess<usize>,
    releasing: PerProcess<usize>,
    kept: Kept,
}

impl DeletedAnothersKey {
    fn lease(&self, at: LeaseAt) -> &str {
        self.kept.lease(at)
    }

    fn end_hold(&mut self, process: u32, at: u64) {
        if let Some(g) = self.holding.remove(process) {
            self.grants[g].ended.get_or_insert(at);
        }
    }
}

impl Checker for DeletedAnothersKey {
    fn kind(&self) -> AnomalyKind {
        AnomalyKind::DeletedAnothersKey
    }

    fn interests(&self) -> Interests {
        Interests::ACQUIRE.only(OpType::Ok)
            | Interests::RELEASE
            | Interests::LEASE_LOST
            | Interests::EXIT
            | Interests::ANY_INFO
    }

    fn needs_service_log(&self) -> bool {
        true
    }

    fn event(&mut self, e: &EventRef<'_>, cx: &Context<'_>, _out: &mut Findings) {
        let Process::Worker(process) = e.process else {
            return;
        };
        match (&e.f, e.kind) {
            (F::Acquire, OpType::Ok) => {
                let (Some(lease), Some(lock)) = (e.lease.as_deref(), cx.lock) else {
                    return;
                };
                self.kept.lock(lock, cx);
                let lease = self.kept.keep(lease);
                self.holding.insert(process, self.grants.len());
                self.grants.push(Grant {
                    process,
                    index: e.index,
                    time: e.time,
                    lease,
                    lock,
                    ended: None,
                });
            }
            (F::Release, OpType::Invoke) => {
                self.end_hold(process, e.time);
                let lease = e.lease.as_deref().map(|l| self.kept.keep(l));
                self.releasing.insert(process, self.releases.len());
                self.releases.push(Release {
                    process,
                    lease,
                    invoked: (e.index, e.time),
                    answered: None,
                    refused: false,
                });
            }
            (F::Release, kind) => {
                if let Some(r) = self.releasing.remove(process) {
                    self.releases[r].answered = Some(e.time);
                    self.releases[r].refused = kind == OpType::Fail;
                }
            }
            _ => self.end_hold(process, e.time),
        }
    }

    fn finish(&mut self, end: &End, out: &mut Findings) -> Outcome {
        let record = match &end.service_log {
            ServiceLog::Present(record) => record,
            ServiceLog::Missing(why) => {
                return Outcome::NotApplicable(format!(
                    "{why}: which keys the releases removed is not known"
                ))
            }
        };
        if self.releases.is_empty() || self.grants.is_empty() {
            return Outcome::NotApplicable("no release was sent while a grant stood".into());
        }
        let lock_of = |e: &ServiceEntry| self.kept.lock_of(e);
        if !record.iter().any(|e| lock_of(e).is_some()) {
            return Outcome::NotApplicable(
                "no key of the service's record holds the lock (PostgreSQL's advisory keys are \
                 hashes): the releases cannot be set against its deletes"
                    .into(),
            );
        }
        // One server holds each lock: where a lock's keys live on several (Redlock's masters,
        // Sentinel's replicas), a delete on one frees nothing by itself.
        let mut servers: BTreeMap<&str, BTreeSet<Option<&str>>> = BTreeMap::new();
        for e in record.iter() {
            if let Some((_, name)) = lock_of(e) {
                servers.entry(name).or_default().insert(e.node.as_deref());
            }
        }
        if servers.values().all(|nodes| nodes.len() > 1) {
            return Outcome::NotApplicable(
                "each lock's keys live on several servers (Redlock's masters, Sentinel's \
                 replicas): a delete on one frees nothing by itself"
                    .into(),
            );
        }
        let settle = crate::service_keys::Settle::of(record);
        // The put standing at each (node, key), to say whose key a delete removed.
        let mut standing: BTreeMap<(Option<&str>, &str), &ServiceEntry> = BTreeMap::new();
        let mut charged: BTreeSet<usize> = BTreeSet::new();
        let mut deletes = 0;
        for (at_line, e) in record.iter().enumerate() {
            let (Some(key), Some((lock, name))) = (e.key.as_deref(), lock_of(e)) else {
                continue;
            };
            if servers.get(name).is_some_and(|nodes| nodes.len() > 1) {
                continue;
            }
            let at = (e.node.as_deref(), key);
            match e.what {
                ServiceWhat::Put => {
                    standing.insert(at, e);
                    continue;
                }
                ServiceWhat::Expired => {
                    standing.remove(&at);
                    continue;
                }
                ServiceWhat::Delete => {}
                _ => continue,
            }
            let Some(put) = standing.remove(&at) else {
                continue;
            };
            deletes += 1;
            // The Redis observer reads a value after the notification: a key set, deleted and
            // set again within that read shows the later value on the first set. A put right
            // after this delete repeating the deleted value says the delete was of another.
            let repeated = (record[at_line + 1..].iter())
                .find(|n| n.what == ServiceWhat::Put && n.node == e.node && n.key == e.key)
                .is_some_and(|n| {
                    n.value.is_some() && n.value == put.value && n.created == put.created
                });
            if repeated {
                continue;
            }
            // The grant whose key it was, still held and not being released by its holder.
            let Some(g) = (0..self.grants.len()).rev().find(|&g| {
                let grant = &self.grants[g];
                grant.lock == lock && grant.time <= e.time && names(self.lease(grant.lease), put)
            }) else {
                continue;
            };
            let grant = &self.grants[g];
            if grant.ended.is_some_and(|t| t <= e.time) || charged.contains(&g) {
                continue;
            }
            // A grant the library concluded at or after the delete's revision never held the
            // key at the service (granted-gone's, not a release's doing).
            let gone_first = matches!(
                (crate::kinds::granted_gone::key_and_revision(self.lease(grant.lease)), e.revision),
                (Some((_, crate::kinds::granted_gone::Named::GrantedAt { at, .. })), Some(rev)) if rev <= at
            );
            if gone_first {
                continue;
            }
            let by: Vec<&Release> = (self.releases.iter())
                .filter(|r| r.process != grant.process && r.invoked.1 <= e.time && !r.refused)
                .filter(|r| r.answered.is_none_or(|t| settle.after(t) >= e.time))
                .collect();
            if by.is_empty() {
                continue;
            }
            charged.insert(g);
            self.report(name, e, put, grant, &by, out);
        }
        out.stats.insert("deletes".into(), json!(deletes));
        Outcome::Checked
    }
}

impl DeletedAnothersKey {
    fn report(
        &self,
        lock: &str,
        e: &ServiceEntry,
        put: &ServiceEntry,
        grant: &Grant,
        by: &[&Release],
        out: &mut Findings,
    ) {
        let mut indices: Vec<u64> = by.iter().map(|r| r.invoked.0).collect();
        indices.push(grant.index);
        indices.sort_unstable();
        let mut evidence = Evidence {
            lock: Some(lock.to_string()),
            key: e.key.clone(),
            owner: Some(format!("process-{}", grant.process)),
            lease: Some(self.lease(grant.lease).to_string()),
            indices,
            times: vec![grant.time, e.time],
            ..Evidence::default()
        };
        let other = &mut evidence.other;
        other.insert(
            "releases".into(),
            json!(by
                .iter()
                .map(|r| json!({
                    "process": r.process,
                    "invoke_index": r.invoked.0,
                    "lease": r.lease.map(|l| self.lease(l)),
                }))
                .collect::<Vec<_>>()),
        );
        other.insert("deleted_seen_ns".into(), json!(e.time));
        for (name, field) in [
            ("service_value", &put.value),
            ("service_owner", &put.owner),
            ("node", &e.node),
        ] {
            if let Some(v) = field {
                other.insert(name.into(), json!(v));
            }
        }
        let who = match by {
            [one] => format!(
                "process {}'s release (index {}{})",
                one.process,
                one.invoked.0,
                one.lease
                    .map_or(String::new(), |l| format!(", lease {}", self.lease(l)))
            ),
            many => format!("one of {} releases of other processes", many.len()),
        };
        let observation = format!(
            "the service deleted {} at t={}ns, the key process {} was granted (index {}) and \
             still held, during {who}: a release freed another holder's lock",
            e.key.as_deref().unwrap_or("the lock's key"),
            e.time,
            grant.process,
            grant.index
        );
        out.push(
            e.time,
            observation.clone(),
            evidence,
            diagnosis::deleted_anothers_key(observation),
        );
    }
}
