//! How the checkers read the lock service's own record (`service.jsonl`, docs/design.md) against
//! the history: which of the service's keys hold a lock, and which grant a key is. One reading,
//! so every kind judged against the record means the same key by "the lock's key" and the same
//! client by "its grant".

use crate::locks::LockId;
use results::service_log::{ServiceEntry, ServiceWhat};

/// Whether record line `e` is of a key that holds `lock` at the service: the lock's name is part
/// of the key (every shipped recipe's and library's key; PostgreSQL's advisory keys are hashes,
/// so none of them is), and a `put` of it is tied by the service to a lease, a session, a
/// backend or an expiry. A lock's directory node and a fence counter carry the lock's name but
/// no such tie: they hold nothing. Every other line of such a key (its delete, expiry, renewal)
/// counts whatever it carries: a delete names its key and, on Redis, nothing else.
pub fn holds_lock(e: &ServiceEntry, lock: &str) -> bool {
    e.key.as_deref().is_some_and(|k| names_lock(k, lock))
        && (e.what != ServiceWhat::Put
            || e.owner.is_some()
            || e.ttl_ms.is_some()
            || e.error.is_some())
}

/// What a checker over the service's record keeps of the history's names: each lock's name (few:
/// one per lock of the run) and the grants' leases, back to back in one buffer, so keeping them
/// allocates nothing per event.
#[derive(Debug, Default)]
pub struct Kept {
    locks: Vec<(LockId, String)>,
    leases: String,
}

/// Where a kept lease is in [`Kept`]'s buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseAt(usize, usize);

impl Kept {
    /// Keeps `lock`'s name, once.
    pub fn lock(&mut self, lock: LockId, cx: &crate::checker::Context<'_>) {
        if !self.locks.iter().any(|(id, _)| *id == lock) {
            self.locks.push((lock, cx.locks.name(lock).to_string()));
        }
    }

    /// A kept lock's name (empty if it was never kept).
    pub fn name(&self, lock: LockId) -> &str {
        (self.locks.iter())
            .find(|(id, _)| *id == lock)
            .map_or("", |(_, n)| n.as_str())
    }

    /// The kept locks, in the order they were first seen.
    pub fn locks(&self) -> impl Iterator<Item = (LockId, &str)> {
        self.locks.iter().map(|(id, n)| (*id, n.as_str()))
    }

    /// The kept lock whose key record line `e` is ([`holds_lock`]).
    pub fn lock_of(&self, e: &ServiceEntry) -> Option<(LockId, &str)> {
        self.locks().find(|(_, name)| holds_lock(e, name))
    }

    pub fn keep(&mut self, lease: &str) -> LeaseAt {
        let start = self.leases.len();
        self.leases.push_str(lease);
        LeaseAt(start, self.leases.len())
    }

    pub fn lease(&self, at: LeaseAt) -> &str {
        &self.leases[at.0..at.1]
    }
}

/// The least settling time after an answer: a change the observer saw up to this long after
/// the answer may have been made before it.
pub const SETTLE_FLOOR_NS: u64 = 100_000_000;

/// How long after a moment a change the service made before it may still reach the record:
/// twice the largest lag the observer's probes measured around that moment (on each server, the
/// last probe answered at or before it and the first after), at least [`SETTLE_FLOOR_NS`]. Local,
/// so a slow stretch elsewhere in the run (the cluster's start on a loaded machine) neither
/// widens nor narrows the judgement of this one.
#[derive(Debug, Default)]
pub struct Settle<'r> {
    /// The record's probes: when each was answered, on which server, and its lag.
    probes: Vec<(u64, Option<&'r str>, u64)>,
    /// How many servers the probes came from.
    servers: usize,
    widest: std::cell::Cell<Option<u64>>,
}

impl<'r> Settle<'r> {
    pub fn of(record: &'r [ServiceEntry]) -> Self {
        let mut probes: Vec<(u64, Option<&str>, u64)> = (record.iter())
            .filter_map(|e| Some((e.time, e.node.as_deref(), e.lag_ns?)))
            .collect();
        probes.sort_by_key(|p| p.0);
        let mut servers: Vec<Option<&str>> = probes.iter().map(|p| p.1).collect();
        servers.sort_unstable();
        servers.dedup();
        Settle {
            probes,
            servers: servers.len(),
            widest: Default::default(),
        }
    }

    /// The moment by which a change made at or before `t` has reached the record.
    pub fn after(&self, t: u64) -> u64 {
        let at = self.probes.partition_point(|p| p.0 <= t);
        let mut lag = 0;
        for side in [
            &mut self.probes[..at].iter().rev() as &mut dyn Iterator<Item = _>,
            &mut self.probes[at..].iter(),
        ] {
            let mut seen: Vec<Option<&str>> = Vec::with_capacity(self.servers);
            for &(_, server, l) in side {
                if !seen.contains(&server) {
                    seen.push(server);
                    lag = lag.max(l);
                    if seen.len() == self.servers {
                        break;
                    }
                }
            }
        }
        let wait = lag.saturating_mul(2).max(SETTLE_FLOOR_NS);
        self.widest.set(self.widest.get().max(Some(wait)));
        t.saturating_add(wait)
    }

    /// The longest settling time [`Settle::after`] has given (`None`: never asked).
    pub fn widest(&self) -> Option<u64> {
        self.widest.get()
    }
}

/// Whether the record was cut off (a `gap` not yet followed by its stream's `watching`) at any
/// moment of [from, to], on any server.
pub fn blind_between(record: &[ServiceEntry], from: u64, to: u64) -> bool {
    gap_between(record, from, to).is_some()
}

/// The first gap of the record (on any server) open at some moment of [from, to]: since when,
/// and until when (`None`: still open at `to`).
pub fn gap_between(record: &[ServiceEntry], from: u64, to: u64) -> Option<(u64, Option<u64>)> {
    // Since when each stream (by node; `None`: every one) has been cut off.
    let mut cut: std::collections::BTreeMap<Option<&str>, u64> = Default::default();
    for e in record.iter().take_while(|e| e.time <= to) {
        match e.what {
            ServiceWhat::Gap => {
                cut.entry(e.node.as_deref()).or_insert(e.time);
            }
            ServiceWhat::Watching => {
                // A stream's new start ends its gap; a start of the one stream ends every gap.
                let ended = match e.node.as_deref() {
                    Some(node) => cut.remove(&Some(node)),
                    None => std::mem::take(&mut cut).into_values().min(),
                };
                if let Some(since) = ended.filter(|_| e.time >= from) {
                    return Some((since, Some(e.time)));
                }
            }
            _ => {}
        }
    }
    cut.values().min().map(|&since| (since, None))
}

/// Whether `key` has `lock` as one of its parts: bounded by the key's ends or by `/`, `:`, `{`,
/// `}` (so lock `l` is part of `fencecheck:lock:l` and `/locks/l/n-1`, not of `fencecheck:lock:m`).
pub fn names_lock(key: &str, lock: &str) -> bool {
    let apart = |c: Option<char>| c.is_none_or(|c| matches!(c, '/' | ':' | '{' | '}'));
    !lock.is_empty()
        && key.match_indices(lock).any(|(at, _)| {
            apart(key[..at].chars().next_back()) && apart(key[at + lock.len()..].chars().next())
        })
}

/// Whether a grant's `lease` (an acquire `ok`'s handle) names record line `e`, in one of the
/// forms the recipes and adapters report (docs/adapters.md): the key itself (a ZooKeeper node's
/// path), the value written (a Redis lock's random value), the owner (an etcd lease ID in hex),
/// `pid <owner> ...` (a PostgreSQL backend), `<key>@<create revision>` or `<key> granted at
/// revision <R> lease <owner>` (etcd's concurrency.Mutex).
pub fn names(lease: &str, e: &ServiceEntry) -> bool {
    let is = |field: &Option<String>| field.as_deref() == Some(lease);
    if is(&e.key) || is(&e.value) || is(&e.owner) {
        return true;
    }
    if let (Some(pid), Some(owner)) = (lease.strip_prefix("pid "), e.owner.as_deref()) {
        if pid.split(' ').next() == Some(owner) {
            return true;
        }
    }
    match crate::kinds::granted_gone::key_and_revision(lease) {
        Some((key, crate::kinds::granted_gone::Named::Created(created))) => {
            e.key.as_deref() == Some(key) && e.created == Some(created)
        }
        Some((key, crate::kinds::granted_gone::Named::GrantedAt { lease, .. })) => {
            e.key.as_deref() == Some(key) && e.owner.as_deref() == Some(lease.as_str())
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(key: &str, value: Option<&str>, owner: Option<&str>, ttl: Option<u64>) -> ServiceEntry {
        let mut e = ServiceEntry::new(0, ServiceWhat::Put);
        e.key = Some(key.into());
        e.value = value.map(str::to_string);
        e.owner = owner.map(str::to_string);
        e.ttl_ms = ttl;
        e.created = Some(7);
        e
    }

    fn probe(time: u64, node: Option<&str>, lag: u64) -> ServiceEntry {
        let mut e = ServiceEntry::new(time, ServiceWhat::Progress);
        e.node = node.map(str::to_string);
        e.lag_ns = Some(lag);
        e
    }

    #[test]
    fn the_settling_time_is_measured_around_its_moment() {
        const MS: u64 = 1_000_000;
        // A slow start (3 s) and a quick stretch later (40 ms, then 10 ms).
        let record = [
            probe(1_000 * MS, None, 3_000 * MS),
            probe(5_000 * MS, None, 40 * MS),
            probe(6_000 * MS, None, 10 * MS),
        ];
        let settle = Settle::of(&record);
        assert_eq!(
            settle.after(5_500 * MS),
            5_500 * MS + 100 * MS,
            "40 ms either side: floor"
        );
        assert_eq!(settle.after(2_000 * MS), 2_000 * MS + 6_000 * MS);
        assert_eq!(settle.after(9_000 * MS), 9_000 * MS + 100 * MS);
        // Each server's nearest probe counts: the slow one's on b, though a's are quick.
        let record = [
            probe(1_000 * MS, Some("b"), 400 * MS),
            probe(1_100 * MS, Some("a"), MS),
            probe(1_200 * MS, Some("a"), MS),
            probe(2_000 * MS, Some("a"), MS),
        ];
        assert_eq!(Settle::of(&record).after(1_500 * MS), 1_500 * MS + 800 * MS);
        assert_eq!(Settle::of(&[]).after(7), 7 + SETTLE_FLOOR_NS);
    }

    #[test]
    fn a_lock_directory_and_a_fence_counter_hold_nothing() {
        assert!(!holds_lock(
            &put("/fencecheck/locks/l", None, None, None),
            "l"
        ));
        assert!(!holds_lock(
            &put("fencecheck:fence:l", Some("3"), None, None),
            "l"
        ));
        assert!(holds_lock(
            &put("/fencecheck/locks/l/x-1", None, Some("ab"), None),
            "l"
        ));
        assert!(holds_lock(
            &put("fencecheck:lock:l", Some("v"), None, Some(2000)),
            "l"
        ));
        assert!(!holds_lock(
            &put("fencecheck:lock:m", Some("v"), None, Some(2000)),
            "l"
        ));
        assert!(names_lock("{l}:x", "l") && names_lock("l", "l") && !names_lock("l2", "l"));
        // A delete names its key and nothing else.
        let mut gone = ServiceEntry::new(0, ServiceWhat::Delete);
        gone.key = Some("fencecheck:lock:l".into());
        assert!(holds_lock(&gone, "l"));
    }

    #[test]
    fn each_reported_form_of_a_lease_names_its_key() {
        let e = put("/l/a", Some("v1"), Some("694d"), None);
        for lease in [
            "/l/a",
            "v1",
            "694d",
            "pid 694d key l",
            "/l/a@7",
            "/l/a granted at revision 9 lease 694d",
        ] {
            assert!(names(lease, &e), "{lease}");
        }
        for lease in [
            "/l/b",
            "v2",
            "pid 12 key l",
            "/l/a@8",
            "/l/a granted at revision 9 lease 1",
        ] {
            assert!(!names(lease, &e), "{lease}");
        }
    }
}
