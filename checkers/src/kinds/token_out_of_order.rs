//! `token-out-of-order`: the lock service granted X before Y, by its own record, yet Y's fence
//! token is lower than X's. `token-regression` orders two grants by the history (X's `ok`
//! before Y's invoke); this orders them by the service, so it also orders grants whose
//! acquires overlapped in the history (a waiter queued before the holder's grant). Fails by
//! default, as `token-regression` does: a resource that compares tokens takes Y's writes for
//! an older holder's.
//!
//! The service's order of two grants' keys (each read from the first put its lease names,
//! [`crate::service_keys::names`]): where both keys carry their creation in the service's own
//! order (etcd's create revision, ZooKeeper's czxid), the earlier creation; otherwise (Redis,
//! which keeps no such number) X before Y on one server when the record showed X's key gone
//! there before it showed Y's put (one server's notifications come in the order it made the
//! changes). Grants of one lock are compared, each placed by a put of that lock's key seen after
//! its acquire was invoked and no later than the settling time after its grant; a lease several
//! grants share (a PostgreSQL backend's) places none of them. An equal token is
//! `duplicate-token`'s. Grants whose key the record never showed are left out and counted.

use crate::checker::{Checker, Context, End, Findings, Interests, Outcome, ServiceLog};
use crate::diagnosis;
use crate::locks::LockId;
use crate::procs::PerProcess;
use results::service_log::{ServiceEntry, ServiceWhat};
use results::{AnomalyKind, EventRef, Evidence, OpType, Process, F};
use serde_json::json;
use std::collections::BTreeMap;

/// One grant with a token.
#[derive(Debug, Clone)]
struct Grant {
    process: u32,
    index: u64,
    time: u64,
    token: u64,
    lease: crate::service_keys::LeaseAt,
    lock: LockId,
    /// When its acquire was invoked: its key was put between this and its grant.
    invoked: u64,
}

/// Where a grant's key stands in the service's order.
#[derive(Debug, Clone, Copy)]
struct Placed {
    grant: usize,
    created: Option<i64>,
    node: usize,
    put: u64,
    /// When the record showed it gone from that server (`u64::MAX`: never).
    gone: u64,
}

/// See the module doc.
#[derive(Debug, Default)]
pub struct TokenOutOfOrder {
    grants: Vec<Grant>,
    kept: crate::service_keys::Kept,
    /// Each process's acquire in flight: its invoke's time.
    asking: PerProcess<u64>,
}

impl Checker for TokenOutOfOrder {
    fn kind(&self) -> AnomalyKind {
        AnomalyKind::TokenOutOfOrder
    }

    fn interests(&self) -> Interests {
        Interests::ACQUIRE.only(OpType::Invoke) | Interests::ACQUIRE.only(OpType::Ok)
    }

    fn needs_service_log(&self) -> bool {
        true
    }

    fn event(&mut self, e: &EventRef<'_>, cx: &Context<'_>, _out: &mut Findings) {
        let (Process::Worker(process), F::Acquire) = (e.process, &e.f) else {
            return;
        };
        if e.kind == OpType::Invoke {
            self.asking.insert(process, e.time);
            return;
        }
        let invoked = self.asking.remove(process).unwrap_or(e.time);
        let (Some(token), Some(lease), Some(lock)) = (e.token, e.lease.as_deref(), cx.lock) else {
            return;
        };
        self.kept.lock(lock, cx);
        let lease = self.kept.keep(lease);
        self.grants.push(Grant {
            process,
            index: e.index,
            time: e.time,
            token,
            lease,
            lock,
            invoked,
        });
    }

    fn finish(&mut self, end: &End, out: &mut Findings) -> Outcome {
        let record = match &end.service_log {
            ServiceLog::Present(record) => record,
            ServiceLog::Missing(why) => {
                return Outcome::NotApplicable(format!(
                    "{why}: the service's order of the grants is not known"
                ))
            }
        };
        if self.grants.len() < 2 {
            return Outcome::NotApplicable("fewer than two grants carry a fence token".into());
        }
        let placed = self.place(record, &crate::service_keys::Settle::of(record));
        let unplaced = self.grants.len() - placed.len();
        out.stats.insert("placed".into(), json!(placed.len()));
        if placed.len() < 2 {
            return Outcome::NotApplicable(
                "the record names fewer than two grants' keys: the client's lease is not the \
                 service's identity, or the record began late"
                    .into(),
            );
        }
        if unplaced > 0 {
            out.stats.insert("unplaced".into(), json!(unplaced));
        }
        for (lock, _) in self.kept.locks() {
            let of_lock: Vec<Placed> = (placed.iter())
                .filter(|p| self.grants[p.grant].lock == lock)
                .copied()
                .collect();
            self.order(&of_lock, out);
        }
        Outcome::Checked
    }
}

impl TokenOutOfOrder {
    /// Each placed grant of one lock against the highest token the service granted before it.
    fn order(&self, placed: &[Placed], out: &mut Findings) {
        let ordered = placed.iter().all(|p| p.created.is_some());
        if ordered {
            // Creation order: each grant against the highest token created before it.
            let mut by_created = placed.to_vec();
            by_created.sort_by_key(|p| p.created);
            let mut highest: Option<&Placed> = None;
            for p in &by_created {
                if let Some(h) = highest {
                    if self.grants[p.grant].token < self.grants[h.grant].token {
                        self.report(h, p, "created", out);
                    }
                }
                if highest.is_none_or(|h| self.grants[p.grant].token > self.grants[h.grant].token) {
                    highest = Some(p);
                }
            }
        } else {
            // Succession on each server: a key put after another's was seen gone.
            let nodes = placed.iter().map(|p| p.node).max().unwrap_or(0) + 1;
            for node in 0..nodes {
                let mut on: Vec<&Placed> = placed.iter().filter(|p| p.node == node).collect();
                on.sort_by_key(|p| p.put);
                let mut by_gone = on.clone();
                by_gone.sort_by_key(|p| p.gone);
                let (mut next, mut highest): (usize, Option<&Placed>) = (0, None);
                for p in &on {
                    while next < by_gone.len() && by_gone[next].gone <= p.put {
                        let g = by_gone[next];
                        if highest
                            .is_none_or(|h| self.grants[g.grant].token > self.grants[h.grant].token)
                        {
                            highest = Some(g);
                        }
                        next += 1;
                    }
                    if let Some(h) = highest {
                        if self.grants[p.grant].token < self.grants[h.grant].token {
                            self.report(h, p, "succeeded", out);
                        }
                    }
                }
            }
        }
    }

    fn lease(&self, g: &Grant) -> &str {
        self.kept.lease(g.lease)
    }

    /// Each grant's key as the record first shows it (its first put the lease names), with when
    /// it was seen gone from that server.
    fn place(
        &self,
        record: &[ServiceEntry],
        settle: &crate::service_keys::Settle<'_>,
    ) -> Vec<Placed> {
        let mut nodes: Vec<Option<&str>> = Vec::new();
        let mut placed: Vec<Placed> = Vec::new();
        // The grant each standing (node, key) is, by its index in `placed`.
        let mut standing: BTreeMap<(Option<&str>, &str), usize> = BTreeMap::new();
        let mut taken = vec![false; self.grants.len()];
        // Grants by lease, for the forms a key, value or owner equals; the others (`pid ...`,
        // etcd's `<key>@<revision>` and `... granted at revision ...`) are tried one by one.
        let mut by_lease: crate::hashing::FastMap<&str, Vec<usize>> = Default::default();
        for (g, grant) in self.grants.iter().enumerate() {
            by_lease.entry(self.lease(grant)).or_default().push(g);
        }
        // A lease several grants share (a PostgreSQL backend's `pid ...`, held across its
        // grants) names none of them apart: those grants stay unplaced.
        let mut formed = Vec::new();
        for (g, grant) in self.grants.iter().enumerate() {
            let lease = self.lease(grant);
            let alone = by_lease.get(lease).is_some_and(|gs| gs.len() == 1);
            if alone && (lease.contains('@') || lease.contains(" granted at ")) {
                formed.push(g);
            }
        }
        by_lease.retain(|_, gs| gs.len() == 1);
        let name = |lock: LockId| self.kept.name(lock);
        // A grant's key is a put of its lock, named by its lease, seen after its acquire was
        // invoked and no later than the settling time after its grant.
        let fits = |g: usize, e: &ServiceEntry| {
            let grant = &self.grants[g];
            crate::service_keys::holds_lock(e, name(grant.lock))
                && grant.invoked <= e.time
                && e.time <= settle.after(grant.time)
                && crate::service_keys::names(self.lease(grant), e)
        };
        let named = |e: &ServiceEntry, taken: &[bool]| -> Option<usize> {
            let direct = [&e.key, &e.value, &e.owner]
                .into_iter()
                .flatten()
                .filter_map(|v| by_lease.get(v.as_str()))
                .flatten()
                .copied();
            direct
                .chain(formed.iter().copied())
                .find(|&g| !taken[g] && fits(g, e))
        };
        for e in record {
            let Some(key) = e.key.as_deref() else {
                continue;
            };
            let at = (e.node.as_deref(), key);
            match e.what {
                ServiceWhat::Put => {
                    if let Some(i) = standing.remove(&at) {
                        placed[i].gone = placed[i].gone.min(e.time);
                    }
                    let Some(g) = named(e, &taken) else {
                        continue;
                    };
                    taken[g] = true;
                    let node = match nodes.iter().position(|n| *n == at.0) {
                        Some(n) => n,
                        None => {
                            nodes.push(at.0);
                            nodes.len() - 1
                        }
                    };
                    standing.insert(at, placed.len());
                    placed.push(Placed {
                        grant: g,
                        created: e.created,
                        node,
                        put: e.time,
                        gone: u64::MAX,
                    });
                }
                ServiceWhat::Delete | ServiceWhat::Expired => {
                    if let Some(i) = standing.remove(&at) {
                        placed[i].gone = e.time;
                    }
                }
                _ => {}
            }
        }
        placed
    }

    fn report(&self, x: &Placed, y: &Placed, how: &str, out: &mut Findings) {
        let (gx, gy) = (&self.grants[x.grant], &self.grants[y.grant]);
        let mut evidence = Evidence {
            owner: Some(format!("process-{}", gy.process)),
            lease: Some(self.lease(gy).to_string()),
            token: Some(gy.token),
            indices: {
                let mut i = vec![gx.index, gy.index];
                i.sort_unstable();
                i
            },
            times: vec![gx.time.min(gy.time), gx.time.max(gy.time)],
            ..Evidence::default()
        };
        let other = &mut evidence.other;
        other.insert("earlier_process".into(), json!(gx.process));
        other.insert("earlier_lease".into(), json!(self.lease(gx)));
        other.insert("earlier_token".into(), json!(gx.token));
        other.insert("earlier_created".into(), json!(x.created));
        other.insert("later_created".into(), json!(y.created));
        other.insert("earlier_put_seen_ns".into(), json!(x.put));
        other.insert("later_put_seen_ns".into(), json!(y.put));
        let order = match (x.created, y.created) {
            (Some(cx), Some(cy)) => format!("created at {cx}, before {cy}"),
            _ if x.gone == y.put => format!("its key replaced by the later one at t={}ns", y.put),
            _ => format!(
                "gone at t={}ns, before the later key was put at t={}ns",
                x.gone, y.put
            ),
        };
        let observation = format!(
            "the service {how} process {}'s key (token {}) after process {}'s (token {}; {order}): \
             the later grant's token is lower",
            gy.process, gy.token, gx.process, gx.token
        );
        out.push(
            gx.time.max(gy.time),
            observation.clone(),
            evidence,
            diagnosis::token_out_of_order(observation),
        );
    }
}
